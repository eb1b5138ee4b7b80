"""Building `tf.train.Example` records from plain Python and numpy values.

A converter describes one record as a dict and lets this module pick the list type::

    data = serialize_example({
        'image/encoded': jpeg_bytes,             # bytes or str   -> bytes_list
        'image/format': b'jpeg',
        'image/class/label': 3,                  # int, bool      -> int64_list
        'image/object/bbox/xmin': [0.1, 0.5],    # float          -> float_list
        'image/shape': np.array([h, w, 3]),      # numpy arrays by dtype, flattened
        'image/object/bbox/label': int64_feature(labels),  # built features pass through
    })

The rules, the same for `make_example` and the typed builders:

- A value is a scalar, a flat list/tuple of scalars, or a numpy array of any shape (stored
  flattened, in C order). Nested lists are refused: pass a numpy array to flatten them.
- bytes and str (stored utf-8 encoded) go to a bytes_list; bool, int and numpy integer or bool
  dtypes to an int64_list (bools as 0/1, ints must fit a signed 64-bit integer); float and
  numpy floating dtypes to a float_list (float32: values are rounded to the nearest float32,
  and a finite value too large for float32 is refused rather than stored as inf).
- A list may mix int and float (a float_list) or bytes and str, nothing else.
- numpy object arrays are read element by element like a list. numpy `S` (fixed-width bytes)
  arrays drop trailing NUL bytes of their elements (numpy's own rule); keep binary data that
  may end in NUL in a list of bytes or an object array.
- An empty list has no type, so `make_example` refuses it: build it with `int64_feature([])`,
  `float_feature([])` or `bytes_feature([])`. An empty numpy array has a dtype and is fine.
- `float_feature` also takes ints (stored as floats); `int64_feature` refuses floats (cast on
  purpose, e.g. with `np.rint(x).astype(np.int64)`).

Anything else (None, dicts, complex numbers, ...) is a ValueError that names the feature key
and says what was given.

`serialize_example` needs no TensorFlow: converter worker processes call it per record, and
importing TensorFlow would add seconds to each worker's start. It serializes through the
protobuf library with the Example schema of `slimdata.records.example_schema` (a descriptor
pool of our own, so it never clashes with TensorFlow's), deterministically, so the same dict
gives the same bytes in every process (the sharded writer relies on it): the bytes of
TensorFlow's own `tf.train.Example.SerializeToString(deterministic=True)`.
`int64_feature`, `float_feature`, `bytes_feature` and `make_example` return TensorFlow
protos and import TensorFlow when first called; importing this module does not.
"""

import math
import sys
from typing import Any, List, Mapping, Optional, Tuple, Type

import numpy as np

from slimdata.records import example_schema

_INT64 = 'int64'
_FLOAT = 'float'
_BYTES = 'bytes'

# The common case, exact Python types protobuf takes as they are, skips the general rules.
_EXACT_TYPE_KINDS = {bytes: _BYTES, int: _INT64, float: _FLOAT}

_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1
# The smallest magnitude that rounds to inf in float32: the largest float32 plus half an ulp.
_FLOAT32_OVERFLOW = 2.0**128 - 2.0**103
_EXPECTED_VALUE = ('bytes, str, bool, int or float, a flat list/tuple of them, or a numpy '
                   'array of a numeric, bool, bytes or str dtype')
_EMPTY_LIST = ('an empty list has no type; build it with int64_feature([]), '
               'float_feature([]) or bytes_feature([])')


def _describe(value: Any) -> str:
    """A short description of an offending value for error messages."""
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + '...'
    return f'{type(value).__name__} {text}'


