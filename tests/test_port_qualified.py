"""The port's answers from Python's parser (`qualified`, `facts`) are LibCST's.

The passes ask what a name means and what line a node is on; `qualified.ModuleNames` and
`facts.TreeFacts` answer from Python's own parser where they can, much cheaper than LibCST's
scope analysis and positions. Every answer they give is compared here with LibCST's own
(`ScopeProvider`, `PositionProvider`), for every name and attribute, and every node, of a module
written to hold each kind of scope and binding and of real code (slimdata's own modules and the
port's fixture). The expectations are LibCST's, computed by LibCST.
"""

import ast
import pathlib
import re
import sys

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, ScopeProvider

from slimdata.port import edits, qualified
from slimdata.port.facts import TreeFacts

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: Every kind of scope and binding `ModuleNames` models, or leaves to LibCST.
SCOPES = '''"""Names in every kind of scope."""
import os
import os.path
import typing
import numpy as np
import tensorflow as tf
import tensorflow.contrib.slim as slim
from tensorflow.contrib import layers as contrib_layers, framework
from . import sibling
from .. import parent as up
from .pkg.mod import thing
from tensorflow.python.ops import *  # noqa
tf_compat = tf.compat.v1; first = helper
helper()
slim.conv2d(1)
print(np.float(1), os.path.join('a'))
os.path.exists('x')
try:
    import cPickle as pickle
except ImportError as missing:
    import pickle
    missing.args
with open('f') as handle:
    handle.read()
if pickle:
    shadow = 1
elif tf:
    shadow = 2
else:
    pass
[shadow.real for shadow in range(2)]
counter = 0
counter += 1
annotated_name: int = 3


def helper(x, y=tf.zeros, *args, z=np.int, **kwargs):
    np = x
    np.float(tf.contrib.slim.arg_scope)
    inner = lambda tf, d=tf.zeros: tf.contrib.slim(d)
    values = [tf.contrib.layers for tf in (1, 2) if tf.contrib]
    nested = [[y.real for y in row] for row in values]
    total = 0
    total += sum(v.shape for v in values)
    late()
    def late():
        return slim.conv2d
    late()
    x(y)
    kwargs.items()
    typing.NewType(x, int)  # LibCST's scope analysis skips the first argument
    if x: import json as loaded
    loaded.dumps(nested, inner)
    return {k: tf.v for k, tf in kwargs.items()}, (tf.a for _ in args), annotated_name.real


@framework.add_arg_scope
class Model(object):
    tf = None
    layers = contrib_layers.conv2d
    layers.call()

    @staticmethod
    def build(tf=tf.compat):
        global os
        os = tf.x
        return tf.contrib, Model.layers, layers

    def call(self, inputs):
        layers = self.layers
        with tf.variable_scope('x') as scope:
            scope.reuse_variables()
        try:
            pass
        except ValueError as error:
            error.args
        for slim in range(3):
            slim.bit_length()
        if (n := len(inputs)) > 2:
            n.bit_length()
        def closure():
            nonlocal layers
            return layers.x
        return layers(inputs), tf.nn.relu, closure


def annotated(a: tf.Tensor) -> np.ndarray:
    b: int = a.shape
    return b.real, framework.arg_scope, thing.x, sibling.y, up.z


if __name__ == '__main__':
    tf.app.run()
    slim = None
    slim.x
    late_module = 1
late_module.real
for index in range(2):
    index.real
'''


def _corpus():
    """SCOPES, the port's fixture, and some of slimdata's own modules (real code, with
    classes, closures, comprehensions, lambdas, decorators)."""
    port = ROOT / 'slimdata' / 'port'
    paths = [*(port / name for name in ('edits.py', 'facts.py', 'python2.py', 'qualified.py',
                                        'tree.py', 'upgrade_v2.py')),
             ROOT / 'slimdata' / 'contrib' / 'estimator' / 'training.py',
             *sorted((ROOT / 'tests' / 'port_fixture').rglob('*.py'))]
    return [('scopes.py', SCOPES)] + [(path.name, path.read_text()) for path in paths
                                      if path.stat().st_size]


def _parents_and_scopes(module):
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    return wrapper.resolve(ParentNodeProvider), wrapper.resolve(ScopeProvider)


