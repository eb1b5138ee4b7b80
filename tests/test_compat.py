"""slimdata's own tests of the compat layer, beyond tf_slim's suite.

The tf_slim bugs that slimdata fixes are tested against both implementations: the test must
pass on slimdata and fail on tf_slim 1.1.0 (strict xfail), so each one proves a real fix.
"""

import io
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image as PILImage

from conftest import drain
from slimdata import (
    data_provider,
    dataset,
    dataset_data_provider,
    parallel_reader,
    prefetch_queue,
    tfexample_decoder,
)


def _tf_slim_decoder_module():
    from tf_slim.data import tfexample_decoder as tf_slim_tfexample_decoder
    return tf_slim_tfexample_decoder


def _tf_slim_data_provider_module():
    from tf_slim.data import data_provider as tf_slim_data_provider
    return tf_slim_data_provider


def _both(slimdata_module, tf_slim_loader, bug):
    """Parametrises over slimdata (must pass) and tf_slim 1.1.0 (must fail: the bug)."""
    return pytest.mark.parametrize('impl', [
        pytest.param(lambda: slimdata_module, id='slimdata'),
        pytest.param(tf_slim_loader, id='tf_slim',
                     marks=pytest.mark.xfail(strict=True, reason=f'tf_slim 1.1.0 bug: {bug}')),
    ])


def _bytes(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=value))


def _int64(value):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=value))


def _float(value):
    return tf.train.Feature(float_list=tf.train.FloatList(value=value))


def _example(**features):
    return tf.train.Example(features=tf.train.Features(
        feature={key.replace('__', '/'): value for key, value in features.items()}))


def _png_bytes(array, mode=None):
    buffer = io.BytesIO()
    PILImage.fromarray(array, mode=mode).save(buffer, format='PNG')
    return buffer.getvalue()


def _jpeg_bytes(array):
    buffer = io.BytesIO()
    PILImage.fromarray(array).save(buffer, format='JPEG', quality=90)
    return buffer.getvalue()


def _run(tensors):
    with tf.compat.v1.Session() as sess:
        return sess.run(tensors)


def _image_example(encoded, image_format):
    return _example(image__encoded=_bytes([encoded]), image__format=_bytes([image_format]))


IMAGE_FEATURES = {
    'image/encoded': tf.io.FixedLenFeature((), tf.string, default_value=''),
    'image/format': tf.io.FixedLenFeature((), tf.string, default_value='jpeg'),
}


def _decode_image(serialized, **image_kwargs):
    decoder = tfexample_decoder.TFExampleDecoder(
        IMAGE_FEATURES, {'image': tfexample_decoder.Image(**image_kwargs)})
    [image] = decoder.decode(tf.constant(serialized), ['image'])
    return image


# --- the tf_slim bugs that slimdata fixes ---------------------------------------------------


@_both(tfexample_decoder, _tf_slim_decoder_module, 'prefix=None default raises TypeError')
def test_sequence_handlers_accept_their_default_prefix_none(impl, graph):
    module = impl()
    sequence = tf.train.SequenceExample(feature_lists=tf.train.FeatureLists(feature_list={
        key: tf.train.FeatureList(feature=[_float(values) for values in per_frame])
        for key, per_frame in {'ymin': [[0.1, 0.2], [0.3]], 'xmin': [[0.4, 0.5], [0.6]],
                               'ymax': [[0.7, 0.8], [0.9]], 'xmax': [[1.0, 0.55], [0.65]],
                               'y': [[0.25]], 'x': [[0.75]]}.items()}))
    sequence_features = {key: tf.io.VarLenFeature(tf.float32)
                         for key in ['ymin', 'xmin', 'ymax', 'xmax', 'y', 'x']}
    decoder = module.TFSequenceExampleDecoder(
        {}, sequence_features,
        {'boxes': module.BoundingBoxSequence(), 'keypoints': module.KeypointsSequence()})
    boxes, keypoints = _run(decoder.decode(tf.constant(sequence.SerializeToString()),
                                           ['boxes', 'keypoints']))
    np.testing.assert_allclose(boxes, [[[0.1, 0.4, 0.7, 1.0], [0.2, 0.5, 0.8, 0.55]],
                                       [[0.3, 0.6, 0.9, 0.65], [-1, -1, -1, -1]]], rtol=1e-6)
    np.testing.assert_allclose(keypoints, [[[0.25, 0.75]]], rtol=1e-6)