def _scalar_kind(value: Any) -> str:
    """The list type a single (non-container) value belongs to."""
    if isinstance(value, (bytes, str, bytearray)):
        return _BYTES
    if isinstance(value, (int, np.integer, np.bool_)):  # bool is an int
        return _INT64
    if isinstance(value, (float, np.floating)):
        return _FLOAT
    if isinstance(value, (list, tuple, np.ndarray)):
        raise ValueError(f'got a nested sequence (an element is {_describe(value)}); pass a flat '
                         'list, or a numpy array, which is stored flattened')
    raise ValueError(f'cannot store {_describe(value)}; expected {_EXPECTED_VALUE}')


def _list_values(values: List[Any]) -> Tuple[List[Any], Optional[str]]:
    """Converts a flat list of scalars to protobuf-ready values and their list type.

    The type is None for an empty list, which has none.
    """
    types = set(map(type, values))  # one pass in C, where a generator costs a call per value
    if len(types) == 1:
        exact_kind = _EXACT_TYPE_KINDS.get(next(iter(types)))
        if exact_kind is not None:
            return values, exact_kind
    kinds = {_scalar_kind(value) for value in values}
    if not kinds:
        return [], None
    if kinds == {_BYTES}:
        return [value.encode('utf-8') if isinstance(value, str) else bytes(value)
                for value in values], _BYTES
    if kinds == {_INT64}:
        return [int(value) for value in values], _INT64
    if kinds <= {_INT64, _FLOAT}:
        return [float(value) for value in values], _FLOAT
    raise ValueError(f'the list mixes {" and ".join(sorted(kinds))} values; a feature holds '
                     'one type')


def _array_values(array: np.ndarray) -> Tuple[List[Any], Optional[str]]:
    """Converts a numpy array (any shape, flattened) to protobuf-ready values and list type."""
    dtype_kind = array.dtype.kind
    flat = array.ravel()
    if dtype_kind in 'iu':
        return flat.tolist(), _INT64
    if dtype_kind == 'b':
        return flat.astype(np.int64).tolist(), _INT64
    if dtype_kind == 'f':
        return flat.tolist(), _FLOAT
    if dtype_kind == 'S':
        return flat.tolist(), _BYTES
    if dtype_kind == 'U':
        return [text.encode('utf-8') for text in flat.tolist()], _BYTES
    if dtype_kind == 'O':
        return _list_values(flat.tolist())
    raise ValueError(f'cannot store a numpy array of dtype {array.dtype}; expected '
                     f'{_EXPECTED_VALUE}')


def _values_and_kind(value: Any) -> Tuple[List[Any], Optional[str]]:
    """Flattens `value` and finds its list type (None for an empty list)."""
    exact_kind = _EXACT_TYPE_KINDS.get(type(value))
    if exact_kind is not None:  # the common scalar: no further checks needed
        return [value], exact_kind
    if isinstance(value, (np.ndarray, np.generic)):
        return _array_values(np.asarray(value))
    if isinstance(value, (list, tuple)):
        return _list_values(list(value))
    return _list_values([value])


def _check_float32_range(values: List[float]) -> None:
    """Refuses finite values that float32 would turn into inf (silent data loss)."""
    if values and max(map(abs, values)) >= _FLOAT32_OVERFLOW:  # rare: find which
        for value in values:
            if abs(value) >= _FLOAT32_OVERFLOW and not math.isinf(value):
                raise ValueError(f'{value!r} does not fit a float32 (it would be stored as '
                                 'inf)')


def _check_int64_range(values: List[int]) -> None:
    """Refuses ints beyond a signed 64-bit integer (protobuf would too, but later)."""
    if values and (min(values) < _INT64_MIN or max(values) > _INT64_MAX):
        offending = next(v for v in values if not _INT64_MIN <= v <= _INT64_MAX)
        raise ValueError(f'an integer does not fit int64: {offending} is outside '
                         '[-2**63, 2**63 - 1]')


