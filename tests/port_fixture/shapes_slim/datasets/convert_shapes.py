"""Converts a folder of class folders of PNGs to one TFRecord file, the TF1 way.

Usage: python datasets/convert_shapes.py --source_dir=DIR --dataset_dir=OUT
"""

from __future__ import print_function

import collections
import os

import tensorflow as tf

tf.app.flags.DEFINE_string('source_dir', None, 'A folder of class folders of PNG images.')
tf.app.flags.DEFINE_string('dataset_dir', None, 'Where the TFRecord file goes.')
FLAGS = tf.app.flags.FLAGS


def int64_feature(values):
  if not isinstance(values, collections.Iterable):
    values = [values]
  return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def bytes_feature(values):
  return tf.train.Feature(bytes_list=tf.train.BytesList(value=[values]))


def image_to_tfexample(image_data, height, width, class_id):
  return tf.train.Example(features=tf.train.Features(feature={
      'image/encoded': bytes_feature(image_data),
      'image/format': bytes_feature('png'),  # a str: Python 2 took it as bytes
      'image/class/label': int64_feature(class_id),
      'image/height': int64_feature(height),
      'image/width': int64_feature(width),
  }))


class ImageReader(object):
  """Finds image sizes with a TensorFlow graph, as the TF1 converters did."""

  def __init__(self):
    self._data = tf.placeholder(dtype=tf.string)
    self._decode = tf.image.decode_png(self._data, channels=3)

  def read_image_dims(self, sess, image_data):
    image = sess.run(self._decode, feed_dict={self._data: image_data})
    return image.shape[0], image.shape[1]


def main(_):
  class_names = sorted(tf.gfile.ListDirectory(FLAGS.source_dir))
  output = os.path.join(FLAGS.dataset_dir, 'shapes_train.tfrecord')
  count = 0
  with tf.Graph().as_default():
    reader = ImageReader()
    with tf.Session('') as sess:
      with tf.python_io.TFRecordWriter(output) as writer:
        for class_id, class_name in enumerate(class_names):
          folder = os.path.join(FLAGS.source_dir, class_name)
          for filename in sorted(tf.gfile.ListDirectory(folder)):
            # Read the image bytes (text mode worked in Python 2).
            image_data = tf.gfile.FastGFile(os.path.join(folder, filename), 'r').read()
            height, width = reader.read_image_dims(sess, image_data)
            example = image_to_tfexample(image_data, height, width, class_id)
            writer.write(example.SerializeToString())
            count += 1
  print('Wrote %d images to %s' % (count, output))


if __name__ == '__main__':
  tf.app.run()
