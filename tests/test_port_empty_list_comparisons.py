"""`x == []` where x may be a numpy array (slimdata.port.py3.empty_list_comparisons), ported and
run: the answers numpy gave before 1.25 (an array is never equal to []), lists as before."""

import numpy as np
import pytest

from port_snippets import port, port_and_run

# py-faster-rcnn's _write_voc_results_file, as Faster-RCNN_TF has it.
SOURCE = ('import numpy as np\n\n\n'
          'def written(all_boxes):\n'
          '    rows = []\n'
          '    for dets in all_boxes:\n'
          '        if dets == []:\n'
          '            continue\n'
          '        rows.append(len(dets))\n'
          '    return rows\n\n\n'
          'def some(dets):\n'
          '    return dets != []\n')


def test_the_original_fails_on_this_numpy():
    namespace: dict = {}
    exec(compile(SOURCE, 'original.py', 'exec'), namespace)  # noqa: S102
    with pytest.raises(ValueError):
        namespace['written']([[], np.zeros((2, 5))])


def test_arrays_are_not_equal_to_an_empty_list_and_lists_compare_as_before():
    ported, notes, namespace = port_and_run(SOURCE)
    assert 'if (isinstance(dets, list) and dets == []):' in ported
    assert 'return (not (isinstance(dets, list) and dets == []))' in ported
    assert [note.line for note in notes] == [7, 14]
    boxes = [[], np.zeros((2, 5)), np.zeros((0, 5)), [[1, 2, 3, 4, 0.5]]]
    # Before numpy 1.25 every array compared unequal to []: only the list [] is skipped.
    assert namespace['written'](boxes) == [2, 0, 1]
    assert [namespace['some'](dets) for dets in boxes] == [False, True, True, True]


def test_left_alone_without_numpy_or_where_a_call_would_run_twice():
    for source in ('def f(x):\n    return x == []\n',
                   'import numpy as np\n\n\ndef f(g):\n    return g() == []\n'):
        assert port(source) == (source, [])
