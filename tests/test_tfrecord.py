"""Tests of slimdata.records.tfrecord against TensorFlow's own TFRecord writer and reader."""

import os
import pickle
import random
import struct
import subprocess
import sys
import textwrap
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import write_with_tf
from slimdata._tf import tf
from slimdata.records import tfrecord

COMPRESSIONS = [None, 'GZIP', 'ZLIB']


# ----------------------------------------------------------------------------------------------
# An independent CRC-32C and framing, bit by bit (slow, for small test data only)

def reference_crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def reference_mask(crc: int) -> int:
    rotated = ((crc >> 15) | (crc << 17)) & 0xFFFFFFFF
    return (rotated + 0xA282EAD8) % 2**32


def reference_frame(data: bytes) -> bytes:
    length = struct.pack('<Q', len(data))
    return (length + struct.pack('<I', reference_mask(reference_crc32c(length))) + data
            + struct.pack('<I', reference_mask(reference_crc32c(data))))


def read_with_tf(path, compression=None):
    dataset = tf.data.TFRecordDataset(str(path), compression_type=compression or '')
    return [record.numpy() for record in dataset]


def write_with_slimdata(path, records, compression=None):
    with tfrecord.TFRecordWriter(path, compression) as writer:
        for record in records:
            writer.write(record)
    return str(path)


# ----------------------------------------------------------------------------------------------
# CRC and framing

def test_reference_crc32c_has_the_published_check_value():
    assert reference_crc32c(b'123456789') == 0xE3069283


def test_masked_crc32c_of_the_check_string():
    # CRC-32C('123456789') = 0xE3069283. Rotated right by 15 bits: the low 15 bits 0x1283
    # move to the top (0x1283 << 17 = 0x25060000) and the rest down (0xE3069283 >> 15 =
    # 0x1C60D): 0x2507C60D. Plus 0xA282EAD8 (mod 2**32): 0xC78AB0E5.
    assert tfrecord.masked_crc32c(b'123456789') == 0xC78AB0E5
    assert tfrecord.masked_crc32c(memoryview(b'x123456789')[1:]) == 0xC78AB0E5


@pytest.mark.parametrize('size', [0, 1, 9, 1000])
def test_masked_crc32c_matches_the_reference(size):
    data = random.Random(size).randbytes(size)
    assert tfrecord.masked_crc32c(data) == reference_mask(reference_crc32c(data))


def test_tensorflow_writes_the_reference_framing(tmp_path):
    records = [b'', b'123456789', bytes(range(256))]
    path = write_with_tf(tmp_path / 'tf.tfrecord', records)
    with open(path, 'rb') as f:
        assert f.read() == b''.join(reference_frame(r) for r in records)


def test_uncompressed_writer_output_is_byte_identical_to_tensorflows(tmp_path):
    records = [b'', b'a', random.Random(0).randbytes(70000)]
    ours = write_with_slimdata(tmp_path / 'ours.tfrecord', records)
    theirs = write_with_tf(tmp_path / 'tf.tfrecord', records)
    with open(ours, 'rb') as a, open(theirs, 'rb') as b:
        assert a.read() == b.read()


@pytest.mark.parametrize('as_path', [str, os.fsencode], ids=['str', 'bytes'])
def test_writer_takes_the_path_kinds_of_os_open(tmp_path, as_path):
    records = [b'a', b'bc']
    write_with_slimdata(as_path(str(tmp_path / 'ours.tfrecord')), records)
    assert read_with_tf(tmp_path / 'ours.tfrecord') == records


# ----------------------------------------------------------------------------------------------
# Round trips with TensorFlow, both ways

