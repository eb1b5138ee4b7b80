"""`.tostring()` -> `.tobytes()` (slimdata.port.py3.tostring)."""

import array

import numpy as np

from slimdata.port import edits, tree

CODE = ("import array\nimport numpy as np\n"
        "def name_bytes(name):\n    return np.str_(name).tostring()\n"
        "def pixels(a):\n    return a.tostring(order='F')\n"
        "def samples(values):\n    return array.array('h', values).tostring()\n")


def test_tostring_calls_become_tobytes_and_run():
    results, problems = tree.port_sources({'m.py': CODE}, tf_upgrade=None)
    assert problems == []
    ported, notes = results['m.py']
    assert [note.line for note in notes
            if note.kind == edits.CHANGED and 'tobytes' in note.message] == [4, 6, 8]
    namespace: dict = {}
    exec(compile(ported, 'm.py', 'exec'), namespace)  # noqa: S102 - the ported code under test
    grid = np.arange(6, dtype=np.int16).reshape(2, 3)
    assert namespace['pixels'](grid) == grid.ravel(order='F').tobytes()  # column by column
    assert namespace['samples']([1, -2]) == array.array('h', [1, -2]).tobytes()
    assert namespace['name_bytes']('1/a.jpg') == '1/a.jpg'.encode('utf-32-le')


def test_a_file_with_its_own_tostring_keeps_it():
    code = "class Box:\n    def tostring(self):\n        return 'box'\nBox().tostring()\n"
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert results['m.py'][0] == code
