"""Stopping `slimdata convert`: signals, a killed parent, a full disk, a FIFO in the tree.

Every case runs the command line in a subprocess of its own session, as a user's shell would,
and signals that process, never the test process. The workers are held mid-shard by the
test-only start-up hook in tests/gate/ (every item waits for a `go` file), so the signal
always lands while shards are being written, however fast or loaded the machine is: no
sleeps, no hoping about timing. Timeouts are generous bounds on a hang, not expectations.
"""

import os
import queue
import resource
import signal
import subprocess
import sys
import threading
import time

import pytest

from slimdata.datasets import synthetic
from slimdata.records.verify import verify_files

GATE_HOOK = os.path.join(os.path.dirname(__file__), 'gate')
NUM_SHARDS = 4
IMAGES = 16  # 2 classes x 8: 4 per shard
HANG = 180  # seconds: a bound that only a hang reaches


@pytest.fixture(scope='module')
def source(tmp_path_factory):
    root = tmp_path_factory.mktemp('source') / 'shapes'
    synthetic.make_image_folder(str(root), num_classes=2, images_per_class=IMAGES // 2,
                                image_size=16)
    return str(root)


def convert_command(source, out, *options):
    return [sys.executable, '-m', 'slimdata', 'convert', 'image-folder', source, str(out),
            '--validation-ratio', '0', '--shards', str(NUM_SHARDS), *options]


def as_from_a_terminal():
    """A preexec_fn: Ctrl-C's signal acts as in a terminal. (A shell runs background jobs, a
    test run started with `&` included, with SIGINT ignored, and children inherit that.)"""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Run:
    """A `slimdata convert` in its own session, its stderr read line by line as it comes."""

    def __init__(self, command, gate=None):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3')
        if gate is not None:
            env['SLIMDATA_TEST_GATE'] = str(gate)
            env['PYTHONPATH'] = os.pathsep.join(filter(None, [GATE_HOOK,
                                                              env.get('PYTHONPATH')]))
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True,
                                        start_new_session=True, preexec_fn=as_from_a_terminal)
        self.lines = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stderr(self):
        for line in self.process.stderr:
            self.stderr.append(line)
            self.lines.put(line)
        self.lines.put(None)  # the pipe closed: every process holding it is gone

    def wait_for_line(self, text):
        deadline = time.monotonic() + HANG
        while time.monotonic() < deadline:
            line = self.lines.get(timeout=HANG)
            if line is None:
                raise AssertionError(f'stderr closed before {text!r}: {"".join(self.stderr)}')
            if text in line:
                return line
        raise AssertionError(f'no {text!r} in {HANG} s')

    def wait_for_pipe_closed(self):
        deadline = time.monotonic() + HANG
        while time.monotonic() < deadline:
            if self.lines.get(timeout=HANG) is None:
                return
        raise AssertionError('the output pipe stayed open')


def wait_for_workers_mid_shard(gate, parent_pid, workers):
    """Waits until `workers` processes other than the parent are holding an item."""
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        pids = {name.split('-')[1] for name in os.listdir(gate) if name.startswith('started-')}
        if len(pids - {str(parent_pid)}) >= workers:
            return
        time.sleep(0.05)
    raise AssertionError(f'{workers} workers did not start in {HANG} s')


def session_processes(session):
    """The pids of the live processes of a session (the run and everything it started)."""
    found = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == session:
                    with open(f'/proc/{entry}/stat') as stat:
                        if stat.read().split(') ')[-1].split()[0] != 'Z':  # not a zombie
                            found.append(int(entry))
            except (ProcessLookupError, FileNotFoundError, PermissionError):
                continue
    return found


def wait_until_gone(session):
    deadline = time.monotonic() + HANG
    while session_processes(session):
        if time.monotonic() > deadline:
            raise AssertionError(f'still running: {session_processes(session)}')
        time.sleep(0.05)


def temporaries(folder):
    return [name for name in os.listdir(folder) if '.tmp-' in name]


def shard_bytes(folder):
    return {name: open(os.path.join(folder, name), 'rb').read()
            for name in sorted(os.listdir(folder))}


def assert_a_rerun_finishes_like_a_fresh_conversion(source, out, fresh):
    for folder in (out, fresh):
        finished = subprocess.run(convert_command(source, folder), capture_output=True,
                                  text=True, timeout=HANG)
        assert finished.returncode == 0, finished.stderr
    assert shard_bytes(out) == shard_bytes(fresh)
    shards = [os.path.join(out, name) for name in os.listdir(out) if name.endswith('.tfrecord')]
    assert verify_files(shards).ok


