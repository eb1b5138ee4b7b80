"""The tf.data bridge decodes exactly as DatasetDataProvider does, item by item."""

import io
import os

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image as PILImage

from conftest import drain
from slimdata import dataset, dataset_data_provider, tfdata, tfexample_decoder

BOX_SIDES = ['ymin', 'xmin', 'ymax', 'xmax']


def _jpeg(array):
    buffer = io.BytesIO()
    PILImage.fromarray(array).save(buffer, format='JPEG')
    return buffer.getvalue()


def _write_detection_records(directory, num_files=2, per_file=4, compression=None):
    """VOC-like records: a JPEG and 1..3 boxes each; returns the boxes by (file, index)."""
    rng = np.random.RandomState(5)
    boxes_by_record = {}
    options = tf.io.TFRecordOptions(compression_type=compression) if compression else None
    for f in range(num_files):
        path = os.path.join(directory, f'train-{f:05d}-of-{num_files:05d}.tfrecord')
        with tf.io.TFRecordWriter(path, options=options) as writer:
            for r in range(per_file):
                boxes = np.sort(rng.rand(1 + (f + r) % 3, 4), axis=1).astype(np.float32)
                boxes_by_record[(f, r)] = boxes
                image = rng.randint(0, 256, size=(12 + r, 10 + f, 3)).astype(np.uint8)
                feature = {
                    'image/encoded': tf.train.Feature(bytes_list=tf.train.BytesList(
                        value=[_jpeg(image)])),
                    'image/format': tf.train.Feature(bytes_list=tf.train.BytesList(
                        value=[b'JPEG'])),
                    'image/object/bbox/label': tf.train.Feature(int64_list=tf.train.Int64List(
                        value=[f * 100 + r] * len(boxes))),
                }
                for column, side in enumerate(BOX_SIDES):
                    feature[f'image/object/bbox/{side}'] = tf.train.Feature(
                        float_list=tf.train.FloatList(value=boxes[:, column]))
                writer.write(tf.train.Example(features=tf.train.Features(
                    feature=feature)).SerializeToString())
    return boxes_by_record


def _detection_dataset(directory, num_samples):
    keys_to_features = {
        'image/encoded': tf.io.FixedLenFeature((), tf.string, default_value=''),
        'image/format': tf.io.FixedLenFeature((), tf.string, default_value='jpeg'),
        'image/object/bbox/label': tf.io.VarLenFeature(tf.int64),
        **{f'image/object/bbox/{side}': tf.io.VarLenFeature(tf.float32) for side in BOX_SIDES},
    }
    items_to_handlers = {
        'image': tfexample_decoder.Image(),
        'object/bbox': tfexample_decoder.BoundingBox(BOX_SIDES, 'image/object/bbox/'),
        'object/label': tfexample_decoder.Tensor('image/object/bbox/label'),
    }
    return dataset.Dataset(os.path.join(directory, 'train-*.tfrecord'),
                           tf.compat.v1.TFRecordReader,
                           tfexample_decoder.TFExampleDecoder(keys_to_features,
                                                              items_to_handlers),
                           num_samples, {})


ITEMS = ['image', 'object/bbox', 'object/label', 'record_key']


@pytest.mark.parametrize('compression', [None, 'GZIP'])
def test_bridge_equals_provider_item_by_item(tmp_path, compression):
    boxes_by_record = _write_detection_records(tmp_path, compression=compression)
    data = _detection_dataset(tmp_path, len(boxes_by_record))
    reader_kwargs = ({'options': tf.io.TFRecordOptions(compression_type=compression)}
                     if compression else None)
    with tf.Graph().as_default():
        provider = dataset_data_provider.DatasetDataProvider(
            data, shuffle=False, num_epochs=1, reader_kwargs=reader_kwargs)
        from_provider = drain(provider.get(ITEMS))
    from_bridge = list(tfdata.to_tf_data(data, items=ITEMS, shuffle=False, num_epochs=1,
                                         reader_kwargs=reader_kwargs).as_numpy_iterator())
    assert len(from_bridge) == len(from_provider) == len(boxes_by_record)
    for provided, bridged in zip(from_provider, from_bridge):
        for item, value in zip(ITEMS, provided):
            np.testing.assert_array_equal(bridged[item], value, err_msg=item)
    # And both against the source: boxes and labels of record (file, index).
    for (f, r), bridged in zip(sorted(boxes_by_record), from_bridge):
        np.testing.assert_allclose(bridged['object/bbox'], boxes_by_record[(f, r)], rtol=1e-6)
        assert set(bridged['object/label']) == {f * 100 + r}


def test_epochs_shuffle_and_padded_batch(tmp_path):
    boxes_by_record = _write_detection_records(tmp_path, num_files=3, per_file=3)
    data = _detection_dataset(tmp_path, len(boxes_by_record))
    ds = tfdata.to_tf_data(data, items=['object/bbox', 'object/label'], num_epochs=2, seed=4,
                           num_readers=2)
    labels = [int(example['object/label'][0]) for example in ds.as_numpy_iterator()]
    expected = [f * 100 + r for f, r in boxes_by_record] * 2
    assert sorted(labels) == sorted(expected) and labels != sorted(labels)
    assert 'record_key' not in next(iter(ds))

    batches = list(tfdata.padded_batch(
        tfdata.to_tf_data(data, items=['object/bbox'], shuffle=False, num_epochs=1),
        4).as_numpy_iterator())
    assert [b['object/bbox'].shape[0] for b in batches] == [4, 4, 1]
    first = [boxes_by_record[key] for key in sorted(boxes_by_record)[:4]]
    longest = max(len(b) for b in first)
    assert batches[0]['object/bbox'].shape == (4, longest, 4)
    for row, boxes in enumerate(first):
        np.testing.assert_allclose(batches[0]['object/bbox'][row, :len(boxes)], boxes,
                                   rtol=1e-6)
        assert not batches[0]['object/bbox'][row, len(boxes):].any()  # padding is zeros


def test_bridge_refuses_other_readers_and_unknown_items(tmp_path):
    _write_detection_records(tmp_path, num_files=1, per_file=1)
    data = _detection_dataset(tmp_path, 1)
    with pytest.raises(ValueError, match="'objects'"):
        tfdata.to_tf_data(data, items=['objects'])
    data.reader = tf.compat.v1.TextLineReader
    with pytest.raises(ValueError, match='TextLineReader'):
        tfdata.to_tf_data(data)
