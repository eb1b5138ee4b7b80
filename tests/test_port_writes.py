"""`slimdata port`'s writes, round two (issue 28 item 10): the same command run again on a
complete copy, a file edited while an in-place port runs, a temporary left by a kill at the
first rename, --max-file-size beyond reason, and valid Python whose mix of tabs and spaces
LibCST cannot read.

Expectations come from elsewhere: the original program's own output (run by Python), the
bytes a user wrote, the files of the first run.
"""

import os
import pathlib
import subprocess
import sys

import pytest

from slimdata.cli import port as port_command
from slimdata.port import edits, indentation, tree

# Valid Python (CPython reads a tab as 8 columns, and as 1, with the same blocks) that LibCST's
# tokenizer refuses ("no matching outer block for dedent"); found by generating small programs.
MIXED = ('import os\n'
         'def f(x):\n'
         '\t if x:\n'
         '            y = """a\n'
         '\tb"""\n'
         '            return y\n'
         '\t return os.sep\n'
         'print(repr(f(1)), repr(f(0)))\n')


def _run(path: pathlib.Path) -> str:
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          check=True, timeout=60).stdout


def _cli(*args):
    return subprocess.run([sys.executable, '-m', 'slimdata', *args], capture_output=True,
                          text=True, check=False, timeout=300)


def test_the_mix_is_valid_python_that_libcst_refuses():
    compile(MIXED, 'mixed.py', 'exec')
    import libcst
    with pytest.raises(libcst.ParserSyntaxError, match='tokenizer error'):
        libcst.parse_module(MIXED)


def test_valid_python_mixing_tabs_and_spaces_is_ported_and_runs_the_same(tmp_path):
    source = tmp_path / 'repo'
    source.mkdir()
    (source / 'mixed.py').write_text(MIXED)
    report = tree.port_tree(str(source), str(tmp_path / 'out'), tf_upgrade=None)
    assert not report.problems
    ported = (tmp_path / 'out' / 'mixed.py').read_text()
    assert _run(tmp_path / 'out' / 'mixed.py') == _run(source / 'mixed.py')
    assert '"""a\n\tb"""' in ported  # a string's tabs are data: kept
    (note,) = report.files[0].notes
    assert note.line == indentation.libcst_refusal_line(MIXED) > 0
    assert 'tabs in indentation expanded to 8 columns, as Python reads them' in note.message


def test_a_mix_libcst_reads_is_left_as_it_is():
    code = 'def f():\n\tif 1:\n\t\treturn 1\n\n\ndef g():\n    return 2\n'
    context = edits.Context('m.py', frozenset(['m.py']))
    assert indentation.IndentationStage.has_work(code, context)
    assert indentation.IndentationStage.port(code, context) == (code, [])


@pytest.mark.parametrize('value', ['inf', '1e30', 'nan', '0', '-1', '1025'])
def test_a_max_file_size_beyond_reason_is_a_usage_error(value, tmp_path):
    (tmp_path / 'repo').mkdir()
    run = _cli('port', str(tmp_path / 'repo'), '--dry-run', '--max-file-size', value)
    assert run.returncode == 2, run.stderr
    assert 'Traceback' not in run.stderr
    assert f'{value} is not a number of megabytes above 0 and at most 1024' in run.stderr


def test_the_command_line_limit_is_the_library_one():
    assert port_command.MAX_FILE_SIZE_MB * 2 ** 20 == tree.MAX_FILE_BYTES_LIMIT
    with pytest.raises(tree.PortError, match='max_file_bytes'):
        tree.port_tree('.', dry_run=True, max_file_bytes=10 ** 30)


def _small_repo(root: pathlib.Path) -> None:
    (root / 'pkg').mkdir(parents=True)
    (root / 'pkg' / 'data.py').write_text('from tf_slim.data import dataset\n')
    (root / 'train.py').write_text('import tensorflow as tf\nslim = tf.contrib.slim\n')
    (root / 'notes.txt').write_text('not python\n')


