"""The names pass's rule for a contrib import without successor: removed when nothing uses
what it binds, a stand-in when something does (slimdata.port.names)."""

import pytest

from slimdata.port import edits, tree

STAND_IN = 'from slimdata.contrib.unavailable import quantize'


def _port(code: str):
    results, problems = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert problems == []
    return results['m.py']


@pytest.mark.parametrize('other_use', [
    'x = 1\n',                               # nothing of that name
    'config.quantize = True\n',              # an attribute of the same name
    'build(quantize=False)\n',               # a keyword of the same name
    'def build(quantize=False):\n    return quantize\n',  # a parameter, used in its function
])
def test_an_import_nothing_uses_is_removed_whatever_else_bears_its_name(other_use):
    code = 'from tensorflow.contrib import quantize\n' + other_use
    ported, notes = _port(code)
    assert ported == other_use
    assert [(note.kind, note.line) for note in notes] == [(edits.CHANGED, 1)]
    assert 'removed the import of tensorflow.contrib.quantize' in notes[0].message


def test_an_import_something_uses_becomes_a_stand_in():
    code = ('from tensorflow.contrib import quantize\n'
            'def build(on):\n    if on:\n        quantize.create_training_graph()\n')
    ported, notes = _port(code)
    assert ported.startswith(STAND_IN + '\n')
    assert sorted((note.kind, note.line) for note in notes) == [(edits.NOT_PORTED, 1),
                                                                (edits.NOT_PORTED, 4)]
