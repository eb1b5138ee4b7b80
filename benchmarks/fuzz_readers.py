"""Fuzzing the framing reader and TFExampleDecoder with hypothesis: only documented errors, no
crash, no hang.

Two targets, each run as batches of cases in worker subprocesses with a timeout, so that a crash
or a hang is observed (and its case kept), not suffered:

  framing  TFRecord files: valid ones (random records, uncompressed, GZIP or ZLIB) damaged by
           random edits (flipped, cut, inserted, zeroed or random bytes, and record headers
           declaring a random length with a valid CRC), or random bytes. slimdata's readers
           (`check_file`, `iter_records`, `count_records`, `verify_file`) may raise only
           TFRecordError, and agree with each other. A file that `check_file` passes is then
           read by TensorFlow's reader (`tf.data.TFRecordDataset`), which must give the same
           records, or stop with DataLossError exactly where `verify_file` finds a bad data
           CRC. (Files it refuses are never given to TensorFlow's reader: some would kill it.)
  decoder  random bytes, or serialized Examples with random features (damaged by random edits
           or not; some with the key of slimdata's structure probe), decoded by
           TFExampleDecoder with random `keys_to_features` (FixedLen with random shapes and
           defaults, VarLen, any dtype) and `Tensor` handlers: by `decode`, with and without an
           example name, and as the pipelines do (`checked_records` on a batch, then
           `decode_checked`). All three must agree, and may fail only with
           tf.errors.InvalidArgumentError (an invalid spec with ValueError/TypeError when it is
           built); a success must equal `tf.io.parse_single_example`'s values.

    .venv/bin/python benchmarks/fuzz_readers.py [--cases 10000] [--batch 1000] [--targets ...]

Prints per target the cases run, the outcomes, and any crash, hang or property failure (with
the case that caused it); exits non-zero if there was one.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

TARGETS = ('framing', 'decoder')
HERE = os.path.abspath(__file__)


# ----------------------------------------------------------------------------------------------
# The driver: batches of cases in subprocesses

def run_batch(target: str, cases: int, seed: int, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        last_case = os.path.join(folder, 'last_case')
        started = time.perf_counter()
        try:
            done = subprocess.run(
                [sys.executable, HERE, '--worker', target, '--cases', str(cases),
                 '--seed', str(seed), '--last-case', last_case],
                capture_output=True, text=True, timeout=timeout,
                env={**os.environ, 'TF_CPP_MIN_LOG_LEVEL': '3'})
        except subprocess.TimeoutExpired:
            return {'hang': _read(last_case), 'seconds': timeout}
        result = {'seconds': time.perf_counter() - started}
        if done.returncode < 0:
            result['crash'] = {'signal': -done.returncode, 'case': _read(last_case)}
        elif done.returncode != 0:
            result['failure'] = done.stdout[-4000:] + done.stderr[-4000:]
        else:
            result.update(json.loads(done.stdout.strip().splitlines()[-1]))
        return result


def _read(path: str) -> str:
    return open(path).read() if os.path.exists(path) else ''


def drive(args) -> int:
    problems = 0
    print('| target | cases | outcomes | crashes | hangs | failures | seconds |')
    print('|---|---|---|---|---|---|---|')
    for target in args.targets:
        totals, outcomes, seconds = collections.Counter(), collections.Counter(), 0.0
        for batch, first in enumerate(range(0, args.cases, args.batch)):
            result = run_batch(target, min(args.batch, args.cases - first),
                               args.seed * 1000 + batch, args.timeout)
            seconds += result['seconds']
            for kind in ('crash', 'hang', 'failure'):
                if kind in result:
                    totals[kind] += 1
                    print(f'{target} batch {batch}: {kind}: {result[kind]}', file=sys.stderr)
            totals['cases'] += result.get('cases', 0)
            outcomes.update(result.get('outcomes', {}))
        problems += totals['crash'] + totals['hang'] + totals['failure']
        shown = ', '.join(f'{kind} {count}' for kind, count in sorted(outcomes.items()))
        print(f'| {target} | {totals["cases"]:,} | {shown} | {totals["crash"]} | '
              f'{totals["hang"]} | {totals["failure"]} | {seconds:.0f} |', flush=True)
    return 1 if problems else 0


# ----------------------------------------------------------------------------------------------
# The workers

def work(args) -> None:
    # Imported here: the driver needs neither hypothesis nor TensorFlow.
    from hypothesis import HealthCheck, given, seed, settings
    property_of = {'framing': framing_property, 'decoder': decoder_property}[args.worker]
    strategy = {'framing': framing_cases, 'decoder': decoder_cases}[args.worker]()
    outcomes = collections.Counter()
    ran = [0]

    @seed(args.seed)
    @settings(max_examples=args.cases, database=None, deadline=None, derandomize=False,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(strategy)
    def run(case):
        with open(args.last_case, 'w') as file:  # kept if the case kills the process
            file.write(repr(case)[:20000])
        outcomes[property_of(case)] += 1
        ran[0] += 1

    run()
    print(json.dumps({'cases': ran[0], 'outcomes': outcomes}))


# --- framing ----------------------------------------------------------------------------------

def framing_cases():
    from hypothesis import strategies as st
    edit = st.tuples(st.sampled_from(['flip', 'cut', 'insert', 'zero', 'random', 'length',
                                      'payload']),
                     st.floats(0, 1), st.binary(min_size=1, max_size=24),
                     st.integers(0, 2 ** 64 - 1))
    valid = st.tuples(st.just('records'),
                      st.lists(st.binary(max_size=200), max_size=10),
                      st.sampled_from([None, 'GZIP', 'ZLIB']),
                      st.lists(edit, max_size=3))
    raw = st.tuples(st.just('bytes'), st.binary(max_size=400), st.just(None), st.just([]))
    return st.one_of(valid, valid, raw)


def _apply(data: bytes, edit, records) -> bytes:
    """One random edit; 'length' rewrites a record header with a random length and its CRC,
    'payload' flips a bit in a record's data."""
    import struct

    from slimdata.records import tfrecord
    kind, where, payload, number = edit
    at = int(where * len(data))
    if kind == 'flip' and data:
        at = min(at, len(data) - 1)
        return data[:at] + bytes([data[at] ^ (1 << number % 8)]) + data[at + 1:]
    if kind == 'cut':
        return data[:at]
    if kind == 'insert':
        return data[:at] + payload + data[at:]
    if kind == 'zero':
        return data[:at] + bytes(len(payload)) + data[at + len(payload):]
    if kind == 'random':
        return data[:at] + payload + data[at + len(payload):]
    if kind == 'payload' and any(records):
        index = [i for i, record in enumerate(records) if record][number % sum(map(bool, records))]
        start = sum(16 + len(record) for record in records[:index]) + 12
        at = start + int(where * (len(records[index]) - 1))
        return data[:at] + bytes([data[at] ^ (1 << number % 8)]) + data[at + 1:]
    if kind == 'length' and records:
        index = number % len(records)
        start = sum(16 + len(record) for record in records[:index])
        length = struct.pack('<Q', number)
        header = length + struct.pack('<I', tfrecord.masked_crc32c(length))
        return data[:start] + header + data[start + 12:]
    return data


