"""A queue pipeline's memory stays flat over many epochs (docs/design.md, "The queue pipeline").

Each test pushes about 550 MB of incompressible record bytes through a pipeline that runs
forever (num_epochs=None) and compares the process's resident memory after a warm-up with
the memory at the end. A pipeline that kept anything per record (a copy, a queue element, a
key) would grow by about the bytes read; buffers that are reused do not grow at all.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

from conftest import write_with_tf
from slimdata import (
    dataset,
    dataset_batch_provider,
    dataset_data_provider,
    prefetch_queue,
    tfexample_decoder,
)
from slimdata.queue_session import QueueSession

RECORD_BYTES = 20_000
RECORDS_PER_FILE = 25
NUM_FILES = 2
BATCH = 16
WARMUP_EPOCHS = 20
MEASURED_EPOCHS = 600          # 600 x 3 batches x 16 records x 20 kB: ~550 MB through
ALLOWED_GROWTH_MB = 25

pytestmark = pytest.mark.skipif(not os.path.exists('/proc/self/statm'),
                                reason='reads the resident set size from /proc')


def _resident_mb() -> float:
    with open('/proc/self/statm') as statm:
        resident_pages = int(statm.read().split()[1])
    return resident_pages * os.sysconf('SC_PAGE_SIZE') / 2**20


def _payload_records(seed):
    rng = np.random.default_rng(seed)
    return [tf.train.Example(features=tf.train.Features(feature={
        'payload': tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[rng.bytes(RECORD_BYTES)])),
        'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[index]))}))
        .SerializeToString() for index in range(RECORDS_PER_FILE)]


def _payload_dataset(tmp_path):
    paths = [write_with_tf(tmp_path / f'part-{i}.tfrecord', _payload_records(i))
             for i in range(NUM_FILES)]
    decoder = tfexample_decoder.TFExampleDecoder(
        {'payload': tf.io.FixedLenFeature([], tf.string),
         'label': tf.io.FixedLenFeature([], tf.int64)},
        {'payload': tfexample_decoder.Tensor('payload'),
         'label': tfexample_decoder.Tensor('label')})
    return dataset.Dataset([str(p) for p in paths], tf.compat.v1.TFRecordReader, decoder,
                           RECORDS_PER_FILE * NUM_FILES, {})


def _per_example_batches(data):
    """DatasetDataProvider -> train.batch -> prefetch_queue, as users write it."""
    provider = dataset_data_provider.DatasetDataProvider(
        data, num_readers=2, common_queue_capacity=64, common_queue_min=32)
    payload, label = provider.get(['payload', 'label'])
    batch = tf.compat.v1.train.batch([payload, label], BATCH, num_threads=2, capacity=64)
    return prefetch_queue.prefetch_queue(batch, capacity=4).dequeue()


def _whole_batches(data):
    """DatasetBatchProvider -> prefetch_queue: the small-record fast path."""
    provider = dataset_batch_provider.DatasetBatchProvider(
        data, BATCH, num_readers=2, common_queue_capacity=64, common_queue_min=32,
        num_threads=2)
    return prefetch_queue.prefetch_queue(provider.get(['payload', 'label']),
                                         capacity=4).dequeue()


@pytest.mark.slow
@pytest.mark.parametrize('make_batches', [_per_example_batches, _whole_batches],
                         ids=['DatasetDataProvider', 'DatasetBatchProvider'])
def test_resident_memory_stays_flat_over_many_epochs(tmp_path, graph, make_batches):
    data = _payload_dataset(tmp_path)
    payload, label = make_batches(data)
    # Fetch a small digest, not the payload itself, so numpy copies don't blur the figure.
    digest = (tf.strings.length(payload), label)
    epoch_batches = data.num_samples // BATCH
    measured_examples = MEASURED_EPOCHS * epoch_batches * BATCH
    with QueueSession() as session:
        for _ in range(WARMUP_EPOCHS * epoch_batches):
            session.run(digest)
        before = _resident_mb()
        labels_seen = np.zeros(RECORDS_PER_FILE, np.int64)
        for _ in range(MEASURED_EPOCHS * epoch_batches):
            lengths, labels = session.run(digest)
            labels_seen += np.bincount(labels, minlength=RECORDS_PER_FILE)
        growth = _resident_mb() - before
    # The records really went through: the last batch's payloads whole, every record read
    # about evenly.
    assert (lengths == RECORD_BYTES).all()
    assert labels_seen.min() > 0.8 * measured_examples / RECORDS_PER_FILE
    bytes_through_mb = measured_examples * RECORD_BYTES / 2**20
    assert growth < ALLOWED_GROWTH_MB, (
        f'resident memory grew by {growth:.1f} MB while {bytes_through_mb:.0f} MB of records '
        'went through')