@pytest.mark.parametrize('path, code', _corpus(), ids=lambda value: str(value)[:20])
def test_qualified_names_are_libcst_s(path, code):
    module = cst.parse_module(code)
    parents, scopes = _parents_and_scopes(module)
    names = qualified.ModuleNames.of(ast.parse(code), module, code)
    assert names is not None
    tops = {id(statement): index for index, statement in enumerate(module.body)}

    def top_of(node):
        while node is not None and id(node) not in tops:
            node = parents.get(node)
        return tops[id(node)] if node is not None else None

    answered = asked = 0
    for node in parents:
        if not isinstance(node, (cst.Name, cst.Attribute)):
            continue
        got = names.qualified_names(node, parents.get, top_of)
        asked += isinstance(node, cst.Attribute)
        if got is None:
            continue
        answered += isinstance(node, cst.Attribute)
        scope = scopes.get(node)
        if got is qualified.UNSCOPED:
            assert scope is None, cst.Module([]).code_for_node(node)
        else:
            assert got == set(scope.get_qualified_names_for(node)), (
                path, cst.Module([]).code_for_node(node))
    # Most attributes are answered without LibCST: the fast path did not quietly fall back.
    assert answered >= 0.6 * asked


def test_the_scopes_module_has_each_kind_of_answer():
    """The comparison above meets every branch: names through imports, locals of each kind of
    scope, builtins, nothing, nodes in imports, and cases left to LibCST."""
    module = cst.parse_module(SCOPES)
    parents, _ = _parents_and_scopes(module)
    names = qualified.ModuleNames.of(ast.parse(SCOPES), module, SCOPES)
    found = {}
    for node in parents:
        if isinstance(node, (cst.Name, cst.Attribute)):
            answer = names.qualified_names(node, parents.get, lambda node: None)
            found.setdefault(cst.Module([]).code_for_node(node), []).append(answer)

    def answers(code):
        return [answer if answer in (None, qualified.UNSCOPED) else {name.name for name in answer}
                for answer in found[code]]

    assert answers('np.float') == [{'numpy.float'}, {'helper.<locals>.np.float'}]
    assert answers('tf.contrib.slim.arg_scope') == [{'tensorflow.contrib.slim.arg_scope'}]
    assert answers('contrib_layers.conv2d') == [{'tensorflow.contrib.layers.conv2d'}]
    assert answers('thing.x') == [{'.pkg.mod.thing.x'}] and answers('up.z') == [{'..parent.z'}]
    assert answers('shadow.real') == [{'<comprehension>.shadow.real'}]
    assert answers('scope.reuse_variables') == [{'Model.call.<locals>.scope.reuse_variables'}]
    assert answers('loaded.dumps') == [{'json.dumps'}]
    assert answers('late_module.real') == [{'late_module.real'}]
    assert answers('print') == [{'builtins.print'}]
    # In the imports LibCST has no scope; `os` is rebound by `global os` in a method.
    assert answers('os')[:2] == [qualified.UNSCOPED] * 2 and set(answers('os')[2:]) == {None}
    # Left to LibCST: an except name at module level, `import os.path`'s dotted names, a
    # walrus (it binds outside comprehensions), a name as it is assigned.
    assert answers('missing.args') == [None] and answers('os.path.exists') == [None]
    assert answers('n.bit_length') == [None] and answers('counter') == [None, None]
    # NewType's first argument has no scope in LibCST; the same parameter as a callee has one.
    calls = {cst.Module([]).code_for_node(node.func): node for node in parents
             if isinstance(node, cst.Call)}
    assert names.qualified_names(calls['typing.NewType'].args[0].value, parents.get,
                                 lambda node: None) is None
    assert names.qualified_names(calls['x'].func, parents.get, lambda node: None) is not None


SPECIAL = """
import os.path, json as loaded
def f(values, counts):
    global state
    def g():
        nonlocal values
    if (walrus := len(values)) > 1:
        pass
    match values:
        case [first, *others]:
            pass
        case {'k': value, **remaining}:
            pass
        case Point(x=0) as point:
            pass
"""

#: Python 3.12's type parameters and aliases.
SPECIAL_312 = """
def first[T](items: list[T]) -> T:
    return items[0]
class Box[U, *Shape, **Params]:
    pass
type Pairs[K] = list[tuple[K, K]]
"""