@_both(tfexample_decoder, _tf_slim_decoder_module, 'unknown item raises a bare KeyError')
def test_unknown_item_is_a_value_error_naming_it_and_the_known_items(impl, graph):
    module = impl()
    decoder = module.TFExampleDecoder(
        {'label': tf.io.FixedLenFeature([], tf.int64)}, {'label': module.Tensor('label')})
    with pytest.raises(ValueError, match=r"'lable'.*\['label'\]"):
        decoder.decode(tf.constant(_example(label=_int64([1])).SerializeToString()), ['lable'])


def test_unknown_item_error_is_also_the_key_error_that_tf_slim_raised(graph):
    # Code written against tf_slim may catch KeyError; it keeps working, with a clear message.
    decoder = tfexample_decoder.TFExampleDecoder(
        {'label': tf.io.FixedLenFeature([], tf.int64)}, {'label': tfexample_decoder.Tensor('x')})
    serialized = tf.constant(_example(label=_int64([1])).SerializeToString())
    with pytest.raises(KeyError) as unknown_item:
        decoder.decode(serialized, ['lable'])
    with pytest.raises(KeyError) as unknown_key:
        decoder.decode(serialized, ['label'])
    assert isinstance(unknown_item.value, ValueError) and isinstance(unknown_key.value, ValueError)
    assert str(unknown_item.value) == "Unknown item 'lable': the decoder provides ['label']"
    assert str(unknown_key.value).startswith("Item 'label' reads feature key 'x', which is not")


def test_unknown_item_error_keeps_its_types_when_raised_while_tracing():
    decoder = tfexample_decoder.TFExampleDecoder({'label': tf.io.FixedLenFeature([], tf.int64)},
                                                 {'label': tfexample_decoder.Tensor('label')})
    serialized = _example(label=_int64([1])).SerializeToString()
    for trace in (lambda decode: tf.data.Dataset.from_tensors(serialized).map(decode),
                  lambda decode: tf.function(decode)(tf.constant(serialized))):
        with pytest.raises(KeyError, match=r"Unknown item 'lable'") as raised:
            trace(lambda record: decoder.decode(record, ['lable']))
        assert isinstance(raised.value, ValueError)


@_both(tfexample_decoder, _tf_slim_decoder_module, '16-bit PNG decoded at 8 bits')
def test_16_bit_png_keeps_its_16_bits(impl, graph):
    module = impl()
    array = (np.arange(24, dtype=np.uint16).reshape(2, 4, 3) * 2731)  # up to 62813
    serialized = _image_example(_run(tf.io.encode_png(array)), b'png').SerializeToString()
    decoder = module.TFExampleDecoder(
        IMAGE_FEATURES, {'image': module.Image(dtype=tf.uint16)})
    [image] = decoder.decode(tf.constant(serialized), ['image'])
    np.testing.assert_array_equal(_run(image), array)


@_both(tfexample_decoder, _tf_slim_decoder_module, 'list_items returns dict_keys')
def test_sequence_decoder_list_items_is_a_list(impl):
    module = impl()
    decoder = module.TFSequenceExampleDecoder(
        {'a': tf.io.FixedLenFeature([], tf.int64)}, {},
        {'a': module.Tensor('a'), 'b': module.Tensor('a')})
    assert decoder.list_items() == ['a', 'b']
    assert isinstance(decoder.list_items(), list)


