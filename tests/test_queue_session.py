"""slimdata.queue_session.QueueSession: initialise, run the queue runners, end cleanly."""

import threading

import numpy as np
import pytest
import tensorflow as tf

from conftest import write_with_tf
from slimdata import dataset, dataset_data_provider, tfexample_decoder
from slimdata.queue_session import QueueSession


def _label_records(labels):
    return [tf.train.Example(features=tf.train.Features(feature={
        'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))}))
        .SerializeToString() for label in labels]


def _labels_provider(path, num_samples, **provider_kwargs):
    decoder = tfexample_decoder.TFExampleDecoder(
        {'label': tf.io.FixedLenFeature([], tf.int64)},
        {'label': tfexample_decoder.Tensor('label')})
    data = dataset.Dataset(path, tf.compat.v1.TFRecordReader, decoder, num_samples, {})
    return dataset_data_provider.DatasetDataProvider(data, **provider_kwargs)


def _runner_threads_alive():
    return [t for t in threading.enumerate() if t.name.startswith('QueueRunnerThread')]


def test_one_epoch_reads_every_record_and_ends_normally(tmp_path, graph):
    path = write_with_tf(tmp_path / 'a.tfrecord', _label_records(range(10)))
    provider = _labels_provider(path, 10, shuffle=False, num_epochs=2)
    [label] = provider.get(['label'])
    batch = tf.compat.v1.train.batch([label], batch_size=4, allow_smaller_final_batch=True)
    seen = []
    with QueueSession() as session:
        while True:
            seen.extend(session.run(batch).tolist())
    assert session.epoch_ended
    assert seen == list(range(10)) * 2
    assert not _runner_threads_alive()


def test_init_fn_runs_after_the_variable_initialisers(graph):
    counter = tf.compat.v1.get_variable('counter', initializer=tf.constant(1))
    assign = counter.assign(41)
    with QueueSession(init_fn=lambda sess: sess.run(assign)) as session:
        assert session.run(counter) == 41
    assert not session.epoch_ended


def test_lookup_tables_are_initialised(graph):
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(['cat', 'dog'], [3, 7], value_dtype=tf.int64), -1)
    with QueueSession() as session:
        assert session.run(table.lookup(tf.constant(['dog', 'cat', 'cow']))).tolist() == [7, 3, -1]


def test_an_error_in_the_block_propagates_and_stops_the_runners(tmp_path, graph):
    path = write_with_tf(tmp_path / 'a.tfrecord', _label_records(range(5)))
    [label] = _labels_provider(path, 5).get(['label'])  # endless epochs
    with pytest.raises(ZeroDivisionError):
        with QueueSession() as session:
            session.run(label)
            raise ZeroDivisionError('user code failed')
    assert not _runner_threads_alive()


def test_a_runner_thread_error_is_reraised_with_its_own_message(tmp_path, graph):
    # A record whose 'label' has the wrong type fails in the decoder, i.e. in a runner thread.
    bad = tf.train.Example(features=tf.train.Features(feature={
        'label': tf.train.Feature(float_list=tf.train.FloatList(value=[0.5]))}))
    path = write_with_tf(tmp_path / 'bad.tfrecord', [bad.SerializeToString()])
    [label] = _labels_provider(path, 1, shuffle=False, num_epochs=1).get(['label'])
    batch = tf.compat.v1.train.batch([label], batch_size=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match='label'):
        with QueueSession() as session:
            while True:
                session.run(batch)
    assert not session.epoch_ended
    assert not _runner_threads_alive()


def test_refused_under_eager_execution():
    assert tf.executing_eagerly()
    with pytest.raises(RuntimeError, match='disable_eager_execution'):
        QueueSession()


def test_session_outside_the_block_is_an_error(graph):
    session = QueueSession()
    with pytest.raises(RuntimeError, match='with block'):
        session.run(tf.constant(np.int32(1)))


def test_a_damaged_record_fails_the_loop_with_an_error_naming_the_file(tmp_path, graph):
    # A flipped byte in a payload passes the framing check made when the pipeline is built
    # (a cut file does not: it is refused then, see test_damage_matrix); TensorFlow's reader
    # finds it by its data CRC.
    records = _label_records(range(50))
    whole = write_with_tf(tmp_path / 'a.tfrecord', records)
    damaged = write_with_tf(tmp_path / 'b.tfrecord', records)
    record_30 = sum(12 + len(record) + 4 for record in records[:30])
    data = bytearray(open(damaged, 'rb').read())
    data[record_30 + 12 + 1] ^= 0xFF  # record 30's payload no longer matches its CRC
    open(damaged, 'wb').write(bytes(data))
    [label] = _labels_provider([whole, damaged], 100, shuffle=False, num_epochs=1).get(['label'])
    batch = tf.compat.v1.train.batch([label], batch_size=4)
    # TensorFlow's reader says only 'corrupted record at <offset of the payload>'; both files
    # have a record there, and QueueSession names the damaged one.
    payload = record_30 + 12
    with pytest.raises(tf.errors.DataLossError,
                       match=rf'record at {payload}[\s\S]*damaged record '
                             rf'\(byte offset {payload}\) is in: {damaged} \('):
        with QueueSession() as session:
            while True:
                session.run(batch)
