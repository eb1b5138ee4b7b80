"""The damage matrix: each kind of damage, injected into one shard among good ones, read by
each reader. `MATRIX` is the expected outcome of every cell, and docs/troubleshooting.md shows it
(`tests/test_docs.py` checks it; `python tests/test_damage_matrix.py` prints the table).

Shards are written by TensorFlow's own writer; the damage is byte edits computed from the
records' framing (offsets summed from the payload lengths); what each reader must read is
counted from the records written.
"""

import dataclasses
import io
import json
import logging
import os
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image as PILImage

from conftest import write_with_tf
from slimdata import (
    cli,
    dataset,
    dataset_batch_provider,
    dataset_data_provider,
    tfdata,
    tfexample_decoder,
)
from slimdata.queue_session import QueueSession
from slimdata.records import tfrecord

NUM_FILES, PER_FILE = 3, 8
VICTIM, DAMAGED = 1, 5  # shard 1 is damaged at its record 5
ALL_RECORDS = NUM_FILES * PER_FILE
HUGE_LENGTH = 2 ** 40  # more than any machine's memory: TensorFlow's reader allocates it first


# ----------------------------------------------------------------------------------------------
# The record set and the damage

def _payloads(file_index: int) -> List[bytes]:
    """The serialized Examples of one shard: label = file * 100 + index, payloads of varied
    length (so that offsets are not multiples of one record size)."""
    return [tf.train.Example(features=tf.train.Features(feature={
        'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[file_index * 100 + i])),
        'payload': tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[bytes([i]) * (40 + 7 * i)])),
    })).SerializeToString() for i in range(PER_FILE)]


def _offset(payloads: List[bytes], index: int) -> int:
    """Where record `index` starts: 8 + 4 bytes of header and 4 of data CRC per record."""
    return sum(12 + len(payload) + 4 for payload in payloads[:index])


def _cut(at: Callable[[List[bytes]], int]):
    return lambda data, payloads: data[:at(payloads)]


def _flip(at: Callable[[List[bytes]], int]):
    def edit(data, payloads):
        damaged = bytearray(data)
        damaged[at(payloads)] ^= 0x10
        return bytes(damaged)
    return edit


def _record(part_offset: int):
    """Offset `part_offset` bytes into the damaged record."""
    return lambda payloads: _offset(payloads, DAMAGED) + part_offset


def _data_crc(payloads):
    return _offset(payloads, DAMAGED) + 12 + len(payloads[DAMAGED])


def _zero_block(data, payloads):
    """256 zero bytes from inside record 5's data, over its CRC and record 6's header: a lost
    block of a disk."""
    start = _offset(payloads, DAMAGED) + 12 + 10
    return data[:start] + bytes(256) + data[start + 256:]


def _huge_length(data, payloads):
    length = struct.pack('<Q', HUGE_LENGTH)
    header = length + struct.pack('<I', tfrecord.masked_crc32c(length))
    start = _offset(payloads, DAMAGED)
    return data[:start] + header + data[start + 12:]


def _foreign_file(data, payloads):
    """A PNG image where the shard should be: a stray file in the data folder."""
    buffer = io.BytesIO()
    PILImage.fromarray(np.arange(48, dtype=np.uint8).reshape(4, 4, 3)).save(buffer, 'PNG')
    return buffer.getvalue()


def _compressed_cut(compression: str, first: Callable[[List[bytes]], int], last_byte: int):
    """Cuts a compressed file where its decompressed stream ends `first(payloads)` to
    `first + last_byte` bytes into the damaged record (found by zlib on the file's bytes)."""
    def edit(data, payloads):
        wbits = 16 + zlib.MAX_WBITS if compression == 'GZIP' else zlib.MAX_WBITS
        low = _offset(payloads, DAMAGED) + first(payloads)
        for cut in range(len(data)):
            available = len(zlib.decompressobj(wbits).decompress(data[:cut]))
            if low <= available <= low + last_byte:
                return data[:cut]
        raise AssertionError(f'no cut of the {compression} stream ends in bytes {low}..')
    return edit


