"""tf_slim's model layer through `slimdata.slim` on TensorFlow 2.21: the repairs work.

tf_slim 1.1.0's model code fails on TensorFlow 2.21 where it reaches names TensorFlow's
private modules no longer have (`ops.Tensor` in every `conv2d` with a `normalizer_fn`,
`ops.IndexedSlices` in the gradient helpers, `array_ops.unstack`, `variable_scope.variable`)
and in `batch_norm`'s default path (a layer TensorFlow loads from a tf_keras module that no
longer exists). Importing `slimdata.slim` repairs them (`slimdata.tf_slim_patch`); these
tests check the results against values computed here with numpy.
"""

import subprocess
import sys

import numpy as np
import pytest

from slimdata import slim
from slimdata._tf import tf

EPSILON = 1e-3
DECAY = 0.9
V1 = tf.compat.v1


def _inputs(shape=(4, 5, 5, 3), seed=0):
    return np.random.default_rng(seed).normal(2.0, 3.0, shape).astype(np.float32)


def _normalized(x, axes=(0, 1, 2)):
    return (x - x.mean(axis=axes)) / np.sqrt(x.var(axis=axes) + EPSILON)


def test_batch_norm_in_training_normalizes_by_batch_statistics_and_updates_the_averages():
    x = _inputs()
    with tf.Graph().as_default(), V1.Session() as session:
        with slim.arg_scope([slim.batch_norm], decay=DECAY, epsilon=EPSILON):
            outputs = slim.batch_norm(V1.constant(x), scale=True, is_training=True)
        update_ops = V1.get_collection(V1.GraphKeys.UPDATE_OPS)
        names = sorted(variable.op.name for variable in V1.global_variables())
        session.run(V1.global_variables_initializer())
        got = session.run(outputs)
        session.run(update_ops)
        moving_mean, moving_variance = session.run(
            [V1.global_variables('BatchNorm/moving_mean')[0],
             V1.global_variables('BatchNorm/moving_variance')[0]])
    # The names of tf_slim's batch_norm (the names pretrained checkpoints hold).
    assert names == ['BatchNorm/beta', 'BatchNorm/gamma', 'BatchNorm/moving_mean',
                     'BatchNorm/moving_variance']
    np.testing.assert_allclose(got, _normalized(x), atol=1e-4)
    assert len(update_ops) == 2
    count = x.size // x.shape[-1]
    np.testing.assert_allclose(moving_mean, (1 - DECAY) * x.mean(axis=(0, 1, 2)), rtol=1e-4)
    # TensorFlow's fused kernel hands the running average the unbiased batch variance.
    np.testing.assert_allclose(
        moving_variance, DECAY + (1 - DECAY) * x.var(axis=(0, 1, 2)) * count / (count - 1),
        rtol=1e-4)


def test_batch_norm_in_inference_uses_the_moving_averages():
    x = _inputs(seed=1)
    with tf.Graph().as_default(), V1.Session() as session:
        outputs = slim.batch_norm(V1.constant(x), is_training=False, epsilon=EPSILON,
                                  param_initializers={
                                      'moving_mean': V1.constant_initializer(0.5),
                                      'moving_variance': V1.constant_initializer(4.0),
                                      'beta': V1.constant_initializer(-1.0)})
        session.run(V1.global_variables_initializer())
        got = session.run(outputs)
    np.testing.assert_allclose(got, (x - 0.5) / np.sqrt(4.0 + EPSILON) - 1.0, atol=1e-4)


def test_updates_collections_none_from_an_arg_scope_updates_in_place():
    x = _inputs(seed=2)
    with tf.Graph().as_default(), V1.Session() as session:
        with slim.arg_scope([slim.batch_norm], updates_collections=None, decay=DECAY):
            outputs = slim.batch_norm(V1.constant(x), is_training=True, epsilon=EPSILON)
        assert V1.get_collection(V1.GraphKeys.UPDATE_OPS) == []
        session.run(V1.global_variables_initializer())
        session.run(outputs)
        moving_mean = session.run(V1.global_variables('BatchNorm/moving_mean')[0])
    np.testing.assert_allclose(moving_mean, (1 - DECAY) * x.mean(axis=(0, 1, 2)), rtol=1e-4)


def test_batch_norm_of_rank_3_inputs_and_unsupported_options():
    x = _inputs((6, 7, 3), seed=3)
    with tf.Graph().as_default(), V1.Session() as session:
        outputs = slim.batch_norm(V1.constant(x), is_training=True, epsilon=EPSILON)
        session.run(V1.global_variables_initializer())
        np.testing.assert_allclose(session.run(outputs), _normalized(x, (0, 1)), atol=1e-4)
        with pytest.raises(ValueError, match='renorm=.*TensorFlow 2.21 no longer ships'):
            slim.batch_norm(V1.constant(x), renorm=True)


def test_a_small_net_trains_with_create_train_op_and_gradient_multipliers():
    """conv2d + batch_norm as normalizer_fn in an arg_scope, fully_connected on a rank-3
    input (array_ops.unstack), a local variable, and multiply_gradients (IndexedSlices)."""
    rng = np.random.default_rng(4)
    images = rng.normal(size=(8, 6, 6, 3)).astype(np.float32)
    targets = rng.normal(size=(8, 6, 4)).astype(np.float32)
    with tf.Graph().as_default(), V1.Session() as session:
        with slim.arg_scope([slim.conv2d], normalizer_fn=slim.batch_norm,
                            normalizer_params={'is_training': True, 'decay': DECAY}):
            net = slim.conv2d(V1.constant(images), 5, [3, 3], scope='conv')
        net = slim.fully_connected(V1.reshape(net, [8, 6, 30]), 4, activation_fn=None,
                                   scope='fc')
        loss = V1.reduce_mean(V1.square(net - targets))
        counter = slim.local_variable(V1.constant(0), name='counter')
        optimizer = V1.train.GradientDescentOptimizer(0.05)
        train_op = slim.learning.create_train_op(
            loss, optimizer, gradient_multipliers={'fc/weights': 2.0})
        session.run([V1.global_variables_initializer(), V1.local_variables_initializer()])
        losses = [session.run(train_op) for _ in range(5)]
        moving_mean = session.run(V1.global_variables('conv/BatchNorm/moving_mean')[0])
        assert session.run(counter) == 0
        assert counter in V1.local_variables()
    assert all(np.isfinite(losses)) and losses[-1] < losses[0]
    assert np.any(moving_mean != 0)  # create_train_op ran the batch_norm updates


def test_importing_the_facade_repairs_tf_slim_but_leaves_its_data_classes_as_they_are():
    """`from slimdata import slim` makes tf_slim's code run; it does not change what tf_slim's
    own decoder classes do (that is `patch_tf_slim()`'s choice), so code that uses them
    directly sees tf_slim 1.1.0's behaviour, bugs included."""
    code = '''
import tf_slim
from tf_slim.data import tfexample_decoder
from slimdata import slim, tf_slim_patch
print(tf_slim.batch_norm is slim.batch_norm, hasattr(slim.batch_norm, "_slimdata_fix"))
print(hasattr(vars(tfexample_decoder.Image)["_decode"], "_slimdata_fix"),
      tf_slim_patch.is_patched())
print(tf_slim_patch.repair_tf_slim(), len(tf_slim_patch.patch_tf_slim()))
'''
    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    # Routed batch_norm everywhere; tf_slim's Image not fixed; repairs done once; then
    # patch_tf_slim() adds the five data fixes and nothing else.
    assert run.stdout.split('\n')[:3] == ['True True', 'False False', '() 5']