@pytest.mark.slow
def test_the_same_port_run_again_is_nothing_to_do(tmp_path):
    _small_repo(tmp_path / 'repo')
    first = _cli('port', str(tmp_path / 'repo'), str(tmp_path / 'out'), '--tf-upgrade', 'off')
    assert first.returncode == 0, first.stderr
    written = {path: (path.read_bytes(), path.stat().st_mtime_ns)
               for path in (tmp_path / 'out').rglob('*') if path.is_file()}
    # Running the ported code leaves byte-code caches in the copy: not a difference.
    (tmp_path / 'out' / '__pycache__').mkdir()
    (tmp_path / 'out' / '__pycache__' / 'train.cpython-311.pyc').write_bytes(b'\0')
    again = _cli('port', str(tmp_path / 'repo'), str(tmp_path / 'out'), '--tf-upgrade', 'off')
    assert again.returncode == 0, again.stderr
    assert 'it already holds this port: nothing written' in again.stdout
    assert {path: (path.read_bytes(), path.stat().st_mtime_ns)
            for path in (tmp_path / 'out').rglob('*')
            if path.is_file() and '__pycache__' not in path.parts} == written


@pytest.mark.slow
@pytest.mark.parametrize('change, named', [
    (lambda out: (out / 'train.py').write_text('# mine\n'), 'train.py differs'),
    (lambda out: (out / 'extra.txt').write_text('x'), 'it holds the file extra.txt'),
    (lambda out: os.remove(out / 'notes.txt'), 'it lacks the file notes.txt'),
])
def test_a_destination_that_is_not_this_port_is_refused_naming_why(change, named, tmp_path):
    _small_repo(tmp_path / 'repo')
    tree.port_tree(str(tmp_path / 'repo'), str(tmp_path / 'out'), tf_upgrade=None)
    change(tmp_path / 'out')
    run = _cli('port', str(tmp_path / 'repo'), str(tmp_path / 'out'), '--tf-upgrade', 'off')
    assert run.returncode == 2
    assert f'is not the port of {tmp_path / "repo"} as it is now ({named}' in run.stderr


def test_a_file_edited_while_the_port_runs_keeps_the_edit(tmp_path, monkeypatch):
    """The edit lands between the read and the write, as a user's editor would save it."""
    root = tmp_path / 'repo'
    _small_repo(root)
    edited = b'# my edit, saved while the port ran\nfrom tf_slim.data import dataset\n'
    real_port_sources = tree.port_sources

    def port_then_edit(sources, tf_upgrade):
        results = real_port_sources(sources, tf_upgrade)
        (root / 'pkg' / 'data.py').write_bytes(edited)
        return results

    monkeypatch.setattr(tree, 'port_sources', port_then_edit)
    report = tree.port_tree(str(root), tf_upgrade=None)
    assert (root / 'pkg' / 'data.py').read_bytes() == edited
    assert not (tmp_path / 'repo.port-backup' / 'pkg' / 'data.py').exists()
    assert ('pkg/data.py: edited while the port ran; left as it is now, not ported (run the '
            'same command again to port it)') in report.problems
    assert 'from tf_slim' not in (root / 'train.py').read_text()  # the others are ported


def test_a_temporary_left_by_a_kill_at_the_first_rename_is_removed(tmp_path):
    """A kill while the marker is written leaves its temporary and no marker, so nothing to
    resume: the next run removes it all the same."""
    root = tmp_path / 'repo'
    _small_repo(root)
    backup = tmp_path / 'repo.port-backup'
    backup.mkdir()
    left = backup / f'.{tree.RUNNING_MARKER}.slimdata-port-k1ll3d.tmp'
    left.write_text('{"tf_upgrade": nu')
    tree.port_tree(str(root), tf_upgrade=None)
    assert not left.exists()
    assert sorted(path.name for path in backup.rglob('*')) == ['data.py', 'pkg', 'train.py']


def test_the_report_escapes_what_comes_from_the_tree(tmp_path):
    """A file name with a newline and an ESC: one line of the report each, escaped."""
    root = tmp_path / 'repo'
    root.mkdir()
    name = 'evil\n\x1b[31mname.py'
    (root / name).write_text('from tf_slim.data import dataset\n')
    text = tree.port_tree(str(root), dry_run=True, tf_upgrade=None).format()
    assert '\x1b' not in text
    assert "evil\\n\\x1b[31mname.py" in text
    assert all(not line.startswith('[31m') for line in text.splitlines())
