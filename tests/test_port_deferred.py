"""The port's LibCST trees with top-level functions and classes parsed when first read
(`slimdata.port.deferred`): the same trees as LibCST's parse of the whole file, node for node,
and the same port."""

import ast
import pathlib

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from slimdata.port import deferred, tree
from slimdata.port.private_names import _PrivateImportRemover

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _deferred_and_whole(code):
    return deferred.parse_module(code, ast.parse(code)), cst.parse_module(code)


def _check_same(code, name='code'):
    """The deferred tree renders `code` unparsed, and parsed is LibCST's tree node for node;
    how many statements were deferred."""
    partial, whole = _deferred_and_whole(code)
    count = sum(isinstance(statement, deferred.Deferred) for statement in partial.body)
    assert partial.code == code, name  # rendered from the statements' text
    parsed = partial.with_changes(body=[deferred.real_node(s) for s in partial.body])
    assert parsed.deep_equals(whole), name
    assert (parsed.default_indent, parsed.default_newline, parsed.has_trailing_newline) == (
        whole.default_indent, whole.default_newline, whole.has_trailing_newline), name
    assert partial.code == code, name  # rendered from the parsed nodes
    return count


def _real_code():
    """The port's modules, its fixture, LibCST's nodes (code of another hand), and with
    `slow`, the rest of slimdata, its datasets and its tests."""
    roots = [ROOT / 'slimdata' / 'port', ROOT / 'tests' / 'port_fixture',
             pathlib.Path(cst.__file__).parent / '_nodes']
    return [path for root in roots for path in sorted(root.rglob('*.py')) if path.stat().st_size]


def test_real_code_parses_to_libcst_s_trees_node_for_node():
    deferred_count = 0
    for path in _real_code():
        deferred_count += _check_same(path.read_text(encoding='utf-8'), str(path))
    assert deferred_count > 300  # the check is of deferred statements


@pytest.mark.slow
def test_all_of_slimdata_parses_to_libcst_s_trees_node_for_node():
    paths = [path for root in ('slimdata', 'datasets', 'tests', 'train_examples', 'benchmarks')
             for path in sorted((ROOT / root).rglob('*.py')) if path.stat().st_size]
    assert sum(_check_same(path.read_text(encoding='utf-8'), str(path)) for path in paths) > 1000


# The lines after a block: LibCST gives those indented as deep as its block to it (its
# footer), the others to the next statement; at the end of a file with no newline too.
_AFTER_BLOCKS = [
    'def f():\n    x = 1\n    \ny = 2\n',
    'def f():\n    x = 1\n    \n\ny = 2\n',
    'def f():\n    x = 1\n\n    \ny = 2\n',
    'def f():\n    x = 1\n  \ny = 2\n',
    'def f():\n    x = 1\n        \ny = 2\n',
    'def f():\n    x = 1\n\t\ny = 2\n',
    'def f():\n    x = 1\n    \n    # c\n\n# d\ny = 2\n',
    'class A:\n    def f():\n        x = 1\n        \n    \ny = 2\n',
    'def f():\n    for x in y:\n        a = 1\n        # in the loop\n    # in f\n# before g\n'
    'def g():\n  pass\n',
    'def f():\n    x = 1\n    return x\n\n\n    ',
    'def f():\n    x = 1\n    return x',
    'def f():\n    x = 1\n    return x\n    # last',
]
_FIRST = 'import os\n\nif os:\n    pass\n\n'


@pytest.mark.parametrize('tail', _AFTER_BLOCKS)
def test_the_lines_after_a_deferred_statement_go_where_libcst_puts_them(tail):
    function = 'def h(a,\n      b):\n    """Doc."""\n    return a\n\n'
    code = _FIRST + function + tail.replace('x = 1\n', 'x = 1\n    x += 1\n    x *= 2\n', 1)
    assert _check_same(code) >= 1


