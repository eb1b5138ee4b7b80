"""The Python 2 stage (slimdata.port.python2): 2to3's fixers on files written for Python 2,
every change reported at its line, and the ported program run."""

import re
import subprocess
import sys

from port_snippets import PYTHON_2_TAIL
from slimdata.port import edits, python2, tree

PROGRAM = '''import cPickle

def describe(scores):
    names = scores.keys()
    names.sort()
    for name, value in scores.iteritems():
        print "%s=%d" % (name, value),
    print
    if scores.has_key('a') and 1 <> 2:
        print `names[0]`
    total = 0L
    for i in xrange(3):
        total += long(i)
    print total + 0777
    try:
        raise ValueError, "bad"
    except ValueError, error:
        print "caught", error
    text = unicode('abc')
    print isinstance(text, basestring)
    print cPickle.loads(cPickle.dumps(sorted(names)))

describe({'b': 2, 'a': 1})
'''


def _lines_with(code: str, word: str):
    return [number for number, line in enumerate(code.splitlines(), 1) if word in line]


def test_a_python_2_program_runs_after_the_port(tmp_path):
    results, problems = tree.port_sources({'prog.py': PROGRAM}, tf_upgrade=None)
    assert problems == []
    ported, notes = results['prog.py']
    (tmp_path / 'prog.py').write_text(ported)
    done = subprocess.run([sys.executable, 'prog.py'], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # What Python 2 printed (dicts in insertion order, as Python 3's).
    assert done.stdout.splitlines() == ['b=2 a=1 ', repr('a'), str(0 + 1 + 2 + 0o777),
                                        'caught bad', 'True', repr(['a', 'b'])]


def test_every_change_is_reported_at_its_line():
    results, _ = tree.port_sources({'prog.py': PROGRAM}, tf_upgrade=None)
    notes = results['prog.py'][1]
    assert all(note.kind == edits.CHANGED for note in notes)
    changed = {(note.line, note.message.rpartition('(2to3 ')[2].rstrip(')')) for note in notes}
    expected = {
        'fix_print': _lines_with(PROGRAM, 'print'),
        'fix_has_key': _lines_with(PROGRAM, 'has_key'),
        'fix_ne': _lines_with(PROGRAM, '<>'),
        'fix_repr': _lines_with(PROGRAM, '`'),
        'fix_numliterals': _lines_with(PROGRAM, '0L') + _lines_with(PROGRAM, '0777'),
        'fix_xrange': _lines_with(PROGRAM, 'xrange'),
        'fix_long': _lines_with(PROGRAM, 'long('),
        'fix_raise': _lines_with(PROGRAM, 'raise'),
        'fix_except': _lines_with(PROGRAM, 'except'),
        'fix_unicode': _lines_with(PROGRAM, 'unicode('),
        'fix_basestring': _lines_with(PROGRAM, 'basestring'),
        'fix_imports': _lines_with(PROGRAM, 'import cPickle'),
    }
    for fixer, lines in expected.items():
        assert lines and {(line, fixer) for line in lines} <= changed, fixer
    # The port's own dict rules, not 2to3's fix_dict: iterated, a view; kept, a list.
    dict_lines = {note.line for note in notes if 'Python 3 dicts' in note.message
                  or 'a list in Python 2' in note.message}
    assert dict_lines == {*_lines_with(PROGRAM, 'scores.keys'),
                          *_lines_with(PROGRAM, 'scores.iter')}


def test_string_io_is_left_to_the_ports_own_rule():
    code = ('import StringIO\nfrom PIL import Image\n\n'
            'def size(data):\n    print "opening"\n'
            '    return Image.open(StringIO.StringIO(data)).size\n')
    results, problems = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert problems == []
    ported = results['m.py'][0]
    assert ported.startswith('from io import BytesIO\n')  # bytes, not 2to3's io.StringIO
    assert 'Image.open(BytesIO(data))' in ported and 'print("opening")' in ported


def test_a_file_neither_python_3_nor_python_2_is_reported_and_left():
    code = 'x = 1\nprint "a" +\n'
    results, problems = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert results['m.py'][0] == code
    assert len(problems) == 1 and problems[0].startswith('m.py:2: could not parse as Python 3 '
                                                         'or as Python 2')


def test_python_3_files_are_not_touched_by_the_stage():
    code = 'import pickle\nprint("a", end="")\nvalues = {1: 2}.values()\nr = range(3)\n'
    context = edits.Context('m.py')
    assert not python2.Python2Stage.has_work(code, context)
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert results['m.py'] == (code, [])


def test_python_2_evidence_in_a_file_python_3_parses():
    code = 'import cPickle\nfor i in xrange(2):\n    pass\nkeys = {1: 2}.keys()\n'
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    ported = results['m.py'][0]
    assert ported == ('import pickle\nfor i in range(2):\n    pass\n'
                      'keys = list({1: 2}.keys())\n')


def test_unittests_old_names_are_renamed_on_self_only():
    """2to3's fix_asserts renames `.assert_` on anything; numpy's `np.testing.assert_` is no
    unittest method (pylib's util/test.py failed so, "no attribute 'assertTrue'")."""
    code = ('import numpy as np\nprint "x"\nassert_true = np.testing.assert_\n'
            'class T(object):\n    def test(self):\n        self.assertEquals(1, 1)\n'
            '        self.assert_(True)\n')
    ported, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)[0]['m.py']
    assert 'assert_true = np.testing.assert_\n' in ported
    assert 'self.assertEqual(1, 1)' in ported and 'self.assertTrue(True)' in ported
    namespace: dict = {}
    exec(ported, namespace)  # noqa: S102
    assert namespace['assert_true'] is namespace['np'].testing.assert_


