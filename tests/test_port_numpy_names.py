"""numpy's removed names, to what replaces them (slimdata.port.py3.numpy_names), ported and run."""

import numpy as np
import pytest

from port_snippets import port_and_run


@pytest.mark.filterwarnings('ignore::FutureWarning')  # numpy's note on np.object
def test_original_numpy_aliases_fail_on_this_numpy():
    for alias in ('int', 'float', 'object'):
        with pytest.raises(AttributeError):
            getattr(np, alias)


def test_numpy_aliases_of_builtins_become_the_builtins():
    ported, notes, namespace = port_and_run(
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
    ported, notes, namespace = port_and_run(
        'import numpy as np\n'
        'a = np.NaN\n'
        'b = np.array(["x"], dtype=np.string_)\n'
        'c = np.product([2, 3])\n'
        'd = np.nan\n')
    assert np.isnan(namespace['a']) and namespace['b'].dtype.kind == 'S'
    assert namespace['c'] == 6
    assert 'a = np.nan\n' in ported and 'd = np.nan\n' in ported
    assert [note.line for note in notes] == [2, 3, 4]


def test_fromstrings_binary_mode_becomes_a_copy_from_the_buffer():
    """numpy 2 refuses fromstring without `sep`; the port gives the same values in a new,
    writable array (the values checked against the bytes read another way, struct-free: each
    byte); the text mode, which numpy 2 keeps, is left."""
    data = bytes([1, 2, 250, 4])
    with pytest.raises(ValueError, match='binary mode'):
        np.fromstring(data, dtype=np.uint8)
    ported, notes, namespace = port_and_run(
        'import numpy as np\n'
        f'data = {data!r}\n'
        'a = np.fromstring(data, dtype=np.uint8)\n'
        'a[0] = 9\n'
        'b = np.fromstring(data, np.uint8, 2)\n'
        "c = np.fromstring(data, dtype=np.uint8, sep='')\n"
        "d = np.fromstring('1 2', dtype=int, sep=' ')\n")
    assert namespace['a'].tolist() == [9, *list(data)[1:]]
    assert namespace['b'].tolist() == list(data)[:2]
    assert namespace['c'].tolist() == list(data)
    assert namespace['d'].tolist() == [1, 2]
    assert "np.fromstring('1 2', dtype=int, sep=' ')" in ported
    assert [note.line for note in notes] == [3, 5, 6]


def test_the_size_0_aliases_become_their_names():
    """`np.int0(points)` (seglink's and pixel_link's box corners), gone in numpy 2."""
    ported, _, namespace = port_and_run('import numpy as np\n'
                                        'points = np.int0(np.array([[1.7, 2.2]]))\n'
                                        'flags = np.array([1, 0], dtype=np.bool8)\n')
    assert 'np.intp(' in ported and 'dtype=np.bool_' in ported
    assert namespace['points'].tolist() == [[1, 2]] and namespace['flags'].tolist() == [True, False]
