"""`slimdata port` on hostile trees: interruptions, unreadable files, links, line endings.

The expectations are computed another way: a clean run of the same command (after a SIGKILL),
the LF version of a file ported and given its line endings back (for CRLF files), the lines of
the ported file searched for what a note names (for line numbers), an alignment whose truth
is known because every line differs (for `lines`).
"""

import json
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

from slimdata.port import edits, lines, pipeline, tree

FIXTURE = pathlib.Path(__file__).parent / 'port_fixture' / 'shapes_slim'

# A module in the style of slim-era code: every line the names pass ports, one it cannot.
SLIM_MODULE = '''"""Module {index}."""

import tensorflow as tf
from tensorflow.python.ops import array_ops

slim = tf.contrib.slim


def block_{index}(net):
    """A block."""
    with tf.contrib.framework.arg_scope([slim.conv2d], padding='SAME'):
        net = slim.conv2d(net, 8, [3, 3],
                          weights_initializer=tf.contrib.layers.xavier_initializer())
    return array_ops.unstack(net)


def quantized_{index}():
    tf.contrib.quantize.create_training_graph()
'''


def _snapshot(root: pathlib.Path) -> dict:
    """Every entry under `root`: files by bytes, links by their text, folders."""
    entries = {}
    for path in sorted(root.rglob('*')):
        relative = path.relative_to(root).as_posix()
        if path.is_symlink():
            entries[relative] = ('link', os.readlink(path))
        elif path.is_dir():
            entries[relative] = ('folder',)
        else:
            entries[relative] = ('file', path.read_bytes())
    return entries


def _slim_tree(root: pathlib.Path, modules: int = 3) -> pathlib.Path:
    (root / 'pkg').mkdir(parents=True)
    for index in range(modules):
        (root / 'pkg' / f'm{index:03}.py').write_text(SLIM_MODULE.format(index=index))
    (root / 'README.md').write_text('not python\n')
    return root


def _cli(*args, cwd=None):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3')
    return subprocess.run([sys.executable, '-m', 'slimdata', 'port', *args], capture_output=True,
                          text=True, check=False, cwd=cwd, env=environment, timeout=600)


# -- files it cannot read: reported, the rest ported -----------------------------------------------

UNREADABLE = {
    'rot13.py': (b'# -*- coding: rot13 -*-\nvzcbeg gs_fyvz\n', 'names no text encoding'),
    'unknown.py': (b'# coding: no-such-codec\nimport tf_slim\n',
                   'coding declaration is not usable'),
    'nul.py': (b'import tf_slim\x00\n', 'NUL bytes (at byte 14)'),
    'binary.py': (bytes(range(256)) * 4, 'NUL bytes (at byte 0)'),
    'not_utf8.py': (b'import tf_slim\nx = "caf\xe9"\n', 'not UTF-8 text (invalid continuation '
                                                         'byte at byte 23, line 2)'),
    'false_latin.py': (b'# coding: ascii\nx = "\xe9"\n', 'not ascii text'),
    'large.py': (b'import tf_slim\n' + b'x = 1\n' * 10_000, 'too large (0.1 MB; the limit is'),
    'python2.py': (b'import tf_slim\nprint "hello" +\n', '2: could not parse as Python 3 or as '
                                                      'Python 2'),
    'nested.py': (b'x = a' + b'.b' * 20_000 + b'\n', 'could not parse: RecursionError'),
}


def test_files_it_cannot_read_are_reported_and_the_rest_ported(tmp_path):
    root = _slim_tree(tmp_path / 'repo', modules=1)
    for name, (data, _) in UNREADABLE.items():
        (root / name).write_bytes(data)
    report = tree.port_tree(str(root), str(tmp_path / 'out'), tf_upgrade=None,
                            max_file_bytes=50_000)
    for name, (data, why) in UNREADABLE.items():
        [problem] = [problem for problem in report.problems if problem.startswith(name)]
        assert why in problem, problem
        assert (tmp_path / 'out' / name).read_bytes() == data  # copied as it was
    assert len(report.problems) == len(UNREADABLE)
    ported = (tmp_path / 'out' / 'pkg' / 'm000.py').read_text()
    assert 'contrib.slim' not in ported and 'from slimdata import slim' in ported