def _not_an_example(payloads):
    payloads[DAMAGED] = b'\x89PNG\r\n\x1a\n' + bytes(range(200, 256)) * 2


@dataclasses.dataclass(frozen=True)
class Damage:
    """One kind of damage to shard VICTIM: `edit(file bytes, payloads) -> damaged bytes`, or
    `payloads` edits the records before they are written."""
    edit: Optional[Callable[[bytes, List[bytes]], bytes]] = None
    payloads: Optional[Callable[[List[bytes]], None]] = None
    compression: Optional[str] = None


DAMAGE: Dict[str, Damage] = {
    'cut in a length': Damage(_cut(_record(4))),
    'cut in a length CRC': Damage(_cut(_record(10))),
    'cut in data': Damage(_cut(_record(12 + 20))),
    'cut in a data CRC': Damage(_cut(lambda payloads: _data_crc(payloads) + 2)),
    'bit flip in a length': Damage(_flip(_record(0))),
    'bit flip in a length CRC': Damage(_flip(_record(9))),
    'bit flip in data': Damage(_flip(_record(12 + 20))),
    'bit flip in a data CRC': Damage(_flip(lambda payloads: _data_crc(payloads) + 1)),
    'zero-filled block': Damage(_zero_block),
    'huge length (2^40)': Damage(_huge_length),
    'foreign file (PNG)': Damage(_foreign_file),
    'record not an Example': Damage(payloads=_not_an_example),
    'GZIP cut in a header': Damage(_compressed_cut('GZIP', lambda p: 3, 6), compression='GZIP'),
    'GZIP cut in data': Damage(_compressed_cut('GZIP', lambda p: 12 + 20, 10), compression='GZIP'),
    'ZLIB cut in a header': Damage(_compressed_cut('ZLIB', lambda p: 3, 6), compression='ZLIB'),
}


@dataclasses.dataclass
class RecordSet:
    folder: Path
    victim: str
    payloads: List[List[bytes]]  # as written, per shard
    compression: Optional[str]

    def offset(self, record: int) -> int:
        return _offset(self.payloads[VICTIM], record)

    def labels_before(self, record: int) -> List[int]:
        """The labels of every record of the good shards and the victim's first `record`."""
        return sorted(f * 100 + i for f in range(NUM_FILES) for i in range(PER_FILE)
                      if f != VICTIM or i < record)


def _write_record_set(folder: Path, damage: Damage) -> RecordSet:
    payloads = [_payloads(f) for f in range(NUM_FILES)]
    if damage.payloads:
        damage.payloads(payloads[VICTIM])
    paths = [write_with_tf(folder / f'train-{f:05d}-of-{NUM_FILES:05d}.tfrecord', payloads[f],
                           damage.compression) for f in range(NUM_FILES)]
    if damage.edit:
        data = Path(paths[VICTIM]).read_bytes()
        Path(paths[VICTIM]).write_bytes(damage.edit(data, payloads[VICTIM]))
    return RecordSet(folder, paths[VICTIM], payloads, damage.compression)


# ----------------------------------------------------------------------------------------------
# Outcomes