def framing_property(case) -> str:
    import io

    from slimdata.records import tfrecord
    kind, records, compression, edits = case
    if kind == 'bytes':
        data = records
    else:
        buffer = io.BytesIO()
        with tfrecord.TFRecordWriter(buffer, None) as writer:
            for record in records:
                writer.write(record)
        data = buffer.getvalue()
        for edit in edits:  # edits of the framing, before compression
            if edit[0] in ('length', 'payload'):
                data = _apply(data, edit, records)
        if compression:
            import zlib
            compressor = zlib.compressobj(6, zlib.DEFLATED,
                                          (16 if compression == 'GZIP' else 0) + zlib.MAX_WBITS)
            data = compressor.compress(data) + compressor.flush()
        for edit in edits:
            if edit[0] not in ('length', 'payload'):
                data = _apply(data, edit, records)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, 'case.tfrecord')
        with open(path, 'wb') as file:
            file.write(data)
        return _check_readers(path, compression if kind == 'records' else None)


def _check_readers(path: str, compression) -> str:
    from slimdata.records import tfrecord
    check = tfrecord.check_file(path, compression)
    verified = tfrecord.verify_file(path, compression)
    read, error = [], None
    try:
        for record in tfrecord.iter_records(path, verify=True, compression=compression):
            read.append(record)
    except tfrecord.TFRecordError as raised:
        error = raised
    assert len(read) == verified.num_records and (error is None) == verified.ok
    unverified = 0
    try:
        unverified = sum(1 for _ in tfrecord.iter_records(path, False, compression))
        assert check.ok
    except tfrecord.TFRecordError as raised:
        assert (raised.record_index, raised.offset) == (check.error.record_index,
                                                       check.error.offset)
    assert unverified == check.num_records or not check.ok
    if check.ok:
        assert tfrecord.count_records(path, compression) == check.num_records
        assert verified.num_records <= check.num_records
        return 'framing ok: ' + _tensorflow_agrees(path, check, verified, read)
    assert verified.num_records <= check.num_records
    return 'framing refused (TFRecordError)'


