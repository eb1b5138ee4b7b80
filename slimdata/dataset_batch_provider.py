"""A DataProvider of whole batches: the fast path for small records (graph mode).

`DatasetDataProvider` gives single examples, and `tf.compat.v1.train.batch` then runs one
queue-runner step, a Python-level session call, per example. For small records such as MNIST
or CIFAR that step costs more than decoding the record. `DatasetBatchProvider` takes the same
`Dataset` and gives batches, made with one step per batch::

    provider = DatasetBatchProvider(dataset, batch_size=32, num_readers=2, num_threads=2)
    images, labels = provider.get(['image', 'label'])       # [32, 28, 28, 1], [32]

in place of::

    provider = DatasetDataProvider(dataset, num_readers=2)
    image, label = provider.get(['image', 'label'])
    images, labels = tf.compat.v1.train.batch([image, label], 32, num_threads=2)

Each step takes `batch_size` records from the common queue (`ParallelReader.read_many`) and
decodes them with the dataset's own decoder, one record at a time inside one `tf.map_fn`, so
every item equals what `DatasetDataProvider` gives for that record. The batches go into a
FIFO queue filled by `num_threads` queue runners.

It serves items whose shape is the same for every record (give `Image` its `shape`); items of
varying shape (boxes, images to be resized) need per-example preprocessing, which is what
`DatasetDataProvider` + `tf.compat.v1.train.batch(dynamic_pad=True)` are for. Shuffling,
`num_epochs`, `record_key`, the end of input (`OutOfRangeError`), the checks of damaged files
and of the records each epoch read, and `skip_corrupt` are as in `DatasetDataProvider`.
"""

from typing import Any, Dict, Optional

from slimdata import data_provider, parallel_reader
from slimdata._tf import require_graph_mode, tf
from slimdata.dataset import Dataset
from slimdata.dataset_data_provider import check_record_key, record_check_of
from slimdata.tfexample_decoder import decode_record


class DatasetBatchProvider(data_provider.DataProvider):
    """Provides batches of the items of a `slimdata.dataset.Dataset`, read through queues."""

    def __init__(self, dataset: Dataset, batch_size: int, num_readers: int = 1,
                 reader_kwargs: Optional[Dict[str, Any]] = None, shuffle: bool = True,
                 num_epochs: Optional[int] = None, common_queue_capacity: int = 256,
                 common_queue_min: int = 128, record_key: str = 'record_key',
                 seed: Optional[int] = None, scope: Optional[str] = None, num_threads: int = 1,
                 capacity: int = 4, allow_smaller_final_batch: bool = False,
                 skip_corrupt: bool = False, num_workers: int = 1, worker_index: int = 0):
        """Creates a DatasetBatchProvider.

        Args:
          dataset: an instance of `slimdata.dataset.Dataset`.
          batch_size: the number of examples in each batch.
          num_readers: the number of parallel readers to use.
          reader_kwargs: an optional dict of kwargs for the reader.
          shuffle: whether to shuffle the data sources and the common queue when reading.
          num_epochs: the number of times each data source is read; None cycles forever. A
            number creates a local variable: run `tf.compat.v1.local_variables_initializer()`.
          common_queue_capacity: the capacity of the common queue of records; at least
            `batch_size`.
          common_queue_min: the minimum number of records in the common queue after a
            dequeue (when shuffling).
          record_key: the item name under which each record's key (`file:offset`) is
            provided.
          seed: the seed to use if shuffling.
          scope: optional name scope for the ops.
          num_threads: the number of queue runners that decode batches in parallel.
          capacity: the number of decoded batches the batch queue holds.
          allow_smaller_final_batch: if True, the last batch of the last epoch holds the
            remaining records (fewer than `batch_size`) and the batch dimension is None;
            if False those records are dropped, as `tf.compat.v1.train.batch` does.
          skip_corrupt, num_workers, worker_index: as in `DatasetDataProvider`.

        Raises:
          ValueError: if `record_key` matches one of the items in the dataset, if
            `common_queue_capacity` is below `batch_size`, or if an item's shape is not the
            same for every record (naming the item).
          TFRecordError: a TFRecord data file is damaged (and `skip_corrupt` is False).
          RuntimeError: under eager execution.
        """
        require_graph_mode('DatasetBatchProvider')
        items = dataset.decoder.list_items()
        check_record_key(items, record_key)
        if common_queue_capacity < batch_size:
            raise ValueError('common_queue_capacity (%d) must be at least batch_size (%d)'
                             % (common_queue_capacity, batch_size))
        with tf.compat.v1.name_scope(scope, 'dataset_batch_provider'):
            reader, filename_queue = parallel_reader.make_parallel_reader(
                dataset.data_sources, dataset.reader, num_epochs=num_epochs,
                num_readers=num_readers, reader_kwargs=reader_kwargs, shuffle=shuffle,
                capacity=common_queue_capacity, min_after_dequeue=common_queue_min,
                seed=seed, num_samples=dataset.num_samples, skip_corrupt=skip_corrupt,
                record_check=record_check_of(dataset.decoder), num_workers=num_workers,
                worker_index=worker_index)
            read = reader.read_up_to if allow_smaller_final_batch else reader.read_many
            keys, records = read(filename_queue, batch_size)
            decoded, example_shapes = _decode_batch(dataset.decoder, items, keys, records)
            batch = _queued(decoded + [keys], example_shapes + [[]], batch_size,
                            allow_smaller_final_batch, num_threads, capacity)
        super().__init__(items_to_tensors=dict(zip(items + [record_key], batch)),
                         num_samples=dataset.num_samples)


