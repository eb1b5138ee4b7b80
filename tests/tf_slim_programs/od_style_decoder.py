"""A decoder library written against tf_slim the way the TF Object Detection API's is.

It stands for code the user cannot edit: it imports `tf_slim`'s decoder module under an alias
at import time, defines a subclass of its `Tensor` handler right then (whose methods call
`super(ClassTextHandler, self)`, so tf_slim's own `super(Tensor, self)` runs inside), keeps
handler objects, and decodes in TF2 style (inside `tf.data.Dataset.map` or a `tf.function`).
What it exercises of tf_slim: Image (single and `repeated`), BoundingBox with a prefix,
BackupHandler over a Tensor subclass with label-map lookups, LookupTensor, Tensor with
`shape_keys`, ItemHandlerCallback, and the sequence decoder with NumBoxesSequence and
BoundingBoxSequence.
"""

import tensorflow.compat.v1 as tf
from tf_slim import tfexample_decoder as slim_example_decoder


def read_label_map(path):
    """{name: id} and {display name: id} from a label map file of `id,name,display name` lines."""
    name_to_id, display_name_to_id = {}, {}
    with open(path) as lines:
        for line in lines:
            class_id, name, display_name = line.strip().split(',')
            name_to_id[name] = int(class_id)
            display_name_to_id[display_name] = int(class_id)
    return name_to_id, display_name_to_id


def _table(text_to_id):
    return tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(
            keys=tf.constant(list(text_to_id)),
            values=tf.constant(list(text_to_id.values()), dtype=tf.int64)),
        default_value=-1)


class ClassTextHandler(slim_example_decoder.Tensor):
    """Class ids from class text: the larger of the name and the display-name lookups."""

    def __init__(self, tensor_key, label_map_path, default_value=''):
        name_to_id, display_name_to_id = read_label_map(label_map_path)
        self._name_to_id = _table(name_to_id)
        self._display_name_to_id = _table(display_name_to_id)
        super(ClassTextHandler, self).__init__(tensor_key, default_value=default_value)

    def tensors_to_item(self, keys_to_tensors):
        text = super(ClassTextHandler, self).tensors_to_item(keys_to_tensors)
        return tf.maximum(self._name_to_id.lookup(text), self._display_name_to_id.lookup(text))


class DetectionDecoder(object):
    """tf.train.Example -> a dict of detection tensors."""

    def __init__(self, label_map_path, num_keypoints):
        self._num_keypoints = num_keypoints
        self.keys_to_features = {
            'image/encoded': tf.FixedLenFeature((), tf.string, default_value=''),
            'image/format': tf.FixedLenFeature((), tf.string, default_value='jpeg'),
            'image/height': tf.FixedLenFeature((), tf.int64, default_value=1),
            'image/width': tf.FixedLenFeature((), tf.int64, default_value=1),
            'image/additional_channels/encoded': tf.FixedLenFeature((2,), tf.string),
            'image/class/text': tf.VarLenFeature(tf.string),
            'image/object/bbox/xmin': tf.VarLenFeature(tf.float32),
            'image/object/bbox/xmax': tf.VarLenFeature(tf.float32),
            'image/object/bbox/ymin': tf.VarLenFeature(tf.float32),
            'image/object/bbox/ymax': tf.VarLenFeature(tf.float32),
            'image/object/class/label': tf.VarLenFeature(tf.int64),
            'image/object/class/text': tf.VarLenFeature(tf.string),
            'image/object/mask': tf.VarLenFeature(tf.float32),
            'image/object/count': tf.FixedLenFeature((), tf.int64, default_value=0),
            'image/object/keypoint/x': tf.VarLenFeature(tf.float32),
            'image/object/keypoint/y': tf.VarLenFeature(tf.float32),
        }
        name_to_id, _ = read_label_map(label_map_path)
        self.items_to_handlers = {
            'image': slim_example_decoder.Image(
                image_key='image/encoded', format_key='image/format', channels=3),
            'additional_channels': slim_example_decoder.Image(
                image_key='image/additional_channels/encoded', format_key='image/format',
                channels=1, repeated=True),
            'boxes': slim_example_decoder.BoundingBox(['ymin', 'xmin', 'ymax', 'xmax'],
                                                      'image/object/bbox/'),
            'classes': slim_example_decoder.BackupHandler(
                ClassTextHandler('image/object/class/text', label_map_path),
                slim_example_decoder.Tensor('image/object/class/label')),
            'image_classes': slim_example_decoder.LookupTensor(
                'image/class/text', _table(name_to_id), default_value=''),
            'masks': slim_example_decoder.Tensor(
                'image/object/mask',
                shape_keys=['image/object/count', 'image/height', 'image/width']),
            'keypoints': slim_example_decoder.ItemHandlerCallback(
                ['image/object/keypoint/y', 'image/object/keypoint/x'], self._keypoints),
        }

    def _keypoints(self, keys_to_tensors):
        y = tf.sparse.to_dense(keys_to_tensors['image/object/keypoint/y'])
        x = tf.sparse.to_dense(keys_to_tensors['image/object/keypoint/x'])
        return tf.reshape(tf.stack([y, x], axis=1), [-1, self._num_keypoints, 2])

    def decode(self, serialized_example):
        serialized_example = tf.reshape(serialized_example, shape=[])
        decoder = slim_example_decoder.TFExampleDecoder(self.keys_to_features,
                                                        self.items_to_handlers)
        keys = decoder.list_items()
        return dict(zip(keys, decoder.decode(serialized_example, items=keys)))


class SequenceDecoder(object):
    """tf.train.SequenceExample of frames -> a dict of per-frame detection tensors."""

    def __init__(self, label_map_path):
        self._context_keys_to_features = {
            'image/format': tf.FixedLenFeature((), tf.string, default_value='jpeg'),
            'image/height': tf.FixedLenFeature((), tf.int64),
            'image/width': tf.FixedLenFeature((), tf.int64),
        }
        self._sequence_keys_to_features = {
            'image/encoded': tf.FixedLenSequenceFeature([], dtype=tf.string),
            'region/bbox/xmin': tf.VarLenFeature(dtype=tf.float32),
            'region/bbox/xmax': tf.VarLenFeature(dtype=tf.float32),
            'region/bbox/ymin': tf.VarLenFeature(dtype=tf.float32),
            'region/bbox/ymax': tf.VarLenFeature(dtype=tf.float32),
            'region/label/string': tf.VarLenFeature(dtype=tf.string),
        }
        self._items_to_handlers = {
            'height': slim_example_decoder.Tensor('image/height'),
            'num_boxes': slim_example_decoder.NumBoxesSequence('region/bbox/xmin'),
            'boxes': slim_example_decoder.BoundingBoxSequence(prefix='region/bbox/',
                                                              default_value=0.0),
            'classes': ClassTextHandler('region/label/string', label_map_path),
            'images': slim_example_decoder.Tensor('image/encoded'),
        }

    def decode(self, serialized_sequence_example):
        serialized = tf.reshape(serialized_sequence_example, shape=[])
        decoder = slim_example_decoder.TFSequenceExampleDecoder(
            self._context_keys_to_features, self._sequence_keys_to_features,
            self._items_to_handlers)
        keys = decoder.list_items()
        return dict(zip(keys, decoder.decode(serialized, items=keys)))
