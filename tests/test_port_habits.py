"""`slimdata port`'s fixes of old Python habits that break on Python 3.10+ / numpy 2, run."""

import subprocess
import sys

import numpy as np
import pytest

from slimdata.port import tree


def _port_and_run(code: str):
    results, problems = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert problems == []
    ported, notes = results['m.py']
    namespace: dict = {}
    exec(compile(ported, 'm.py', 'exec'), namespace)  # noqa: S102
    return ported, notes, namespace


@pytest.mark.filterwarnings('ignore::FutureWarning')  # numpy's note on np.object
def test_original_numpy_aliases_fail_on_this_numpy():
    for alias in ('int', 'float', 'object'):
        with pytest.raises(AttributeError):
            getattr(np, alias)


def test_numpy_aliases_of_builtins_become_the_builtins():
    ported, notes, namespace = _port_and_run(
        'import numpy as np\n'
        'a = np.zeros(2, dtype=np.int)\n'
        'b = np.array([1.5], np.float)\n'
        'c = np.empty(1, dtype=np.object)\n'
        'd = np.int32(3)\n')
    assert namespace['a'].dtype == np.dtype(int) and namespace['b'].dtype == np.float64
    assert namespace['c'].dtype == object and namespace['d'].dtype == np.int32
    assert 'np.int32(3)' in ported
    assert [note.line for note in notes] == [2, 3, 4]


def test_names_numpy_2_removed_become_their_successors():
    for old in ('NaN', 'string_', 'product'):
        assert not hasattr(np, old)  # the original fails on this numpy
    ported, notes, namespace = _port_and_run(
        'import numpy as np\n'
        'a = np.NaN\n'
        'b = np.array(["x"], dtype=np.string_)\n'
        'c = np.product([2, 3])\n'
        'd = np.nan\n')
    assert np.isnan(namespace['a']) and namespace['b'].dtype.kind == 'S'
    assert namespace['c'] == 6
    assert 'a = np.nan\n' in ported and 'd = np.nan\n' in ported
    assert [note.line for note in notes] == [2, 3, 4]


def test_contextlib2_becomes_contextlib_when_it_has_every_name():
    ported, notes, namespace = _port_and_run(
        'import contextlib2\n'
        'with contextlib2.ExitStack() as stack:\n'
        '    closed = []\n'
        '    stack.callback(closed.append, 1)\n'
        'with contextlib2.suppress(KeyError):\n'
        '    {}["x"]\n')
    assert ported.startswith('import contextlib as contextlib2\n')
    assert namespace['closed'] == [1]


def test_contextlib2_kept_and_reported_for_a_name_contextlib_lacks():
    code = 'import contextlib2\nstack = contextlib2.ContextStack\n'
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    ported, notes = results['m.py']
    assert ported == code
    assert [note.kind for note in notes] == ['not ported']
    assert 'ContextStack' in notes[0].message


