"""`rendering.code_after_pass`: the code after a pass, only the changed statements rendered,
is LibCST's rendering of the whole tree."""

import libcst as cst
import pytest

from slimdata.port import rendering
from slimdata.port.edits import Context
from slimdata.port.facts import TreeFacts

MODULE = '''#!/usr/bin/env python
# a header comment

"""The docstring."""
import os  # trailing comment
import sys


# leading comments of a decorated function
@decorator(
    1)
def first(x):
    return x / 2
    # a comment the block owns

def second(y): return y

a = 1; b = 2
class Third:
    """Kept."""
    z = first(3)
# a footer comment
'''


class _Edit(cst.CSTTransformer):
    """Replaces the statements whose code holds `replace`, removes those holding `remove`,
    and puts `insert` before the first statement; leaves the others as they are, unvisited
    (as a pass that filters statements does)."""

    def __init__(self, replace='', remove='', insert=''):
        super().__init__()
        self.replace, self.remove, self.insert = replace, remove, insert

    def on_visit(self, node):
        return isinstance(node, cst.Module)

    def leave_Module(self, original, updated):
        body = []
        for statement in updated.body:
            code = updated.code_for_node(statement)
            if self.remove and self.remove in code:
                continue
            if self.replace and self.replace in code:
                statement = cst.parse_statement('replaced = True  # by the pass\n')
            body.append(statement)
        if self.insert:
            body.insert(0, cst.parse_statement(self.insert))
        return updated.with_changes(body=body)


@pytest.mark.parametrize('edit', [
    _Edit(replace='first'), _Edit(replace='def second'), _Edit(replace='a = 1'),
    _Edit(remove='import os'), _Edit(remove='class Third'), _Edit(remove='decorator'),
    _Edit(insert='import numpy as np\n'), _Edit(replace='import sys', insert='import re\n'),
    _Edit(replace='The docstring', remove='a = 1')])
@pytest.mark.parametrize('trailing_newline', [True, False])
def test_the_code_after_a_pass_is_libcsts_rendering(edit, trailing_newline, monkeypatch):
    code = MODULE if trailing_newline else MODULE.rstrip('\n')
    seams = []
    hold = rendering._Seams.hold
    monkeypatch.setattr(rendering._Seams, 'hold',
                        lambda self, index: seams.append(index) or hold(self, index))
    before = cst.parse_module(code)
    after = before.visit(edit)
    stitched = rendering._stitched(before, code, TreeFacts(before, code).spans(), after,
                                   rendering.Renderings())
    assert stitched == after.code  # stitched, not rendered whole
    assert seams  # the seams next to new text were checked
    assert rendering.code_after_pass(before, code, TreeFacts(before, code).spans(),
                                     after) == after.code


def test_a_wrong_start_falls_back_to_the_whole_rendering(monkeypatch):
    """A statement whose first line Python places elsewhere than LibCST (a decorator's name
    on the line after its `@`) fails the seam check: the module is rendered whole."""
    code = 'import os\n\n\n@\\\ndecorator\ndef f():\n    pass\n\n\nx = 1\n'
    before = cst.parse_module(code)
    after = before.visit(_Edit(replace='import os'))
    spans = TreeFacts(before, code).spans()
    assert rendering._stitched(before, code, spans, after, rendering.Renderings()) is None
    assert rendering.code_after_pass(before, code, spans, after) == after.code
    assert 'replaced = True' in after.code and '@\\\ndecorator' in after.code


def test_only_the_seams_beside_new_text_are_checked(monkeypatch):
    """Between two statements both kept as they were, the text goes on from one to the next
    wherever the seam is: of a module of 40 statements one of which a pass replaced, the two
    seams around it are checked (a statement rendered for each at most), not the others; a
    wrong seam beside the new text still falls back to the whole rendering."""
    code = ''.join(f'x{index} = {index}  # {index}\n' for index in range(40))
    before = cst.parse_module(code)
    after = before.visit(_Edit(replace='x20 ='))
    expected = after.code
    rendered = []
    code_for_node = cst.Module.code_for_node
    monkeypatch.setattr(cst.Module, 'code_for_node', lambda module, node: rendered.append(
        node) or code_for_node(module, node))
    spans = TreeFacts(before, code).spans()
    assert rendering._stitched(before, code, spans, after, rendering.Renderings()) == expected
    assert 1 <= len(rendered) <= 3  # the new statement, and one old one for both its seams
    wrong = dict(spans)
    statement = before.body[21]
    wrong[id(statement)] = wrong[id(statement)]._replace(first=wrong[id(statement)].first - 1)
    assert rendering._stitched(before, code, wrong, after, rendering.Renderings()) is None


