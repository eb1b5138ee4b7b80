"""Python 2's dict iterators to views, lists where a Python 2 file needs them
(slimdata.port.py3.dict_views), ported and run."""

import pytest

from port_snippets import port_and_run
from slimdata.port import tree

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
    ported, notes, namespace = port_and_run(DICT_ITERATORS)
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