@dataclasses.dataclass(frozen=True)
class Outcome:
    """What a reader does with a damaged shard.

    kind:
      'silent': reads `records` of the shard's 8 and ends normally.
      'crash': the process is killed by a signal.
      'tf_error': `error`, naming only a byte offset (the record's, or its payload's when
        `payload`), not the file.
      'unicode': UnicodeDecodeError (TensorFlow's message embeds the record's bytes).
      'reads': reads every record (the damage is not this reader's business).
      'fails': reports record `record` as `reason` (verify: FAIL; iter_records: TFRecordError
        after `record` records).
      'refused': the pipeline is refused when it is built: TFRecordError naming the file,
        record `record`, its offset and `reason`.
      'run_error': `error` while it runs, naming the file, record `record`'s offset (its
        payload's when `payload`) and `reason`.
      'skips': (skip_corrupt=True) reads `records` of the 24, and reports the victim's records
        from `record` on as skipped (`skipped` of them).
    """
    kind: str
    record: Optional[int] = None
    reason: str = ''
    error: str = ''
    payload: bool = False
    records: Optional[int] = None
    skipped: Optional[int] = None

    def text(self) -> str:
        """The cell of docs/troubleshooting.md's table."""
        at = f'record {self.record}'
        return {
            'silent': f'ends normally after {self.records} of 8 records',
            'crash': 'process killed (SIGSEGV)',
            'tf_error': f'{self.error}, names an offset, no file',
            'unicode': 'UnicodeDecodeError (not a TF error)',
            'reads': 'reads all 8',
            'fails': f'{at}: {self.reason}',
            'refused': f'refused at build: {at}, {self.reason}',
            'run_error': f'{self.error}: file, {at}, {self.reason}',
            'skips': f'{self.records} read, {self.skipped} skipped from {at}',
        }[self.kind]


def silent(records):
    return Outcome('silent', records=records)


def tf_error(error, payload=False):
    return Outcome('tf_error', error=error, payload=payload)


def fails(record, reason):
    return Outcome('fails', record, reason)


def refused(record, reason):
    return Outcome('refused', record, reason)


def run_error(error, record, reason, payload=False):
    return Outcome('run_error', record, reason, error, payload)


def skips(record, records_read=ALL_RECORDS - (PER_FILE - DAMAGED)):
    return Outcome('skips', record, records=records_read, skipped=ALL_RECORDS - records_read)


CRASH, UNICODE, READS = Outcome('crash'), Outcome('unicode'), Outcome('reads')
DATA_LOSS, INVALID = 'DataLossError', 'InvalidArgumentError'
READERS = ['TensorFlow alone', 'verify', 'iter_records', 'queue', 'batch', 'bridge',
           'skip_corrupt']
SKIP_READERS = ['queue', 'batch', 'bridge']


def _row(tensorflow, verify, build, run=None, skip=None):
    """A row: what verify and iter_records find (`verify`), and what the pipelines do: refused
    at build (`build`) or failing while they run (`run`)."""
    pipelines = build or run
    return dict(zip(READERS, [tensorflow, verify, verify, pipelines, pipelines, run or build,
                              skip or skips(DAMAGED)]))


def _verify_and_refuse(reason, record=DAMAGED):
    return fails(record, reason), refused(record, reason)


