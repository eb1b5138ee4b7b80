"""`tf.contrib.data`'s batching transformations that TensorFlow folded into `Dataset.batch`.

TF 1.10 deprecated `tf.contrib.data.batch_and_drop_remainder(n)` and
`padded_batch_and_drop_remainder(n, shapes)` for `batch(..., drop_remainder=True)` and
`padded_batch(..., drop_remainder=True)`, and no public name took them over (the Object
Detection API's input pipeline applies the first). These are the transformations they
returned, for `dataset.apply(...)`: batches of exactly `batch_size`, the last partial one
dropped, so a batch's leading dimension is static. The other `tf.contrib.data` names were
aliases of `tf.data.experimental`'s, and are ported to those (`slimdata.port.rules`).
"""

from typing import Any, Callable

from slimdata._tf import tf

Transformation = Callable[[Any], Any]


def batch_and_drop_remainder(batch_size: int) -> Transformation:
    """A `Dataset.apply` transformation batching `batch_size` elements (a scalar int64
    tensor or int), the last partial batch dropped."""
    def apply(dataset: tf.data.Dataset) -> tf.data.Dataset:
        return dataset.batch(batch_size, drop_remainder=True)
    return apply


def padded_batch_and_drop_remainder(batch_size: int, padded_shapes: Any,
                                    padding_values: Any = None) -> Transformation:
    """As `batch_and_drop_remainder`, each component padded to `padded_shapes` (with
    `padding_values`, by default 0 and ''), as `Dataset.padded_batch` pads."""
    def apply(dataset: tf.data.Dataset) -> tf.data.Dataset:
        return dataset.padded_batch(batch_size, padded_shapes, padding_values,
                                    drop_remainder=True)
    return apply
