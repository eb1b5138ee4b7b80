"""`tf.contrib.lookup`'s table constructors, which TensorFlow 2's public API lacks.

Each builds the TF1 table it built, from `tf.compat.v1.lookup`'s classes: in graph mode the
table's initializer joins the `TABLE_INITIALIZERS` collection, so `tf.tables_initializer()`
(and `slim.learning.train`'s local init) initialize it, as before. The classes themselves
(`HashTable`, `KeyValueTensorInitializer`, ...) are ported to TensorFlow's names directly.
"""

from typing import Optional

from slimdata._tf import tf

_WHOLE_LINE, _LINE_NUMBER = -2, -1  # tf.lookup.TextFileIndex


def _no_hasher(hasher_spec) -> None:
    if hasher_spec is not None:
        raise ValueError('hasher_spec is not supported: the out-of-vocabulary buckets use '
                         "TensorFlow's Fingerprint64, the TF1 default (FastHashSpec)")


def _vocabulary_table(initializer, num_oov_buckets: int, default_value: int,
                      name: Optional[str]):
    if num_oov_buckets:
        return tf.compat.v1.lookup.StaticVocabularyTable(initializer, num_oov_buckets, name=name)
    return tf.compat.v1.lookup.StaticHashTable(initializer, default_value, name=name)


def index_table_from_tensor(vocabulary_list, num_oov_buckets: int = 0, default_value: int = -1,
                            hasher_spec=None, dtype=tf.string, name: Optional[str] = None):
    """A table from each element of `vocabulary_list` to its index (int64).

    Args:
      vocabulary_list: 1-D tensor (or list) of the keys, of `dtype`.
      num_oov_buckets: keys not in the list go to one of this many buckets after the
        vocabulary (by hash); 0: they get `default_value`.
      default_value: the id of a key not in the list, without buckets.
      hasher_spec: must be None (the TF1 default hash is the one used).
      dtype: the keys' type (tf.string or an integer type).
      name: the table's name.
    """
    _no_hasher(hasher_spec)
    keys = tf.convert_to_tensor(vocabulary_list, dtype=dtype)
    if keys.dtype in (tf.int8, tf.int16, tf.int32):
        keys = tf.cast(keys, tf.int64)  # the tables take int64 keys, as TF1's did
    ids = tf.range(tf.size(keys, out_type=tf.int64), dtype=tf.int64)
    initializer = tf.compat.v1.lookup.KeyValueTensorInitializer(keys, ids)
    return _vocabulary_table(initializer, num_oov_buckets, default_value, name)


def index_to_string_table_from_tensor(vocabulary_list, default_value: str = 'UNK',
                                      name: Optional[str] = None):
    """A table from an index (int64) to the element of `vocabulary_list` there, else
    `default_value`."""
    values = tf.convert_to_tensor(vocabulary_list, dtype=tf.string)
    ids = tf.range(tf.size(values, out_type=tf.int64), dtype=tf.int64)
    initializer = tf.compat.v1.lookup.KeyValueTensorInitializer(ids, values)
    return tf.compat.v1.lookup.StaticHashTable(initializer, default_value, name=name)


def index_table_from_file(vocabulary_file, num_oov_buckets: int = 0,
                          vocab_size: Optional[int] = None, default_value: int = -1,
                          hasher_spec=None, key_dtype=tf.string, name: Optional[str] = None,
                          key_column_index: int = _WHOLE_LINE,
                          value_column_index: int = _LINE_NUMBER, delimiter: str = '\t'):
    """A table from each line (or column `key_column_index`) of `vocabulary_file` to its line
    number (arguments as `index_table_from_tensor`; `vocab_size` reads that many lines)."""
    _no_hasher(hasher_spec)
    initializer = tf.compat.v1.lookup.TextFileInitializer(
        vocabulary_file, key_dtype, key_column_index, tf.int64, value_column_index,
        vocab_size=vocab_size, delimiter=delimiter)
    return _vocabulary_table(initializer, num_oov_buckets, default_value, name)


def index_to_string_table_from_file(vocabulary_file, vocab_size: Optional[int] = None,
                                    default_value: str = 'UNK', name: Optional[str] = None,
                                    key_column_index: int = _LINE_NUMBER,
                                    value_column_index: int = _WHOLE_LINE,
                                    delimiter: str = '\t'):
    """A table from a line number (int64) to that line of `vocabulary_file`, else
    `default_value`."""
    initializer = tf.compat.v1.lookup.TextFileInitializer(
        vocabulary_file, tf.int64, key_column_index, tf.string, value_column_index,
        vocab_size=vocab_size, delimiter=delimiter)
    return tf.compat.v1.lookup.StaticHashTable(initializer, default_value, name=name)