MATRIX: Dict[str, Dict[str, Outcome]] = {
    'cut in a length': _row(silent(5), *_verify_and_refuse('truncated header')),
    'cut in a length CRC': _row(silent(5), *_verify_and_refuse('truncated header')),
    'cut in data': _row(tf_error(DATA_LOSS), *_verify_and_refuse('truncated data')),
    'cut in a data CRC': _row(tf_error(DATA_LOSS), *_verify_and_refuse('truncated data CRC')),
    'bit flip in a length': _row(tf_error(DATA_LOSS),
                                 *_verify_and_refuse('length CRC mismatch')),
    'bit flip in a length CRC': _row(tf_error(DATA_LOSS),
                                     *_verify_and_refuse('length CRC mismatch')),
    'bit flip in data': _row(tf_error(DATA_LOSS, payload=True),
                             fails(DAMAGED, 'data CRC mismatch'), None,
                             run=run_error(DATA_LOSS, DAMAGED, 'data CRC mismatch',
                                           payload=True)),
    'bit flip in a data CRC': _row(tf_error(DATA_LOSS, payload=True),
                                   fails(DAMAGED, 'data CRC mismatch'), None,
                                   run=run_error(DATA_LOSS, DAMAGED, 'data CRC mismatch',
                                                 payload=True)),
    'zero-filled block': _row(tf_error(DATA_LOSS, payload=True),
                              fails(DAMAGED, 'data CRC mismatch'),
                              refused(DAMAGED + 1, 'length CRC mismatch')),
    'huge length (2^40)': _row(CRASH, *_verify_and_refuse(f'the header says {HUGE_LENGTH} bytes')),
    'foreign file (PNG)': _row(tf_error(DATA_LOSS), *_verify_and_refuse('not a TFRecord file', 0),
                               skip=skips(0, ALL_RECORDS - PER_FILE)),
    'record not an Example': _row(UNICODE, READS, None,
                                  run=run_error(INVALID, DAMAGED, 'not an Example'),
                                  skip=run_error(INVALID, DAMAGED, 'not an Example')),
    'GZIP cut in a header': _row(silent(5), *_verify_and_refuse('GZIP stream ends early')),
    'GZIP cut in data': _row(tf_error(DATA_LOSS), *_verify_and_refuse('GZIP stream ends early')),
    'ZLIB cut in a header': _row(silent(5), *_verify_and_refuse('ZLIB stream ends early')),
}
# The bridge names data CRC damage itself (it counts what each file gave), as an
# InvalidArgumentError; the queue pipelines re-raise TensorFlow's DataLossError, to which
# QueueSession adds the file.
for _name in ('bit flip in data', 'bit flip in a data CRC'):
    MATRIX[_name]['bridge'] = run_error(INVALID, DAMAGED, 'data CRC mismatch')

# The words of each reason, as the readers' messages say them.
REASON_WORDS = {'not an Example': 'Invalid protocol message input',
                'GZIP stream ends early': 'the GZIP stream ends early',
                'ZLIB stream ends early': 'the ZLIB stream ends early'}


def render_matrix() -> str:
    """docs/troubleshooting.md's table (tests/test_docs.py checks the page shows it)."""
    lines = ['| damage | ' + ' | '.join(f'`{r}`' if r != 'TensorFlow alone' else r
                                         for r in READERS) + ' |',
             '|' + '---|' * (len(READERS) + 1)]
    for name, row in MATRIX.items():
        lines.append(f'| {name} | ' + ' | '.join(row[r].text() for r in READERS) + ' |')
    return '\n'.join(lines)


# ----------------------------------------------------------------------------------------------
# The readers

def _decoder():
    return tfexample_decoder.TFExampleDecoder(
        {'label': tf.io.FixedLenFeature([], tf.int64),
         'payload': tf.io.FixedLenFeature([], tf.string)},
        {'label': tfexample_decoder.Tensor('label'),
         'payload': tfexample_decoder.Tensor('payload')})


def _dataset(records: RecordSet):
    return dataset.Dataset(str(records.folder / 'train-*.tfrecord'), tf.compat.v1.TFRecordReader,
                           _decoder(), ALL_RECORDS, {})


def _reader_kwargs(records: RecordSet):
    if records.compression is None:
        return None
    return {'options': tf.io.TFRecordOptions(compression_type=records.compression)}


def _labels_from_queue(records: RecordSet, batched: bool, skip_corrupt: bool) -> List[int]:
    with tf.Graph().as_default():
        kwargs = dict(shuffle=False, num_epochs=1, reader_kwargs=_reader_kwargs(records),
                      skip_corrupt=skip_corrupt)
        if batched:
            provider = dataset_batch_provider.DatasetBatchProvider(
                _dataset(records), batch_size=4, allow_smaller_final_batch=True, **kwargs)
        else:
            provider = dataset_data_provider.DatasetDataProvider(_dataset(records), **kwargs)
        [label] = provider.get(['label'])
        labels = []
        with QueueSession() as session:
            while True:
                labels.extend(np.atleast_1d(session.run(label)).tolist())
        assert session.epoch_ended
    return labels