@_both(data_provider, _tf_slim_data_provider_module, 'list_items returns dict_keys')
def test_data_provider_list_items_is_a_list(impl):
    provider = impl().DataProvider({'image': None, 'label': None}, num_samples=3)
    assert isinstance(provider.list_items(), list)
    assert provider.list_items() == ['image', 'label']


# --- images ----------------------------------------------------------------------------------


@pytest.mark.parametrize('image_format', [b'png', b'PNG', b'jpeg', b'JPEG', b'jpg', b'JPG'])
def test_image_decodes_by_content_whatever_the_format_spelling(image_format, graph):
    rng = np.random.RandomState(7)
    array = rng.randint(0, 256, size=(5, 7, 3)).astype(np.uint8)
    is_png = image_format.lower() == b'png'
    encoded = _png_bytes(array) if is_png else _jpeg_bytes(array)
    image = _run(_decode_image(_image_example(encoded, image_format).SerializeToString()))
    # PNG is lossless; a JPEG must equal TensorFlow's own decode of the same bytes.
    expected = array if is_png else _run(tf.io.decode_jpeg(encoded, channels=3))
    np.testing.assert_array_equal(image, expected)
    assert image.dtype == np.uint8


@pytest.mark.parametrize('image_format', [b'raw', b'RAW', b'Raw'])
def test_raw_image_honours_shape_and_dtype(image_format, graph):
    array = np.linspace(-1, 1, 2 * 3 * 1, dtype=np.float32).reshape(2, 3, 1)
    serialized = _image_example(array.tobytes(), image_format).SerializeToString()
    image = _run(_decode_image(serialized, shape=[2, 3, 1], channels=1, dtype=tf.float32))
    np.testing.assert_array_equal(image, array)


def test_png_with_float_dtype_is_cast_not_rescaled_as_in_tf_slim(graph):
    array = np.array([[[0, 128, 255]]], dtype=np.uint8)
    serialized = _image_example(_png_bytes(array), b'png').SerializeToString()
    image = _run(_decode_image(serialized, dtype=tf.float32))
    np.testing.assert_array_equal(image, array.astype(np.float32))


def test_8_bit_png_with_uint16_dtype_is_cast_as_in_tf_slim(graph):
    # tf.io.decode_image(dtype=uint16) would rescale by 257; tf_slim cast, and so do we.
    array = np.array([[[0, 1, 255]]], dtype=np.uint8)
    serialized = _image_example(_png_bytes(array), b'png').SerializeToString()
    np.testing.assert_array_equal(_run(_decode_image(serialized, dtype=tf.uint16)),
                                  array.astype(np.uint16))


def test_grayscale_png_with_one_channel(graph):
    array = np.arange(12, dtype=np.uint8).reshape(3, 4) * 20
    serialized = _image_example(_png_bytes(array, mode='L'), b'png').SerializeToString()
    image = _decode_image(serialized, channels=1)
    assert image.shape.as_list() == [None, None, 1]
    np.testing.assert_array_equal(_run(image), array[:, :, None])


def test_dct_method_is_honoured_for_jpeg(graph):
    array = np.random.RandomState(3).randint(0, 256, size=(16, 16, 3)).astype(np.uint8)
    encoded = _jpeg_bytes(array)
    serialized = _image_example(encoded, b'jpeg').SerializeToString()
    image = _run(_decode_image(serialized, dct_method='INTEGER_FAST'))
    expected = _run(tf.io.decode_jpeg(encoded, channels=3, dct_method='INTEGER_FAST'))
    np.testing.assert_array_equal(image, expected)


def test_repeated_images(graph):
    arrays = [np.full((2, 2, 3), value, dtype=np.uint8) for value in (10, 200)]
    example = _example(image__encoded=_bytes([_png_bytes(a) for a in arrays]),
                       image__format=_bytes([b'png']))
    decoder = tfexample_decoder.TFExampleDecoder(
        {'image/encoded': tf.io.FixedLenFeature((2,), tf.string),
         'image/format': tf.io.FixedLenFeature((), tf.string)},
        {'images': tfexample_decoder.Image(repeated=True)})
    [images] = decoder.decode(tf.constant(example.SerializeToString()), ['images'])
    np.testing.assert_array_equal(_run(images), np.stack(arrays))


