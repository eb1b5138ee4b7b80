"""Terminal escapes and newlines from data never reach the terminal raw (issue 28 item 6):
feature keys in `inspect`'s table, file names in every tool's result and error lines. Each
shows escaped as Python writes it (`\\x1b`, `\\n`), and an error stays one line.

Before, an ESC in a key or a file name was printed as it is (a terminal runs it), and a
newline split the error line in two.
"""

import pytest

from conftest import write_with_tf
from slimdata import cli, progress
from slimdata._tf import tf
from test_cli_convert import _class_folders

NAME = 'evil\x1b]0;owned\x07\n\x1b[2J'
ESCAPED = 'evil\\x1b]0;owned\\x07\\n\\x1b[2J'


def test_printable_escapes_every_control_character_and_nothing_else():
    assert progress.printable('été\ttab\x00\x7f\x9b\u2028 ok') == (
        'été\\ttab\\x00\\x7f\\x9b\\u2028 ok')
    assert progress.printable('a\nb\x1b', lines=True) == 'a\nb\\x1b'


def record(key):
    return tf.train.Example(features=tf.train.Features(feature={
        key: tf.train.Feature(int64_list=tf.train.Int64List(value=[7]))})).SerializeToString()


def test_inspect_escapes_a_feature_key(tmp_path, capsys):
    path = write_with_tf(tmp_path / 'keys.tfrecord', [record(NAME)])
    assert cli.main(['inspect', path]) == 0
    out = capsys.readouterr().out
    assert '\x1b' not in out and '\x07' not in out
    [row] = [line for line in out.splitlines() if line.startswith('evil')]
    assert row.split()[:2] == [ESCAPED, 'int64']


@pytest.mark.parametrize('command', ['count', 'verify', 'inspect', 'show', 'index'])
def test_a_damaged_file_with_an_escape_and_a_newline_in_its_name_is_one_error_line(
        tmp_path, capsys, command):
    path = tmp_path / f'{NAME}.tfrecord'
    path.write_bytes(b'not a tfrecord file at all, twenty-odd bytes')
    args = ['-o', str(tmp_path / 'sheet.png')] if command == 'show' else []
    assert cli.main([command, str(path), *args]) == 1
    captured = capsys.readouterr()
    assert '\x1b' not in captured.out + captured.err
    lines = [line for line in (captured.out + captured.err).splitlines() if 'evil' in line]
    assert lines and all(f'{tmp_path}/{ESCAPED}.tfrecord' in line for line in lines), lines


def test_convert_error_naming_a_file_with_an_escape_is_one_line(tmp_path, capsys):
    _class_folders(tmp_path / 'src', per_class=1)
    (tmp_path / 'src' / 'cat' / f'{NAME}.png').write_bytes(b'\x89PNG\r\n\x1a\nnot really')
    status = cli.main(['convert', 'image-folder', str(tmp_path / 'src'), str(tmp_path / 'out'),
                       '--validation-ratio', '0'])
    assert status == 1
    err = capsys.readouterr().err
    assert '\x1b' not in err
    [line] = [line for line in err.splitlines() if ': error: ' in line]
    assert f'{ESCAPED}.png' in line
