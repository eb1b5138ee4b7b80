"""Compressed record bombs (issue 28 item 1): a GZIP shard of a few hundred kB whose record
declares gigabytes and inflates to them. Every reader runs in a child limited to 512 MB of
address space (`test_show_limits.in_child`): count, verify, the pipeline's build-time check
(`tfrecord.check_file`, which `record_checks.check_data_files` calls) stream the record's
data without holding it; inspect and show, which must hold a record to parse it, refuse one
over `tfrecord.MAX_COMPRESSED_RECORD_BYTES`, naming the file, the record and its offset.

Before the fix, the 1 MB shard of 1 GiB of zeros took every one of them past the limit
(a MemoryError, or the process killed).

The shards are gzip members one after another (as TensorFlow reads them): the record header,
then 1 MiB of zeros compressed once and repeated, then the data CRC. The expected CRC is
computed by the `crc32c` package over the same zeros; a record whose CRC is right is read
back by TensorFlow's own reader in the last test.
"""

import gzip
import struct

import crc32c
import pytest

from slimdata.records import tfrecord
from test_show_limits import error_lines, in_child

PIECE = 1 << 20
_CLI = 'from slimdata import cli\nsys.exit(cli.main(sys.argv[1:]))'


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def gzip_bomb(path, declared, zeros, footer=True):
    """A GZIP shard whose one record declares `declared` bytes and holds `zeros` zero bytes
    (a multiple of PIECE), with the right data CRC when `footer` and all the data is there."""
    length = struct.pack('<Q', declared)
    members = [gzip.compress(length + struct.pack('<I', masked(crc32c.crc32c(length))))]
    members += [gzip.compress(bytes(PIECE), 9)] * (zeros // PIECE)
    if footer:
        members.append(gzip.compress(struct.pack('<I', masked(crc32c.crc32c(bytes(zeros))))))
    path.write_bytes(b''.join(members))
    return path


@pytest.fixture(scope='module')
def truncated_bomb(tmp_path_factory):
    """1 MB on disk: a record that declares 8 GiB, then 1 GiB of zeros and the end."""
    return gzip_bomb(tmp_path_factory.mktemp('bomb') / 'train-00000-of-00001.tfrecord',
                     8 << 30, 1 << 30, footer=False)


@pytest.fixture(scope='module')
def whole_bomb(tmp_path_factory):
    """A valid record of 200 MiB of zeros, 200 kB on disk."""
    return gzip_bomb(tmp_path_factory.mktemp('whole') / 'train-00000-of-00001.tfrecord',
                     200 << 20, 200 << 20)


def cli_in_child(*args):
    return in_child(_CLI, *args)


@pytest.mark.slow
def test_count_and_verify_report_the_truncated_record_in_bounded_memory(truncated_bomb):
    for command in ('count', 'verify'):
        result = cli_in_child(command, truncated_bomb)
        assert result.returncode == 1, (command, result.stderr[-2000:])
        assert 'MemoryError' not in result.stderr
        message = f'{truncated_bomb}: record 0 at byte offset 0 of the decompressed GZIP stream'
        assert message in result.stdout + result.stderr, (command, result.stdout,
                                                          result.stderr)
        assert f'the header says {8 << 30} bytes of data, the file ends after {1 << 30}' in (
            result.stdout + result.stderr)


@pytest.mark.slow
def test_a_valid_200_mib_record_is_counted_and_verified_without_holding_it(whole_bomb):
    count = cli_in_child('count', whole_bomb)
    assert count.returncode == 0, count.stderr[-2000:]
    assert count.stdout.split()[0] == '1'
    verify = cli_in_child('verify', whole_bomb)
    assert verify.returncode == 0, verify.stderr[-2000:]
    assert 'no problems found' in verify.stdout


@pytest.mark.slow
def test_the_pipelines_build_time_check_is_bounded_too(truncated_bomb, whole_bomb):
    code = ('from slimdata.records import tfrecord\n'
            'for path in sys.argv[1:]:\n'
            '    check = tfrecord.check_file(path)\n'
            '    print(check.num_records, check.error)\n')
    result = in_child(code, truncated_bomb, whole_bomb)
    assert result.returncode == 0, result.stderr[-2000:]
    truncated, whole = result.stdout.splitlines()
    assert truncated.startswith(f'0 {truncated_bomb}: record 0 at byte offset 0')
    assert whole == '1 None'


@pytest.mark.slow
@pytest.mark.parametrize('command', ['show', 'inspect'])
def test_readers_that_hold_records_refuse_one_over_the_cap(truncated_bomb, whole_bomb,
                                                            tmp_path, command):
    for bomb, declared in ((truncated_bomb, 8 << 30), (whole_bomb, 200 << 20)):
        args = (['-o', tmp_path / 'sheet.png'] if command == 'show' else [])
        result = cli_in_child(command, bomb, *args)
        assert result.returncode != 0
        assert 'MemoryError' not in result.stderr and 'Traceback' not in result.stderr
        assert error_lines(result) == [
            f'error: {bomb}: record 0 at byte offset 0 of the decompressed GZIP stream: the '
            f'header declares {declared:,} bytes of data, more than the '
            f'{tfrecord.MAX_COMPRESSED_RECORD_BYTES:,} a record read from a compressed file '
            'may hold (the file is damaged or hostile; count and verify check such a record '
            'without holding it)'], result.stderr


def test_a_streamed_record_keeps_the_records_after_it_and_their_checks(tmp_path):
    """A record bigger than the scanner's buffer between small ones, uncompressed and GZIP:
    counted, verified, and read back as TensorFlow's writer wrote them; a flipped byte inside
    the big record's data is a data CRC mismatch at its offset."""
    from conftest import write_with_tf
    records = [b'a' * 10, bytes(range(256)) * (3 * tfrecord._CHUNK_SIZE // 256 + 7), b'bc']
    for compression in (None, 'GZIP'):
        path = write_with_tf(tmp_path / f'{compression}.tfrecord', records, compression)
        assert tfrecord.count_records(path) == 3
        assert tfrecord.verify_file(path).ok
        assert list(tfrecord.iter_records(path)) == records
    path = tmp_path / 'None.tfrecord'
    data = bytearray(path.read_bytes())
    data[16 + 10 + 12 + 2 * tfrecord._CHUNK_SIZE] ^= 1
    path.write_bytes(bytes(data))
    result = tfrecord.verify_file(path)
    assert (result.num_records, result.error.record_index, result.error.offset) == (1, 1, 26)
    assert 'data CRC mismatch' in result.error.reason