# --- handlers --------------------------------------------------------------------------------


def test_bounding_box_columns_follow_the_order_of_keys(graph):
    example = _example(**{f'bbox__{side}': _float(values) for side, values in
                          {'ymin': [0.1, 0.2], 'xmin': [0.3, 0.4],
                           'ymax': [0.5, 0.6], 'xmax': [0.7, 0.8]}.items()})
    keys_to_features = {f'bbox/{side}': tf.io.VarLenFeature(tf.float32)
                        for side in ['ymin', 'xmin', 'ymax', 'xmax']}
    decoder = tfexample_decoder.TFExampleDecoder(keys_to_features, {
        'yx': tfexample_decoder.BoundingBox(['ymin', 'xmin', 'ymax', 'xmax'], 'bbox/'),
        'xy': tfexample_decoder.BoundingBox(['xmin', 'ymin', 'xmax', 'ymax'], 'bbox/')})
    yx, xy = _run(decoder.decode(tf.constant(example.SerializeToString()), ['yx', 'xy']))
    np.testing.assert_allclose(yx, [[0.1, 0.3, 0.5, 0.7], [0.2, 0.4, 0.6, 0.8]], rtol=1e-6)
    np.testing.assert_allclose(xy, yx[:, [1, 0, 3, 2]], rtol=1e-6)


class DuckTypedHandler:
    """A handler as a user may have written it: no base class at all."""

    keys = ['value']

    def tensors_to_item(self, keys_to_tensors):
        return keys_to_tensors['value'] * 2


def test_handlers_written_against_tf_slim_work_unchanged(graph):
    from tf_slim.data import tfexample_decoder as tf_slim_tfexample_decoder

    class TfSlimSubclass(tf_slim_tfexample_decoder.ItemHandler):
        def __init__(self):
            super().__init__(['value'])

        def tensors_to_item(self, keys_to_tensors):
            return keys_to_tensors['value'] + 1

    empty_primary = tfexample_decoder.ItemHandlerCallback(
        ['value'], lambda tensors: tf.zeros([0], tf.int64))
    decoder = tfexample_decoder.TFExampleDecoder(
        {'value': tf.io.FixedLenFeature([1], tf.int64)},
        {'duck': DuckTypedHandler(), 'subclass': TfSlimSubclass(),
         'backup': tfexample_decoder.BackupHandler(empty_primary, DuckTypedHandler())})
    serialized = tf.constant(_example(value=_int64([21])).SerializeToString())
    duck, subclass, backup = _run(decoder.decode(serialized, ['duck', 'subclass', 'backup']))
    assert (duck.tolist(), subclass.tolist(), backup.tolist()) == ([42], [22], [42])
    assert isinstance(DuckTypedHandler(), tfexample_decoder.ItemHandler)
    with pytest.raises(ValueError, match='Primary handler'):
        tfexample_decoder.BackupHandler(object(), DuckTypedHandler())


def test_handler_key_missing_from_keys_to_features_is_named(graph):
    decoder = tfexample_decoder.TFExampleDecoder(
        {'image/class/label': tf.io.FixedLenFeature([], tf.int64)},
        {'label': tfexample_decoder.Tensor('image/label')})
    with pytest.raises(ValueError, match=r"'label'.*'image/label'.*'image/class/label'"):
        decoder.decode(tf.constant(b''), ['label'])


def test_record_whose_features_do_not_match_names_the_key(graph):
    decoder = tfexample_decoder.TFExampleDecoder(
        {'image/class/label': tf.io.FixedLenFeature([], tf.int64)},
        {'label': tfexample_decoder.Tensor('image/class/label')})
    wrong_type = _example(image__class__label=_float([1.0])).SerializeToString()
    missing = _example(other=_int64([1])).SerializeToString()
    for serialized in (wrong_type, missing):
        [label] = decoder.decode(tf.constant(serialized), ['label'])
        with pytest.raises(tf.errors.InvalidArgumentError, match='image/class/label'):
            _run(label)