def _check_fixed_shapes(items, tensors):
    """Raises a ValueError naming the first item whose shape varies between records."""
    for item, tensor in zip(items, tensors):
        if isinstance(tensor, tf.SparseTensor) or not tensor.shape.is_fully_defined():
            raise ValueError(
                'DatasetBatchProvider needs items of the same shape in every record, but '
                'item %r has shape %s; give its handler a fixed shape (e.g. '
                "Image(shape=[28, 28, 1])), or use DatasetDataProvider and "
                'tf.compat.v1.train.batch(dynamic_pad=True) for items of varying shape'
                % (item, 'sparse' if isinstance(tensor, tf.SparseTensor) else tensor.shape))


def _decode_batch(decoder, items, keys, records):
    """Decodes each of the 1-D `records` with `decoder` (naming each by its key in errors).

    Returns:
      (decoded, example_shapes): one [n, ...] tensor per item, and each item's shape in one
      example.
    """
    # Decoding one record outside the loop gives the items' dtypes and shapes for map_fn
    # (the ops are never run).
    sample = decode_record(decoder, records[0], items, keys[0])
    _check_fixed_shapes(items, sample)
    signature = [tf.TensorSpec(tensor.shape, tensor.dtype) for tensor in sample]
    decoded = tf.map_fn(lambda pair: decode_record(decoder, pair[1], items, pair[0]),
                        (keys, records), fn_output_signature=signature)
    return list(decoded), [tensor.shape.as_list() for tensor in sample]


def _queued(batch, example_shapes, batch_size, allow_smaller_final_batch, num_threads,
            capacity):
    """Puts `batch` through a FIFO queue of batches filled by `num_threads` runners."""
    # Each queue element is a whole batch; with allow_smaller_final_batch its first dimension
    # varies, which FIFOQueue's `shapes` cannot say, so the shapes are set after the dequeue.
    queue = tf.queue.FIFOQueue(capacity=capacity, dtypes=[t.dtype for t in batch],
                               name='batch_queue')
    tf.compat.v1.train.add_queue_runner(
        tf.compat.v1.train.QueueRunner(queue, [queue.enqueue(batch)] * num_threads))
    tf.compat.v1.summary.scalar(
        'batch_queue/fraction_of_%d_full' % capacity,
        tf.cast(queue.size(), tf.float32) * (1. / capacity))
    dequeued = queue.dequeue()
    leading = None if allow_smaller_final_batch else batch_size
    for tensor, shape in zip(dequeued, example_shapes):
        tensor.set_shape([leading] + shape)
    return dequeued