def test_python_2s_urllib_functions_are_evidence():
    """`import urllib` parses and imports in Python 3, `urllib.urlretrieve` does not exist
    there (tf-estimator-example's MNIST converter): the file is Python 2, and 2to3's
    fix_urllib moves the call."""
    code = 'import urllib\n\ndef get(url, path):\n    urllib.urlretrieve(url, path)\n'
    ported, notes = tree.port_sources({'m.py': code}, tf_upgrade=None)[0]['m.py']
    assert 'urllib.request.urlretrieve(url, path)' in ported
    assert {note.line for note in notes} == {1, 4}
    for python_3 in ('import urllib.request\nurllib.request.urlretrieve\n',
                     'from urllib.parse import urlencode\n'):
        assert tree.port_sources({'m.py': python_3}, tf_upgrade=None)[0]['m.py'] == (
            python_3, [])
    assert python2.shows_python_2('from urllib import (urlencode,\n  quote)\n')


def test_one_tool_ports_each_file_as_a_tool_of_its_own():
    """The stage makes fissix's tool once (compiling the fixers' patterns costs more than most
    files' fixes) and runs it on every file: each file's code and notes are those a fresh tool
    makes of it alone, whatever files went before."""
    others = [PROGRAM, 'import urllib2\nimport StringIO\nprint urllib2.urlopen\n',
              'def f(d):\n    return d.has_key(1) and `d`\n']

    def alone(code):
        python2._tool.cache_clear()
        return python2.Python2Stage.port(code, edits.Context('m.py'))

    expected = [alone(code) for code in others]
    python2._tool.cache_clear()
    in_turn = [python2.Python2Stage.port(code, edits.Context('m.py')) for code in others * 2]
    assert in_turn == expected * 2
    assert all(notes for _, notes in expected)


def test_the_fixers_outside_the_matcher_walk_only_files_that_can_hold_their_work(monkeypatch):
    """`<>`, long and octal literals and unittest's old names are fixed by fixers outside
    fissix's bottom matcher, which walk every node: a file whose text holds none of them is
    not walked for them, and ports as it would walked."""
    codes = [PROGRAM, PYTHON_2_TAIL, 'x = 0777 + 10L\nif x <> 1: print x\n',
             'class T(unittest.TestCase):\n    def test(self):\n        self.assertEquals(1, 1)\n',
             'def f(d):\n    return d.has_key(1) and `d`\n']

    def ported():
        walks = []
        post_order = python2._Tool.traverse_by
        monkeypatch.setattr(python2._Tool, 'traverse_by', lambda tool, heads, traversal: (
            walks.append(bool(heads)), post_order(tool, heads, traversal))[1])
        results = [python2.Python2Stage.port(code, edits.Context('m.py')) for code in codes]
        return results, walks

    python2._tool.cache_clear()
    skipping, walks = ported()
    assert walks.count(True) == 4  # all but the last (`<>` in the first two)
    monkeypatch.setattr(python2, '_OUTSIDE_THE_MATCHER', re.compile(''))
    walking, walks = ported()
    assert walks.count(True) == len(codes)
    assert skipping == walking
    fixed = skipping[2][0] + skipping[3][0]
    assert 'x = 0o777 + 10' in fixed and 'x != 1' in fixed and 'self.assertEqual(1, 1)' in fixed


def test_python_2_names_in_the_guards_of_code_for_both_pythons_are_no_evidence():
    """argman/EAST is Python 3 code that also runs on Python 2 (`try: import queue` / `except
    ImportError: import Queue as queue`): ported as Python 2 for that import, its
    `print(a, b)` calls became `print((a, b))`, which prints a tuple."""
    both = ('try:\n    import queue\nexcept ImportError:\n    import Queue as queue\n'
            'try:\n    xrange\nexcept NameError:\n    xrange = range\n'
            'import six\nif six.PY2:\n    text = unicode("x")\n'
            'import sys\nif sys.version_info[0] < 3:\n    import cPickle as pickle\n'
            'print("a", queue.Queue)\n')
    assert not python2.shows_python_2(both)
    assert tree.port_sources({'m.py': both}, tf_upgrade=None)[0]['m.py'] == (both, [])
    # Unguarded, the same names are evidence: the guards, not the names, make the difference.
    for line in ('import Queue as queue\n', 'for i in xrange(2):\n    pass\n',
                 'text = unicode("x")\n', 'import cPickle as pickle\n'):
        assert python2.shows_python_2(line)
        assert python2.shows_python_2('try:\n    import os\nfinally:\n    pass\n' + line)
