"""The statements the Python 2 stage sets aside (slimdata.port.python2_statements): found on the
text as Python finds them, put back as they were, and a copy without them fixed as the whole
file is (fissix's own test cases of each fixer the stage runs, among other statements)."""

import ast
import inspect
import pathlib
import re
import tokenize

import pytest

import slimdata
from slimdata.port import edits, python2, python2_statements
from slimdata.port.facts import MatchedLines
from slimdata.port.python2_statements import logical_lines, put_back, set_aside, statements

# Python 3 files of every shape the project has: the expectation is Python's own reading.
SOURCES = sorted(pathlib.Path(slimdata.__file__).parent.rglob('*.py'))[:80] + sorted(
    pathlib.Path(__file__).parent.glob('test_port*.py'))


def _python_logical_lines(code):
    """(first, last) of each logical line, by Python's tokenizer."""
    found, first = [], None
    for token in tokenize.generate_tokens(iter(code.splitlines(True)).__next__):
        if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT,
                          tokenize.ENDMARKER):
            continue
        if first is None:
            first = token.start[0]
        if token.type == tokenize.NEWLINE:
            found.append((first, token.start[0]))
            first = None
    return found


def _span(node):
    first = min([node.lineno] + [decorator.lineno for decorator in
                                 getattr(node, 'decorator_list', [])])
    return first, node.end_lineno


@pytest.mark.parametrize('path', SOURCES, ids=lambda path: path.name)
def test_logical_lines_and_statements_are_pythons(path):
    code = path.read_text()
    assert [(line.first, line.last) for line in logical_lines(code)] == (
        _python_logical_lines(code))
    found = statements(code)
    tree = ast.parse(code)
    assert [(statement.first, statement.last) for statement in found] == [
        _span(node) for node in tree.body]
    # The statements of each function and class body, one level down.
    for statement, node in zip(found, tree.body):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.body[0].lineno > (
                node.lineno):
            assert [(inner.first, inner.last) for inner in statement.blocks[0]] == [
                _span(inner) for inner in node.body]


def test_odd_text_a_scan_must_read_right():
    """Strings holding brackets, quotes and comment signs, triple quotes over lines, a
    backslash continuation, clauses and decorators: the statements Python's tree sees."""
    code = ('x = "(#"  # a comment (\n'
            "y = '''\n)\n'''\n"
            'z = 1 + \\\n    2\n'
            '@dec(\n    1)\n'
            'def f(a=")"):\n'
            '    if a:\n        pass\n    elif a:\n        pass\n    else:\n        pass\n'
            '    try:\n        pass\n    except E:\n        pass\n    finally:\n        pass\n'
            '\tw = r"\\"" ; v = 2\n'
            'class C: pass\n')
    assert [(statement.first, statement.last) for statement in statements(code)] == [
        _span(node) for node in ast.parse(code.replace('\t', '    ')).body]


@pytest.mark.parametrize('path', SOURCES[:20], ids=lambda path: path.name)
def test_what_is_set_aside_is_put_back_as_it_was(path):
    code = path.read_text()
    tree = ast.parse(code)
    kept_lines = {node.lineno for node in ast.walk(tree) if isinstance(node, ast.Return)}
    copy, aside = set_aside(code, lambda first, last: any(
        first <= line <= last for line in kept_lines))
    assert aside and len(copy.splitlines()) == len(code.splitlines())
    ast.parse(copy)  # still Python: blocks stay blocks
    for line in kept_lines:
        assert copy.splitlines()[line - 1] == code.splitlines()[line - 1]
    assert put_back(copy, code, aside) == code


def test_a_moved_placeholder_is_refused():
    code = 'import os\n\ndef f():\n    return 1\n\nprint "x"\n\ndef g():\n    return 2\n'
    copy, aside = set_aside(code, lambda first, last: first <= 6 <= last)
    assert len(aside) == 2 and put_back(copy, code, aside) == code
    lines = copy.splitlines(True)
    assert put_back(''.join(lines[:3] + ['    x = 1\n'] + lines[3:]), code, aside) is None
    assert put_back(copy.replace('_slimdata_set_aside_1_', 'y'), code, aside) is None
    assert put_back(copy.replace('_1_\n', '_1_\nz = 2\n'), code, aside) is None


def test_a_run_of_statements_set_aside_is_one_placeholder():
    """Sibling statements none of which is needed, one after the other, are one placeholder
    (comments and blank lines between them included); each run is put back as it was."""
    code = ('import os\n\n\ndef f():\n    return 1\n# about h\ndef h():\n    return 2\n\n\n'
            'print "x"\n\n\ndef g():\n    # g\n    a = 1\n    print a\n    b = 2\n    c = 3\n'
            '\n# between\nclass C:\n    pass\n')
    needed = {11, 17}  # the print statements
    copy, aside = set_aside(code, lambda first, last: any(
        first <= line <= last for line in needed))
    assert aside == [(4, 8), (16, 16), (18, 19), (22, 23)]
    assert copy.splitlines() == [
        'import os', '', '', 'pass  # _slimdata_set_aside_0_', '', '', '', '', '', '',
        'print "x"', '', '', 'def g():', '    # g', '    pass  # _slimdata_set_aside_1_',
        '    print a', '    pass  # _slimdata_set_aside_2_', '', '', '# between',
        'pass  # _slimdata_set_aside_3_', '']
    assert put_back(copy, code, aside) == code


