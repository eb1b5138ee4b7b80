"""The tf.layers pass (slimdata.port.layers): `tf.layers` calls to tf_slim layer calls, their
arguments translated; what it cannot port reported. The ported code is run and its outputs
compared with values computed another way."""

import numpy as np
import pytest

from port_snippets import kinds, port, run
from slimdata.port import edits, installed, layers, names, tree


@pytest.fixture
def without_tf_keras(monkeypatch):
    is_module = installed.is_module
    monkeypatch.setattr(layers, 'is_module',
                        lambda name: False if name == 'tf_keras' else is_module(name))


def test_tf_layers_dropout_becomes_tf_slim_dropout_with_keep_prob():
    import tensorflow as tf
    code, _ = port('import tensorflow as tf\n\n\ndef f(x, rate, training):\n'
                    '    return tf.layers.dropout(x, rate=rate, training=training)\n')
    assert 'tf_slim.dropout(x, keep_prob=1 - rate, is_training=training)' in code
    dropout = run(code)['f']
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        ones = tf.ones([4000])
        kept = session.run(dropout(ones, 0.25, True))
        unchanged = session.run(dropout(ones, 0.25, False))
    # Kept units are scaled by 1 / keep_prob = 4/3, as tf.layers.dropout did with rate 0.25.
    assert np.all(np.isclose(kept, 0) | np.isclose(kept, 4 / 3))
    assert 0.2 < np.mean(kept == 0) < 0.3
    np.testing.assert_array_equal(unchanged, np.ones(4000))


def test_tf_layers_dense_and_conv2d_translate_their_arguments():
    code, notes = port(
        'import tensorflow as tf\n\n\ndef f(x):\n'
        "    y = tf.layers.conv2d(x, 8, 3, strides=2, padding='same', activation=tf.nn.relu)\n"
        '    return tf.layers.dense(y, 10, name="logits")\n')
    assert ("tf_slim.conv2d(x, num_outputs=8, kernel_size=3, stride=2, padding='SAME', "
            'activation_fn=tf.nn.relu)') in code
    assert 'tf_slim.fully_connected(y, num_outputs=10, scope="logits", activation_fn=None)' in code
    assert len(kinds(notes, edits.CHANGED)) == 2


def test_tf_layers_call_that_cannot_be_mapped_is_reported(without_tf_keras):
    old = 'import tensorflow as tf\ny = tf.layers.batch_normalization(x, training=True)\n'
    code, notes = port(old)
    assert code == old
    [note] = kinds(notes, edits.NOT_PORTED)
    assert note.line == 2 and 'tf.layers' in note.message and 'tf-keras==' in note.message


@pytest.mark.parametrize('tf_keras, kind, says', [
    (False, 'not ported', 'tf.layers is gone with Keras 3'),
    (True, 'to check', 'runs with Keras 2 as tf.keras')])
def test_a_tf_layers_name_that_is_not_a_call_is_reported(monkeypatch, tf_keras, kind, says):
    """deeplab 2024's `class Conv2D(tf.keras.layers.Conv2D, tf.layers.Layer)`: Keras 3 has no
    tf.layers, and nothing in tf_slim stands for its base class; with tf-keras installed the
    ported scripts make tf.keras Keras 2, where it runs (tests/test_port.py runs one)."""
    is_module = installed.is_module
    monkeypatch.setattr(layers, 'is_module',
                        lambda name: tf_keras if name == 'tf_keras' else is_module(name))
    code = ('import tensorflow.compat.v1 as tf\n\n'
            'class Conv2D(tf.keras.layers.Conv2D, tf.layers.Layer):\n    pass\n')
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    ported, notes = results['m.py']
    assert ported == code
    assert [(note.kind, note.line) for note in notes] == [(kind, 3)]
    assert says in notes[0].message