def _tensorflow_agrees(path, check, verified, read) -> str:
    import tensorflow as tf
    got = []
    try:
        for record in tf.data.TFRecordDataset(path, compression_type=check.compression or ''):
            got.append(record.numpy())
    except tf.errors.DataLossError:
        assert not verified.ok and 'data CRC' in verified.error.reason, verified.error
        assert got == read, (len(got), len(read))
        return 'TensorFlow stops at the bad data CRC (DataLossError)'
    assert verified.ok and got == read, (len(got), verified)
    return 'TensorFlow reads the same records'


# --- decoder ----------------------------------------------------------------------------------

KEYS = ['a', 'b', 'image/encoded', 'x/y']
# Records may hold the key the decoder's structure check asks for (no real record does).
RECORD_KEYS = KEYS + ['\x00slimdata/structure-probe']


def decoder_cases():
    from hypothesis import strategies as st
    value_lists = st.one_of(
        st.tuples(st.just('int64'), st.lists(st.integers(-2 ** 63, 2 ** 63 - 1), max_size=6)),
        st.tuples(st.just('float'), st.lists(st.floats(width=32), max_size=6)),
        st.tuples(st.just('bytes'), st.lists(st.binary(max_size=8), max_size=6)))
    features = st.dictionaries(st.sampled_from(RECORD_KEYS), value_lists, max_size=4)
    edit = st.tuples(st.sampled_from(['flip', 'cut', 'insert', 'zero', 'random']),
                     st.floats(0, 1), st.binary(min_size=1, max_size=8), st.integers(0, 255))
    serialized = st.one_of(st.tuples(st.just('example'), features, st.lists(edit, max_size=2)),
                           st.tuples(st.just('bytes'), st.binary(max_size=120), st.just([])))
    spec = st.tuples(st.sampled_from(['fixed', 'fixed', 'var']),
                     st.sampled_from(['int64', 'float', 'bytes']),
                     st.sampled_from([[], [1], [2], [2, 3], [0]]),
                     st.booleans())  # with a default value
    specs = st.dictionaries(st.sampled_from(KEYS), spec, min_size=1, max_size=3)
    return st.one_of(st.tuples(serialized, specs), matching_cases(features, edit))