def _labels_from_bridge(records: RecordSet, skip_corrupt: bool) -> List[int]:
    ds = tfdata.to_tf_data(_dataset(records), items=['label'], shuffle=False, num_epochs=1,
                           reader_kwargs=_reader_kwargs(records), skip_corrupt=skip_corrupt)
    return [int(example['label']) for example in ds.as_numpy_iterator()]


def _read_labels(reader: str, records: RecordSet, skip_corrupt: bool) -> List[int]:
    if reader == 'bridge':
        return _labels_from_bridge(records, skip_corrupt)
    return _labels_from_queue(records, reader == 'batch', skip_corrupt)


def _check_pipeline(reader: str, records: RecordSet, expected: Outcome, skip_corrupt: bool,
                    caplog):
    reason = REASON_WORDS.get(expected.reason, expected.reason)
    if expected.kind == 'refused':
        with pytest.raises(tfrecord.TFRecordError) as raised:
            _read_labels(reader, records, skip_corrupt)
        error = raised.value
        assert (error.path, error.record_index, error.offset) == (
            records.victim, expected.record, records.offset(expected.record))
        assert reason in error.reason
    elif expected.kind == 'run_error':
        with pytest.raises(tf.errors.OpError) as raised:
            _read_labels(reader, records, skip_corrupt)
        assert type(raised.value).__name__ == expected.error
        offset = records.offset(expected.record) + (12 if expected.payload else 0)
        message = raised.value.message
        assert records.victim in message and str(offset) in message and reason in message, (
            message)
    else:
        assert expected.kind == 'skips'
        with caplog.at_level(logging.WARNING, logger='slimdata'):
            labels = _read_labels(reader, records, skip_corrupt)
        assert sorted(labels) == records.labels_before(expected.record)
        assert len(labels) == expected.records
        [report] = [r.getMessage() for r in caplog.records if 'epoch 1 read' in r.getMessage()]
        assert (f'epoch 1 read {expected.records} records and skipped {expected.skipped} '
                'records') in report
        assert f'{records.victim}: ' in report and f'from record {expected.record} ' in report


def _check_verify(records: RecordSet, expected: Outcome, capsys):
    status = cli.main(['verify', records.victim])
    output = capsys.readouterr().out
    if expected.kind == 'reads':
        assert status == 0 and f'{PER_FILE} records' in output
        return
    [line] = [line for line in output.splitlines() if line.startswith('FAIL')]
    assert status == 1
    assert line.startswith(f'FAIL  {records.victim}: record {expected.record} at byte offset '
                           f'{records.offset(expected.record)}')
    assert REASON_WORDS.get(expected.reason, expected.reason) in line


def _check_iter_records(records: RecordSet, expected: Outcome):
    read = []
    if expected.kind == 'reads':
        read = list(tfrecord.iter_records(records.victim))
        assert read == records.payloads[VICTIM]
        return
    with pytest.raises(tfrecord.TFRecordError) as raised:
        read.extend(tfrecord.iter_records(records.victim))
    assert read == records.payloads[VICTIM][:expected.record]
    assert (raised.value.record_index, raised.value.offset) == (
        expected.record, records.offset(expected.record))
    assert REASON_WORDS.get(expected.reason, expected.reason) in raised.value.reason


CELLS = [(damage, reader) for damage in DAMAGE for reader in READERS[1:]]
# The pipelines' cells of damage that kills TensorFlow's reader run in a subprocess (were
# slimdata to let that reader read it, the test process would die): this variable is set there.
_IN_SUBPROCESS = 'SLIMDATA_DAMAGE_MATRIX_SUBPROCESS'
CRASH_CELLS = [(damage, reader) for damage, reader in CELLS
               if MATRIX[damage]['TensorFlow alone'].kind == 'crash'
               and reader not in ('verify', 'iter_records')]


@pytest.mark.parametrize('damage,reader', [
    pytest.param(*cell, marks=[pytest.mark.slow] if cell[1] == 'skip_corrupt' else [])
    for cell in CELLS if _IN_SUBPROCESS in os.environ or cell not in CRASH_CELLS])
