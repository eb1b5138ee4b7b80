"""The tf.data bridge: the same Dataset descriptor, read as a `tf.data.Dataset` (TF2, eager).

A descriptor written for `DatasetDataProvider` (data sources + TFExampleDecoder) also feeds TF2
code, with no queues and no graph mode::

    dataset = slimdata.datasets.dataset_factory.get_dataset('pascalvoc_2007', 'train', '/data')
    ds = slimdata.tfdata.to_tf_data(dataset, items=['image', 'object/bbox'], num_epochs=1)
    for example in ds:                       # dicts of item name -> tensor
        image, boxes = example['image'], example['object/bbox']

    batched = slimdata.tfdata.padded_batch(ds, 8)   # boxes padded to the longest in the batch

Items are decoded by the descriptor's own decoder, so they equal what the provider yields, and
`record_key` is the same `b'<file>:<byte offset>'` that `tf.compat.v1.TFRecordReader` gives.
"""

from typing import Any, Dict, Optional, Sequence

from slimdata import record_checks
from slimdata._tf import tf
from slimdata.dataset import Dataset
from slimdata.parallel_reader import get_data_files
from slimdata.tfexample_decoder import checked_records, decode_record
from slimdata.types import TFDataset

AUTOTUNE = tf.data.AUTOTUNE


def to_tf_data(dataset: Dataset, items: Optional[Sequence[str]] = None, shuffle: bool = True,
               num_epochs: Optional[int] = None, num_readers: int = 1,
               shuffle_buffer_size: int = 256, seed: Optional[int] = None,
               reader_kwargs: Optional[Dict] = None, record_key: str = 'record_key',
               num_parallel_calls: int = AUTOTUNE,
               skip_corrupt: bool = False, num_workers: int = 1,
               worker_index: int = 0) -> TFDataset:
    """Returns a `tf.data.Dataset` of item dicts for a `slimdata.dataset.Dataset`.

    The arguments mirror `DatasetDataProvider`'s, so a port can keep its settings.

    Every data file's framing is checked first (`slimdata.record_checks`): a damaged file is
    refused with a `TFRecordError` naming it, the record and its offset, before TensorFlow's
    reader opens it. While iterating, a file that gives fewer records than it held (a damaged
    record stops TensorFlow's reader) fails with InvalidArgumentError naming the file, the
    record, its offset and what is wrong, and so does an epoch that reads another number of
    records than `dataset.num_samples` says (unless it is None; with several workers, see
    `record_checks.record_source` for when it applies).

    Args:
      dataset: a `slimdata.dataset.Dataset` whose reader is `tf.compat.v1.TFRecordReader` (or
        a callable making one, e.g. a lambda passing its options).
      items: the items to decode; all of the decoder's items (and `record_key`) if None.
      shuffle: shuffle the files each epoch and the records through a buffer.
      num_epochs: the number of passes over the data; None repeats forever.
      num_readers: the number of files read in parallel (interleaved); with 1 and no
        shuffle, records come in file order, as from the provider.
      shuffle_buffer_size: the records shuffled together (the provider's common queue).
      seed: the seed of both shuffles.
      reader_kwargs: the provider's reader kwargs; `options` (a `tf.io.TFRecordOptions` or
        a compression name) selects GZIP/ZLIB files.
      record_key: the item name of each record's key (`b'<file>:<offset>'`).
      num_parallel_calls: parallel decode calls.
      skip_corrupt: if True, a damaged file is read up to its damage and the rest of it is
        skipped; each epoch's skipped records are counted and reported in a warning of the
        `slimdata` logger at the end of the epoch.
      num_workers, worker_index: read only this worker's share of the data files, or of
        their records when there are fewer files than workers (see `DatasetDataProvider`
        and `slimdata.workers`).

    Returns:
      A `tf.data.Dataset` of dicts from item name to tensor, one element per record.

    Raises:
      ValueError: if the reader is not a TFRecordReader, an item is unknown, or no data
        files are found.
      slimdata.records.tfrecord.TFRecordError: a data file is damaged (and not skip_corrupt).
    """
    source = record_checks.record_source(
        get_data_files(dataset.data_sources), dataset.reader, reader_kwargs,
        dataset.num_samples, skip_corrupt, num_workers, worker_index, num_epochs)
    if source.compression is None:
        raise ValueError('to_tf_data reads TFRecord files with tf.compat.v1.TFRecordReader; '
                         f'dataset.reader is {record_checks.reader_name(dataset.reader)}')
    decoder_items = [item for item in (items or dataset.decoder.list_items())
                     if item != record_key]
    with_key = items is None or record_key in items
    records = source.counted_records(shuffle, num_epochs, num_readers, seed)
    # Records are checked a batch at a time (see `checked_records`), then decoded one by one.
    records = records.map(lambda keys, batch, indices: (
        keys, checked_records(dataset.decoder, batch, keys))).unbatch()
    if shuffle:
        records = records.shuffle(shuffle_buffer_size, seed=seed)

    def decode(key, serialized):
        decoded = dict(zip(decoder_items,
                           decode_record(dataset.decoder, serialized, decoder_items, key)))
        if with_key:
            decoded[record_key] = key
        return decoded

    return records.map(decode, num_parallel_calls=num_parallel_calls,
                       deterministic=not shuffle)


def padded_batch(ds: TFDataset, batch_size: int, drop_remainder: bool = False,
                 padding_values: Any = None) -> TFDataset:
    """Batches item dicts, padding variable-size items (boxes, labels) to the longest.

    The counterpart of `tf.compat.v1.train.batch(..., dynamic_pad=True)`; prefetches.
    """
    return ds.padded_batch(batch_size, drop_remainder=drop_remainder,
                           padding_values=padding_values).prefetch(AUTOTUNE)