def test_cli_exit_status_1_when_a_file_cannot_be_read(tmp_path):
    root = _slim_tree(tmp_path / 'repo', modules=1)
    (root / 'rot13.py').write_bytes(UNREADABLE['rot13.py'][0])
    result = _cli(str(root), str(tmp_path / 'out'), '--tf-upgrade', 'off')
    assert result.returncode == 1, result.stderr
    assert 'rot13.py: its coding declaration names no text encoding' in result.stdout
    assert 'Traceback' not in result.stderr
    assert 'from slimdata import slim' in (tmp_path / 'out' / 'pkg' / 'm000.py').read_text()
    assert 'porting: done' in result.stderr  # the progress display's summary line


@pytest.mark.slow
def test_max_file_size_option(tmp_path):
    root = tmp_path / 'repo'
    root.mkdir()
    (root / 'large.py').write_text('import tf_slim as slim\n# ' + 'x' * 1_200_000 + '\n')
    result = _cli(str(root), '--dry-run', '--tf-upgrade', 'off')
    assert result.returncode == 1 and 'large.py: too large (1.1 MB; the limit is 1.0 MB' in (
        result.stdout)
    result = _cli(str(root), '--dry-run', '--tf-upgrade', 'off', '--max-file-size', '2')
    assert result.returncode == 0 and '1 changed' in result.stdout


# -- usage errors and output paths, checked before anything is written -----------------------------

def test_destination_empty_string_or_a_file_is_a_usage_error(tmp_path):
    root = _slim_tree(tmp_path / 'repo', modules=1)
    before = _snapshot(root)
    empty = _cli(str(root), '', '--tf-upgrade', 'off')
    assert empty.returncode == 2 and "DST is ''" in empty.stderr
    (tmp_path / 'a_file').write_text('x')
    a_file = _cli(str(root), str(tmp_path / 'a_file'), '--tf-upgrade', 'off')
    assert a_file.returncode == 2 and 'a_file is a file' in a_file.stderr
    assert _snapshot(root) == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ['a_file', 'repo']


@pytest.mark.parametrize('json_path', ['missing_folder/report.json', 'a_folder', ''])
def test_a_bad_json_path_fails_before_the_in_place_rewrite(tmp_path, json_path):
    root = _slim_tree(tmp_path / 'repo', modules=1)
    (tmp_path / 'a_folder').mkdir()
    before = _snapshot(root)
    result = _cli(str(root), '--tf-upgrade', 'off', '--json', json_path, cwd=tmp_path)
    assert result.returncode == 2 and '--json' in result.stderr
    assert _snapshot(root) == before
    assert not (tmp_path / 'repo.port-backup').exists()


def test_json_report_written_whole(tmp_path):
    root = _slim_tree(tmp_path / 'repo', modules=1)
    result = _cli(str(root), str(tmp_path / 'out'), '--tf-upgrade', 'off',
                  '--json', str(tmp_path / 'report.json'))
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / 'report.json').read_text())
    assert [file['path'] for file in report['files']] == ['pkg/m000.py']
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith('.')] == []


def test_backup_folder_that_cannot_be_made_is_a_usage_error(tmp_path):
    root = _slim_tree(tmp_path / 'repo', modules=1)
    (tmp_path / 'a_file').write_text('x')
    with pytest.raises(tree.PortError, match='is a file'):
        tree.port_tree(str(root), backup=str(tmp_path / 'a_file'), tf_upgrade=None)
    with pytest.raises(tree.PortError, match='cannot be made'):
        tree.port_tree(str(root), backup=str(tmp_path / 'a_file' / 'sub'), tf_upgrade=None)


# -- links -----------------------------------------------------------------------------------------