def payload(size_and_seed):
    size, seed = size_and_seed
    # Half the payloads compress well (repeated text), half not at all (random bytes).
    if seed % 2:
        return random.Random(seed).randbytes(size)
    return (b'slimdata %d ' % seed * (size // 10 + 1))[:size]


payload_lists = st.lists(
    st.tuples(st.one_of(st.integers(0, 300), st.integers(0, 100_000),
                        st.integers(0, 3_000_000)),
              st.integers(0, 2**16)).map(payload),
    max_size=8)


@pytest.mark.parametrize('compression', COMPRESSIONS)
@settings(deadline=None, max_examples=20,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(records=payload_lists)
def test_round_trips_with_tensorflow(tmp_path, compression, records):
    ours = write_with_slimdata(tmp_path / 'ours.tfrecord', records, compression)
    assert read_with_tf(ours, compression) == records
    theirs = write_with_tf(tmp_path / 'tf.tfrecord', records, compression)
    assert list(tfrecord.iter_records(theirs)) == records  # compression detected
    assert list(tfrecord.iter_records(theirs, compression=compression)) == records
    assert tfrecord.count_records(theirs) == len(records)
    result = tfrecord.verify_file(theirs)
    assert (result.ok, result.num_records, result.num_bytes) == (
        True, len(records), os.path.getsize(theirs))


@pytest.mark.parametrize('compression', COMPRESSIONS)
def test_round_trip_with_tensorflow_small(tmp_path, compression):
    records = [b'', b'x', b'hello' * 1000, random.Random(1).randbytes(3 * 1024 * 1024 + 17)]
    ours = write_with_slimdata(tmp_path / 'ours.tfrecord', records, compression)
    assert read_with_tf(ours, compression) == records
    theirs = write_with_tf(tmp_path / 'tf.tfrecord', records, compression)
    assert list(tfrecord.iter_records(theirs)) == records
    assert tfrecord.detect_compression(theirs) == compression


@pytest.mark.parametrize('compression', COMPRESSIONS)
@pytest.mark.parametrize('chunk_size', [1, 13, 4096])
def test_reading_through_a_tiny_buffer(tmp_path, monkeypatch, compression, chunk_size):
    # Records straddle buffer ends and outgrow the buffer at every step.
    monkeypatch.setattr(tfrecord, '_CHUNK_SIZE', chunk_size)
    records = [b'', b'ab', random.Random(2).randbytes(10_000), b'c' * 5000, b'', b'z']
    path = write_with_tf(tmp_path / 'r.tfrecord', records, compression)
    assert list(tfrecord.iter_records(path)) == records
    chunks = []  # the file's bytes, as on_read sees them (a view valid during the call)
    result = tfrecord.verify_file(path, on_read=lambda chunk: chunks.append(bytes(chunk)))
    assert (result.ok, result.num_records) == (True, len(records))
    assert b''.join(chunks) == open(path, 'rb').read()


@pytest.mark.parametrize('compression', COMPRESSIONS)
def test_count_matches_tensorflow(tmp_path, compression):
    records = [b'r%d' % i * i for i in range(300)]
    path = write_with_tf(tmp_path / 'tf.tfrecord', records, compression)
    expected = int(tf.data.TFRecordDataset(path, compression_type=compression or '')
                   .reduce(0, lambda count, _: count + 1))
    assert tfrecord.count_records(path) == expected == 300


def test_concatenated_gzip_members_are_read_like_tensorflow(tmp_path):
    first = write_with_tf(tmp_path / 'a.gz', [b'a', b'b'], 'GZIP')
    second = write_with_tf(tmp_path / 'b.gz', [b'c'], 'GZIP')
    joined = tmp_path / 'joined.tfrecord.gz'
    joined.write_bytes(open(first, 'rb').read() + open(second, 'rb').read())
    assert list(tfrecord.iter_records(joined)) == read_with_tf(joined, 'GZIP') == [b'a', b'b',
                                                                                  b'c']


def test_bytes_after_a_zlib_stream_are_reported(tmp_path):
    single = write_with_tf(tmp_path / 'a.z', [b'a', b'b'], 'ZLIB')
    doubled = tmp_path / 'doubled.z'
    doubled.write_bytes(open(single, 'rb').read() * 2)
    with pytest.raises(tfrecord.TFRecordError, match='after the end of the ZLIB stream') as info:
        list(tfrecord.iter_records(doubled))
    assert info.value.record_index == 2


@pytest.mark.parametrize('length', [0x8B1F, 0x9C78])
def test_uncompressed_files_that_start_like_gzip_or_zlib_are_not_mistaken(tmp_path, length):
    # A first record of 0x8b1f bytes makes the file start with the gzip magic 1f 8b; one of
    # 0x9c78 bytes with 78 9c, the usual zlib header.
    records = [b'\0' * length, b'next']
    path = write_with_tf(tmp_path / 'plain.tfrecord', records)
    with open(path, 'rb') as f:
        assert f.read(2) in (b'\x1f\x8b', b'\x78\x9c')
    assert tfrecord.detect_compression(path) is None
    assert list(tfrecord.iter_records(path)) == records


@pytest.mark.parametrize('compression', COMPRESSIONS + ['auto'])
def test_empty_file_has_zero_records(tmp_path, compression):
    path = tmp_path / 'empty.tfrecord'
    path.write_bytes(b'')
    assert read_with_tf(path, None if compression == 'auto' else compression) == []
    assert list(tfrecord.iter_records(path, compression=compression)) == []
    assert tfrecord.count_records(path, compression) == 0
    assert tfrecord.verify_file(path, compression) == tfrecord.VerifyResult(
        str(path), 0, 0, True, None)


@pytest.mark.parametrize('compression', ['GZIP', 'ZLIB'])
def test_compressed_files_with_no_records(tmp_path, compression):
    path = write_with_tf(tmp_path / 'none.tfrecord', [], compression)
    assert os.path.getsize(path) > 0
    assert list(tfrecord.iter_records(path)) == []
    assert tfrecord.count_records(path) == 0


def test_verify_false_skips_only_the_data_crc(tmp_path):
    path = write_with_tf(tmp_path / 'r.tfrecord', [b'abcdef'])
    raw = bytearray(open(path, 'rb').read())
    raw[12] ^= 0x01  # the first data byte
    open(path, 'wb').write(raw)
    assert list(tfrecord.iter_records(path, verify=False)) == [b'`bcdef']
    with pytest.raises(tfrecord.TFRecordError, match='data CRC mismatch'):
        list(tfrecord.iter_records(path))


# ----------------------------------------------------------------------------------------------
# Bad input: every problem names the file, the record and its byte offset

RECORDS = [b'first', random.Random(7).randbytes(100_000), b'third']
SECOND = 16 + len(RECORDS[0])  # byte offset of record 1
SECOND_DATA = SECOND + 12
SECOND_FOOTER = SECOND_DATA + len(RECORDS[1])

# name -> (how to damage the file bytes, what the error says, whether counting notices)
DAMAGE = {
    'cut in header': (lambda raw: raw[:SECOND + 5], 'truncated header', True),
    'cut in data': (lambda raw: raw[:SECOND_DATA + 1000], 'truncated data:', True),
    'cut in data CRC': (lambda raw: raw[:SECOND_FOOTER + 2], 'truncated data CRC', True),
    'bit in length': (lambda raw: flip(raw, SECOND + 2), 'length CRC mismatch', True),
    'bit in length CRC': (lambda raw: flip(raw, SECOND + 9), 'length CRC mismatch', True),
    'bit in data': (lambda raw: flip(raw, SECOND_DATA + 5000), 'data CRC mismatch', False),
    'bit in data CRC': (lambda raw: flip(raw, SECOND_FOOTER + 3), 'data CRC mismatch', False),
}


def flip(raw: bytes, offset: int) -> bytes:
    damaged = bytearray(raw)
    damaged[offset] ^= 0x10
    return bytes(damaged)


@pytest.fixture
def damaged_file(tmp_path, request):
    damage, message, counted = DAMAGE[request.param]
    good = write_with_tf(tmp_path / 'good.tfrecord', RECORDS)
    path = tmp_path / 'damaged.tfrecord'
    path.write_bytes(damage(open(good, 'rb').read()))
    return str(path), message, counted


@pytest.mark.parametrize('chunk_size', [None, 7])
@pytest.mark.parametrize('damaged_file', list(DAMAGE), indirect=True)
def test_damage_is_reported_with_file_record_and_offset(damaged_file, chunk_size, monkeypatch):
    if chunk_size:  # also through a buffer smaller than a header
        monkeypatch.setattr(tfrecord, '_CHUNK_SIZE', chunk_size)
    path, message, counted = damaged_file
    if message == 'truncated header':
        # TensorFlow takes a partial header at the end for the end of the file, and silently
        # returns fewer records than were written; slimdata reports it.
        assert read_with_tf(path) == RECORDS[:1]
    else:
        with pytest.raises(tf.errors.DataLossError):  # TensorFlow agrees the file is bad
            read_with_tf(path)
    records = tfrecord.iter_records(path)
    assert next(records) == RECORDS[0]
    with pytest.raises(tfrecord.TFRecordError) as info:
        next(records)
    error = info.value
    assert isinstance(error, ValueError)
    assert (error.path, error.record_index, error.offset) == (path, 1, SECOND)
    assert str(error).startswith(f'{path}: record 1 at byte offset {SECOND}: ')
    assert message in str(error)

    result = tfrecord.verify_file(path)
    assert (result.ok, result.num_records) == (False, 1)
    assert str(result.error) == str(error)

    if counted:
        with pytest.raises(tfrecord.TFRecordError, match=message) as info:
            tfrecord.count_records(path)
        assert (info.value.record_index, info.value.offset) == (1, SECOND)
    else:  # counting reads no data, so it cannot see damage inside it
        assert tfrecord.count_records(path) == 3


def test_data_crc_message_gives_stored_and_computed_values(tmp_path):
    path = tmp_path / 'r.tfrecord'
    raw = bytearray(reference_frame(b'payload'))
    raw[-4:] = struct.pack('<I', 0x12345678)
    path.write_bytes(raw)
    expected = reference_mask(reference_crc32c(b'payload'))
    with pytest.raises(tfrecord.TFRecordError) as info:
        list(tfrecord.iter_records(path))
    assert str(info.value) == (f'{path}: record 0 at byte offset 0: data CRC mismatch '
                               f'(stored 0x12345678, computed 0x{expected:08x})')


@pytest.mark.parametrize('content', [
    b'\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0\x90wS\xde',
    b'just some text\nthat is not a TFRecord file\n',
])
def test_a_file_that_is_not_tfrecord(tmp_path, content):
    path = tmp_path / 'not.tfrecord'
    path.write_bytes(content)
    for read in (lambda: list(tfrecord.iter_records(path)),
                 lambda: tfrecord.count_records(path)):
        with pytest.raises(tfrecord.TFRecordError,
                           match='not a TFRecord file \\(or corrupt at the start\\)') as info:
            read()
        assert (info.value.record_index, info.value.offset) == (0, 0)
        assert str(path) in str(info.value)


def test_a_short_file_is_a_truncated_header(tmp_path):
    path = tmp_path / 'short.tfrecord'
    path.write_bytes(b'\x05\0\0')
    with pytest.raises(tfrecord.TFRecordError, match='truncated header: the file ends 3 bytes'):
        list(tfrecord.iter_records(path))


def test_reading_compressed_file_as_uncompressed_suggests_compression(tmp_path):
    path = write_with_tf(tmp_path / 'r.tfrecord.gz', [b'a' * 100], 'GZIP')
    with pytest.raises(tfrecord.TFRecordError, match="compression='GZIP'"):
        list(tfrecord.iter_records(path, compression=None))


def test_truncated_gzip_stream(tmp_path):
    path = write_with_tf(tmp_path / 'r.gz', [random.Random(3).randbytes(50_000)] * 3, 'GZIP')
    raw = open(path, 'rb').read()
    open(path, 'wb').write(raw[:len(raw) // 2])
    with pytest.raises(tfrecord.TFRecordError, match='GZIP stream ends early') as info:
        list(tfrecord.iter_records(path))
    assert info.value.record_index == 1
    assert info.value.offset == 16 + 50_000
    assert 'of the decompressed GZIP stream' in str(info.value)


def test_corrupt_zlib_stream(tmp_path):
    path = write_with_tf(tmp_path / 'r.z', [b'abc' * 10_000] * 4, 'ZLIB')
    raw = bytearray(open(path, 'rb').read())
    raw[len(raw) // 2:len(raw) // 2 + 8] = b'\xff' * 8
    open(path, 'wb').write(raw)
    with pytest.raises(tfrecord.TFRecordError, match='bad ZLIB stream|CRC mismatch|truncated'):
        list(tfrecord.iter_records(path))


def test_huge_length_with_a_valid_crc_is_truncated_data_not_a_memory_error(tmp_path):
    length = struct.pack('<Q', 2**40)
    header = length + struct.pack('<I', reference_mask(reference_crc32c(length)))
    plain = tmp_path / 'huge.tfrecord'
    plain.write_bytes(header + b'tiny')
    compressed = tmp_path / 'huge.tfrecord.z'
    compressed.write_bytes(zlib.compress(header + b'\0' * 3_000_000))
    with pytest.raises(tfrecord.TFRecordError, match=f'the header says {2**40} bytes'):
        list(tfrecord.iter_records(plain))
    for path in (plain, compressed):  # counted without holding the record
        with pytest.raises(tfrecord.TFRecordError, match=f'the header says {2**40} bytes'):
            tfrecord.count_records(path)
    # A record read from a compressed file is held only up to a cap: refused at its header.
    with pytest.raises(tfrecord.RecordTooLarge, match=f'declares {2**40:,} bytes'):
        list(tfrecord.iter_records(compressed))


def test_missing_file_is_named(tmp_path):
    missing = str(tmp_path / 'nope.tfrecord')
    for call in (lambda: tfrecord.iter_records(missing),  # at once, before iteration
                 lambda: tfrecord.count_records(missing),
                 lambda: tfrecord.verify_file(missing),
                 lambda: tfrecord.write_index(missing)):
        with pytest.raises(FileNotFoundError, match='nope.tfrecord'):
            call()


def test_unknown_compression_is_refused():
    with pytest.raises(ValueError, match="'BZIP2'.*'GZIP'"):
        tfrecord.normalize_compression('BZIP2')
    with pytest.raises(ValueError, match='auto'):
        tfrecord.TFRecordWriter(os.devnull, 'auto')


def test_error_survives_pickling():
    error = tfrecord.TFRecordError('/data/x', 3, 120, 'data CRC mismatch', 'GZIP')
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.path, copy.record_index, copy.offset, copy.compression, str(copy)) == (
        '/data/x', 3, 120, 'GZIP', str(error))


# ----------------------------------------------------------------------------------------------
# count_records reads headers, not data

def test_count_does_not_read_the_data(tmp_path, monkeypatch):
    records = [random.Random(i).randbytes(200_000) for i in range(20)]
    path = write_with_tf(tmp_path / 'big.tfrecord', records)
    bytes_read = []

    class CountingFile:
        def __init__(self, file):
            self._file = file

        def read(self, size=-1):
            data = self._file.read(size)
            bytes_read.append(len(data))
            return data

        def __getattr__(self, name):
            return getattr(self._file, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            self._file.close()

    real_open = tfrecord._open_for_reading
    monkeypatch.setattr(tfrecord, '_open_for_reading', lambda p: CountingFile(real_open(p)))
    assert tfrecord.count_records(path) == 20
    assert 0 < sum(bytes_read) < os.path.getsize(path) / 10


# ----------------------------------------------------------------------------------------------
# Writer details

def test_writer_leaves_a_file_object_open_and_flushes_it(tmp_path):
    path = tmp_path / 'fileobj.tfrecord'
    with open(path, 'wb') as f:
        with tfrecord.TFRecordWriter(f) as writer:
            writer.write(b'one')
            writer.write(bytearray(b'two'))
            writer.write(memoryview(b'xthree')[1:])
        assert not f.closed
        f.write(reference_frame(b'four'))
    assert read_with_tf(path) == [b'one', b'two', b'three', b'four']


@pytest.mark.parametrize('compression', COMPRESSIONS)
def test_flush_makes_records_readable_before_close(tmp_path, compression):
    path = tmp_path / 'flushed.tfrecord'
    writer = tfrecord.TFRecordWriter(path, compression)
    writer.write(b'first')
    writer.flush()
    window_bits = {'GZIP': 31, 'ZLIB': 15}  # zlib's codes for a gzip / zlib wrapper
    inflater = zlib.decompressobj(window_bits[compression]) if compression else None
    raw = open(path, 'rb').read()
    data = inflater.decompress(raw) if inflater else raw
    assert data == reference_frame(b'first')
    writer.close()
    assert read_with_tf(path, compression) == [b'first']


def test_writer_refuses_text_and_writes_after_close(tmp_path):
    writer = tfrecord.TFRecordWriter(tmp_path / 'w.tfrecord')
    with pytest.raises(TypeError, match='takes bytes'):
        writer.write('text')
    writer.close()
    writer.close()  # closing twice is harmless
    with pytest.raises(ValueError, match='closed'):
        writer.write(b'late')


# ----------------------------------------------------------------------------------------------
# Index files

def test_index_matches_independent_framing(tmp_path):
    records = [b'', b'a' * 10, random.Random(5).randbytes(70_000), b'z']
    path = write_with_tf(tmp_path / 'data.tfrecord', records)
    index_path = tfrecord.write_index(path)
    assert index_path == path + '.idx'
    expected, offset = [], 0
    for record in records:
        expected.append(f'{offset} {len(reference_frame(record))}\n')
        offset += len(reference_frame(record))
    with open(index_path) as f:
        assert f.readlines() == expected


def test_index_of_damaged_or_compressed_file_is_not_written(tmp_path):
    good = write_with_tf(tmp_path / 'good.tfrecord', RECORDS)
    cut = tmp_path / 'cut.tfrecord'
    cut.write_bytes(open(good, 'rb').read()[:SECOND_DATA + 10])
    with pytest.raises(tfrecord.TFRecordError, match='truncated data'):
        tfrecord.write_index(cut)
    gzipped = write_with_tf(tmp_path / 'z.tfrecord', RECORDS, 'GZIP')
    with pytest.raises(ValueError, match='GZIP-compressed'):
        tfrecord.write_index(gzipped)
    assert sorted(os.listdir(tmp_path)) == ['cut.tfrecord', 'good.tfrecord', 'z.tfrecord']


def run_without_tensorflow(code: str) -> str:
    """Runs Python in a fresh process: the PyPI `tfrecord` package and TensorFlow register the
    same protobuf names, so they cannot be imported into one process."""
    done = subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_tfrecord_package_reads_our_records_through_our_index(tmp_path):
    records = [b'rec%d' % i * (i * 37 % 500) for i in range(41)]
    path = write_with_slimdata(tmp_path / 'data.tfrecord', records)
    index_path = tfrecord.write_index(path, tmp_path / 'data.index')
    run_without_tensorflow(f'''
        import sys
        from tfrecord.reader import tfrecord_iterator
        from tfrecord.tools.tfrecord2idx import create_index
        records = {records!r}
        # Their index tool writes the same index as ours.
        create_index({path!r}, {str(tmp_path / 'theirs.index')!r})
        assert open({str(tmp_path / 'theirs.index')!r}).read() == open({index_path!r}).read()
        # Their reader, sharded through our index, reads every record once, in order.
        shards = [[bytes(view) for view in tfrecord_iterator({path!r}, {index_path!r},
                                                              shard=(i, 3))]
                  for i in range(3)]
        assert all(shards) and sum(shards, []) == records, shards
        assert 'tensorflow' not in sys.modules
    ''')


def test_importing_tfrecord_module_does_not_import_tensorflow():
    run_without_tensorflow('''
        import sys
        import slimdata.records.tfrecord
        assert 'tensorflow' not in sys.modules
    ''')


# ----------------------------------------------------------------------------------------------
# Paths for the command line

def test_expand_paths(tmp_path):
    shards = tmp_path / 'shards'
    shards.mkdir()
    for name in ['train-00001-of-00002.tfrecord', 'train-00000-of-00002.tfrecord',
                 'val-00000-of-00001', 'dataset_info.json', 'labels.txt',
                 'train-00000-of-00002.tfrecord.idx', '.hidden',
                 'train-00000-of-00002.tfrecord.tmp-123']:
        (shards / name).write_bytes(b'')
    (shards / 'subfolder').mkdir()
    listed = [str(shards / n) for n in ['train-00000-of-00002.tfrecord',
                                        'train-00001-of-00002.tfrecord', 'val-00000-of-00001']]
    assert tfrecord.expand_paths([shards]) == listed
    assert tfrecord.expand_paths([str(shards / 'train-*')]) == listed[:2]
    assert tfrecord.expand_paths([str(shards / 'train-*.tfrecord'), listed[0], shards]) == (
        listed)
    assert tfrecord.expand_paths([str(shards / 'labels.txt')]) == [str(shards / 'labels.txt')]
    with pytest.raises(ValueError, match='nothing-here'):
        tfrecord.expand_paths([str(tmp_path / 'nothing-here')])
    with pytest.raises(ValueError, match='No files match .*nope-\\*'):
        tfrecord.expand_paths([str(tmp_path / 'nope-*')])
    with pytest.raises(ValueError, match='No TFRecord files among the 1 matches'):
        tfrecord.expand_paths([str(shards / '*.json')])
    with pytest.raises(ValueError, match='No TFRecord files in folder .*subfolder'):
        tfrecord.expand_paths([str(shards / 'subfolder')])


def test_holds_damaged_record_at_finds_the_record_tensorflow_reports(tmp_path):
    records = [bytes([i]) * (10 + i) for i in range(6)]
    starts = [sum(16 + len(r) for r in records[:i]) for i in range(len(records))]
    intact = write_with_tf(tmp_path / 'intact.tfrecord', records)
    length_crc = bytearray(open(intact, 'rb').read())
    length_crc[starts[3] + 9] ^= 1           # record 3's length CRC
    data_crc = bytearray(open(intact, 'rb').read())
    data_crc[starts[4] + 12] ^= 1            # record 4's payload
    damaged = {'length': (length_crc, starts[3]), 'data': (data_crc, starts[4] + 12)}
    for name, (data, reported) in damaged.items():
        path = tmp_path / f'{name}.tfrecord'
        path.write_bytes(bytes(data))
        assert tfrecord.holds_damaged_record_at(path, reported)
        assert not tfrecord.holds_damaged_record_at(intact, reported)
        assert not tfrecord.holds_damaged_record_at(path, starts[1])  # a whole record
    truncated = tmp_path / 'truncated.tfrecord'
    truncated.write_bytes(open(intact, 'rb').read()[:starts[5] + 14])
    assert tfrecord.holds_damaged_record_at(truncated, starts[5])
    assert not tfrecord.holds_damaged_record_at(intact, starts[5])
