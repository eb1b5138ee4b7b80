"""slimdata.dataset_batch_provider: whole batches equal to DatasetDataProvider's examples."""

import io

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image as PILImage

from conftest import drain
from slimdata import dataset, dataset_data_provider, parallel_reader, tfexample_decoder
from slimdata.dataset_batch_provider import DatasetBatchProvider


def _png(array):
    buffer = io.BytesIO()
    PILImage.fromarray(array).save(buffer, 'PNG')
    return buffer.getvalue()


def _record(label, rng):
    image = rng.integers(0, 256, (4, 5, 1), dtype=np.uint8)
    example = tf.train.Example(features=tf.train.Features(feature={
        'image/encoded': tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[_png(image[:, :, 0])])),
        'image/format': tf.train.Feature(bytes_list=tf.train.BytesList(value=[b'png'])),
        'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
    }))
    return example.SerializeToString(), image


def _write_shards(directory, sizes):
    """Shards written by TensorFlow's writer; returns (paths, {label: image})."""
    rng = np.random.default_rng(0)
    paths, images, label = [], {}, 0
    for index, size in enumerate(sizes):
        path = str(directory / f'train-{index:05d}-of-{len(sizes):05d}.tfrecord')
        with tf.io.TFRecordWriter(path) as writer:
            for _ in range(size):
                record, images[label] = _record(label, rng)
                writer.write(record)
                label += 1
        paths.append(path)
    return paths, images


def _dataset(paths, image_shape=(4, 5, 1)):
    decoder = tfexample_decoder.TFExampleDecoder(
        {'image/encoded': tf.io.FixedLenFeature([], tf.string),
         'image/format': tf.io.FixedLenFeature([], tf.string, default_value='png'),
         'label': tf.io.FixedLenFeature([], tf.int64)},
        {'image': tfexample_decoder.Image(shape=image_shape, channels=1),
         'label': tfexample_decoder.Tensor('label')})
    return dataset.Dataset(paths, tf.compat.v1.TFRecordReader, decoder,
                           num_samples=None, items_to_descriptions={})


@pytest.mark.parametrize('allow_smaller_final_batch', [True, False])
def test_batches_hold_the_records_in_order_as_the_example_provider_gives_them(
        tmp_path, allow_smaller_final_batch):
    paths, images = _write_shards(tmp_path, [7, 12, 4])
    items = ['image', 'label', 'record_key']
    with tf.Graph().as_default():
        provider = dataset_data_provider.DatasetDataProvider(
            _dataset(paths), shuffle=False, num_epochs=1)
        examples = drain(provider.get(items))
    with tf.Graph().as_default():
        provider = DatasetBatchProvider(
            _dataset(paths), batch_size=5, shuffle=False, num_epochs=1,
            allow_smaller_final_batch=allow_smaller_final_batch)
        batches = drain(provider.get(items))
    kept = 23 if allow_smaller_final_batch else 20  # tf.compat.v1.train.batch drops the rest
    assert [len(labels) for _, labels, _ in batches] == [5] * 4 + [3] * (kept == 23)
    flat = [(image, label, key) for batch in batches for image, label, key in zip(*batch)]
    assert len(flat) == kept
    for (image, label, key), (want_image, want_label, want_key) in zip(flat, examples):
        assert label == want_label and key == want_key
        np.testing.assert_array_equal(image, want_image)
        np.testing.assert_array_equal(image, images[label])  # and the source pixels


def test_shuffled_epochs_with_several_readers_and_threads_hold_every_record(tmp_path, graph):
    paths, _ = _write_shards(tmp_path, [30, 41, 9])
    provider = DatasetBatchProvider(
        _dataset(paths), batch_size=8, num_readers=3, num_threads=2, shuffle=True, seed=2,
        num_epochs=2, common_queue_capacity=40, common_queue_min=10,
        allow_smaller_final_batch=True)
    [labels] = provider.get(['label'])
    assert labels.shape.as_list() == [None]
    seen = np.concatenate([batch[0] for batch in drain([labels])])
    assert sorted(seen.tolist()) == sorted(list(range(80)) * 2)
    assert seen.tolist() != sorted(seen.tolist())


def test_static_shapes_say_the_batch_size(tmp_path, graph):
    paths, _ = _write_shards(tmp_path, [3])
    image, label = DatasetBatchProvider(_dataset(paths), batch_size=2).get(['image', 'label'])
    assert image.shape.as_list() == [2, 4, 5, 1]
    assert label.shape.as_list() == [2]


def test_an_item_of_varying_shape_is_refused_by_name(tmp_path, graph):
    paths, _ = _write_shards(tmp_path, [3])
    with pytest.raises(ValueError, match="'image'.*fixed shape"):
        DatasetBatchProvider(_dataset(paths, image_shape=None), batch_size=2)


def test_record_key_clash_and_small_common_queue_are_refused(tmp_path, graph):
    paths, _ = _write_shards(tmp_path, [3])
    with pytest.raises(ValueError, match='record_key.*label'):
        DatasetBatchProvider(_dataset(paths), batch_size=2, record_key='label')
    with pytest.raises(ValueError, match=r'common_queue_capacity \(4\).*batch_size \(8\)'):
        DatasetBatchProvider(_dataset(paths), batch_size=8, common_queue_capacity=4)


def test_parallel_reader_read_up_to_works_on_parallel_reads_queue(tmp_path, graph):
    # tf_slim's common queue had no shapes, so its ParallelReader.read_up_to failed at run
    # time ("DequeueUpTo require the components to have specified shapes").
    paths, _ = _write_shards(tmp_path, [6, 5])
    reader, filename_queue = parallel_reader.make_parallel_reader(
        paths, tf.compat.v1.TFRecordReader, num_epochs=1, num_readers=1, shuffle=False)
    keys, _ = reader.read_up_to(filename_queue, 4)
    sizes = [len(batch) for batch in drain(keys)]
    assert sizes == [4, 4, 3]