def test_names_left_to_libcst_are_those_every_node_binds():
    """The names bound in ways `ModuleNames` leaves to LibCST, read from the statements (and
    the expressions only where a walrus is): each kind, listed by hand."""
    expected = {'os', 'state', 'values', 'walrus', 'first', 'others', 'value', 'remaining',
                'point'}
    assert set(qualified._special_names(ast.parse(SPECIAL), SPECIAL)) == expected
    # Without `:=` in the code, no expression is walked (nor can one bind a name so).
    without = SPECIAL.replace('(walrus := len(values))', 'len(values)')
    assert set(qualified._special_names(ast.parse(without), without)) == expected - {'walrus'}
    if sys.version_info >= (3, 12):
        assert set(qualified._special_names(ast.parse(SPECIAL_312), SPECIAL_312)) == {
            'T', 'U', 'Shape', 'Params', 'Pairs', 'K'}


@pytest.mark.parametrize('path, code', _corpus(), ids=lambda value: str(value)[:20])
def test_lines_are_libcst_s(path, code):
    """A pass's `line_of` (its statement's line from Python, the node's place in it from the
    statement rendered alone) is LibCST's position for every node."""
    parsed = edits.ParsedFile(code)
    reference = MetadataWrapper(parsed.module, unsafe_skip_copy=True).resolve(PositionProvider)
    checked = []

    class Probe(edits.PortTransformer):
        SKIPS_TRIVIA = False  # every node, whitespace and punctuation too

        def on_leave(self, original_node, updated_node):
            line = self._line_in_statement(original_node)
            if line is not None:
                checked.append((original_node, line))
            return super().on_leave(original_node, updated_node)

    parsed.run(Probe(edits.Context(path)))
    assert len(checked) >= 0.95 * len(reference) - 1  # all but the module and its comments
    for node, line in checked:
        assert line == reference[node].start.line, (path, cst.Module([]).code_for_node(node))


def test_spans_pair_every_statement_with_python_s():
    code = SCOPES + 'a = 1; b = 2\nif a:\n    c = 3; d = 4\n'
    module = cst.parse_module(code)
    spans = TreeFacts(module, code).spans()
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    statements = [node for node in positions
                  if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement))]
    assert len(statements) > 60
    for statement in statements:
        span = spans[id(statement)]
        assert span.line == positions[statement].start.line
        assert span.first <= span.line <= span.last
    assert {spans[id(statement)].first for statement in module.body
            if isinstance(statement, cst.ClassDef)} == {SCOPES.splitlines().index(
                '@framework.add_arg_scope') + 1}


#: An import of each kind of use and shadowing, named by what `binding_read` answers of it.
BINDINGS = '''import os as read_in_function
import sys as shadowed_by_parameter
import re as shadowed_by_local
import json as read_in_class_body
import math as read_in_method_beside_a_class_binding
import time as read_in_comprehension
import glob as only_an_attribute
import shutil as only_a_keyword
import abc as deleted
import enum as named_in_a_string
from collections import OrderedDict as read_in_lambda


def f(shadowed_by_parameter):
    shadowed_by_local = 1
    return (read_in_function.sep, shadowed_by_parameter, shadowed_by_local,
            f.only_an_attribute, f(only_a_keyword=1))


class C:
    x = read_in_class_body.dumps
    read_in_method_beside_a_class_binding = 2

    def m(self):
        return read_in_method_beside_a_class_binding.pi


squares = [read_in_comprehension.time() for _ in range(2)]
call = lambda: read_in_lambda()
del deleted
NOTE = 'named_in_a_string'


def outer():
    import itertools as closed_over
    import functools as shadowed_inside

    def inner():
        return closed_over.chain

    def other(shadowed_inside):
        def deeper():
            return shadowed_inside
        return deeper

    class Holder:
        import operator as in_a_class_body
        add = in_a_class_body.add

    return inner, other, Holder


def declared():
    global late_global
    import string as late_global


def use():
    return late_global.digits
'''


def _imports_read(code):
    """(name bound, line, LibCST's answer: whether its binding is read) of each import that
    binds a plain name, and the facts of `code`."""
    module = cst.parse_module(code)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    scopes, positions = wrapper.resolve(ScopeProvider), wrapper.resolve(PositionProvider)
    found = []
    for node in scopes:
        if not isinstance(node, (cst.Import, cst.ImportFrom)) or scopes[node] is None \
                or isinstance(node.names, cst.ImportStar):
            continue
        for alias in node.names:
            if isinstance(node, cst.Import) and alias.asname is None:
                continue  # `import a.b` binds `a`: the port asks only of plain names
            bound = alias.evaluated_alias or alias.evaluated_name
            read = any(assignment.references for assignment
                       in scopes[node].assignments[bound] if assignment.node is node)
            found.append((bound, positions[node].start.line, read))
    return found, TreeFacts(module, code)


