"""Reading on several workers: over all workers, every record exactly once per epoch.

Each worker's pipeline is built in a graph (or, for the bridge, a dataset) of its own, as in
separate processes; the records each reads are compared with the files' records, written by
TensorFlow's own writer.
"""

import collections
import json
import logging

import pytest
import tensorflow as tf

from slimdata import dataset, tfexample_decoder, tfdata, workers
from slimdata.dataset_batch_provider import DatasetBatchProvider
from slimdata.dataset_data_provider import DatasetDataProvider
from conftest import drain, write_with_tf


def number_records(first, count):
    return [tf.train.Example(features=tf.train.Features(feature={
        'n': tf.train.Feature(int64_list=tf.train.Int64List(value=[n]))})).SerializeToString()
        for n in range(first, first + count)]


def make_files(tmp_path, sizes):
    """Files of consecutive numbers: file k holds sizes[k] of them; returns (pattern, total)."""
    first = 0
    for k, size in enumerate(sizes):
        write_with_tf(tmp_path / f'train-{k:05d}.tfrecord', number_records(first, size))
        first += size
    return str(tmp_path / 'train-*.tfrecord'), first


def numbers_dataset(pattern, total):
    decoder = tfexample_decoder.TFExampleDecoder(
        {'n': tf.io.FixedLenFeature([], tf.int64)}, {'n': tfexample_decoder.Tensor('n')})
    return dataset.Dataset(pattern, tf.compat.v1.TFRecordReader, decoder, total, {})


def read_with_provider(data, worker_index, num_workers, shuffle, batched=False):
    with tf.Graph().as_default():
        if batched:
            provider = DatasetBatchProvider(data, batch_size=1, shuffle=shuffle, num_epochs=1,
                                            allow_smaller_final_batch=True,
                                            num_workers=num_workers, worker_index=worker_index)
        else:
            provider = DatasetDataProvider(data, shuffle=shuffle, num_epochs=1, seed=3,
                                           num_workers=num_workers, worker_index=worker_index)
        [n] = provider.get(['n'])
        return [int(value) for value in _flat(drain(n))]


def _flat(values):
    for value in values:
        yield from (value.ravel() if hasattr(value, 'ravel') else [value])


def read_with_bridge(data, worker_index, num_workers, shuffle):
    ds = tfdata.to_tf_data(data, items=['n'], shuffle=shuffle, num_epochs=1, seed=3,
                           num_workers=num_workers, worker_index=worker_index)
    return [int(element['n']) for element in ds]


READERS = {
    'provider': lambda data, index, workers_, shuffle: read_with_provider(
        data, index, workers_, shuffle),
    'batch provider': lambda data, index, workers_, shuffle: read_with_provider(
        data, index, workers_, shuffle, batched=True),
    'tf.data bridge': read_with_bridge,
}


@pytest.mark.slow
@pytest.mark.parametrize('reader', sorted(READERS))
@pytest.mark.parametrize('sizes, num_workers', [
    ([5, 3, 4, 6, 2], 2),   # files divided: 3 and 2 files
    ([7, 9], 3),            # fewer files than workers: records divided
])
@pytest.mark.parametrize('shuffle', [False, True])
def test_every_record_is_read_once_over_all_workers(tmp_path, reader, sizes, num_workers,
                                                    shuffle):
    pattern, total = make_files(tmp_path, sizes)
    data = numbers_dataset(pattern, total)
    seen = collections.Counter()
    shares = []
    for index in range(num_workers):
        numbers = READERS[reader](data, index, num_workers, shuffle)
        shares.append(len(numbers))
        seen.update(numbers)
    assert sorted(seen.elements()) == list(range(total))  # each exactly once, none lost
    assert all(share > 0 for share in shares)


def test_one_worker_reads_everything_as_tf_slim_does(tmp_path):
    pattern, total = make_files(tmp_path, [4, 4])
    assert sorted(READERS['provider'](numbers_dataset(pattern, total), 0, 1, False)) == \
        list(range(total))


def test_dividing_records_warns_what_it_costs(tmp_path, caplog):
    pattern, total = make_files(tmp_path, [6])
    with caplog.at_level(logging.WARNING, logger='slimdata'):
        numbers = read_with_bridge(numbers_dataset(pattern, total), 1, 3, False)
    assert numbers == [1, 4]
    assert ('1 data file(s) for 3 workers: every worker reads every record and keeps one in 3'
            in caplog.text)


@pytest.mark.parametrize('num_workers, worker_index, message', [
    (0, 0, 'num_workers must be an int >= 1, got 0'),
    (2, 2, 'worker_index must be an int in [0, num_workers=2), got 2'),
    (2, -1, 'worker_index must be an int in [0, num_workers=2), got -1'),
])
def test_bad_worker_arguments_are_refused(tmp_path, num_workers, worker_index, message):
    pattern, total = make_files(tmp_path, [2])
    with pytest.raises(ValueError) as raised:
        tfdata.to_tf_data(numbers_dataset(pattern, total), num_workers=num_workers,
                          worker_index=worker_index)
    assert str(raised.value) == message


@pytest.mark.parametrize('config, expected', [
    (None, {'num_workers': 1, 'worker_index': 0}),
    ({'cluster': {'worker': ['a:1', 'b:1', 'c:1']}, 'task': {'type': 'worker', 'index': 2}},
     {'num_workers': 3, 'worker_index': 2}),
    ({'cluster': {'chief': ['a:1'], 'worker': ['b:1', 'c:1']},
      'task': {'type': 'chief', 'index': 0}}, {'num_workers': 3, 'worker_index': 0}),
    ({'cluster': {'chief': ['a:1'], 'worker': ['b:1', 'c:1']},
      'task': {'type': 'worker', 'index': 1}}, {'num_workers': 3, 'worker_index': 2}),
    ({'cluster': {'worker': ['a:1'], 'evaluator': ['e:1']},
      'task': {'type': 'evaluator', 'index': 0}}, {'num_workers': 1, 'worker_index': 0}),
])
def test_worker_index_from_tf_config(config, expected):
    environ = {} if config is None else {'TF_CONFIG': json.dumps(config)}
    assert workers.from_tf_config(environ) == expected


def test_tf_config_for_a_parameter_server_or_of_another_form_is_refused():
    with pytest.raises(ValueError, match="task type 'ps' reads no training data"):
        workers.from_tf_config({'TF_CONFIG': json.dumps(
            {'cluster': {'ps': ['p:1']}, 'task': {'type': 'ps', 'index': 0}})})
    with pytest.raises(ValueError, match='TF_CONFIG is not a cluster and task description'):
        workers.from_tf_config({'TF_CONFIG': '{"cluster": {}}'})
