"""`slimdata port` never writes an import that does not resolve (slimdata.port.imports)."""

import pytest

from slimdata.port import imports, tree
from slimdata.port.upgrade_v2 import _imports_put_back


@pytest.mark.parametrize('line, missing', [
    ('from tensorflow.core.example import example_pb2\n', None),
    ('from tensorflow.compat.v1.core.example import example_pb2\n',
     'tensorflow.compat.v1.core.example'),
    ('import tensorflow.compat.v1.core.framework.graph_pb2 as g\n',
     'tensorflow.compat.v1.core.framework.graph_pb2'),
    ('from tensorflow.python.ops import array_ops\n', None),
    ('from tensorflow.compat.v1.python.ops import array_ops  # why\n',
     'tensorflow.compat.v1.python.ops'),
    ('from tensorflow.compat.v1 import flags, app as application\n', None),
    ('from tensorflow.compat.v1 import no_such_name\n', 'tensorflow.compat.v1.no_such_name'),
    ('from tf_slim import arg_scope\n', None),
    ('import slimdata.contrib.training\n', None),
    ('from slimdata.contrib.unavailable import quantize as q\n', None),
    ('import my_own_module\n', None),  # the user's modules are not checked
    ('x = 1\n', None),
])
def test_unresolved(line, missing):
    assert imports.unresolved(line) == missing


def test_tf_upgrade_v2s_broken_import_lines_are_put_back():
    before = ('import tensorflow as tf\nfrom tensorflow.core.protobuf import saver_pb2\n'
              'from tensorflow.contrib import nccl\n')
    after = ('import tensorflow.compat.v1 as tf\n'
             'from tensorflow.compat.v1.core.protobuf import saver_pb2\n'
             'from tensorflow.contrib import nccl\n')
    code, reverted, notes = _imports_put_back(before, after)
    assert code == ('import tensorflow.compat.v1 as tf\n'
                    'from tensorflow.core.protobuf import saver_pb2\n'
                    'from tensorflow.contrib import nccl\n')
    assert reverted == {2} and notes == []


@pytest.mark.slow
def test_safety_mode_keeps_tensorflow_core_and_reports_no_change_there():
    code = ('import tensorflow as tf\nfrom tensorflow.core.example import example_pb2\n'
            'from tensorflow.core.framework import graph_pb2\nx = tf.placeholder(tf.float32)\n')
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade='SAFETY')
    ported, notes = results['m.py']
    assert 'from tensorflow.core.example import example_pb2\n' in ported
    assert 'from tensorflow.core.framework import graph_pb2\n' in ported
    assert not [note for note in notes if note.line in (2, 3)]
    for line in ported.splitlines():
        assert imports.unresolved(line) is None, line