@pytest.mark.slow
@pytest.mark.parametrize('how, status, said', [
    ('SIGTERM to the parent', 143, 'slimdata convert: terminated (SIGTERM)'),
    ('Ctrl-C (SIGINT to the process group)', 130, 'slimdata convert: interrupted'),
])
def test_a_signal_stops_the_workers_mid_shard_and_leaves_no_temporaries(
        tmp_path, source, how, status, said):
    gate, out = tmp_path / 'gate', tmp_path / 'out'
    gate.mkdir()
    run = Run(convert_command(source, out, '--processes', '2'), gate=gate)
    wait_for_workers_mid_shard(gate, run.process.pid, workers=2)
    assert temporaries(out), 'the workers hold their shards open'
    if how.startswith('SIGTERM'):
        os.kill(run.process.pid, signal.SIGTERM)
    else:
        os.killpg(run.process.pid, signal.SIGINT)
    run.wait_for_line('stopping the workers')  # the parent acts on it...
    (gate / 'go').touch()  # ...and the held items may end: the workers see the stop
    assert run.process.wait(timeout=HANG) == status
    run.wait_for_pipe_closed()
    assert run.stderr[-1].strip() == said
    # The line before says what is left, as the dataset_info.json it names records it.
    left = run.stderr[-2].strip()
    assert left.startswith('slimdata convert image-folder: stopped; left incomplete, as '
                           f'{out / "dataset_info.json"} records: split'), run.stderr
    assert 'run the same command again to finish it' in left
    wait_until_gone(run.process.pid)
    assert temporaries(out) == []
    # The workers stopped at their first item: no shard was completed.
    assert [name for name in os.listdir(out) if name.endswith('.tfrecord')] == []
    assert_a_rerun_finishes_like_a_fresh_conversion(source, str(out), str(tmp_path / 'fresh'))


@pytest.mark.slow
def test_workers_end_when_the_parent_is_killed_and_the_pipe_closes(tmp_path, source):
    """SIGKILL leaves the parent no chance to clean up: the workers notice it is gone,
    remove their temporaries and exit, so `slimdata convert ... | tee log` ends."""
    gate, out = tmp_path / 'gate', tmp_path / 'out'
    gate.mkdir()
    run = Run(convert_command(source, out, '--processes', '2'), gate=gate)
    wait_for_workers_mid_shard(gate, run.process.pid, workers=2)
    assert len(temporaries(out)) == 2
    os.kill(run.process.pid, signal.SIGKILL)
    run.wait_for_pipe_closed()  # the workers (and the resource tracker) let go of it
    wait_until_gone(run.process.pid)
    assert temporaries(out) == []
    assert_a_rerun_finishes_like_a_fresh_conversion(source, str(out), str(tmp_path / 'fresh'))


def limit_file_size(num_bytes):
    """A preexec_fn: files larger than `num_bytes` cannot be written (EFBIG, as a full disk
    gives ENOSPC), and the signal that would kill the process for it is ignored."""
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (num_bytes, num_bytes))
    return apply


@pytest.fixture(scope='module')
def large_source(tmp_path_factory):
    """Images of a few kB, so that a shard outgrows dataset_info.json (and the 4 kB that
    multiprocessing's shared memory needs) by far."""
    root = tmp_path_factory.mktemp('source') / 'large'
    synthetic.make_image_folder(str(root), num_classes=2, images_per_class=IMAGES // 2,
                                image_size=96)
    return str(root)


@pytest.mark.slow
@pytest.mark.parametrize('workers', ['1', '2'])
def test_a_write_error_is_one_line_naming_the_shard_and_leaves_no_temporary(
        tmp_path, large_source, workers):
    out = tmp_path / 'out'
    run = subprocess.run(convert_command(large_source, out, '--processes', workers), text=True,
                         capture_output=True, timeout=HANG, preexec_fn=limit_file_size(8192))
    assert run.returncode == 1
    error, left = run.stderr.strip().splitlines()[-2:]
    assert error.startswith(f'slimdata convert image-folder: error: {out}/train-0000')
    assert error.endswith('.tfrecord: cannot write: [Errno 27] File too large')
    assert left.startswith("slimdata convert image-folder: stopped; left incomplete, as "
                           f"{out}/dataset_info.json records: split 'train' (")
    assert 'Traceback' not in run.stderr
    assert temporaries(out) == []


@pytest.mark.slow
def test_a_write_error_in_dataset_info_names_it_and_leaves_no_temporary(tmp_path, source):
    out = tmp_path / 'out'
    run = subprocess.run(convert_command(source, out), text=True, capture_output=True,
                         timeout=HANG, preexec_fn=limit_file_size(200))
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == (
        f'slimdata convert image-folder: error: {out}/dataset_info.json: cannot write: '
        '[Errno 27] File too large')
    assert temporaries(out) == []


@pytest.mark.slow
def test_a_fifo_in_the_tree_is_refused_at_once_not_waited_on(tmp_path, source):
    tree = tmp_path / 'tree'
    subprocess.run(['cp', '-r', source, str(tree)], check=True)
    fifo = tree / sorted(os.listdir(tree))[0] / 'zz_pipe.png'
    os.mkfifo(fifo)
    run = subprocess.run(convert_command(str(tree), tmp_path / 'out'), text=True,
                         capture_output=True, timeout=HANG)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == (
        f'slimdata convert image-folder: error: {fifo} is a FIFO (named pipe), not a regular '
        'file')