def _fissix_cases():
    """The Python 2 code of fissix's own test cases (`b = ...` of `self.check(b, a)`,
    `self.unchanged(s)`, ...) of each fixer the stage runs."""
    from fissix.tests import test_fixers
    names = {python2._fixer_name(fixer_class(python2._tool().options, []))
             for fixer_class in python2.FIXERS}
    cases = []
    for _, test_class in inspect.getmembers(test_fixers, inspect.isclass):
        fixer = f"fix_{getattr(test_class, 'fixer', '')}"
        if fixer not in names:
            continue
        tree = ast.parse(inspect.getsource(test_class).replace('\n    ', '\n')
                         .split('\n', 1)[1].lstrip())
        for node in ast.walk(tree):
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)
                    and any(isinstance(target, ast.Name) and target.id in ('b', 's')
                            for target in node.targets)):
                cases.append((fixer, node.value.value))
    return cases


FILLER = ('def _unrelated(values):\n    total = 0\n    for value in values:\n'
          '        total += value * 2\n    return total\n')


def test_the_copy_is_fixed_as_the_whole_file_is(monkeypatch):
    """Each of fissix's test cases of the fixers the stage runs, between statements the fixers
    do not need: the stage's copy gives the code and notes the whole file gives."""
    cases = _fissix_cases()
    assert len({fixer for fixer, _ in cases}) >= 40 and len(cases) > 450
    used = []
    real_put_back = python2_statements.put_back
    monkeypatch.setattr(python2_statements, 'put_back', lambda *args: (
        used.append(real_put_back(*args) is not None), used[-1] and real_put_back(*args))[1]
        or None)

    def port(code):
        try:
            return python2.Python2Stage.port(code, edits.Context('m.py'))
        except python2.Python2ParseError as error:
            return error.line, error.why

    files = [FILLER + code.rstrip('\n') + '\n' + FILLER for _, code in cases]
    with_copies = [port(code) for code in files]
    assert used.count(True) > 0.8 * len(files)
    monkeypatch.setattr(python2, '_needed_text', lambda: None)
    assert [port(code) for code in files] == with_copies


def test_python_2_syntax_no_fixer_word_marks_is_fixed_all_the_same():
    """A tuple parameter (`def f(a, (b, c))`) shows no word the copy keeps a statement for:
    the copy, with it set aside, is no Python 3, and the stage fixes the whole file."""
    code = 'print "x"\n\ndef f(a, (b, c)):\n    return a + b + c\n'
    ported, notes = python2.Python2Stage.port(code, edits.Context('m.py'))
    assert ported == ('print("x")\n\ndef f(a, xxx_todo_changeme):\n    (b, c) = '
                      'xxx_todo_changeme\n    return a + b + c\n')
    assert {note.line for note in notes} == {1, 3}


def test_the_needed_words_come_from_fissixs_matcher():
    """Every word that starts a pattern in fissix's bottom matcher marks a line, but for the
    grammar keywords whose fixers need another word or Python 2 syntax."""
    patterns = python2._needed_text()
    assert patterns is not None
    keys = [key for key in python2._tool().BM.root.transition_table if isinstance(key, str)]
    for key in keys:
        marked = any(pattern.search(f'x = {key}') for pattern in patterns)
        assert marked == (key not in python2._PATTERN_KEYWORDS), key
    assert not any(pattern.search('x = 0.05 + y.zipper') for pattern in patterns)


def test_imports_are_kept_where_a_fixer_may_add_one(monkeypatch):
    """fix_intern makes `intern(s)` `sys.intern(s)` and adds `import sys` unless the file
    imports it: the copy keeps every import of a file that names `intern` (else it imports
    sys a second time), and sets aside the imports of a file that names no such word."""
    code = ('"""A module."""\nimport sys\nimport os\n\n' + FILLER
            + "\nprint intern('x')\n")
    ported, _ = python2.Python2Stage.port(code, edits.Context('m.py'))
    assert ported.count('import sys') == 1 and "print(sys.intern('x'))" in ported
    monkeypatch.setattr(python2, '_ADDS_IMPORTS', re.compile('(?!)'))  # never: imports set aside
    ported, _ = python2.Python2Stage.port(code, edits.Context('m.py'))
    assert ported.count('import sys') == 2
    plain = code.replace("intern('x')", 'os.sep')
    copy, _ = python2_statements.set_aside(plain, MatchedLines.matching(
        plain, *python2._needed_text()).any_in)
    assert copy.startswith('"""A module."""\npass  # _slimdata_set_aside_0_\n\n')
    # fissix reads `from __future__ import print_function` in the copy: it is kept.
    future = '"""A module."""\nfrom __future__ import print_function\n' + plain
    copy, _ = python2_statements.set_aside(future, MatchedLines.matching(
        future, *python2._needed_text()).any_in)
    assert copy.startswith('"""A module."""\nfrom __future__ import print_function\n')
