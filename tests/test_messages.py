"""What the command line says (issue 29 item 4): one line where one line will do, the same
units everywhere, "did you mean", one exit status for a split the source does not hold."""

import os
import pty
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from PIL import Image

from slimdata import cli, progress
from slimdata.records import tfrecord


@pytest.fixture(autouse=True)
def not_quiet():
    progress.configure(quiet=False)
    yield
    progress.configure(quiet=False)


def _image_folder(root, classes=('cat', 'dog'), per_class=4):
    for label, name in enumerate(classes):
        (root / name).mkdir(parents=True)
        for index in range(per_class):
            pixels = np.full((8, 8, 3), 40 * label + index, np.uint8)
            Image.fromarray(pixels).save(root / name / f'{index}.png')
    return root


@pytest.mark.parametrize('size, expected', [
    (0, '0 B'), (1023, '1023 B'), (1024, '1.0 KiB'), (1536, '1.5 KiB'),
    (5 * 2 ** 20, '5.0 MiB'), (3 * 2 ** 30 + 2 ** 29, '3.5 GiB'), (2 ** 41, '2.0 TiB')])
def test_sizes_are_binary_units_named_as_such(size, expected):
    assert progress.format_bytes(size) == expected


def test_counts_agree_with_their_noun():
    assert progress.plural(1, 'file') == '1 file'
    assert progress.plural(2, 'file') == '2 files'
    assert progress.plural(1, 'entry', 'entries') == '1 entry'
    assert progress.plural(0, 'entry', 'entries') == '0 entries'
    assert progress.plural(12345, 'record') == '12,345 records'


def test_a_log_of_bytes_says_mib_like_the_summary():
    log = _Log()
    with progress.Progress(3 * 2 ** 20, 'copying', unit='B', unit_scale=True,
                           stream=log) as display:
        display.update(3 * 2 ** 20)
    assert 'done, 3.0 MiB in ' in log.getvalue()
    assert ' MB' not in log.getvalue()


class _Log:
    def __init__(self):
        self.lines = []

    def write(self, text):
        self.lines.append(text)

    def flush(self):
        pass

    def isatty(self):
        return False

    def getvalue(self):
        return ''.join(self.lines)


@pytest.mark.parametrize('argv, suggestion', [
    (['verfy', 'x'], "did you mean 'verify'?"),
    (['convert', 'vco', 'a', 'b'], "did you mean 'voc'?"),
    (['show', 'x', '--compression', 'gzp'], "did you mean 'gzip'?"),
])
def test_a_mistyped_choice_gets_did_you_mean(argv, suggestion, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 2
    assert suggestion in capsys.readouterr().err


def test_a_choice_like_nothing_gets_the_plain_message(capsys):
    with pytest.raises(SystemExit):
        cli.main(['zzzzzz'])
    err = capsys.readouterr().err
    assert 'invalid choice' in err and 'did you mean' not in err


@pytest.mark.parametrize('command', ['count', 'verify', 'inspect'])
def test_a_folder_of_images_is_one_line_not_a_crc_error_per_image(command, tmp_path, capsys):
    folder = _image_folder(tmp_path / 'raw', per_class=30) / 'cat'
    assert cli.main([command, str(folder)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert 'holds 30 images' in err and 'slimdata convert image-folder' in err
    assert 'CRC' not in err


def test_a_folder_of_dataset_folders_names_them(tmp_path, capsys):
    raw = _image_folder(tmp_path / 'raw')
    out = tmp_path / 'out'
    for name in ('first', 'second'):
        assert cli.main(['-q', 'convert', 'image-folder', str(raw), str(out / name),
                         '--validation-ratio', '0.25']) == 0
    capsys.readouterr()
    assert cli.main(['count', str(out)]) == 2
    err = capsys.readouterr().err
    assert f'{out / "first"}, {out / "second"}' in err


def test_a_folder_without_records_counts_its_entries_in_good_english(tmp_path):
    folder = tmp_path / 'one'
    folder.mkdir()
    (folder / 'labels.txt').write_text('0:a\n')
    with pytest.raises(ValueError, match=r'\(it has 1 entry, none a record file\)'):
        tfrecord.expand_paths([str(folder)])


def test_quiet_conversion_prints_the_summary_but_no_hint(tmp_path, capsys):
    raw = _image_folder(tmp_path / 'raw')
    assert cli.main(['convert', 'image-folder', str(raw), str(tmp_path / 'out'), '-q',
                     '--validation-ratio', '0.25']) == 0
    out = capsys.readouterr().out
    assert 'train: 6 records in 1 shard' in out
    assert 'next:' not in out
    assert cli.main(['convert', 'image-folder', str(raw), str(tmp_path / 'out2'),
                     '--validation-ratio', '0.25']) == 0
    assert 'next: slimdata verify' in capsys.readouterr().out


def test_the_summary_and_verify_give_the_same_size(tmp_path, capsys):
    raw = _image_folder(tmp_path / 'raw')
    out = tmp_path / 'out'
    assert cli.main(['-q', 'convert', 'image-folder', str(raw), str(out),
                     '--validation-ratio', '0']) == 0
    summary = capsys.readouterr().out
    size = os.path.getsize(next(out.glob('train-*.tfrecord')))
    assert f'  {progress.format_bytes(size)} in ' in summary
    assert cli.main(['verify', str(out)]) == 0
    verified = capsys.readouterr().out
    assert f'verified 1 file, 8 records, {progress.format_bytes(size)}' in verified


def test_a_split_the_source_lacks_is_a_usage_error_as_in_show(tmp_path, capsys):
    raw = _image_folder(tmp_path / 'raw')
    status = cli.main(['convert', 'image-folder', str(raw), str(tmp_path / 'out'),
                       '--split', 'test'])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "split 'test' is not in" in err and 'run the same command' not in err


def test_a_terminal_without_a_width_gets_plain_lines_and_a_final_line(tmp_path):
    """Under `script` or a console that reports 0 columns, a tqdm bar would be empty lines."""
    program = textwrap.dedent('''
        import fcntl, struct, sys, termios
        fcntl.ioctl(sys.stderr.fileno(), termios.TIOCSWINSZ, struct.pack('HHHH', 0, 0, 0, 0))
        from slimdata import progress
        with progress.Progress(40, 'convert') as display:
            display.update(40)
    ''')
    output = _run_on_a_pty(program)
    assert 'convert: done, 40 ex in ' in output, output


def _run_on_a_pty(program: str) -> str:
    """Runs `program` with stderr on a new pseudo-terminal; returns what it wrote there."""
    master, slave = pty.openpty()
    try:
        child = subprocess.Popen([sys.executable, '-c', program], stderr=slave,
                                 stdout=subprocess.DEVNULL)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert child.wait(timeout=60) == 0, b''.join(chunks).decode(errors='replace')
    finally:
        os.close(master)
    return b''.join(chunks).decode(errors='replace')

