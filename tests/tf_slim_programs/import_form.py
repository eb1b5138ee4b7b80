"""Imports tf_slim's decoder in one of its import forms, and decodes an image through it.

    python import_form.py FORM WHEN

FORM is a key of FORMS; WHEN is `before` (slimdata.patch_tf_slim() is called before the
import), `after` (called after the import, once a decoder has been built) or `untouched` (no
call: under the start-up hook, or neither). The image is a PNG that Pillow encoded from a numpy
array, decoded with tf_slim's Image handler inside `tf.data.Dataset.map` (what fails on
TensorFlow 2.21 without a patch: `control_flow_ops.case`), and a label with Tensor through
`shape_keys` (`array_ops.stack`). Prints `decoded` when all is as expected.
"""

import io
import sys

import numpy as np
from PIL import Image as PILImage

FORMS = {
    'import tf_slim as slim': 'import tf_slim as slim\ndecoder_module = slim.tfexample_decoder',
    'from tf_slim import tfexample_decoder':
        'from tf_slim import tfexample_decoder as decoder_module',
    'from tf_slim.data import tfexample_decoder':
        'from tf_slim.data import tfexample_decoder as decoder_module',
    'import tf_slim.data.tfexample_decoder':
        'import tf_slim.data.tfexample_decoder\n'
        'decoder_module = tf_slim.data.tfexample_decoder',
}
HANDLER_CLASSES = ('Image', 'Tensor', 'TFExampleDecoder')


def patch():
    import slimdata
    assert slimdata.patch_tf_slim(), 'the first call must report what it changed'


def main(form, when):
    if when == 'before':
        patch()
    namespace = {}
    exec(FORMS[form], namespace)
    decoder_module = namespace['decoder_module']
    assert decoder_module.__name__ == 'tf_slim.data.tfexample_decoder'
    import tensorflow as tf

    image = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3) * 4
    buffer = io.BytesIO()
    PILImage.fromarray(image).save(buffer, format='PNG')
    example = tf.train.Example(features=tf.train.Features(feature={
        'image/encoded': tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[buffer.getvalue()])),
        'image/format': tf.train.Feature(bytes_list=tf.train.BytesList(value=[b'png'])),
        'labels': tf.train.Feature(int64_list=tf.train.Int64List(value=[3, 1, 4, 1, 5, 9])),
        'labels/shape': tf.train.Feature(int64_list=tf.train.Int64List(value=[2, 3])),
    }))
    keys_to_features = {
        'image/encoded': tf.io.FixedLenFeature((), tf.string),
        'image/format': tf.io.FixedLenFeature((), tf.string),
        'labels': tf.io.VarLenFeature(tf.int64),
        'labels/shape': tf.io.FixedLenFeature((2,), tf.int64),
    }
    classes = {name: getattr(decoder_module, name) for name in HANDLER_CLASSES}
    decoder = decoder_module.TFExampleDecoder(keys_to_features, {
        'image': decoder_module.Image(),
        'labels': decoder_module.Tensor('labels', shape_keys='labels/shape'),
    })
    if when == 'after':
        patch()
        # Patched in place: the names still hold the very classes that code already has.
        assert all(getattr(decoder_module, name) is cls for name, cls in classes.items())
    # The items as an iterator: tf_slim reads them once, and any iterable works.
    dataset = tf.data.Dataset.from_tensors(example.SerializeToString()).map(
        lambda serialized: tuple(decoder.decode(serialized, iter(['image', 'labels']))))
    [(decoded_image, labels)] = list(dataset)
    np.testing.assert_array_equal(decoded_image.numpy(), image)
    np.testing.assert_array_equal(labels.numpy(), [[3, 1, 4], [1, 5, 9]])
    print('decoded')


if __name__ == '__main__':
    main(*sys.argv[1:])