def matching_cases(features, edit):
    """Examples with specs of their own features (and random defaults for absent keys), so
    that many decode: then they must equal what parse_single_example gives."""
    from hypothesis import strategies as st

    @st.composite
    def cases(draw):
        content = draw(features)
        specs = {}
        for key, (dtype_name, values) in content.items():
            if draw(st.booleans()):
                specs[key] = ('var', dtype_name, [], False)
            else:
                specs[key] = ('fixed', dtype_name, [len(values)] if values else [0], False)
        absent = [key for key in KEYS if key not in content]
        if absent and draw(st.booleans()):
            specs[draw(st.sampled_from(absent))] = ('fixed', draw(st.sampled_from(
                ['int64', 'float', 'bytes'])), draw(st.sampled_from([[], [2]])), True)
        if not specs:
            specs[KEYS[0]] = ('var', 'int64', [], False)
        return ('example', content, draw(st.lists(edit, max_size=1))), specs

    return cases()


def _example_bytes(features) -> bytes:
    import tensorflow as tf
    feature = {}
    for key, (kind, values) in features.items():
        if kind == 'int64':
            feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        elif kind == 'float':
            feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        else:
            feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _feature_spec(kind, dtype_name, shape, with_default):
    import numpy as np
    import tensorflow as tf
    dtype = {'int64': tf.int64, 'float': tf.float32, 'bytes': tf.string}[dtype_name]
    if kind == 'var':
        return tf.io.VarLenFeature(dtype)
    default = None
    if with_default:
        fill = {'int64': 7, 'float': 0.5, 'bytes': b'd'}[dtype_name]
        default = np.full(shape, fill, dtype=object if dtype_name == 'bytes' else None).tolist()
    return tf.io.FixedLenFeature(shape, dtype, default_value=default)


def decoder_property(case) -> str:
    import numpy as np
    import tensorflow as tf

    from slimdata import tfexample_decoder
    (kind, content, edits), specs = case
    data = _example_bytes(content) if kind == 'example' else content
    for edit in edits:
        data = _apply(data, edit, [])
    try:
        keys_to_features = {key: _feature_spec(*spec) for key, spec in specs.items()}
        decoder = tfexample_decoder.TFExampleDecoder(
            keys_to_features, {key: tfexample_decoder.Tensor(key) for key in specs})
    except (ValueError, TypeError):
        return 'spec refused when built (ValueError/TypeError)'
    outcomes, values = {}, None
    name = tf.constant('case.tfrecord:16')
    ways = {
        'decode': lambda: decoder.decode(tf.constant(data), list(specs)),
        'decode, named': lambda: decoder.decode(tf.constant(data), list(specs), example_name=name),
        'checked batch': lambda: decoder.decode_checked(tfexample_decoder.checked_records(
            decoder, tf.constant([data]), tf.stack([name]))[0], list(specs)),
    }
    for way, decode in ways.items():
        try:
            decoded = decode()
            values = decoded if way == 'decode' else values
            outcomes[way] = 'decoded'
        except tf.errors.InvalidArgumentError:
            outcomes[way] = 'InvalidArgumentError'
        except (ValueError, TypeError):
            outcomes[way] = 'spec refused when built (ValueError/TypeError)'
    assert len(set(outcomes.values())) == 1, outcomes  # names change messages, not outcomes
    outcome = outcomes['decode']
    if outcome == 'decoded':
        expected = tf.io.parse_single_example(data, keys_to_features)
        for key, value in zip(specs, values):
            np.testing.assert_array_equal(value, tf.sparse.to_dense(expected[key])
                                          if isinstance(expected[key], tf.SparseTensor)
                                          else expected[key])
    return outcome


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--cases', type=int, default=10_000, help='cases per target')
    parser.add_argument('--batch', type=int, default=1000, help='cases per subprocess')
    parser.add_argument('--timeout', type=float, default=900, help='seconds per batch')
    parser.add_argument('--seed', type=int, default=13)
    parser.add_argument('--targets', nargs='+', default=list(TARGETS), choices=TARGETS)
    parser.add_argument('--worker', choices=TARGETS, help=argparse.SUPPRESS)
    parser.add_argument('--last-case', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        try:
            work(args)
        except Exception:  # a property failed: hypothesis has shrunk it to the case shown
            traceback.print_exc()
            return 1
        return 0
    return drive(args)


if __name__ == '__main__':
    sys.exit(main())
