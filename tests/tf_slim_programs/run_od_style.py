"""A program that uses tf_slim through `od_style_decoder`, as OD API training scripts do.

    python run_od_style.py call-after FOLDER   # calls slimdata.patch_tf_slim() after importing
    python run_od_style.py untouched FOLDER    # no call (under the start-up hook, or neither)

The decoder library is imported, its handler subclasses defined and its decoders built before
any patch; a user subclass of tf_slim's Image is defined then too. The program writes its
records into FOLDER (images encoded with Pillow from numpy arrays), decodes them inside
`tf.data.Dataset.map` and a `tf.function`, and checks every value against the arrays and lists
it encoded; tf_slim's documented behaviour gives the rest (BackupHandler: the backup's item
when the first one has no elements; lookups: -1 for a missing key, as the tables say).
Prints `ok: <check>` per check passed; any failure raises.
"""

import io
import os
import sys

import numpy as np
import od_style_decoder  # imports tf_slim before anything is patched
import tensorflow as tf
from PIL import Image as PILImage
from tf_slim import tfexample_decoder as slim_decoder

LABEL_MAP = '1,dog,Dog\n2,cat,Cat\n3,/m/zebra,zebra\n'
HEIGHT, WIDTH = 4, 5


class Uint16GrayImage(slim_decoder.Image):
    """A user's handler subclass, defined before the patch."""

    def __init__(self):
        super(Uint16GrayImage, self).__init__(channels=1, dtype=tf.uint16)


def png(array):
    buffer = io.BytesIO()
    PILImage.fromarray(array).save(buffer, format='PNG')
    return buffer.getvalue()


def feature(values):
    values = list(values)
    if values and isinstance(values[0], bytes):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    if values and isinstance(values[0], (int, np.integer)):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Feature(float_list=tf.train.FloatList(value=values))


def detection_examples(rng):
    """[(serialized tf.train.Example, the values its decode must give)]: one with objects
    named by class text, one with class ids only and no objects' text."""
    examples = []
    for class_text, class_label, image_text, count in (
            ([b'cat', b'zebra', b'horse'], [9, 9, 9], [b'dog'], 3),
            ([], [4, 5], [], 2)):
        image = rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)
        channels = rng.integers(0, 256, (2, HEIGHT, WIDTH), dtype=np.uint8)
        boxes = rng.random((count, 4), dtype=np.float32)
        masks = rng.integers(0, 2, (count, HEIGHT, WIDTH)).astype(np.float32)
        keypoints = rng.random((count, 2, 2), dtype=np.float32)
        features = {
            'image/encoded': [png(image)], 'image/format': [b'png'],
            'image/height': [HEIGHT], 'image/width': [WIDTH],
            'image/additional_channels/encoded': [png(channel) for channel in channels],
            'image/object/class/label': class_label,
            'image/object/mask': masks.ravel(), 'image/object/count': [count],
            'image/object/keypoint/y': keypoints[..., 0].ravel(),
            'image/object/keypoint/x': keypoints[..., 1].ravel(),
        }
        for side, column in zip(('ymin', 'xmin', 'ymax', 'xmax'), boxes.T):
            features['image/object/bbox/' + side] = column
        if class_text:
            features['image/object/class/text'] = class_text
        if image_text:
            features['image/class/text'] = image_text
        example = tf.train.Example(features=tf.train.Features(
            feature={key: feature(values) for key, values in features.items() if len(values)}))
        ids = {b'dog': 1, b'Dog': 1, b'cat': 2, b'Cat': 2, b'/m/zebra': 3, b'zebra': 3}
        expected = {
            'image': image, 'additional_channels': channels[..., np.newaxis],
            'boxes': boxes,
            'classes': [ids.get(text, -1) for text in class_text] or class_label,
            'image_classes': [ids.get(text, -1) for text in image_text],
            'masks': masks, 'keypoints': keypoints,
        }
        examples.append((example.SerializeToString(), expected))
    return examples


def check_detection(decoded, expected):
    assert sorted(decoded) == sorted(expected), sorted(decoded)
    for item, value in expected.items():  # exact values and shapes (empty ones too)
        np.testing.assert_array_equal(decoded[item].numpy(), np.asarray(value), err_msg=item)
    assert decoded['image'].dtype == tf.uint8 and decoded['classes'].dtype == tf.int64