@pytest.mark.parametrize('code', [
    # Indented by two spaces, by a tab; decorated; async; a class; a one-line body.
    'def first():\n  pass\n\n@decorator(1)\n@other\ndef f(a):\n  if a:\n    return 1\n  return 2\n',
    'class First:\n\tpass\n\nclass A(B):\n\tdef f(self):\n\t\treturn 1\n\n\tx = 2\n',
    _FIRST + 'async def f():\n    await g()\n    async for x in y:\n        pass\n',
    _FIRST + 'def f(): return (1,\n                  2,\n                  3)\nx = 1\n',
    # The file's indentation read after its first block: a function before it is not deferred.
    'def f():\n  a = 1\n  b = 2\n  return a\n\nif x:\n    pass\n\ndef g():\n    a = 1\n    b = 2\n'
    '    return a\n',
])
def test_indentation_decorators_and_one_line_bodies_parse_as_in_the_whole_file(code):
    _check_same(code)


def test_a_statement_not_read_is_not_parsed_and_one_read_is_parsed_once():
    code = _FIRST + 'def f():\n    a = 1\n    b = 2\n    return a\n'
    module, _ = _deferred_and_whole(code)
    statement = module.body[-1]
    assert isinstance(statement, cst.FunctionDef) and deferred.unparsed(statement)
    assert module.code == code and deferred.unparsed(statement)  # rendered from its text
    name = statement.name
    assert name.value == 'f' and not deferred.unparsed(statement)
    assert statement.name is name  # the same parse

    class Names(cst.CSTVisitor):
        def __init__(self):
            super().__init__()
            self.functions = []

        def visit_FunctionDef(self, node):
            self.functions.append(node.name.value)

    names = Names()
    module.visit(names)
    assert names.functions == ['f']


def test_an_import_remover_reads_only_the_statements_that_may_hold_an_import():
    """A statement not parsed yet whose code holds no `import` is left unread; one that
    does is read, and its import removed as in the whole file's tree."""
    code = (_FIRST + 'from tensorflow.python.ops import array_ops\n\n'
            'def f():\n    a = 1\n    b = 2\n    return a\n\n'
            'def g():\n    from tensorflow.python.ops import array_ops, math_ops\n    a = 1\n'
            '    return math_ops\n    # the end\n\nx = f\n')
    partial, whole = _deferred_and_whole(code)
    f, g = partial.body[-3:-1]
    assert deferred.unparsed(f) and deferred.unparsed(g)
    removed = partial.visit(_PrivateImportRemover({'array_ops'}))
    assert deferred.unparsed(f) and not deferred.unparsed(g)
    expected = whole.visit(_PrivateImportRemover({'array_ops'})).code
    assert removed.code == expected
    assert 'array_ops' not in expected and 'import math_ops' in expected


def _positions(module):
    """Every node's position in `module`, in the order of a walk."""
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = []

    class Every(cst.CSTVisitor):
        def on_visit(self, node):
            nodes.append(node)
            return True

    module.visit(Every())
    return [positions.get(node) for node in nodes]


@pytest.mark.parametrize('parsed_first', [False, True])
def test_positions_are_libcst_s(parsed_first):
    code = (_FIRST + '# about f\n@decorator\ndef f(a):\n    x = 1\n    return x\n    # end\n'
            '\nx = f\n')
    partial, whole = _deferred_and_whole(code)
    assert deferred.unparsed(partial.body[-2])
    if parsed_first:
        partial.body[-2].parsed()
    assert _positions(partial) == _positions(whole)


def test_an_error_in_a_deferred_statement_names_the_file_s_line():
    with pytest.raises(cst.ParserSyntaxError) as raised:
        deferred._parse_alone('def f():\n    x = (\n', '    ', 40, cst.FunctionDef)
    assert raised.value.raw_line in (41, 42)


def test_the_port_is_the_same_with_every_statement_parsed_first(monkeypatch):
    sources = {path.relative_to(ROOT).as_posix(): path.read_text(encoding='utf-8')
               for path in sorted((ROOT / 'tests' / 'port_fixture').rglob('*.py'))}
    ported, problems = tree.port_sources(sources, tf_upgrade=None)
    monkeypatch.setattr(deferred, 'parse_module', lambda code, python_tree: cst.parse_module(
        code))
    whole, whole_problems = tree.port_sources(sources, tf_upgrade=None)
    assert ported == whole and problems == whole_problems
    assert any(notes for _, notes in ported.values())