def test_the_passes_of_a_file_share_their_renderings(monkeypatch):
    """A statement rendered for one pass (new, or checked at a seam) is not rendered again
    for the next, which leaves it; each pass's code is still LibCST's rendering of its tree,
    and a change of the module's indentation renders afresh."""
    rendered = []  # the statements rendered (not the header's and footer's comment lines)
    code_for_node = cst.Module.code_for_node

    def counted(module, node):
        if not isinstance(node, cst.EmptyLine):
            rendered.append(node)
        return code_for_node(module, node)

    monkeypatch.setattr(cst.Module, 'code_for_node', counted)
    renderings = rendering.Renderings()
    code, module = MODULE, cst.parse_module(MODULE)
    seen = []
    for edit in (_Edit(replace='first'), _Edit(replace='def second'), _Edit(replace='a = 1'),
                 _Edit(remove='import os')):
        after = module.visit(edit)
        expected = after.code
        rendered.clear()
        code = rendering.code_after_pass(module, code, TreeFacts(module, code).spans(), after,
                                         renderings)
        assert code == expected
        seen += rendered
        module = after
    assert seen and len(seen) == len(set(map(id, seen)))  # none rendered twice
    block = cst.parse_statement('if x:\n    y = 1\n')
    assert renderings.code_of(module, block) == 'if x:\n    y = 1\n'
    tabbed = module.with_changes(default_indent='\t')
    assert renderings.code_of(tabbed, block) == 'if x:\n\ty = 1\n'



def test_a_pass_gives_back_the_statements_it_left_as_they_were():
    """`KeepsUnchanged`: a walked statement in which nothing was replaced is the very node
    it was (LibCST builds a copy of each node it walks), so its code is not rendered again;
    a statement with a replacement in it is new."""
    from slimdata.port.edits import KeepsUnchanged

    class Rename(KeepsUnchanged):
        def leave_Name(self, original, updated):
            return updated.with_changes(value='y') if original.value == 'x' else updated

    before = cst.parse_module('a = 1\nb = x + 1\nif a:\n    c = [a, b]\n')
    transformer = Rename()
    after = before.visit(transformer)
    assert after.code == 'a = 1\nb = y + 1\nif a:\n    c = [a, b]\n'
    assert after.body[0] is before.body[0] and after.body[2] is before.body[2]
    assert after.body[1] is not before.body[1] and transformer.replacements == 1
    assert not transformer._replacements_before
    assert before.visit(Rename()) is not before  # x renamed: a new module
    unchanged = cst.parse_module('a = 1\n')
    assert unchanged.visit(Rename()) is unchanged



def _recording(base):
    """A visitor on `base` recording its visits, leaves and field hooks, that skips the
    children of a call to `skip` and renames `x`."""

    class Recording(base):
        def __init__(self, *arguments):
            super().__init__(*arguments)
            self.events = []

        def visit_Call(self, node):
            self.events.append(('visit', cst.Module([]).code_for_node(node)))
            return cst.ensure_type(node.func, cst.Name).value != 'skip'

        def visit_Call_args(self, node):
            self.events.append(('args of', cst.Module([]).code_for_node(node)))

        def leave_Name(self, original, *updated):
            self.events.append(('leave', original.value))
            if updated:
                return updated[0].with_changes(value='y') if original.value == 'x' else updated[0]

    class Subclass(Recording):  # its own methods, not its base's, though the base ran first
        def leave_Name(self, original, *updated):
            self.events.append(('sub leave', original.value))
            return super().leave_Name(original, *updated)

    return Recording, Subclass


def test_the_methods_a_pass_is_called_by_are_libcsts():
    """`edits._Hooks` looks up `visit_<Node>`, `leave_<Node>` once per class and node type:
    the same calls, in the same order, as LibCST's own visitors, field methods included."""
    from slimdata.port.edits import KeepsUnchanged, LookAhead, PortTransformer
    module = cst.parse_module('f(x, skip(x))\ng = x\n')
    for ours, libcst_s in ((KeepsUnchanged, cst.CSTTransformer), (LookAhead, cst.CSTVisitor)):
        for index in range(2):
            mine, reference = _recording(ours)[index], _recording(libcst_s)[index]
            if ours is LookAhead:
                visitor = mine(PortTransformer(Context()), None)
            else:
                visitor = mine()
            expected = reference()
            assert module.visit(visitor).code == module.visit(expected).code
            assert visitor.events == expected.events and ('args of', 'f(x, skip(x))') in (
                visitor.events)



