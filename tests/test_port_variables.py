"""`slimdata port`'s resource-variables pass: variables found by op type under resource variables.

The ported checks are run: a graph with resource variables (as the entry pass makes them) is
built under the device function of the old code, and the variables must land on /job:ps,
which they did not before the port (TensorFlow names their op `VarHandleOp`).
"""

import pytest

from slimdata.port import edits, tree

tf = pytest.importorskip('tensorflow')

# A parameter-server device chooser in the way of models/research/slim's model_deploy (the op
# type of a NodeDef checked by its prefix), written here, not copied.
CHOOSER_BY_PREFIX = '''import tensorflow.compat.v1 as tf


def choose(op):
    if op.device:
        return op.device
    node_def = op if isinstance(op, tf.NodeDef) else op.node_def
    if node_def.op.startswith('Variable'):
        return '/job:ps/task:0'
    return op.device
'''


def _port(code):
    results, problems = tree.port_sources({'deploy.py': code}, tf_upgrade=None)
    assert problems == []
    return results['deploy.py']


def _devices(device_function):
    """The devices of a resource variable and of a computation built under `device_function`."""
    graph = tf.Graph()
    with graph.as_default(), tf.compat.v1.device(device_function):
        variable = tf.compat.v1.get_variable('weights', [2], use_resource=True)
        total = tf.reduce_sum(variable)
    return variable.op.type, variable.op.device, total.op.device


def _chooser(code):
    namespace = {'__name__': 'deploy'}
    exec(compile(code, 'deploy.py', 'exec'), namespace)  # noqa: S102
    return namespace['choose']


def test_prefix_check_places_resource_variables_on_the_parameter_server():
    assert _devices(_chooser(CHOOSER_BY_PREFIX)) == ('VarHandleOp', '', '')  # the miss
    code, notes = _port(CHOOSER_BY_PREFIX)
    assert "node_def.op.startswith(('Variable', 'VarHandleOp'))" in code
    assert _devices(_chooser(code)) == ('VarHandleOp', '/job:ps/task:0', '')
    [note] = notes
    assert note.kind == edits.CHANGED and note.line == 8 and 'VarHandleOp' in note.message
    assert _port(code) == (code, [])  # a second port changes nothing


def test_equality_with_one_op_type_becomes_membership():
    old = CHOOSER_BY_PREFIX.replace("node_def.op.startswith('Variable')",
                                    'node_def.op == "Variable"')
    code, _ = _port(old)
    assert 'node_def.op in ("Variable", "VarHandleOp")' in code
    assert _devices(_chooser(code))[1] == '/job:ps/task:0'
    code, _ = _port('def other(op):\n    return op.type != "VariableV2"\n')
    assert 'op.type not in ("VariableV2", "VarHandleOp")' in code


@pytest.mark.parametrize('old, new', [
    ("tf.compat.v1.train.replica_device_setter(1, ps_ops=['Variable', 'VariableV2'])",
     "ps_ops=['Variable', 'VariableV2', 'VarHandleOp']"),
    ("tf.compat.v1.train.replica_device_setter(1, ps_ops=('Variable',))",
     "ps_ops=('Variable', 'VarHandleOp',)"),
])
def test_replica_device_setter_ps_ops_gain_the_resource_op(old, new):
    code, _ = _port(f'import tensorflow as tf\nsetter = {old}\n')
    assert new in code
    namespace = {}
    exec(compile(code, 'deploy.py', 'exec'), namespace)  # noqa: S102
    assert _devices(namespace['setter'])[1:] == ('/job:ps/task:0', '/job:worker')


def test_op_type_lists_gain_the_resource_op_only_where_they_are_op_types():
    code, notes = _port("VARIABLE_OPS = [\n    'Variable',\n    'VariableV2',\n]\n"
                        "def is_variable(op):\n    return op.type in {'Variable'}\n"
                        "HEADINGS = ['Variable', 'Shape']\n"
                        "def named(x):\n    return x.name.startswith('Variable')\n"
                        "DONE = ('VariableV2', 'VarHandleOp')\n")
    namespace = {}
    exec(compile(code, 'deploy.py', 'exec'), namespace)  # noqa: S102
    assert namespace['VARIABLE_OPS'] == ['Variable', 'VariableV2', 'VarHandleOp']
    assert "op.type in {'Variable', 'VarHandleOp'}" in code
    assert namespace['HEADINGS'] == ['Variable', 'Shape']  # not compared with an op type
    assert "x.name.startswith('Variable')" in code  # a name, not an op type
    assert namespace['DONE'] == ('VariableV2', 'VarHandleOp')
    assert [note.line for note in notes] == [1, 6]