def sequence_example(rng):
    """A SequenceExample of three frames with 2, 0 and 1 boxes, and its expected decode."""
    frames = [png(rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)) for _ in range(3)]
    boxes = [rng.random((2, 4), dtype=np.float32), np.zeros((0, 4), np.float32),
             rng.random((1, 4), dtype=np.float32)]
    labels = [[b'cat', b'Dog'], [], [b'zebra']]
    feature_lists = {'image/encoded': [[frame] for frame in frames],
                     'region/label/string': labels}
    for index, side in enumerate(('ymin', 'xmin', 'ymax', 'xmax')):
        feature_lists['region/bbox/' + side] = [frame_boxes[:, index] for frame_boxes in boxes]
    sequence = tf.train.SequenceExample(
        context=tf.train.Features(feature={'image/format': feature([b'png']),
                                           'image/height': feature([HEIGHT]),
                                           'image/width': feature([WIDTH])}),
        feature_lists=tf.train.FeatureLists(feature_list={
            key: tf.train.FeatureList(feature=[
                tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
                if key.startswith(('image', 'region/label')) else
                tf.train.Feature(float_list=tf.train.FloatList(value=values))
                for values in per_frame])
            for key, per_frame in feature_lists.items()}))
    padded_boxes = np.zeros((3, 2, 4), np.float32)  # default_value=0.0 fills empty places
    padded_classes = np.full((3, 2), -1)            # '' looks up to -1
    for frame, (frame_boxes, frame_labels) in enumerate(zip(boxes, labels)):
        padded_boxes[frame, :len(frame_boxes)] = frame_boxes
        padded_classes[frame, :len(frame_labels)] = [{b'cat': 2, b'Dog': 1, b'zebra': 3}[label]
                                                     for label in frame_labels]
    expected = {'height': HEIGHT, 'num_boxes': [2, 0, 1], 'boxes': padded_boxes,
                'classes': padded_classes, 'images': frames}
    return sequence.SerializeToString(), expected


def main(mode, folder):
    label_map_path = os.path.join(folder, 'label_map.txt')
    with open(label_map_path, 'w') as file:
        file.write(LABEL_MAP)
    # Objects held from before any patch: decoders with their handlers (and lookup tables).
    detection = od_style_decoder.DetectionDecoder(label_map_path, num_keypoints=2)
    sequence = od_style_decoder.SequenceDecoder(label_map_path)
    gray16 = Uint16GrayImage()
    if mode == 'call-after':
        import slimdata
        assert slimdata.patch_tf_slim(), 'the first call must report what it changed'
        print('ok: patched after import')

    rng = np.random.default_rng(14)
    examples = detection_examples(rng)
    records = os.path.join(folder, 'detection.tfrecord')
    with tf.io.TFRecordWriter(records) as writer:
        for serialized, _ in examples:
            writer.write(serialized)
    decoded = list(tf.data.TFRecordDataset(records).map(detection.decode))
    assert len(decoded) == len(examples)
    for values, (_, expected) in zip(decoded, examples):
        check_detection(values, expected)
    print('ok: detection decode in tf.data.Dataset.map')
    decode_in_function = tf.function(detection.decode)
    for serialized, expected in examples:
        check_detection(decode_in_function(tf.constant(serialized)), expected)
    print('ok: detection decode in tf.function')

    serialized, expected = sequence_example(rng)
    [values] = list(tf.data.Dataset.from_tensors(serialized).map(sequence.decode))
    for item, value in expected.items():
        assert values[item].numpy().tolist() == np.asarray(value).tolist(), item
    print('ok: sequence decode in tf.data.Dataset.map')

    array = (np.arange(12, dtype=np.uint16).reshape(3, 4) * 5957)  # up to 65527
    gray16_example = tf.train.Example(features=tf.train.Features(feature={
        'image/encoded': feature([png(array)]), 'image/format': feature([b'png'])}))
    keys_to_features = {'image/encoded': tf.io.FixedLenFeature((), tf.string),
                        'image/format': tf.io.FixedLenFeature((), tf.string)}
    decoder = slim_decoder.TFExampleDecoder(keys_to_features, {'image': gray16})
    [image] = tf.function(decoder.decode)(tf.constant(gray16_example.SerializeToString()))
    np.testing.assert_array_equal(image.numpy(), array[..., np.newaxis])
    print('ok: 16-bit PNG through a subclass of Image defined before the patch')

    try:  # raised while tf.function traces, as in a tf.data pipeline
        tf.function(lambda serialized: decoder.decode(serialized, ['imgae']))(
            tf.constant(gray16_example.SerializeToString()))
        raise AssertionError('an unknown item must raise')
    except KeyError as error:  # what tf_slim raised, still
        assert isinstance(error, ValueError) and "'imgae'" in str(error) \
            and "['image']" in str(error), repr(error)
    print('ok: unknown item named in a KeyError that is a ValueError')

    assert slim_decoder.BoundingBoxSequence().keys == ['ymin', 'xmin', 'ymax', 'xmax']
    assert slim_decoder.KeypointsSequence().keys == ['y', 'x']
    print('ok: sequence handlers take their default prefix=None')


if __name__ == '__main__':
    main(*sys.argv[1:])
