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


def test_a_private_name_this_tensorflow_lacks_is_reported_as_gone():
    """Faster-RCNN_TF's `ops.RegisterShape` is gone from TensorFlow 2.21's private modules: the
    report says it fails, not that it works while TensorFlow keeps it."""
    import importlib
    code = ('from tensorflow.python.framework import ops\n'
            'from tensorflow.python.ops import control_flow_ops\n'
            "ops.RegisterShape('RoiPool')\n"
            'x = control_flow_ops.with_dependencies\n')
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    notes = {note.line: note.message for note in results['m.py'][1] if note.kind == 'not ported'}
    gone = not hasattr(importlib.import_module('tensorflow.python.framework.ops'),
                       'RegisterShape')
    assert ('no longer has' in notes[3]) == gone and ('keeps it' in notes[3]) != gone
    assert 'keeps it' in notes[4]  # with_dependencies is still there
