"""Trains tiny_net on the shapes records with slim.learning, as TF1 slim repos did."""

from __future__ import print_function

import tensorflow as tf

from datasets import shapes
from nets import tiny_net

slim = tf.contrib.slim

tf.app.flags.DEFINE_string('dataset_dir', None, 'Where shapes_train.tfrecord is.')
tf.app.flags.DEFINE_string('train_dir', None, 'Where checkpoints go.')
tf.app.flags.DEFINE_integer('max_number_of_steps', 3, 'How many steps to train.')
FLAGS = tf.app.flags.FLAGS


def main(_):
  tf.logging.set_verbosity(tf.logging.ERROR)
  with tf.Graph().as_default():
    dataset = shapes.get_split('train', FLAGS.dataset_dir)
    provider = slim.dataset_data_provider.DatasetDataProvider(
        dataset, num_readers=1, common_queue_capacity=24, common_queue_min=12)
    image, label = provider.get(['image', 'label'])
    image = tf.image.resize_images(tf.to_float(image), [16, 16])
    images, labels = tf.train.batch([image, label], batch_size=4, num_threads=1, capacity=8)
    with slim.arg_scope(tiny_net.tiny_net_arg_scope()):
      logits, _ = tiny_net.tiny_net(images, dataset.num_classes)
    tf.losses.softmax_cross_entropy(
        slim.one_hot_encoding(labels, dataset.num_classes), logits)
    total_loss = tf.losses.get_total_loss()
    optimizer = tf.train.GradientDescentOptimizer(0.01)
    train_op = slim.learning.create_train_op(total_loss, optimizer)
    final_loss = slim.learning.train(
        train_op, FLAGS.train_dir, number_of_steps=FLAGS.max_number_of_steps,
        save_summaries_secs=600, save_interval_secs=600)
    print('final loss %.4f' % final_loss)


if __name__ == '__main__':
  tf.app.run()