def test_links_are_never_followed(tmp_path):
    outside = tmp_path / 'outside'
    outside.mkdir()
    (outside / 'shared.py').write_text('import tf_slim as slim\n')
    root = _slim_tree(tmp_path / 'repo', modules=1)
    (root / 'shared.py').symlink_to('../outside/shared.py')         # leaves SRC
    (root / 'data').symlink_to(outside)                              # a folder outside
    (root / 'alias.py').symlink_to('pkg/m000.py')                   # inside, relative
    (root / 'absolute.py').symlink_to(root / 'pkg' / 'm000.py')     # inside, absolute
    report = tree.port_tree(str(root), str(tmp_path / 'out'), tf_upgrade=None)
    out = tmp_path / 'out'
    assert report.files_scanned == 1 and [f.path for f in report.files] == ['pkg/m000.py']
    [problem] = report.problems
    assert problem.startswith('shared.py: a link leaving') and 'not ported' in problem
    assert report.links_not_followed == ['data']
    assert (outside / 'shared.py').read_text() == 'import tf_slim as slim\n'
    # In the copy every link is a link, to the same file as in SRC or to its copy.
    assert os.readlink(out / 'shared.py') == str(outside / 'shared.py')
    assert os.readlink(out / 'data') == str(outside)
    assert os.readlink(out / 'alias.py') == 'pkg/m000.py'
    assert os.readlink(out / 'absolute.py') == 'pkg/m000.py'
    assert (out / 'alias.py').read_text() == (out / 'pkg' / 'm000.py').read_text()

    # In place the links stay as they are; the file they point to is ported as itself.
    tree.port_tree(str(root), tf_upgrade=None)
    assert os.readlink(root / 'alias.py') == 'pkg/m000.py'
    assert (root / 'shared.py').is_symlink() and (root / 'absolute.py').is_symlink()
    assert (root / 'pkg' / 'm000.py').read_bytes() == (out / 'pkg' / 'm000.py').read_bytes()
    assert (outside / 'shared.py').read_text() == 'import tf_slim as slim\n'


@pytest.mark.skipif(not hasattr(os, 'mkfifo'), reason='named pipes are POSIX')
def test_a_fifo_is_reported_not_read(tmp_path):
    root = _slim_tree(tmp_path / 'repo', modules=1)
    os.mkfifo(root / 'pipe.py')
    report = tree.port_tree(str(root), str(tmp_path / 'out'), tf_upgrade=None)
    assert report.problems == ['pipe.py: not a regular file (a FIFO, socket or device): not '
                               'ported or copied']
    assert not (tmp_path / 'out' / 'pipe.py').exists()


# -- a second run changes nothing; the destination may be an empty folder --------------------------

def test_a_second_run_changes_nothing(tmp_path):
    root = tmp_path / 'repo'
    shutil.copytree(FIXTURE, root)
    _slim_tree(root / 'more', modules=2)
    (tmp_path / 'empty').mkdir()
    tree.port_tree(str(root), str(tmp_path / 'empty'), tf_upgrade=None)
    first = _snapshot(tmp_path / 'empty')
    again = tree.port_tree(str(tmp_path / 'empty'), str(tmp_path / 'again'), tf_upgrade=None)
    assert again.changed_files == [] and _snapshot(tmp_path / 'again') == first
    tree.port_tree(str(root), tf_upgrade=None)                      # in place
    assert _snapshot(root) == first
    in_place_again = tree.port_tree(str(root), tf_upgrade=None)
    assert in_place_again.changed_files == [] and _snapshot(root) == first


# -- line endings and encodings: byte-exact outside the edits --------------------------------------

NET = ('"""A net."""\n'
       'import tensorflow as tf\n'
       'from tensorflow.python.ops import array_ops\n'
       '\n'
       'slim = tf.contrib.slim  # the alias\n'
       '\n'
       '\n'
       'def net(x):\n'
       '    """Café."""\n'
       '    y = tf.contrib.layers.xavier_initializer()\n'
       '    return array_ops.unstack(tf.reshape(x, [-1]))\n')


def _ported_lf(code: str, tf_upgrade=None) -> str:
    results, problems = tree.port_sources({'net.py': code}, tf_upgrade=tf_upgrade)
    assert problems == []
    return results['net.py'][0]


def _endings_cases():
    """{name: (bytes of the file, bytes expected after the port)} computed from the LF port."""
    ported = _ported_lf(NET)
    assert ported != NET
    crlf = NET.replace('\n', '\r\n')
    mixed = ''.join(line + ('\r\n' if index % 2 else '\n')
                    for index, line in enumerate(NET.split('\n')[:-1]))
    latin = '# -*- coding: latin-1 -*-\n' + NET
    return {
        'crlf.py': (crlf.encode(), ported.replace('\n', '\r\n').encode()),
        'cr.py': (NET.replace('\n', '\r').encode(), ported.replace('\n', '\r').encode()),
        'mixed.py': (mixed.encode(), None),
        'bom.py': (b'\xef\xbb\xbf' + NET.encode(), b'\xef\xbb\xbf' + ported.encode()),
        'latin1.py': (latin.encode('latin-1'),
                      ('# -*- coding: latin-1 -*-\n' + ported).encode('latin-1')),
        'no_final_newline.py': (NET.rstrip('\n').encode(), ported.rstrip('\n').encode()),
    }


