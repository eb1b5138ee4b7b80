"""`tf.estimator.inputs.numpy_input_fn`: an input_fn over numpy arrays, on tf.data.

TF1 fed the arrays through a queue; the batches are the same: the examples in order (or
shuffled through a buffer of `queue_capacity`), `num_epochs` times (None: forever), the last
batch smaller when the epochs end. `pandas_input_fn` is not covered.
"""

from typing import Any, Callable, Dict, Optional, Union

import numpy as np

from slimdata._tf import tf

Arrays = Union[np.ndarray, Dict[str, np.ndarray]]


def _length(arrays: Arrays, name: str) -> int:
    lengths = {len(value) for value in (arrays.values() if isinstance(arrays, dict)
                                        else [arrays])}
    if len(lengths) != 1:
        raise ValueError(f'The arrays of {name} have different lengths: {sorted(lengths)}')
    return lengths.pop()


def numpy_input_fn(x: Arrays, y: Optional[Arrays] = None, batch_size: int = 128,
                   num_epochs: Optional[int] = 1, shuffle: Optional[bool] = None,
                   queue_capacity: int = 1000, num_threads: int = 1) -> Callable[[], Any]:
    """An input_fn returning (features, labels) tensors of batches of `x` and `y`.

    `x`: an array (the features are then one tensor) or a dict of arrays. `y`: the labels, an
    array or dict of arrays, or None (the input_fn then returns the features alone).
    `batch_size`: examples per batch. `num_epochs`: passes over the arrays (None: forever).
    `shuffle`: required, as in TF1. `queue_capacity`: the shuffle buffer. `num_threads`: kept
    for TF1's signature (tf.data reads in order).
    """
    if not isinstance(shuffle, bool):
        raise ValueError(f'shuffle must be provided explicitly as a bool, given: {shuffle!r}')
    if isinstance(x, dict) and isinstance(y, dict) and set(x) & set(y):
        raise ValueError(f'{sorted(set(x) & set(y))} duplicate keys are found in both x and y')
    if y is not None and _length(x, 'x') != _length(y, 'y'):
        raise ValueError(f'Length of tensors in x and y is mismatched: {_length(x, "x")} and '
                         f'{_length(y, "y")}')

    def input_fn() -> Any:
        dataset = tf.data.Dataset.from_tensor_slices(x if y is None else (x, y))
        if shuffle:
            dataset = dataset.shuffle(queue_capacity)
        dataset = dataset.repeat(num_epochs).batch(batch_size)
        return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
    return input_fn
