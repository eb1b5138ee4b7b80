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

from typing import Dict, Optional, Sequence

from slimdata._tf import tf
from slimdata.parallel_reader import get_data_files

AUTOTUNE = tf.data.AUTOTUNE
# TFRecord framing around each record's data: length (8) + length CRC (4) + data CRC (4).
_FRAMING_BYTES = 16


def _compression_type(reader_kwargs: Optional[Dict]) -> str:
    options = (reader_kwargs or {}).get('options')
    if options is None:
        return ''
    if isinstance(options, str):
        return options
    return tf.io.TFRecordOptions.get_compression_type_string(options) or ''


def _keyed_records(filename, compression_type: str):
    """(record_key, record) pairs of one file, keys as TFRecordReader makes them."""
    records = tf.data.TFRecordDataset(filename, compression_type=compression_type)

    def offset_of(offset, record):
        return offset + _FRAMING_BYTES + tf.cast(tf.strings.length(record), tf.int64), \
            (tf.strings.join([filename, ':', tf.strings.as_string(offset)]), record)

    return records.scan(tf.constant(0, tf.int64), offset_of)


def to_tf_data(dataset, items: Optional[Sequence[str]] = None, shuffle: bool = True,
               num_epochs: Optional[int] = None, num_readers: int = 1,
               shuffle_buffer_size: int = 256, seed: Optional[int] = None,
               reader_kwargs: Optional[Dict] = None, record_key: str = 'record_key',
               num_parallel_calls: int = AUTOTUNE) -> tf.data.Dataset:
    """Returns a `tf.data.Dataset` of item dicts for a `slimdata.dataset.Dataset`.

    The arguments mirror `DatasetDataProvider`'s, so a port can keep its settings.

    Args:
      dataset: a `slimdata.dataset.Dataset` whose reader is `tf.compat.v1.TFRecordReader`.
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

    Returns:
      A `tf.data.Dataset` of dicts from item name to tensor, one element per record.

    Raises:
      ValueError: if the reader is not a TFRecordReader, an item is unknown, or no data
        files are found.
    """
    if dataset.reader is not tf.compat.v1.TFRecordReader:
        raise ValueError(f'to_tf_data reads TFRecord files; dataset.reader is '
                         f'{getattr(dataset.reader, "__name__", dataset.reader)!r}')
    decoder_items = [item for item in (items or dataset.decoder.list_items())
                     if item != record_key]
    with_key = items is None or record_key in items
    compression_type = _compression_type(reader_kwargs)

    data_files = get_data_files(dataset.data_sources)
    files = tf.data.Dataset.from_tensor_slices(data_files)
    if shuffle:
        files = files.shuffle(len(data_files), seed=seed, reshuffle_each_iteration=True)
    files = files.repeat(num_epochs)
    records = files.interleave(lambda f: _keyed_records(f, compression_type),
                               cycle_length=num_readers, num_parallel_calls=AUTOTUNE,
                               deterministic=not shuffle)
    if shuffle:
        records = records.shuffle(shuffle_buffer_size, seed=seed)

    def decode(key, serialized):
        decoded = dict(zip(decoder_items, dataset.decoder.decode(serialized, decoder_items)))
        if with_key:
            decoded[record_key] = key
        return decoded

    return records.map(decode, num_parallel_calls=num_parallel_calls,
                       deterministic=not shuffle)


def padded_batch(ds: tf.data.Dataset, batch_size: int, drop_remainder: bool = False,
                 padding_values=None) -> tf.data.Dataset:
    """Batches item dicts, padding variable-size items (boxes, labels) to the longest.

    The counterpart of `tf.compat.v1.train.batch(..., dynamic_pad=True)`; prefetches.
    """
    return ds.padded_batch(batch_size, drop_remainder=drop_remainder,
                           padding_values=padding_values).prefetch(AUTOTUNE)