def test_line_endings_and_encodings_are_kept(tmp_path):
    root = tmp_path / 'repo'
    root.mkdir()
    cases = _endings_cases()
    for name, (data, _) in cases.items():
        (root / name).write_bytes(data)
    report = tree.port_tree(str(root), str(tmp_path / 'out'), tf_upgrade=None)
    assert report.problems == []
    for name, (_, expected) in cases.items():
        if expected is not None:
            assert (tmp_path / 'out' / name).read_bytes() == expected, name
    # Mixed: the LF port's text; each line kept ends as it did (lines found once on each side).
    mixed = (tmp_path / 'out' / 'mixed.py').read_bytes().decode()
    ported = _ported_lf(NET)
    assert mixed.replace('\r\n', '\n') == ported
    mixed_lines = mixed.splitlines(keepends=True)
    for index, line in enumerate(cases['mixed.py'][0].decode().splitlines(keepends=True)):
        text = line.rstrip('\r\n')
        if text and NET.count(text + '\n') == 1 and ported.count(text + '\n') == 1:
            [kept] = [new for new in mixed_lines if new.rstrip('\r\n') == text]
            assert kept == line, (index, line, kept)


@pytest.mark.slow
def test_line_endings_kept_through_tf_upgrade_v2(tmp_path):
    """tf_upgrade_v2 reads with universal newlines: the CRLF comes back from the port."""
    root = tmp_path / 'repo'
    root.mkdir()
    (root / 'crlf.py').write_bytes(NET.replace('\n', '\r\n').encode())
    (root / 'bom.py').write_bytes(b'\xef\xbb\xbf' + NET.encode())
    tree.port_tree(str(root), str(tmp_path / 'out'), tf_upgrade='SAFETY')
    ported = _ported_lf(NET, tf_upgrade='SAFETY')
    assert 'import tensorflow.compat.v1 as tf' in ported
    assert (tmp_path / 'out' / 'crlf.py').read_bytes() == ported.replace('\n', '\r\n').encode()
    assert (tmp_path / 'out' / 'bom.py').read_bytes() == b'\xef\xbb\xbf' + ported.encode()


# -- line numbers of the report: lines of the ported file ------------------------------------------

def _check_note_lines(code: str, notes) -> None:
    """Each note's line holds what the note names (the old name for changes)."""
    ported = code.split('\n')
    for note in notes:
        line = ported[note.line - 1]
        if note.kind == edits.CHANGED and '->' in note.message:
            new = note.message.split(' -> ')[-1].split('.')[-1].rstrip('()')
            assert new in line, (note, line)
        elif note.kind == edits.NOT_PORTED:
            assert 'quantize' in line or 'with_dependencies' in line, (note, line)


LINE_NUMBERS = ('import tensorflow as tf\n'
                'from tensorflow.python.ops import array_ops\n'    # removed: a line less
                'from tensorflow.python.ops import math_ops\n'     # removed: a line less
                'from tensorflow.python.ops import control_flow_ops\n'
                'slim = tf.contrib.slim\n'
                '\n'
                'def f(x):\n'
                '    y = tf.contrib.layers.xavier_initializer()\n'   # adds `import tf_slim`
                '    z = control_flow_ops.with_dependencies([y], x)\n'
                '    tf.contrib.quantize.create_training_graph()\n'
                '    return array_ops.unstack(math_ops.add(z, 1))\n')


def test_report_lines_are_lines_of_the_ported_file():
    results, _ = tree.port_sources({'m.py': LINE_NUMBERS}, tf_upgrade=None)
    code, notes = results['m.py']
    assert 'import tf_slim\n' in code and 'import array_ops' not in code
    assert code.count('\n') == LINE_NUMBERS.count('\n') - 1
    _check_note_lines(code, notes)
    kinds = {(note.kind, code.split('\n')[note.line - 1].strip()) for note in notes}
    assert (edits.NOT_PORTED, 'tf.contrib.quantize.create_training_graph()') in kinds
    assert (edits.NOT_PORTED, 'z = control_flow_ops.with_dependencies([y], x)') in kinds