@pytest.mark.parametrize('path, code', [('bindings.py', BINDINGS)] + _corpus(),
                         ids=lambda value: str(value)[:20])
def test_binding_reads_are_libcst_s(path, code):
    """`TreeFacts.binding_read` (Python's symbol table) says whether an import's binding is
    read as LibCST's scope analysis does, wherever it says."""
    found, facts = _imports_read(code)
    for bound, line, read in found:
        answer = facts.binding_read(bound, line)
        assert answer is None or answer == read, (path, line, bound)


def test_binding_reads_answer_each_kind_of_use():
    found, facts = _imports_read(BINDINGS)
    answers = {bound: facts.binding_read(bound, line) for bound, line, _ in found}
    assert answers == {
        'read_in_function': True, 'shadowed_by_parameter': False, 'shadowed_by_local': False,
        'read_in_class_body': True, 'read_in_method_beside_a_class_binding': True,
        # Python 3.12's table drops the reads of a comprehension it inlines: left to LibCST.
        'read_in_comprehension': True if sys.version_info < (3, 12) else None,
        'only_an_attribute': False, 'only_a_keyword': False,
        'read_in_lambda': True, 'closed_over': True, 'shadowed_inside': False,
        # Left to LibCST: a del, a string naming it, a class body's import, a global one.
        'deleted': None, 'named_in_a_string': None, 'in_a_class_body': None,
        'late_global': None}
    assert {bound: read for bound, _, read in found if answers[bound] is not None} == {
        bound: answer for bound, answer in answers.items() if answer is not None}


def test_every_node_is_ast_walk_s_nodes():
    """`qualified.every_node` gives the nodes `ast.walk` gives (in another order), each once,
    for real code and for a lone expression."""
    for _, code in _corpus():
        tree = ast.parse(code)
        walked = list(ast.walk(tree))
        nodes = qualified.every_node(tree)
        assert len(nodes) == len(walked) and {id(node) for node in nodes} == {
            id(node) for node in walked}
    expression = ast.parse('f(a, *b, k=[c for c in d])', mode='eval').body
    assert sorted(type(node).__name__ for node in qualified.every_node(expression)) == sorted(
        type(node).__name__ for node in ast.walk(expression))


def _last_name(node):
    return getattr(node, 'attr', getattr(node, 'id', ''))


@pytest.mark.parametrize('kinds, test, text', [
    ((ast.BinOp, ast.AugAssign), lambda node: isinstance(node.op, ast.Div), r'/'),
    ((ast.Call,), lambda node: _last_name(node.func) in ('join', 'name_scope', 'get'),
     r'\b(?:name_scope|join|get)\b'),
    ((ast.Attribute,), lambda node: node.attr == 'module', r'\bmodule\b'),
    ((ast.Name,), lambda node: node.id == 'tf', r'\btf\b'),
])
def test_lines_of_a_text_are_those_of_the_whole_walk(kinds, test, text):
    """`TreeFacts.lines_of` with a `text` (what the code of each node it looks for holds)
    walks only the statements whose lines hold it, at any depth: it finds the lines a walk of
    every node finds (decorators, nested blocks, handlers and nodes over several lines
    included)."""
    pattern = re.compile(text)
    checked = 0
    for _, code in [*_corpus(), ('hinted.py', _HINTED)]:
        tree = ast.parse(code)
        facts = TreeFacts(cst.parse_module(code), code, tree)
        expected = facts.lines_of(kinds, test)
        found = facts.lines_of(kinds, test, pattern)
        assert found.lines == expected.lines
        checked += len(expected.lines)
    assert checked > 15


#: Each place a node can be that a walk of statements could miss.
_HINTED = '''
@tf.name_scope('a', [x])
def f(module):
    try:
        pass
    except ValueError:
        with tf.name_scope('b'):
            y = (a /
                 b)
    for v in range(3):
        if v:
            v /= 2
        else:
            os.path.join(
                module.module, tf.get(1))
    return [tf.z for _ in ()]


class C(object):
    @property
    def g(self, tf=tf.get(2)):
        return self.module / 2


@tf.name_scope(a.module, [1 / 2])
def h():
    return 1
'''