def _normalize(value: Any, accepted: Optional[Tuple[str, ...]] = None,
               expected: str = '') -> Tuple[str, List[Any]]:
    """Checks one feature's value and returns (its list type, its flat values).

    The one place the rules of the module docstring are applied: `make_example` builds its
    protos from the result and `serialize_example` encodes it.

    Args:
      value: the value as given (see the module docstring).
      accepted: for the typed builders, the list types accepted, the stored one first; None
        infers the type from the value (and refuses an empty list, which has none).
      expected: what `accepted` stands for, for the error message.

    Raises:
      ValueError: for a value that does not map to one list type, or does not fit it.
    """
    values, kind = _values_and_kind(value)
    if accepted is None:
        if kind is None:
            raise ValueError(_EMPTY_LIST)
    elif kind is None or kind in accepted:
        kind = accepted[0]
    else:
        raise ValueError(f'expected {expected}, got {_describe(value)}')
    if kind == _INT64:
        _check_int64_range(values)
    elif kind == _FLOAT:
        _check_float32_range(values)
    return kind, values


def _tf() -> Any:
    """TensorFlow, imported on first use (only the proto builders need it)."""
    from slimdata._tf import tf
    return tf


def _proto_feature(kind: str, values: List[Any]) -> Any:
    """Wraps values from `_normalize` in a `tf.train.Feature` of list type `kind`."""
    train = _tf().train
    if kind == _BYTES:
        return train.Feature(bytes_list=train.BytesList(value=values))
    if kind == _FLOAT:
        return train.Feature(float_list=train.FloatList(value=values))
    return train.Feature(int64_list=train.Int64List(value=values))


def _typed_feature(builder: str, value: Any, accepted: Tuple[str, ...], expected: str) -> Any:
    """Builds a feature of list type `accepted[0]` from values of any `accepted` type."""
    try:
        return _proto_feature(*_normalize(value, accepted, expected))
    except ValueError as error:
        raise ValueError(f'{builder}: {error}') from error


def int64_feature(value: Any) -> Any:
    """A `tf.train.Feature` with an int64_list.

    Args:
      value: an int or bool, a flat list/tuple of them, or a numpy array of an integer or
        bool dtype (any shape, flattened). Bools are stored as 0/1.

    Raises:
      ValueError: for floats, strings and anything else, or ints outside int64's range.
    """
    return _typed_feature('int64_feature', value, (_INT64,),
                          'ints or bools (or an integer/bool numpy array)')


def float_feature(value: Any) -> Any:
    """A `tf.train.Feature` with a float_list (float32).

    Args:
      value: a float or int, a flat list/tuple of them, or a numpy array of a floating,
        integer or bool dtype (any shape, flattened). Values are rounded to float32.

    Raises:
      ValueError: for strings and anything else, or finite values too large for float32.
    """
    return _typed_feature('float_feature', value, (_FLOAT, _INT64),
                          'floats or ints (or a numeric numpy array)')


def bytes_feature(value: Any) -> Any:
    """A `tf.train.Feature` with a bytes_list.

    Args:
      value: bytes or str (stored utf-8 encoded), a flat list/tuple of them, or a numpy array
        of a bytes (`S`), str (`U`) or object dtype holding bytes/str (any shape, flattened).

    Raises:
      ValueError: for numbers and anything else.
    """
    return _typed_feature('bytes_feature', value, (_BYTES,),
                          'bytes or str (or a bytes/str numpy array)')


def _proto_feature_type() -> Optional[Type[Any]]:  # TensorFlow ships no types
    """`tf.train.Feature`, or None while TensorFlow is not imported (no such value can exist)."""
    tensorflow = sys.modules.get('tensorflow')
    return None if tensorflow is None else tensorflow.train.Feature


def _check_keys(features: Mapping[str, Any]) -> None:
    for key in features:
        if not isinstance(key, str):
            raise ValueError(f'feature keys must be str, got {_describe(key)}')