def test_a_file_with_tf_layers_alone_is_the_layers_pass_work_and_pools_as_before():
    """No contrib name: the names pass has no work; the layers pass ports the pooling, whose
    output is the maximum of each 2x2 window (numpy's reshape computes it)."""
    import tensorflow as tf
    code = ('import tensorflow.compat.v1 as tf\n\n\ndef pool(x):\n'
            "    return tf.layers.max_pooling2d(x, 2, 2, padding='valid', name='pool')\n")
    assert not names.NamesPass.has_work(code, edits.Context('m.py'))
    assert layers.LayersPass.has_work(code, edits.Context('m.py'))
    ported, notes = port(code)
    assert ("tf_slim.max_pool2d(x, kernel_size=2, stride=2, padding='VALID', scope='pool')"
            in ported)
    assert [(note.kind, note.line) for note in notes] == [(edits.CHANGED, 6)]
    images = np.random.default_rng(0).random((2, 6, 8, 3), dtype=np.float32)
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        pooled = session.run(run(ported)['pool'](tf.constant(images)))
    expected = images.reshape(2, 3, 2, 4, 2, 3).max(axis=(2, 4))
    np.testing.assert_array_equal(pooled, expected)


@pytest.mark.parametrize('call', [
    'tf.layers.dense(x, 10, activity_regularizer=r)',   # no tf_slim argument for it
    "tf.layers.conv2d(x, 8, 3, padding=mode)",          # a padding only known when it runs
    'tf.layers.dense(*arguments)',                      # arguments unknown here
])
def test_a_call_with_an_argument_it_cannot_map_is_left_and_reported(without_tf_keras, call):
    old = f'import tensorflow as tf\n\n\ny = {call}\n'
    code, notes = port(old)
    assert code == old
    assert [(note.kind, note.line) for note in notes] == [(edits.NOT_PORTED, 4)]


def test_the_pass_walks_nothing_where_no_name_may_be_tf_layers(monkeypatch):
    """`slim.layers`, `tf.contrib.layers` and `tf.keras.layers` are not tf.layers: the pass,
    which the word `layers` brings, visits no statement of such a file (by Python's tree,
    `may_name`). A tf.layers name under any spelling, an imported alias, a name imported from
    it, or `tf` from a star import of the tree is ported as before."""
    visited = []
    on_visit = edits.PortTransformer.on_visit

    def watched(self, node):
        walked = on_visit(self, node)
        if walked and self.NAME == 'tf.layers':
            visited.append(type(node).__name__)
        return walked

    monkeypatch.setattr(edits.PortTransformer, 'on_visit', watched)
    contrib = ('import tensorflow as tf\nimport tensorflow.contrib.slim as slim\n\n\n'
               'def f(x):\n    y = slim.layers.conv2d(x, 8, 3)\n'
               '    y = tf.contrib.layers.flatten(y)\n    return tf.keras.layers.Dense(10)(y)\n')
    results, _ = tree.port_sources({'m.py': contrib}, tf_upgrade=None)
    assert 'slim.layers.conv2d(x, 8, 3)' in results['m.py'][0]
    assert visited and set(visited) == {'Module'}
    sources = {
        'alias.py': 'from tensorflow import layers as L\n\n\ndef f(x):\n'
                    '    return L.dense(x, 10)\n',
        'compat.py': 'import tensorflow.compat.v1 as tf\n\n\ndef f(x):\n'
                     '    return tf.layers.dense(x, 10)\n',
        'imported.py': 'from tensorflow.layers import dense\n\n\ndef f(x):\n'
                       '    return dense(x, 10)\n',
        'common.py': 'import tensorflow as tf\nfrom tensorflow.layers import dense\n',
        'starred.py': 'from common import *\n\n\ndef f(x):\n    return tf.layers.dense(x, 10)\n',
        'bare.py': 'from common import *\nlayers = []\n\n\ndef f(x):\n'
                   '    layers.append(dense(x, 10))\n'}
    visited.clear()
    results, _ = tree.port_sources(sources, tf_upgrade=None)
    for path in ('alias.py', 'compat.py', 'imported.py', 'starred.py', 'bare.py'):
        assert 'tf_slim.fully_connected(x, num_outputs=10' in results[path][0], path
    assert 'Call' in visited