def test_only_the_features_of_requested_items_are_parsed(graph):
    # 'mask' is declared without a default and absent from the record: asking only for
    # 'label' must not fail on it (tf_slim parsed every declared feature).
    decoder = tfexample_decoder.TFExampleDecoder(
        {'label': tf.io.FixedLenFeature([], tf.int64),
         'mask': tf.io.FixedLenFeature([], tf.string)},
        {'label': tfexample_decoder.Tensor('label'), 'mask': tfexample_decoder.Tensor('mask')})
    [label] = decoder.decode(tf.constant(_example(label=_int64([5])).SerializeToString()),
                             ['label'])
    assert _run(label) == 5


# --- DatasetDataProvider, parallel_reader, prefetch_queue --------------------------------


def _write_label_shards(directory, num_files, per_file):
    """Writes shards with TensorFlow's own writer; label = file * 100 + record index."""
    paths = []
    for file_index in range(num_files):
        path = os.path.join(directory, f'train-{file_index:05d}-of-{num_files:05d}.tfrecord')
        with tf.io.TFRecordWriter(path) as writer:
            for record_index in range(per_file):
                image = np.full((2, 3, 3), file_index * 10 + record_index, dtype=np.uint8)
                writer.write(_example(
                    image__encoded=_bytes([_png_bytes(image)]), image__format=_bytes([b'png']),
                    image__class__label=_int64([file_index * 100 + record_index]),
                ).SerializeToString())
        paths.append(path)
    return paths


def _label_dataset(data_sources, num_samples):
    decoder = tfexample_decoder.TFExampleDecoder(
        {**IMAGE_FEATURES,
         'image/class/label': tf.io.FixedLenFeature([], tf.int64, default_value=-1)},
        {'image': tfexample_decoder.Image(), 'label': tfexample_decoder.Tensor(
            'image/class/label')})
    return dataset.Dataset(data_sources, tf.compat.v1.TFRecordReader, decoder, num_samples,
                           {'image': 'a 2x3 image', 'label': 'file * 100 + index'})


