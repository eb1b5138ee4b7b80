"""Python 2's semantics where `slimdata port` cannot tell them from Python 3's by reading code.

`old_div(a, b)` is Python 2's `a / b` (without `from __future__ import division`): floor
division when both operands are integers - Python ints and bools, numpy integer scalars and
arrays, TensorFlow integer tensors (TF1's `__div__` floored them) - and true division
otherwise. The port writes it where the operands' types are known only when the code runs
(`batch_size / num_clones` of flags or config values).

`to_bytes(value)` is what Python 2 stored in a `BytesList`: a `str` (Python 2's `unicode` and
text) encoded as UTF-8, bytes as they are, a list or tuple element by element.
"""

import numbers
from typing import Any


def _integral(value: Any) -> bool:
    """Whether `value` is an integer or integer-typed array or tensor (bools count, as in
    Python 2's division)."""
    if isinstance(value, numbers.Integral):
        return True
    dtype = getattr(value, 'dtype', None)
    if dtype is None:
        return False
    is_integer = getattr(dtype, 'is_integer', None)  # a TensorFlow DType
    if isinstance(is_integer, bool):
        return is_integer or bool(getattr(dtype, 'is_bool', False))
    return getattr(dtype, 'kind', None) in ('i', 'u', 'b')  # a numpy dtype


def old_div(a: Any, b: Any) -> Any:
    """Python 2's `a / b`: `a // b` when both are integers (see the module docstring), else
    `a / b`."""
    if _integral(a) and _integral(b):
        return a // b
    return a / b


def to_bytes(value: Any) -> Any:
    """`value` as Python 2 put it in a `BytesList`: str encoded as UTF-8, lists and tuples
    element by element, anything else (bytes, numpy bytes) as it is."""
    if isinstance(value, str):
        return value.encode('utf-8')
    if isinstance(value, (list, tuple)):
        return type(value)(to_bytes(element) for element in value)
    return value
