"""A closed pipe ends every command quietly, as in any Unix tool (`slimdata count ... | head -1`).

No `BrokenPipeError` traceback, no "Exception ignored" at exit: status 141 (128 + SIGPIPE)
and nothing on stderr. Deterministic, not timing-dependent: the reader either is closed
before the command starts, or closes after the first line while the command still has far
more to write than the pipe holds (its capacity is set to one page), so that the command's
next write meets the closed pipe whatever the machine's speed.
"""

import fcntl
import os
import subprocess
import sys

import pytest

from slimdata.records.example import serialize_example
from slimdata.records.tfrecord import TFRecordWriter

HANG = 300  # a hang guard only
PIPE_BYTES = 4096
F_SETPIPE_SZ = 1031  # Linux's fcntl command (not in the fcntl module before Python 3.10)
NUM_FILES = 1500     # lines of `count`, `verify` and `index`: ~100 KB, 25 pipes full


@pytest.fixture(scope='module')
def many_files(tmp_path_factory):
    """NUM_FILES record files of one record each, one record of 2000 features, and a folder
    of images to convert."""
    folder = tmp_path_factory.mktemp('many')
    for index in range(NUM_FILES):
        with TFRecordWriter(str(folder / f'part-{index:05d}-of-a-long-name.tfrecord')) as writer:
            writer.write(serialize_example({'value': index}))
    wide = tmp_path_factory.mktemp('wide') / 'wide.tfrecord'
    with TFRecordWriter(str(wide)) as writer:
        writer.write(serialize_example({f'feature/{index:04d}': [index, index + 1]
                                        for index in range(2000)}))
    from slimdata.datasets import synthetic
    shapes = tmp_path_factory.mktemp('shapes') / 'shapes'
    synthetic.make_image_folder(str(shapes), num_classes=2, images_per_class=2, image_size=12)
    return folder, wide, shapes


def slimdata_into(pipe_writer, argv, **kwargs):
    return subprocess.Popen([sys.executable, '-m', 'slimdata', *argv], stdout=pipe_writer,
                            stderr=subprocess.PIPE, **kwargs)


def first_line_then_close(argv):
    """Runs `slimdata ARGV | head -1`: reads the first line, then closes the pipe.

    Returns (the first line, the exit status, stderr).
    """
    reader, writer = os.pipe()
    fcntl.fcntl(writer, F_SETPIPE_SZ, PIPE_BYTES)
    process = slimdata_into(writer, argv)
    os.close(writer)
    first = b''
    with os.fdopen(reader, 'rb', buffering=0) as pipe:
        while not first.endswith(b'\n'):
            byte = pipe.read(1)
            if not byte:
                break
            first += byte
    _, stderr = process.communicate(timeout=HANG)
    return first.decode(), process.returncode, stderr.decode()


def into_a_closed_pipe(argv, stderr_too=False):
    """Runs `slimdata ARGV` with stdout (and maybe stderr) a pipe nobody reads any more."""
    reader, writer = os.pipe()
    os.close(reader)
    if stderr_too:
        process = subprocess.Popen([sys.executable, '-m', 'slimdata', *argv], stdout=writer,
                                   stderr=writer)
        os.close(writer)
        process.wait(timeout=HANG)
        return process.returncode, ''
    process = slimdata_into(writer, argv)
    os.close(writer)
    _, stderr = process.communicate(timeout=HANG)
    return process.returncode, stderr.decode()


@pytest.mark.parametrize('command', ['count', 'verify', 'index'])
def test_a_reader_that_takes_one_line_and_leaves(many_files, command):
    folder, _, _ = many_files
    first, status, stderr = first_line_then_close([command, str(folder)])
    assert str(folder / 'part-00000-of-a-long-name.tfrecord') in first
    assert (status, stderr) == (141, '')


def test_inspect_of_a_wide_record_into_head(many_files):
    _, wide, _ = many_files
    first, status, stderr = first_line_then_close(['inspect', str(wide)])
    assert first.startswith(f'{wide}: 1 record(s) parsed')
    assert (status, stderr) == (141, '')


@pytest.mark.parametrize('argv', [
    ['count', '{folder}'], ['count', '--json', '{folder}'], ['verify', '--json', '{folder}'],
    ['inspect', '{wide}'], ['index', '{folder}', '--output-dir', '{tmp}/idx'],
    ['convert', 'image-folder', '{images}', '{tmp}/out', '--validation-ratio', '0'],
    ['show', '{tmp}/out', '-o', '{tmp}/sheet.png'], ['--version'], ['count', '--help'],
    # The port starts TensorFlow's upgrader (about 15 s on 2 shared cores).
    pytest.param(['port', '{images}', '--dry-run'], marks=pytest.mark.slow),
], ids=lambda argv: ' '.join(argv[:2]))
def test_every_command_ends_quietly_on_a_closed_stdout(many_files, tmp_path, argv):
    folder, wide, images = many_files
    if argv[0] == 'show':  # something to draw
        from slimdata import cli
        assert cli.main(['convert', 'image-folder', str(images), str(tmp_path / 'out'),
                         '--validation-ratio', '0', '-q']) == 0
    argv = [word.format(folder=folder, wide=wide, tmp=tmp_path, images=images)
            for word in argv]
    status, stderr = into_a_closed_pipe(argv)
    assert 'Traceback' not in stderr and 'BrokenPipe' not in stderr, stderr
    assert 'Exception ignored' not in stderr, stderr
    assert status in (0, 141)  # 0: argparse prints --help and --version, and ignores a failure


def test_a_conversion_into_a_closed_pipe_for_both_streams_stops_quietly(many_files, tmp_path):
    """`slimdata convert ... 2>&1 | head -0`: the first progress line meets the closed pipe;
    the conversion stops there, as after Ctrl-C, leaving no temporary file."""
    _, _, images = many_files
    status, _ = into_a_closed_pipe(['convert', 'image-folder', str(images),
                                    str(tmp_path / 'out')], stderr_too=True)
    assert status == 141
    out = tmp_path / 'out'
    assert [name for name in os.listdir(out) if '.tmp-' in name] == [] if out.exists() else True