@pytest.mark.slow
def test_report_lines_through_tf_upgrade_v2():
    code = 'import tensorflow as tf\n' + LINE_NUMBERS.replace('    return', (
        '    w = tf.random_normal([2])\n    return'))
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade='DEFAULT')
    ported, notes = results['m.py']
    _check_note_lines(ported, notes)
    random_notes = [note for note in notes if 'random' in note.message]
    assert random_notes and all('random' in ported.split('\n')[note.line - 1]
                                for note in random_notes)


# -- lines: the alignment behind line numbers and endings ------------------------------------------

def test_line_alignment_follows_every_kept_line():
    rng = random.Random(3)
    before = [f'line {index}' for index in range(5000)]
    after = [(index, line) for index, line in enumerate(before)]
    for _ in range(300):
        position = rng.randrange(len(after))
        action = rng.choice(('insert', 'delete', 'replace'))
        if action == 'insert':
            after.insert(position, (None, 'import something'))
        elif action == 'delete':
            del after[position]
        else:
            after[position] = (None, after[position][1] + '  # edited')
    after_lines = [line for _, line in after]
    mapped = lines.line_map('\n'.join(before), '\n'.join(after_lines))
    for new_index, (old_index, _) in enumerate(after):
        if old_index is not None:
            assert mapped(old_index + 1) == new_index + 1
    # A block found twice on each side still aligns, copy by copy.
    twice = before[:100] * 2
    edited = twice[:30] + ['new'] + twice[30:170] + twice[171:]
    expected = [(i, i + 1 if i >= 30 else i) for i in range(170)] + [
        (i, i) for i in range(171, 200)]
    assert lines.matching_lines(twice, edited) == expected


# -- a SIGKILL at any moment: the same command then gives the clean run's tree ---------------------

def _kill_when(command, trigger: pathlib.Path, deadline: float = 300) -> bool:
    """Runs `command`; SIGKILLs it once `trigger` exists. True if it was killed."""
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3')
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=environment)
    try:
        end = time.monotonic() + deadline
        while process.poll() is None and not trigger.exists() and time.monotonic() < end:
            time.sleep(0.001)  # polling the file system, not waiting for the process
        killed = process.poll() is None
        if killed:
            os.kill(process.pid, signal.SIGKILL)
        return killed
    finally:
        process.wait(timeout=60)


@pytest.fixture(scope='module')
def kill_tree(tmp_path_factory):
    """A tree whose port takes a while to write (a large data file, many modules), and the
    clean runs' results: the copy, and in place the tree and its backup."""
    work = tmp_path_factory.mktemp('kill')
    source = _slim_tree(work / 'src', modules=60)
    (source / 'data').mkdir()
    (source / 'data' / 'weights.bin').write_bytes(os.urandom(16 * 2 ** 20))
    tree.port_tree(str(source), str(work / 'clean'), tf_upgrade=None)
    shutil.copytree(source, work / 'clean_in_place')
    tree.port_tree(str(work / 'clean_in_place'), tf_upgrade=None)
    return source, {'copy': _snapshot(work / 'clean'),
                    'in place': _snapshot(work / 'clean_in_place'),
                    'backup': _snapshot(work / 'clean_in_place.port-backup')}


@pytest.mark.slow
@pytest.mark.parametrize('trigger', ['out.port-partial', 'out.port-partial/pkg/m030.py'])
def test_sigkill_of_a_copy_leaves_no_destination_then_the_same_command_finishes(
        kill_tree, tmp_path, trigger):
    source, clean = kill_tree
    destination = tmp_path / 'out'
    command = [sys.executable, '-m', 'slimdata', 'port', str(source), str(destination),
               '--tf-upgrade', 'off']
    _kill_when(command, tmp_path / trigger)
    # Whatever the moment: DST is absent, or whole and equal to a clean run.
    assert not destination.exists() or _snapshot(destination) == clean['copy']
    tree.port_tree(str(source), str(destination), tf_upgrade=None)  # the same command again
    assert _snapshot(destination) == clean['copy']
    assert not (tmp_path / 'out.port-partial').exists()