def _checked_features(features: Mapping[str, Any], make_feature: Any,
                      take_feature: Any) -> List[Tuple[str, Any]]:
    """(key, feature) pairs in sorted key order, each value checked by `_normalize`.

    Args:
      features: feature key -> value, as `make_example` takes.
      make_feature: builds a feature from `_normalize`'s (kind, values).
      take_feature: turns a given `tf.train.Feature` into the same kind of feature.

    Raises:
      ValueError: naming the key, for a non-str key or a value that cannot be stored.
    """
    _check_keys(features)
    proto_feature_type = _proto_feature_type()
    built = []
    for key in sorted(features):
        value = features[key]
        if proto_feature_type is not None and isinstance(value, proto_feature_type):
            built.append((key, take_feature(value)))
            continue
        try:
            built.append((key, make_feature(*_normalize(value))))
        except ValueError as error:
            raise ValueError(f'feature {key!r}: {error}') from error
    return built


def make_example(features: Mapping[str, Any]) -> Any:
    """Builds a `tf.train.Example` from feature key -> value, inferring each list type.

    Args:
      features: feature key (str) -> a value as described in the module docstring, or a
        `tf.train.Feature` (e.g. from `int64_feature`), which is used as it is.

    Returns:
      The `tf.train.Example`.

    Raises:
      ValueError: naming the key, for a value that cannot be mapped to one list type.
    """
    train = _tf().train
    built = _checked_features(features, _proto_feature, lambda feature: feature)
    return train.Example(features=train.Features(feature=dict(built)))


def serialize_example(features: Mapping[str, Any]) -> bytes:
    """The serialized `make_example(features)`, written without TensorFlow.

    The protobuf library serializes it (its C runtime, upb), through the Example schema of
    `slimdata.records.example_schema`, deterministically: the same dict gives the same bytes
    in every process, which the sharded writer relies on.

    Args:
      features: as for `make_example`. A `tf.train.Feature` value is copied as it is (only
        such a value needs TensorFlow, whose caller has it).

    Raises:
      ValueError: naming the key, for a value that cannot be mapped to one list type.
    """
    # The same checks as `_checked_features`, in one loop: converters call this per record,
    # and a function call per feature and check was half of its cost.
    _check_keys(features)
    example = example_schema.Example()
    example.features.SetInParent()  # as TensorFlow writes an Example without features
    feature_map = example.features.feature
    proto_feature_type = _proto_feature_type()
    for key in sorted(features):
        value = features[key]
        kind, values = _exact_kind_and_values(value)
        if kind is None:
            if proto_feature_type is not None and isinstance(value, proto_feature_type):
                feature_map[key].MergeFromString(value.SerializeToString())
                continue
            try:
                kind, values = _normalize(value)
            except ValueError as error:
                raise ValueError(f'feature {key!r}: {error}') from error
        typed_list = getattr(feature_map[key], _LIST_FIELDS[kind])
        typed_list.SetInParent()  # an empty list keeps its type
        typed_list.value.extend(values)
    return example.SerializeToString(deterministic=True)


def _exact_kind_and_values(value: Any) -> Tuple[Optional[str], Any]:
    """(list type, values) of a value that is, or is a list or tuple of, one exact type of
    bytes, int or float (what converters mostly pass) and fits it; (None, None) for anything
    else, which `_normalize` then checks and converts."""
    kind, values = _EXACT_TYPE_KINDS.get(type(value)), (value,)
    if kind is None and type(value) in (list, tuple) and value:
        types = set(map(type, value))  # one pass in C
        kind = _EXACT_TYPE_KINDS.get(types.pop()) if len(types) == 1 else None
        values = value
    if kind is _INT64:
        if min(values) < _INT64_MIN or max(values) > _INT64_MAX:
            return None, None  # `_normalize` names the offending value
    elif kind is _FLOAT:
        if max(map(abs, values)) >= _FLOAT32_OVERFLOW:
            return None, None
    return kind, values


_LIST_FIELDS = {_BYTES: 'bytes_list', _FLOAT: 'float_list', _INT64: 'int64_list'}
