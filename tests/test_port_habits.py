"""`slimdata port`'s fixes of old Python habits that break on Python 3.10+ / numpy 2, run."""

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
