"""slimdata.records.example: every builder checked against TensorFlow's own Example parsing."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from slimdata._tf import tf
from slimdata.records.example import (
    bytes_feature,
    float_feature,
    int64_feature,
    make_example,
    serialize_example,
)

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
FLOAT32_OVERFLOW = 2.0**128 - 2.0**103  # float32 max plus half an ulp: rounds to inf


def parse(serialized, spec):
    """tf.io.parse_single_example in a graph of its own (works whatever the eager mode is)."""
    with tf.Graph().as_default():
        parsed = tf.io.parse_single_example(serialized, spec)
        with tf.compat.v1.Session() as session:
            return session.run(parsed)


def parsed_values(feature, dtype):
    """The values TensorFlow reads back from an Example holding `feature` under key 'x'."""
    data = tf.train.Example(features=tf.train.Features(feature={'x': feature}))
    return parse(data.SerializeToString(), {'x': tf.io.VarLenFeature(dtype)})['x'].values


@pytest.mark.parametrize('value', [
    7, -3, True, False, np.int64(INT64_MAX), np.uint8(255), np.bool_(True),
    [1, 2, 3], (INT64_MIN, 0, INT64_MAX), [True, 0, np.int16(-5)],
    np.arange(12, dtype=np.int8).reshape(3, 4), np.array([[0, 65535]], dtype=np.uint16),
    np.array([True, False, True]), np.array([2**63 - 1], dtype=np.uint64),
    np.zeros((0,), dtype=np.int32),
])
def test_int64_feature_reads_back(value):
    expected = np.asarray(value).astype(np.int64).ravel()
    np.testing.assert_array_equal(parsed_values(int64_feature(value), tf.int64), expected)


@pytest.mark.parametrize('value', [
    0.1, 1 / 3, -2.5, 7, np.float16(0.1), np.float32(1e-40), float('inf'), float('nan'),
    [0.1, 0.2, 1e30], (1, 2.5), np.linspace(0, 1, 12).reshape(2, 2, 3),
    np.array([1e-3, -3.4e38], dtype=np.float64), np.array([[1, 2]], dtype=np.int64),
    np.zeros((2, 0), dtype=np.float32), [np.nextafter(FLOAT32_OVERFLOW, 0), -3.4028235e38],
])
def test_float_feature_reads_back_rounded_to_float32(value):
    expected = np.asarray(value, dtype=np.float64).astype(np.float32).ravel()
    np.testing.assert_array_equal(parsed_values(float_feature(value), tf.float32), expected)


@pytest.mark.parametrize('value, expected', [
    (b'\x00\xffabc\x00', [b'\x00\xffabc\x00']),
    ('h\u00e9llo \u6f22', ['h\u00e9llo \u6f22'.encode('utf-8')]),
    ([b'a', 'b', bytearray(b'c')], [b'a', b'b', b'c']),
    (np.array([[b'ab', b'c'], [b'', b'd']]), [b'ab', b'c', b'', b'd']),
    (np.array(['x', '\u00e9']), [b'x', '\u00e9'.encode('utf-8')]),
    (np.array([b'keeps\x00', 'str'], dtype=object), [b'keeps\x00', b'str']),
    (np.str_('s'), [b's']),
])
def test_bytes_feature_reads_back(value, expected):
    assert list(parsed_values(bytes_feature(value), tf.string)) == expected


def test_numpy_fixed_width_bytes_drop_trailing_nul_as_documented():
    # numpy's own rule for `S` arrays; the module docstring tells users to avoid them here.
    assert list(parsed_values(bytes_feature(np.array([b'a\x00'])), tf.string)) == [b'a']


@pytest.mark.parametrize('builder', [int64_feature, float_feature, bytes_feature])
def test_typed_builders_accept_an_empty_list(builder):
    assert len(builder([]).ListFields()) == 1  # the list field is set, with no values
    dtype = {int64_feature: tf.int64, float_feature: tf.float32, bytes_feature: tf.string}
    assert len(parsed_values(builder([]), dtype[builder])) == 0


def test_make_example_infers_each_list_type():
    source = {
        'image/encoded': b'\x89PNG\x00',
        'image/format': 'png',
        'image/class/label': 3,
        'image/flag': True,
        'image/shape': np.array([[4, 5, 3]], dtype=np.int32),
        'bbox/xmin': [0.1, 0.25, 1],
        'bbox/ymin': np.array([0.3, 0.7], dtype=np.float64),
        'names': ['cat', b'dog'],
        'prebuilt': int64_feature([]),
        'empty_typed_array': np.zeros(0, dtype=np.float32),
    }
    spec = {
        'image/encoded': tf.io.FixedLenFeature([], tf.string),
        'image/format': tf.io.FixedLenFeature([], tf.string),
        'image/class/label': tf.io.FixedLenFeature([], tf.int64),
        'image/flag': tf.io.FixedLenFeature([], tf.int64),
        'image/shape': tf.io.FixedLenFeature([3], tf.int64),
        'bbox/xmin': tf.io.VarLenFeature(tf.float32),
        'bbox/ymin': tf.io.VarLenFeature(tf.float32),
        'names': tf.io.VarLenFeature(tf.string),
        'prebuilt': tf.io.VarLenFeature(tf.int64),
        'empty_typed_array': tf.io.VarLenFeature(tf.float32),
    }
    parsed = parse(serialize_example(source), spec)
    assert parsed['image/encoded'] == b'\x89PNG\x00'
    assert parsed['image/format'] == b'png'
    assert parsed['image/class/label'] == 3
    assert parsed['image/flag'] == 1
    np.testing.assert_array_equal(parsed['image/shape'], [4, 5, 3])
    np.testing.assert_array_equal(parsed['bbox/xmin'].values,
                                  np.array([0.1, 0.25, 1.0]).astype(np.float32))
    np.testing.assert_array_equal(parsed['bbox/ymin'].values,
                                  source['bbox/ymin'].astype(np.float32))
    assert list(parsed['names'].values) == [b'cat', b'dog']
    assert len(parsed['prebuilt'].values) == 0
    assert len(parsed['empty_typed_array'].values) == 0
    example = make_example(source)
    assert example.features.feature['prebuilt'] == source['prebuilt']
    assert example.features.feature['image/flag'].WhichOneof('kind') == 'int64_list'


def test_serialize_example_is_deterministic():
    # protobuf's default map order follows a per-process hash seed, so without sorting the
    # same dict would give different bytes in different worker processes.
    forward = {f'key{i:02d}': i for i in range(20)}
    backward = dict(reversed(list(forward.items())))
    data = serialize_example(backward)
    assert data == serialize_example(forward)
    positions = [data.index(key.encode()) for key in sorted(forward)]
    assert positions == sorted(positions)
    assert tf.train.Example.FromString(data) == make_example(forward)


@pytest.mark.parametrize('value, message', [
    (None, 'cannot store NoneType None'),
    ({'a': 1}, 'cannot store dict'),
    (1 + 2j, 'cannot store complex'),
    (np.array([1 + 2j]), 'dtype complex128'),
    ([1, 'a'], 'mixes bytes and int64'),
    ([1.5, b'a'], 'mixes bytes and float'),
    ([[1, 2], [3, 4]], 'nested sequence'),
    ([[1, 2], [3]], 'nested sequence'),
    ([np.array([1])], 'nested sequence'),
    (np.array([1, None], dtype=object), 'cannot store NoneType None'),
    (np.array([], dtype=object), 'empty list has no type'),
    ([], 'int64_feature([]), float_feature([]) or bytes_feature([])'),
    ((), 'empty list has no type'),
    (2**63, 'does not fit int64'),
    ([INT64_MIN - 1], 'does not fit int64'),
    (np.array([2**64 - 1], dtype=np.uint64), 'does not fit int64'),
    (1e39, 'does not fit a float32'),
    (-FLOAT32_OVERFLOW, 'does not fit a float32'),
    ([0.5, -np.float64(4e38)], 'does not fit a float32'),
])
def test_make_example_refuses_naming_the_key(value, message):
    with pytest.raises(ValueError, match=r"feature 'my/key'") as raised:
        make_example({'ok': 1, 'my/key': value})
    assert message in str(raised.value)


def test_make_example_refuses_non_string_keys():
    with pytest.raises(ValueError, match='feature keys must be str, got int 3'):
        make_example({3: 1})


@pytest.mark.parametrize('builder, value, message', [
    (int64_feature, 1.5, 'int64_feature: expected ints or bools'),
    (int64_feature, np.array([1.0]), 'int64_feature: expected ints or bools'),
    (int64_feature, 'abc', 'int64_feature: expected ints or bools'),
    (int64_feature, [2**63], 'int64_feature: an integer does not fit int64'),
    (float_feature, b'abc', 'float_feature: expected floats or ints'),
    (float_feature, [1e39], 'float_feature: 1e+39 does not fit a float32'),
    (bytes_feature, 3, 'bytes_feature: expected bytes or str'),
    (bytes_feature, [b'a', 1], 'bytes_feature: the list mixes bytes and int64'),
    (bytes_feature, [[b'a']], 'bytes_feature: got a nested sequence'),
    (float_feature, None, 'float_feature: cannot store NoneType None'),
])
def test_typed_builders_refuse_what_does_not_fit(builder, value, message):
    with pytest.raises(ValueError) as raised:
        builder(value)
    assert message in str(raised.value)


# --- serialize_example: the TF-free wire format against TensorFlow's protobuf -----------------

INT64S = st.integers(INT64_MIN, INT64_MAX)
FLOATS = st.one_of(
    st.floats(width=32),  # float32 values as they are, with -0.0, inf and nan
    st.floats(-3.4e38, 3.4e38),  # float64 values that round to float32
    st.sampled_from([0.0, -0.0, float('inf'), -float('inf'), float('nan'), 1e-45]))
BYTES = st.one_of(
    st.binary(max_size=40),
    st.text(max_size=20),
    # Large values: their lengths take several varint bytes.
    st.builds(lambda length, byte: bytes([byte]) * length, st.integers(100, 300_000),
              st.integers(0, 255)))
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
ARRAYS = st.one_of(
    hnp.arrays(st.sampled_from([np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                np.int64, np.bool_, np.float16, np.float32]), SHAPES),
    hnp.arrays(np.float64, SHAPES, elements=FLOATS))  # float64 within float32's range
VALUES = st.one_of(
    INT64S, st.booleans(), FLOATS, BYTES,
    st.lists(INT64S, min_size=1, max_size=10),
    st.lists(FLOATS, min_size=1, max_size=10),
    st.lists(st.one_of(INT64S, FLOATS), min_size=1, max_size=10),  # a float_list
    st.lists(BYTES, min_size=1, max_size=4),
    ARRAYS,
    hnp.arrays(np.int64, st.integers(0, 5), elements=INT64S),
    hnp.arrays(np.uint64, st.integers(0, 5), elements=st.integers(0, INT64_MAX)),
    hnp.arrays(hnp.byte_string_dtypes(max_len=4), st.integers(0, 5)),
    # Characters UTF-8 can encode: no lone surrogates, which no encoder takes (a ValueError,
    # tested below); numpy's own strategy for str arrays draws them.
    hnp.arrays('<U4', st.integers(0, 5),  # no NUL: numpy drops trailing ones
               elements=st.text(st.characters(codec='utf-8', exclude_characters='\x00'),
                                max_size=4)))
FEATURE_DICTS = st.dictionaries(st.text(max_size=12), VALUES, max_size=6)
EXAMPLE_SETTINGS = settings(max_examples=150, deadline=None,
                            suppress_health_check=[HealthCheck.too_slow,
                                                   HealthCheck.data_too_large])


def spec_of(example):
    """A VarLenFeature spec for every feature of `example`, by its list type."""
    dtypes = {'bytes_list': tf.string, 'float_list': tf.float32, 'int64_list': tf.int64}
    return {key: tf.io.VarLenFeature(dtypes[feature.WhichOneof('kind')])
            for key, feature in example.features.feature.items()}


@EXAMPLE_SETTINGS
@given(FEATURE_DICTS)
def test_serialize_example_equals_tensorflow_protobuf(features):
    expected = make_example(features)
    data = serialize_example(features)
    parsed = tf.train.Example.FromString(data)
    # nan != nan in proto comparisons, so compare TensorFlow's deterministic bytes as well.
    reference = expected.SerializeToString(deterministic=True)
    assert parsed.SerializeToString(deterministic=True) == reference
    if not any(np.isnan(f.float_list.value).any() for f in expected.features.feature.values()):
        assert parsed == expected
    assert data == reference  # byte for byte, TensorFlow's deterministic serialization


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.dictionaries(st.text(max_size=12), VALUES, min_size=1, max_size=6))
def test_serialize_example_parses_as_tensorflow_s_own(features):
    expected = make_example(features)
    spec = spec_of(expected)
    ours = parse(serialize_example(features), spec)
    reference = parse(expected.SerializeToString(), spec)
    for key in spec:
        np.testing.assert_array_equal(ours[key].values, reference[key].values)


def test_text_that_is_not_unicode_scalar_values_is_a_value_error_naming_the_key():
    for value in ('\ud800', ['ok', '\udfff'], np.array(['\ud800'])):
        with pytest.raises(ValueError, match="feature 'name'"):
            serialize_example({'name': value})


def test_serialize_example_writes_given_features_and_empty_typed_lists():
    features = {'prebuilt': float_feature([0.5, -0.0]), 'none_b': bytes_feature([]),
                'none_i': int64_feature([]), 'none_f': np.zeros(0, np.float32), 'i': -1}
    data = serialize_example(features)
    assert data == make_example(features).SerializeToString(deterministic=True)
    assert serialize_example({}) == tf.train.Example(
        features=tf.train.Features()).SerializeToString()


@pytest.mark.parametrize('value, message', [
    ([], 'empty list has no type'),
    (2**63, 'does not fit int64'),
    (np.array([2**64 - 1], dtype=np.uint64), 'does not fit int64'),
    (1e39, 'does not fit a float32'),
    ([1, 'a'], 'mixes bytes and int64'),
    (None, 'cannot store NoneType None'),
])
def test_serialize_example_refuses_as_make_example(value, message):
    with pytest.raises(ValueError, match=r"feature 'my/key'") as raised:
        serialize_example({'ok': 1, 'my/key': value})
    assert message in str(raised.value)


def test_serialize_example_does_not_import_tensorflow():
    code = ('import sys, numpy as np, slimdata.records.example\n'
            'data = slimdata.records.example.serialize_example({"b": b"x", "i": [1, -2], "f": 0.5, '
            '"a": np.zeros((2, 2), np.float32), "s": "text"})\n'
            'assert len(data) > 0\n'
            'print("tensorflow" in sys.modules)')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == 'False'


@pytest.mark.parametrize('features', [
    # Packed payloads around the one-byte length limit (127) of the list and its Feature.
    {'ints': list(range(n))} for n in (0x7C, 0x7D, 0x7E, 0x7F, 0x80, 0x81)
] + [
    {'floats': [0.5] * n} for n in (30, 31, 32, 33)
] + [
    # Values and keys whose lengths are varint boundaries (1, 2 and 3 bytes).
    {'b': b'x' * n, 'k' * min(n, 300): n} for n in (0x7F, 0x80, 0x3FFF, 0x4000, 0x1FFFFF, 0x200000)
] + [
    {'big_ints': [0x7F, 0x80, 0x3FFF, 0x4000, -1, 2**63 - 1]},
])
def test_serialize_example_at_length_boundaries_equals_tensorflow(features):
    expected = make_example(features).SerializeToString(deterministic=True)
    assert serialize_example(features) == expected