@pytest.mark.slow
@pytest.mark.parametrize('trigger', [tree.RUNNING_MARKER, 'pkg/m030.py'])
def test_sigkill_in_place_is_marked_then_the_same_command_finishes(kill_tree, tmp_path, trigger):
    source, clean = kill_tree
    root = tmp_path / 'src'
    shutil.copytree(source, root)
    original = _snapshot(root)
    backup = tmp_path / 'src.port-backup'
    command = [sys.executable, '-m', 'slimdata', 'port', str(root), '--tf-upgrade', 'off']
    _kill_when(command, backup / trigger)
    # Whatever the moment: the tree is marked as being ported, or untouched, or whole.
    marked = (backup / tree.RUNNING_MARKER).exists()
    assert marked or _snapshot(root) in (original, clean['in place'])
    tree.port_tree(str(root), tf_upgrade=None)  # the same command again
    assert _snapshot(root) == clean['in place']
    assert _snapshot(backup) == clean['backup']
    with pytest.raises(tree.PortError, match='interrupted port with --tf-upgrade off'):
        (backup / tree.RUNNING_MARKER).write_text('{"tf_upgrade": null}')
        tree.port_tree(str(root), tf_upgrade='SAFETY')


# -- the passes' triggers: a pass skipped by its trigger would have changed nothing ----------------

PY3_SNIPPETS = (
    'import collections\nP = collections.namedtuple("P", "a")\n',
    'import collections as c\nM = c.Mapping\n',
    'from collections import (OrderedDict,\n    Iterable)\n',
    'import tensorflow as tf\n\ndef read(path):\n    image_data = tf.gfile.FastGFile(path, "r")'
    '.read()\n    return image_data\n',
    'def _bytes_list_feature(v):\n    return v\nx = _bytes_list_feature("png")\n',
    'import tensorflow as tf\nf = tf.train.BytesList(value=["jpeg"])\n',
)


def test_a_pass_its_trigger_skips_has_no_work(monkeypatch):
    sources = {f'snippet_{index}.py': code for index, code in enumerate(
        PY3_SNIPPETS + (SLIM_MODULE.format(index=0), NET, LINE_NUMBERS))}
    sources.update({path.relative_to(FIXTURE).as_posix(): path.read_text()
                    for path in FIXTURE.rglob('*.py')})
    gated, _ = tree.port_sources(sources, tf_upgrade=None)
    # The Python 2 stage's test is no trigger: it says which files are Python 2.
    for stage in pipeline.STAGES[1:]:
        monkeypatch.setattr(stage, 'has_work', classmethod(lambda cls, code, context: True))
    every_pass, _ = tree.port_sources(sources, tf_upgrade=None)
    assert gated == every_pass
    assert sum(code != sources[path] for path, (code, _) in gated.items()) >= 10


# -- the metadata a pass answers itself is libcst's ------------------------------------------------

def test_pass_metadata_equals_libcst_providers():
    from libcst.metadata import (
        MetadataWrapper,
        ParentNodeProvider,
        PositionProvider,
        QualifiedNameProvider,
    )

    class Probe(edits.PortTransformer):
        def on_leave(self, original_node, updated_node):
            self.seen.append((original_node, self.get_metadata(ParentNodeProvider, original_node,
                                                               None),
                              self.line_of(original_node) if original_node in positions else None,
                              self.get_metadata(QualifiedNameProvider, original_node, set())))
            return super().on_leave(original_node, updated_node)

    codes = [path.read_text() for path in sorted(FIXTURE.rglob('*.py'))
             if path.stat().st_size] + [NET, LINE_NUMBERS]
    for code in codes:
        # The pass runs as the port runs it: its answers from Python's parser where they can
        # be (`facts`, `qualified`), LibCST's otherwise.
        parsed = edits.ParsedFile(code)
        reference = MetadataWrapper(parsed.module, unsafe_skip_copy=True)
        parents = reference.resolve(ParentNodeProvider)
        positions = reference.resolve(PositionProvider)
        names = reference.resolve(QualifiedNameProvider)
        probe = Probe(edits.Context())
        probe.seen = []
        parsed.run(probe)
        assert len(probe.seen) > 100
        for node, parent, line, qualified in probe.seen:
            assert parent is parents.get(node)
            assert line == (positions[node].start.line if node in positions else None)
            expected = names.get(node, set())
            assert qualified == (expected() if callable(expected) else expected)
