"""A tiny convolutional net in the style of slim's nets (arg scopes, contrib initializers)."""

import tensorflow as tf
from tensorflow.contrib.framework import add_arg_scope
from tensorflow.contrib.framework import arg_scope
from tensorflow.python.ops import array_ops
from tensorflow.python.ops import control_flow_ops

slim = tf.contrib.slim


@add_arg_scope
def scaled(inputs, factor=1.0, scope=None):
  """Multiplies by `factor`; an arg-scoped function of the user's own."""
  with tf.name_scope(scope, 'scaled', [inputs]):
    return inputs * factor


def tiny_net_arg_scope(weight_decay=0.0004):
  """The arg scope of tiny_net: Xavier weights with L2 decay, a fixed input scale."""
  with arg_scope([slim.conv2d, slim.fully_connected],
                 weights_initializer=tf.contrib.layers.xavier_initializer(),
                 weights_regularizer=tf.contrib.layers.l2_regularizer(weight_decay)):
    with arg_scope([scaled], factor=1.0 / 255) as sc:
      return sc


def tiny_net(images, num_classes, is_training=True, dropout_rate=0.5, scope='TinyNet'):
  """Returns (logits, end_points)."""
  end_points = {}
  with tf.variable_scope(scope, 'TinyNet', [images]):
    net = scaled(images)
    net = slim.conv2d(net, 8, [3, 3], scope='conv1')
    net = slim.max_pool2d(net, [2, 2], 2, scope='pool1')
    net = slim.flatten(net)
    # tf.layers was TF1's layer API; gone with Keras 3.
    net = tf.layers.dropout(net, rate=dropout_rate, training=is_training)
    logits = slim.fully_connected(net, num_classes, activation_fn=None, scope='logits')
    logits = control_flow_ops.cond(tf.constant(is_training), lambda: logits,
                                   lambda: tf.identity(logits))
    end_points['first_logits'] = array_ops.unstack(logits)[0]
    end_points['predictions'] = tf.contrib.layers.softmax(logits)
  return logits, end_points