def test_damage_matrix(tmp_path, damage, reader, capsys, caplog):
    records = _write_record_set(tmp_path, DAMAGE[damage])
    expected = MATRIX[damage][reader]
    if reader == 'verify':
        _check_verify(records, expected, capsys)
    elif reader == 'iter_records':
        _check_iter_records(records, expected)
    elif reader == 'skip_corrupt':
        for pipeline in SKIP_READERS:
            caplog.clear()
            _check_pipeline(pipeline, records, expected, True, caplog)
    else:
        _check_pipeline(reader, records, expected, False, caplog)


# What TensorFlow's own reader does, as a user without slimdata reads the damaged shard
# (tf.data.TFRecordDataset, then tf.io.parse_single_example). In subprocesses: one of them
# kills the process.
_TENSORFLOW_ALONE = textwrap.dedent('''
    import json, os, sys
    os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'
    import tensorflow as tf
    features = {'label': tf.io.FixedLenFeature([], tf.int64)}
    for path, compression in json.loads(sys.argv[1]):
        read = 0
        try:
            for record in tf.data.TFRecordDataset(path, compression_type=compression):
                tf.io.parse_single_example(record, features)
                read += 1
            outcome = {'kind': 'silent' if read < 8 else 'reads', 'records': read}
        except tf.errors.OpError as error:
            outcome = {'kind': 'tf_error', 'error': type(error).__name__,
                       'message': error.message}
        except UnicodeDecodeError:
            outcome = {'kind': 'unicode'}
        print(json.dumps(outcome), flush=True)
''')


@pytest.mark.slow
def test_tensorflow_alone_column(tmp_path):
    cases = {}
    for index, (name, damage) in enumerate(DAMAGE.items()):
        folder = tmp_path / str(index)
        folder.mkdir()
        cases[name] = _write_record_set(folder, damage)
    survivable = [name for name in DAMAGE if MATRIX[name]['TensorFlow alone'].kind != 'crash']
    done = subprocess.run(
        [sys.executable, '-c', _TENSORFLOW_ALONE,
         json.dumps([(cases[name].victim, cases[name].compression or '')
                     for name in survivable])],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    for name, line in zip(survivable, done.stdout.splitlines()):
        expected, seen = MATRIX[name]['TensorFlow alone'], json.loads(line)
        assert seen['kind'] == expected.kind, (name, seen)
        if expected.kind == 'silent':
            assert seen['records'] == expected.records, name
        if expected.kind == 'tf_error':
            offset = cases[name].offset(0 if name.startswith('foreign') else DAMAGED)
            offset += 12 if expected.payload else 0
            assert seen['error'] == expected.error, (name, seen)
            assert f'record at {offset}' in seen['message'], (name, seen)
            assert cases[name].victim not in seen['message'], (name, seen)
    for name in DAMAGE:
        if MATRIX[name]['TensorFlow alone'].kind == 'crash':
            done = subprocess.run(
                [sys.executable, '-c', _TENSORFLOW_ALONE,
                 json.dumps([(cases[name].victim, cases[name].compression or '')])],
                capture_output=True, text=True, timeout=300)
            assert done.returncode < 0, (name, done.returncode, done.stdout, done.stderr[-2000:])


@pytest.mark.slow
def test_damage_matrix_cells_that_kill_tensorflow_in_a_subprocess():
    cells = [f'{__file__}::test_damage_matrix[{damage}-{reader}]'
             for damage, reader in CRASH_CELLS]
    done = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider']
                          + cells, cwd=Path(__file__).parent,
                          env={**os.environ, _IN_SUBPROCESS: '1'}, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0 and f'{len(cells)} passed' in done.stdout, (
        done.returncode, done.stdout[-4000:], done.stderr[-2000:])


if __name__ == '__main__':
    print(render_matrix())
