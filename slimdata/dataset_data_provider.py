"""A DataProvider that provides the items of a Dataset through TF1 queues (graph mode).

To read with a single reader, in order, once::

    provider = DatasetDataProvider(dataset, shuffle=False, num_epochs=1)
    image, label = provider.get(['image', 'label'])

To read with several readers in parallel, shuffled::

    provider = DatasetDataProvider(dataset, num_readers=4, shuffle=True)

Fields of the same sample can be requested separately (`get(['image'])`, `get(['label'])`);
they come from the same record. Nothing flows until
`tf.compat.v1.train.start_queue_runners`; with `num_epochs=N` a local variable counts the
epochs (run `tf.compat.v1.local_variables_initializer()`), and after N epochs the consumer gets
`tf.errors.OutOfRangeError`.

Same class, signature and defaults as `tf_slim.data.dataset_data_provider`, and one more
argument, `skip_corrupt`. TFRecord data files are checked before TensorFlow's reader opens
them, and the epochs are counted (`slimdata.record_checks`): a damaged file is refused with a
`TFRecordError` naming it, the record and its offset, and, with `num_epochs`, input that ends
having read another number of records than the files hold or `num_samples` says fails with
InvalidArgumentError. A record that is not an Example fails with InvalidArgumentError naming
its `record_key` (`file:offset`); one whose features do not match, naming the feature key.
"""

from typing import Any, Callable, Collection, Dict, Optional

from slimdata import data_provider, parallel_reader
from slimdata._tf import require_graph_mode, tf
from slimdata.data_decoder import DataDecoder
from slimdata.dataset import Dataset
from slimdata.tfexample_decoder import checked_records, decode_record
from slimdata.types import Tensor


class DatasetDataProvider(data_provider.DataProvider):
    """Provides the items of a `slimdata.dataset.Dataset`, read through TF1 queues."""

    def __init__(self, dataset: Dataset, num_readers: int = 1,
                 reader_kwargs: Optional[Dict[str, Any]] = None, shuffle: bool = True,
                 num_epochs: Optional[int] = None, common_queue_capacity: int = 256,
                 common_queue_min: int = 128, record_key: str = 'record_key',
                 seed: Optional[int] = None, scope: Optional[str] = None,
                 skip_corrupt: bool = False, num_workers: int = 1, worker_index: int = 0):
        """Creates a DatasetDataProvider.

        Args:
          dataset: an instance of `slimdata.dataset.Dataset`.
          num_readers: the number of parallel readers to use.
          reader_kwargs: an optional dict of kwargs for the reader.
          shuffle: whether to shuffle the data sources and the common queue when reading.
          num_epochs: the number of times each data source is read; None cycles forever. A
            number creates a local variable `epochs`: run
            `tf.compat.v1.local_variables_initializer()`.
          common_queue_capacity: the capacity of the common queue.
          common_queue_min: the minimum number of elements in the common queue after a
            dequeue.
          record_key: the item name under which each record's key (`file:offset`) is
            provided.
          seed: the seed to use if shuffling.
          scope: optional name scope for the ops.
          skip_corrupt: if True, a damaged TFRecord file is read up to its damage and the rest
            of it is skipped; each epoch's skipped records are counted and reported in a
            warning of the `slimdata` logger at the end of the epoch. The files are then read
            by tf.data into the common queue (a TensorFlow reader cannot go on past a damaged
            record).
          num_workers, worker_index: in a job of several workers, the number of workers and
            this one's index (defaults: one worker reading everything, as tf_slim). Each reads
            its share of the data files, or of their records when there are fewer files than
            workers, so that over all workers every record is read once per epoch
            (`slimdata.workers`; `slimdata.workers.from_tf_config()` gives both from
            TF_CONFIG). `num_samples()` stays the whole dataset's. On a cluster the pipeline
            stays on the worker that reads, whatever device scope it is built under
            (`slimdata.parallel_reader`; docs/distributed.md).

        Raises:
          ValueError: if `record_key` matches one of the items in the dataset.
          TFRecordError: a TFRecord data file is damaged (and `skip_corrupt` is False).
          RuntimeError: under eager execution.
        """
        require_graph_mode('DatasetDataProvider')
        items = dataset.decoder.list_items()
        check_record_key(items, record_key)
        with tf.compat.v1.name_scope(scope, 'parallel_read'):
            reader, filename_queue = parallel_reader.make_parallel_reader(
                dataset.data_sources, dataset.reader, num_epochs=num_epochs,
                num_readers=num_readers, reader_kwargs=reader_kwargs, shuffle=shuffle,
                capacity=common_queue_capacity, min_after_dequeue=common_queue_min, seed=seed,
                num_samples=dataset.num_samples, skip_corrupt=skip_corrupt,
                record_check=record_check_of(dataset.decoder), num_workers=num_workers,
                worker_index=worker_index)
            key, data = reader.read(filename_queue)
        items_to_tensors = dict(zip(items, decode_record(dataset.decoder, data, items, key)))
        items_to_tensors[record_key] = key
        super().__init__(items_to_tensors=items_to_tensors, num_samples=dataset.num_samples)


def record_check_of(decoder: DataDecoder) -> Callable[[Tensor, Tensor], Tensor]:
    """The readers' check of each batch of records (`tfexample_decoder.checked_records`)."""
    return lambda keys, records: checked_records(decoder, records, keys)


def check_record_key(items: Collection[str], record_key: str) -> None:
    """Raises a ValueError if the `record_key` item name is also a dataset item."""
    if record_key in items:
        raise ValueError('The item name used for `record_key` cannot also be used for a '
                         'dataset item: %s' % record_key)