def test_a_pass_s_own_field_hook_is_kept():
    """A class that defines `on_visit_attribute` itself has it called, as LibCST would."""
    from slimdata.port.edits import Visitor

    for base in (Visitor, cst.CSTVisitor):
        class Fields(base):
            def __init__(self):
                super().__init__()
                self.fields = []

            def on_visit_attribute(self, node, attribute):
                self.fields.append(attribute)

        visitor = Fields()
        cst.parse_module('f(x)\n').visit(visitor)
        assert 'func' in visitor.fields and 'args' in visitor.fields


NESTED = '''import os


def first(x):
    """Its docstring."""
    y = x / 2  # halved
    if y:
        # a comment the if's body owns first
        z = os.sep
        w = z * 2
    for item in range(3):
        y += item
    return y
    # a comment the block owns


@decorator
class Second(object):

    def method(self, a,
               b):
        total = a + b
        with open(a) as f:
            total += len(f.read())
        return total
# a footer comment
'''


class _InnerEdit(cst.CSTTransformer):
    """In every indented body: replaces the statements whose code holds `replace`, removes
    those holding `remove`, puts `insert` first; other nodes are the very nodes they were (as
    `KeepsUnchanged` gives them back)."""

    def __init__(self, module, replace='', remove='', insert=''):
        super().__init__()
        self.module, self.replace, self.remove, self.insert = module, replace, remove, insert

    def leave_IndentedBlock(self, original, updated):
        body = []
        for statement in original.body:
            new = updated.body[original.body.index(statement)]
            code = self.module.code_for_node(statement)
            if self.remove and self.remove in code and len(original.body) > 1:
                continue
            if self.replace and self.replace in code and not isinstance(
                    statement, cst.BaseCompoundStatement):
                new = cst.parse_statement('replaced = True  # by the pass\n')
            body.append(new)
        if self.insert:
            body.insert(0, cst.parse_statement(self.insert))
        if all(a is b for a, b in zip(body, original.body)) and len(body) == len(original.body):
            return original
        return updated.with_changes(body=body)

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        if result is updated and updated.deep_equals(original) and not isinstance(
                updated, cst.IndentedBlock):
            return original  # unchanged: the very node, as the passes keep it
        return result


@pytest.mark.parametrize('edit', [
    {'replace': 'y = x / 2'}, {'replace': 'w = z'}, {'replace': 'y += item'},
    {'replace': 'return y'}, {'replace': 'total = a'}, {'replace': 'return total'},
    {'remove': 'Its docstring'}, {'remove': 'z = os.sep'}, {'remove': 'return total'},
    {'insert': 'import numpy as np\n'}, {'replace': 'f.read()', 'remove': 'w = z'}])
def test_a_change_inside_a_body_is_stitched_within_it(edit, monkeypatch):
    """A pass that changes statements inside a `def`, `class`, `if`, `for` or `with`: the
    code is LibCST's rendering of the tree, and no statement holding the change is rendered
    whole (but the new ones and the neighbours checked at a seam)."""
    rendered = []
    real = rendering._rendered
    monkeypatch.setattr(rendering, '_rendered', lambda module, statement, indents:
                        rendered.append(statement) or real(module, statement, indents))
    before = cst.parse_module(NESTED)
    after = before.visit(_InnerEdit(before, **edit))
    assert after.code != NESTED
    stitched = rendering._stitched(before, NESTED, TreeFacts(before, NESTED).spans(), after,
                                   rendering.Renderings())
    assert stitched == after.code
    # Definitions rendered: only their headers (a `pass` for a body), at a seam or a change.
    assert all(isinstance(node.body.body[0].body[0], cst.Pass) for node in rendered
               if isinstance(node, (cst.FunctionDef, cst.ClassDef)))


def test_a_body_that_does_not_start_where_python_says_is_not_taken_for_one(monkeypatch):
    """A definition Python and LibCST start on different lines (a decorator's name on the
    line after its `@`) fails the check of its header: its code is still LibCST's."""
    code = ('def outer():\n    x = 1\n\n    @\\\ndecorator\n    def inner():\n        pass\n'
            '    return x\n')
    before = cst.parse_module(code)
    after = before.visit(_InnerEdit(before, replace='pass'))
    spans = TreeFacts(before, code).spans()
    headers = []
    real = rendering.Renderings.header_of
    monkeypatch.setattr(rendering.Renderings, 'header_of', lambda self, *args: headers.append(
        real(self, *args)) or headers[-1])
    assert rendering._stitched(before, code, spans, after,
                               rendering.Renderings()) in (None, after.code)
    assert '\n    @\\\ndecorator\n    def inner():\n' in headers  # checked, and refused
    assert rendering.code_after_pass(before, code, spans, after) == after.code
    assert '        replaced = True' in after.code and '@\\\ndecorator' in after.code
