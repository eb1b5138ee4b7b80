"""Test utilities, as in `tf_slim.data.test_utils` (numpy 2 compatible).

tf_slim's own data tests import these; slimdata's copy makes them run unchanged against
slimdata. `generate_image` and `create_tfrecord_files` need an active default Session, as in
tf_slim.
"""

import os
from typing import List, Sequence, Tuple

import numpy as np

from slimdata._tf import tf


def _encoded_int64_feature(ndarray):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=ndarray.flatten().tolist()))


def _encoded_bytes_feature(tf_encoded):
    encoded = tf.compat.v1.get_default_session().run(tf_encoded)
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[encoded]))


def _string_feature(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value.encode('utf-8')]))


def _encoder(image, image_format):
    if image_format not in ('jpeg', 'png'):
        raise ValueError('image_format must be jpeg or png, got %r' % (image_format,))
    tf_image = tf.constant(image, dtype=tf.uint8)
    if image_format == 'jpeg':
        return tf.image.encode_jpeg(tf_image)
    return tf.image.encode_png(tf_image)


def generate_image(image_shape: Sequence[int], image_format: str = 'jpeg',
                   label: int = 0) -> Tuple[np.ndarray, bytes]:
    """Generates an image and an example containing the encoded image.

    Must be called within an active session.

    Args:
      image_shape: the shape of the image to generate.
      image_format: the encoding format of the image, 'jpeg' or 'png'.
      label: the int64 label of the image.

    Returns:
      image: the generated image, a uint8-valued array.
      example: a serialized TF-example with 'image/encoded', 'image/format' and
        'image/class/label'.
    """
    # tf_slim used np.random.random_integers(0, 255), which numpy 2 removed.
    image = np.random.randint(0, 256, size=image_shape)
    example = tf.train.Example(features=tf.train.Features(feature={
        'image/encoded': _encoded_bytes_feature(_encoder(image, image_format)),
        'image/format': _string_feature(image_format),
        'image/class/label': _encoded_int64_feature(np.array(label)),
    }))
    return image, example.SerializeToString()


def create_tfrecord_files(output_dir: str, num_files: int = 3,
                          num_records_per_file: int = 10) -> List[str]:
    """Creates TFRecord files of generated 10x10 JPEG examples.

    Must be called within an active session.

    Args:
      output_dir: the directory where the files are stored.
      num_files: the number of files to create.
      num_records_per_file: the number of records per file.

    Returns:
      A list of the paths to the TFRecord files.
    """
    tfrecord_paths = []
    for i in range(num_files):
        path = os.path.join(output_dir, 'flowers.tfrecord-%d-of-%s' % (i, num_files))
        tfrecord_paths.append(path)
        with tf.io.TFRecordWriter(path) as writer:
            for _ in range(num_records_per_file):
                _, example = generate_image(image_shape=(10, 10, 3))
                writer.write(example)
    return tfrecord_paths