def test_unshuffled_single_epoch_reads_every_record_in_order_then_ends(tmp_path, graph):
    paths = _write_label_shards(tmp_path, num_files=3, per_file=4)
    provider = dataset_data_provider.DatasetDataProvider(
        _label_dataset(str(tmp_path / 'train-*.tfrecord'), 12), shuffle=False, num_epochs=1)
    image, label, key = provider.get(['image', 'label', 'record_key'])
    values = drain([image, label, key])
    assert [int(v[1]) for v in values] == [f * 100 + r for f in range(3) for r in range(4)]
    for image_value, label_value, key_value in values:
        # Items of one get() come from the same record.
        assert (image_value == (label_value // 100) * 10 + label_value % 100).all()
        assert key_value.decode().startswith(paths[label_value // 100] + ':')
    assert provider.num_samples() == 12


def test_separate_gets_come_from_the_same_record(tmp_path, graph):
    _write_label_shards(tmp_path, num_files=2, per_file=5)
    provider = dataset_data_provider.DatasetDataProvider(
        _label_dataset(str(tmp_path / '*.tfrecord'), 10), num_readers=2, shuffle=True, seed=3,
        num_epochs=1)
    [image] = provider.get(['image'])
    [label] = provider.get(['label'])
    for image_value, label_value in drain([image, label]):
        assert (image_value == (label_value // 100) * 10 + label_value % 100).all()


def test_several_readers_shuffled_two_epochs_read_each_record_twice(tmp_path, graph):
    _write_label_shards(tmp_path, num_files=3, per_file=5)
    provider = dataset_data_provider.DatasetDataProvider(
        _label_dataset([str(tmp_path / 'train-0000[01]*'), str(tmp_path / 'train-00002*')], 15),
        num_readers=3, shuffle=True, num_epochs=2, seed=1, common_queue_capacity=32,
        common_queue_min=8)
    [label] = provider.get(['label'])
    labels = [int(v[0]) for v in drain([label])]
    expected = [f * 100 + r for f in range(3) for r in range(5)] * 2
    assert sorted(labels) == sorted(expected)
    assert labels != sorted(labels)  # shuffled


def _write_numbered_files(directory, sizes):
    """Files of raw records b'<file>-<index>' written by TensorFlow's writer."""
    paths = []
    for file_index, size in enumerate(sizes):
        path = str(directory / f'part-{file_index}.tfrecord')
        with tf.io.TFRecordWriter(path) as writer:
            for record_index in range(size):
                writer.write(f'{file_index}-{record_index}'.encode())
        paths.append(path)
    return paths


@pytest.mark.parametrize('capacity', [4, 256])
def test_records_read_in_chunks_arrive_complete_and_in_file_order(tmp_path, graph, capacity):
    # Readers move several records per step (parallel_reader.RECORDS_PER_READ); file sizes
    # that are not multiples of it, and a queue smaller than it, must lose or repeat nothing.
    sizes = [parallel_reader.RECORDS_PER_READ + 1, 2 * parallel_reader.RECORDS_PER_READ + 5, 3]
    paths = _write_numbered_files(tmp_path, sizes)
    key, value = parallel_reader.parallel_read(
        paths, tf.compat.v1.TFRecordReader, num_epochs=2, num_readers=1, shuffle=False,
        capacity=capacity)
    values = drain([key, value])
    one_epoch = [f'{f}-{r}' for f, size in enumerate(sizes) for r in range(size)]
    assert [v.decode() for _, v in values] == one_epoch * 2
    # Keys are '<file>:<offset>': 16 bytes of framing plus the payload per record.
    first_file_offsets = [int(k.decode().rsplit(':', 1)[1]) for k, _ in values[:sizes[0]]]
    payload_lengths = [len(f'0-{r}') for r in range(sizes[0])]
    assert first_file_offsets == [sum(16 + n for n in payload_lengths[:i])
                                  for i in range(sizes[0])]


def test_several_readers_reading_in_chunks_read_every_record_once_per_epoch(tmp_path, graph):
    sizes = [40, 75, 9, 33]
    paths = _write_numbered_files(tmp_path, sizes)
    _, value = parallel_reader.parallel_read(
        paths, tf.compat.v1.TFRecordReader, num_epochs=3, num_readers=3, shuffle=True, seed=5,
        capacity=64, min_after_dequeue=16)
    values = [v.decode() for v in drain(value)]
    assert sorted(values) == sorted([f'{f}-{r}' for f, size in enumerate(sizes)
                                     for r in range(size)] * 3)


def test_batch_and_prefetch_queue_with_dynamic_pad(tmp_path, graph):
    # Variable-length items (like boxes) batched with dynamic_pad, then prefetched.
    path = str(tmp_path / 'boxes.tfrecord')
    with tf.io.TFRecordWriter(path) as writer:
        for n in (1, 3, 2):
            writer.write(_example(v=_float([float(n)] * n)).SerializeToString())
    decoder = tfexample_decoder.TFExampleDecoder(
        {'v': tf.io.VarLenFeature(tf.float32)}, {'v': tfexample_decoder.Tensor('v')})
    provider = dataset_data_provider.DatasetDataProvider(
        dataset.Dataset(path, tf.compat.v1.TFRecordReader, decoder, 3, {}), shuffle=False,
        num_epochs=1)
    [values] = provider.get(['v'])
    batch = tf.compat.v1.train.batch({'v': values}, batch_size=3, dynamic_pad=True)
    queue = prefetch_queue.prefetch_queue(batch, dynamic_pad=True)
    [dequeued] = drain(queue.dequeue())
    np.testing.assert_array_equal(dequeued['v'], [[1, 0, 0], [3, 3, 3], [2, 2, 0]])


def test_get_data_files_accepts_paths_globs_and_lists(tmp_path):
    paths = _write_label_shards(tmp_path, num_files=3, per_file=1)
    assert parallel_reader.get_data_files(paths[0]) == [paths[0]]
    assert parallel_reader.get_data_files(str(tmp_path / 'train-*')) == paths
    assert parallel_reader.get_data_files([paths[2], str(tmp_path / 'train-0000[01]*')]) == \
        [paths[2], paths[0], paths[1]]
    with pytest.raises(ValueError, match=r'No data files found in .*nothing-\*'):
        parallel_reader.get_data_files(str(tmp_path / 'nothing-*'))
    with pytest.raises(ValueError, match='No data files found in'):
        parallel_reader.get_data_files([])


def test_record_key_that_clashes_with_an_item_is_refused(tmp_path, graph):
    _write_label_shards(tmp_path, num_files=1, per_file=1)
    data = _label_dataset(str(tmp_path / '*.tfrecord'), 1)
    with pytest.raises(ValueError, match='record_key.*label'):
        dataset_data_provider.DatasetDataProvider(data, record_key='label')


def test_provider_get_refuses_unknown_items(tmp_path, graph):
    _write_label_shards(tmp_path, num_files=1, per_file=1)
    provider = dataset_data_provider.DatasetDataProvider(
        _label_dataset(str(tmp_path / '*.tfrecord'), 1))
    with pytest.raises(ValueError, match=r'Item \[labels\] is invalid.*label'):
        provider.get(['labels'])


# --- eager mode --------------------------------------------------------------------------


def test_queue_api_under_eager_execution_says_what_to_do(tmp_path):
    assert tf.executing_eagerly()
    _write_label_shards(tmp_path, num_files=1, per_file=1)
    data = _label_dataset(str(tmp_path / '*.tfrecord'), 1)
    calls = {
        'DatasetDataProvider': lambda: dataset_data_provider.DatasetDataProvider(data),
        'parallel_read': lambda: parallel_reader.parallel_read(
            data.data_sources, tf.compat.v1.TFRecordReader),
        'single_pass_read': lambda: parallel_reader.single_pass_read(
            data.data_sources, tf.compat.v1.TFRecordReader),
        'prefetch_queue': lambda: prefetch_queue.prefetch_queue([tf.constant([1])]),
    }
    for name, call in calls.items():
        with pytest.raises(RuntimeError,
                           match=rf'{name}.*disable_eager_execution.*slimdata\.tfdata'):
            call()


# --- packaging ---------------------------------------------------------------------------


def test_facade_is_tf_slim_with_slimdata_data_modules(graph):
    from slimdata import slim
    assert slim.dataset.Dataset is dataset.Dataset
    assert slim.tfexample_decoder.Image is tfexample_decoder.Image
    assert slim.dataset_data_provider.DatasetDataProvider is \
        dataset_data_provider.DatasetDataProvider
    assert slim.prefetch_queue.prefetch_queue is prefetch_queue.prefetch_queue
    assert slim.data.parallel_reader is parallel_reader
    images = tf.compat.v1.placeholder(tf.float32, [None, 8, 8, 1])
    with slim.arg_scope([slim.conv2d], padding='VALID'):
        net = slim.conv2d(images, 4, [3, 3], scope='conv1')
    assert net.shape.as_list() == [None, 6, 6, 4]
    assert callable(slim.learning.train) and callable(slim.queues.QueueRunners)


def test_importing_slimdata_does_not_import_tensorflow():
    code = ('import sys, slimdata, slimdata.records.dataset_info; '
            'assert "tensorflow" not in sys.modules, "tensorflow was imported"')
    subprocess.run([sys.executable, '-c', code], check=True)
