"""The TF1 RNN cells (`tf.nn.rnn_cell.*`, `tf.contrib.rnn.*`) on TensorFlow 2.21.

With Keras 3, TensorFlow's `tf.compat.v1.nn.rnn_cell.LSTMCell` raises "not available with
Keras 3": the cells live in Keras 2, which is now the separate `tf-keras` package, at the path
TensorFlow's own lazy loader uses for `tf.compat.v1.nn.rnn_cell` (measured on TensorFlow 2.21
with tf-keras 2.21: `dynamic_rnn` over `MultiRNNCell([LSTMCell(num_proj=...),
DropoutWrapper(GRUCell)])` builds and runs in graph mode with the TF1 variable names,
`rnn/multi_rnn_cell/cell_0/lstm_cell/kernel`). tf-keras is not a dependency of slimdata: it
requires the `tensorflow` package (pip would install it beside `tensorflow-cpu`), and its
version must match TensorFlow's, so install it yourself:
`pip install --no-deps "tf-keras==$(python -c 'import tensorflow as tf; print(tf.__version__)')"`.

The recurrences themselves (`static_rnn`, `dynamic_rnn`, ...) are TensorFlow's
`tf.compat.v1.nn` functions, which take these cells.
"""

from slimdata._tf import tf

try:
    from tf_keras.api._v1.keras.__internal__.legacy import rnn_cell as _cells
except ImportError as error:
    raise ImportError(
        'the TF1 RNN cells need Keras 2, the tf-keras package of your TensorFlow version: '
        "pip install --no-deps tf-keras==<TensorFlow's version> (slimdata.contrib.rnn)"
    ) from error

RNNCell = _cells.RNNCell
BasicRNNCell = _cells.BasicRNNCell
BasicLSTMCell = _cells.BasicLSTMCell
LSTMCell = _cells.LSTMCell
GRUCell = _cells.GRUCell
MultiRNNCell = _cells.MultiRNNCell
LSTMStateTuple = _cells.LSTMStateTuple
DropoutWrapper = _cells.DropoutWrapper
ResidualWrapper = _cells.ResidualWrapper
DeviceWrapper = _cells.DeviceWrapper

static_rnn = tf.compat.v1.nn.static_rnn
static_bidirectional_rnn = tf.compat.v1.nn.static_bidirectional_rnn
static_state_saving_rnn = tf.compat.v1.nn.static_state_saving_rnn
