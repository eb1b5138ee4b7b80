"""The port's report: notes by line, in the text and in the JSON alike."""

import json

from slimdata import cli

# Stages add notes in their own order: the Python 2 stage's (line 4) before the names pass's
# (line 2), the division pass's (line 3) after both.
CODE = ('import tensorflow as tf\nslim = tf.contrib.slim\nhalf = slim.x / 2\n'
        'print "hello"\n')


def test_the_json_notes_are_sorted_by_line_as_the_text_is(tmp_path, capsys):
    root = tmp_path / 'repo'
    root.mkdir()
    (root / 'm.py').write_text(CODE)
    status = cli.main(['port', str(root), str(tmp_path / 'out'), '--tf-upgrade', 'off',
                       '--json', str(tmp_path / 'report.json')])
    assert status == 0
    [file] = json.loads((tmp_path / 'report.json').read_text())['files']
    lines = [note['line'] for note in file['notes']]
    assert lines == sorted(lines) and len(lines) == 3
    text = capsys.readouterr().out
    assert [int(line.split()[0]) for line in text.splitlines()
            if line.startswith('    ') and line.split()[0].isdigit()] == lines