def test_implicit_relative_imports_of_a_package_init_run(tmp_path):
    sources = {'pkg/__init__.py': 'import fsns\nfrom sub import thing\nimport os\n',
               'pkg/fsns.py': 'import fsns_helper\nvalue = fsns_helper.one\n',
               'pkg/fsns_helper.py': 'one = 1\n', 'pkg/sub/__init__.py': 'thing = 2\n',
               'other/__init__.py': 'from __future__ import absolute_import\nimport helper\n',
               'other/helper.py': ''}
    results, problems = tree.port_sources(sources, tf_upgrade=None)
    assert problems == []
    assert results['pkg/__init__.py'][0] == ('from . import fsns\nfrom .sub import thing\n'
                                             'import os\n')
    assert results['other/__init__.py'][0] == sources['other/__init__.py']  # absolute_import
    again, _ = tree.port_sources({path: code for path, (code, _) in results.items()},
                                 tf_upgrade=None)
    assert {path: code for path, (code, _) in again.items()} == {
        path: code for path, (code, _) in results.items()}  # a second port changes nothing
    for path, (code, _) in results.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(code)
    assert results['pkg/fsns.py'][0].startswith(
        'if __package__:\n    from . import fsns_helper\nelse:\n    import fsns_helper\n')
    done = subprocess.run([sys.executable, '-c', 'import pkg; print(pkg.fsns.value, pkg.thing)'],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == '1 2', done.stderr
    # The module also runs as a script from its folder, where its sibling is top-level.
    done = subprocess.run([sys.executable, '-c', 'import fsns; print(fsns.value)'],
                          cwd=tmp_path / 'pkg', capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == '1', done.stderr


# attention_ocr 2019's read_charset (datasets/fsns.py): a line of a text file, matched by a str
# pattern, its group decoded as Python 2's bytes were.
CHARSET_READER = '''import io
import re

PATTERN = re.compile(r'(\\d+)\\t(.+)')


def read_charset(lines):
    charset = {}
    for line in lines:
        m = PATTERN.match(line)
        if m is None:
            continue
        charset[int(m.group(1))] = m.group(2).decode('utf-8')
    return charset


def first_number(data):
    found = re.search(r'\\d+', data)
    return found.group(0).decode('ascii')


def bytes_number(data):
    found = re.match(rb'(\\d+)', data)
    return found.group(1).decode('ascii')


charset = read_charset(io.StringIO('1\\t\\u00e4\\n2\\t<nul>\\n'))
number = first_number('abc 42')
from_bytes = bytes_number(b'7 days')
'''


def test_decode_of_a_str_pattern_match_is_dropped_and_a_bytes_one_kept():
    with pytest.raises(AttributeError, match="'str' object has no attribute 'decode'"):
        exec(compile(CHARSET_READER, 'm.py', 'exec'), {})  # noqa: S102
    ported, notes, namespace = _port_and_run(CHARSET_READER)
    assert namespace['charset'] == {1: '\u00e4', 2: '<nul>'}
    assert namespace['number'] == '42' and namespace['from_bytes'] == '7'
    assert "found.group(1).decode('ascii')" in ported  # a bytes pattern's match is bytes
    assert [note.line for note in notes] == [13, 19]


def test_decode_kept_where_the_match_name_has_another_binding():
    code = ('import re\n'
            "PATTERN = re.compile(r'(.+)')\n"
            'def f(line, other):\n'
            '    m = PATTERN.match(line)\n'
            '    m = other\n'
            "    return m.group(1).decode('utf-8')\n")
    results, problems = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert problems == [] and results['m.py'] == (code, [])


DICT_ITERATORS = '''scores = {'a': 1, 'b': 2}
pairs = []
for name, value in scores.iteritems():
    pairs.append((name, value))
total = sum(value for value in scores.itervalues())
names = sorted(scores.iterkeys())
first = next(scores.iteritems())
updates = scores.values()
count = len(scores.keys())
found = 'a' in scores.keys()
'''


def test_python_2_dict_iterators_become_views_or_iterators():
    with pytest.raises(AttributeError, match='iteritems'):
        exec(compile(DICT_ITERATORS, 'm.py', 'exec'), {})  # noqa: S102
    ported, notes, namespace = _port_and_run(DICT_ITERATORS)
    assert namespace['pairs'] == [('a', 1), ('b', 2)] and namespace['total'] == 3
    assert namespace['names'] == ['a', 'b'] and namespace['first'] == ('a', 1)
    assert 'for name, value in scores.items():' in ported
    assert 'sum(value for value in scores.values())' in ported
    assert 'sorted(iter(scores.keys()))' in ported and 'next(iter(scores.items()))' in ported
    # Written for Python 2, where keys(), values() and items() were lists: where the list may
    # matter it is one again; where a view serves as well, it is left.
    assert namespace['updates'] == [1, 2] and 'updates = list(scores.values())' in ported
    assert 'count = len(scores.keys())' in ported and "found = 'a' in scores.keys()" in ported
    assert [note.line for note in notes] == [3, 5, 6, 7, 8]


def test_views_kept_in_a_file_written_for_python_3():
    code = 'scores = {1: 2}\nupdates = scores.values()\n'
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert results['m.py'] == (code, [])
