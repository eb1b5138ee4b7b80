"""Training on several machines with TensorFlow's own runtime, on real local clusters.

Each test starts a parameter server and two workers (tests/cluster_programs/tf1_task.py) as
subprocesses on free ports of 127.0.0.1, and ends every one of them by its pid. The order in
which tasks start is made by the test, never by sleeps: it starts one task and waits until
that task says it is waiting (or has ended) before starting the next. Timeouts only bound a
hang. The records are numbers 0..119 in 4 files of 30, written by TensorFlow's writer, so what
each worker read is checked against the files' contents.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_workers import make_files

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'benchmarks'))
from cluster_slim import free_ports  # noqa: E402 (the benchmark's; its imports are stdlib)

pytestmark = pytest.mark.slow

PROGRAMS = Path(__file__).resolve().parent / 'cluster_programs'
HANG = 240  # seconds: a bound that only a hang reaches
SHARDS = [30, 30, 30, 30]
TOTAL = sum(SHARDS)
#: Worker i's share with `num_workers=2`: the sorted files i and i + 2, read in order.
SHARES = [list(range(0, 30)) + list(range(60, 90)), list(range(30, 60)) + list(range(90, 120))]
WAITING_FOR_THE_CHIEF = 'Waiting for model to be ready'


class Task:
    """One task's process; its stdout and stderr go to files the test reads as they grow."""

    def __init__(self, command, folder, name, env=None):
        self.name = name
        self.out, self.err = folder / f'{name}.out', folder / f'{name}.err'
        with open(self.out, 'w') as out, open(self.err, 'w') as err:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=out,
                                            stderr=err, text=True, env=env)

    def wait_for(self, text, stream='err'):
        """Returns the first line of `stream` holding `text`, once the task has written it."""
        path = self.err if stream == 'err' else self.out
        deadline = time.monotonic() + HANG
        while time.monotonic() < deadline:
            for line in path.read_text().splitlines():
                if text in line:
                    return line
            if self.process.poll() is not None:
                pytest.fail(f'{self.name} ended (exit {self.process.returncode}) before saying '
                            f'{text!r}:\n{self.tail()}')
            time.sleep(0.1)  # polling a file for a line: the wait is for the line, bounded
        pytest.fail(f'{self.name} did not say {text!r} in {HANG} s:\n{self.tail()}')

    def release(self, held='HELD'):
        """Lets a task held at `held` (see tf1_task.py) go on, once it is held there."""
        self.wait_for(held, stream='out')
        self.process.stdin.write('go\n')
        self.process.stdin.flush()

    def result(self):
        """The task's JSON summary, once it has ended by itself with exit status 0."""
        try:
            self.process.wait(timeout=HANG)
        except subprocess.TimeoutExpired:
            pytest.fail(f'{self.name} did not end in {HANG} s:\n{self.tail()}')
        assert self.process.returncode == 0, f'{self.name} failed:\n{self.tail()}'
        return json.loads(self.out.read_text().splitlines()[-1])

    def end(self):
        """Ends the task by its pid if it is still running."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=HANG)

    def tail(self):
        return '\n'.join(self.err.read_text().splitlines()[-60:])


class Cluster:
    """A parameter server and `num_workers` workers' addresses; starts their tasks."""

    def __init__(self, folder, data, num_workers=2):
        ps, *workers = free_ports(1 + num_workers)
        self.spec = {'ps': [f'127.0.0.1:{ps}'],
                     'worker': [f'127.0.0.1:{port}' for port in workers]}
        self.folder, self.data = folder, data
        self.tasks = []

    def start(self, job, task, *options, hold=False):
        """Starts a task; with `hold`, it imports TensorFlow and waits for `Task.release`
        (tasks that must wait for others then do not wait for the import as well)."""
        command = [sys.executable, str(PROGRAMS / 'tf1_task.py'), json.dumps(self.spec), job,
                   str(task), '--data', self.data, '--num-samples', str(TOTAL), *options,
                   *(['--hold'] if hold else [])]
        started = Task(command, self.folder, f'{job}{task}-{len(self.tasks)}')
        self.tasks.append(started)
        return started

    def end_every_task(self):
        for task in self.tasks:
            task.end()


@pytest.fixture
def cluster(tmp_path):
    pattern, total = make_files(tmp_path, SHARDS)
    assert total == TOTAL
    started = Cluster(tmp_path, pattern)
    yield started
    started.end_every_task()


def test_split_workers_read_every_record_once_and_a_restarted_worker_starts_over(cluster):
    cluster.start('ps', 0)
    # The non-chief starts first, and waits for the chief to initialise the model, saying so.
    doomed = cluster.start('worker', 1, '--split', '--pause-after', '20')
    chief = cluster.start('worker', 0, '--split', '--hold-after-init', hold=True)
    restarted = cluster.start('worker', 1, '--split', hold=True)
    doomed.wait_for(WAITING_FOR_THE_CHIEF)
    chief.release()
    # The chief reads only once the other worker has read 20 records. (With one epoch counter
    # shared on the parameter server, as tf_slim's, the chief would find it used up.)
    chief.wait_for('INITIALISED', stream='out')
    read_before = json.loads(doomed.wait_for('PAUSED', stream='out').split(' ', 1)[1])
    chief.release('INITIALISED')
    assert chief.result()['numbers'] == SHARES[0]
    # Killed mid-epoch, then restarted.
    os.kill(doomed.process.pid, signal.SIGKILL)
    doomed.process.wait(timeout=HANG)
    restarted.release()
    assert restarted.result()['numbers'] == SHARES[1]
    assert sorted(SHARES[0] + SHARES[1]) == list(range(TOTAL))  # every record once
    # The restarted worker's epoch starts over: the 20 records it read before it died are
    # read again, with the rest of its share; the other worker's share is not touched.
    assert read_before == SHARES[1][:20]


def test_without_worker_arguments_each_worker_reads_the_whole_set_whenever_it_starts(cluster):
    """tf_slim's meaning of a pipeline without num_workers: each worker reads everything. The
    chief initialises first, and reads after the other worker has read its whole epoch."""
    cluster.start('ps', 0)
    chief = cluster.start('worker', 0, '--hold-after-init')
    second = cluster.start('worker', 1, hold=True)
    chief.wait_for('INITIALISED', stream='out')
    second.release()
    read_by_second = second.result()['numbers']
    # (tf_slim's chief reads nothing here: its epoch counter, shared on the parameter server,
    # was used up by the other worker.)
    chief.release('INITIALISED')
    assert [chief.result()['numbers'], read_by_second] == [list(range(TOTAL))] * 2


def test_sync_replicas_optimizer_trains_on_each_workers_share(cluster):
    cluster.start('ps', 0)
    steps = ['--split', '--sync-steps', '6']
    second, chief = cluster.start('worker', 1, *steps), cluster.start('worker', 0, *steps,
                                                                      hold=True)
    second.wait_for(WAITING_FOR_THE_CHIEF)
    chief.release()
    results = [chief.result(), second.result()]
    for index, result in enumerate(results):
        assert result['global_step'] == 6  # six updates, each of two aggregated gradients
        assert result['numbers'] and set(result['numbers']) <= set(SHARES[index])
        # Both see the one model on the parameter server, moved from zero towards y = 3x + 1.
        assert result['weight'] == results[0]['weight'] > 0
        assert result['bias'] == results[0]['bias'] > 0


def test_multi_worker_mirrored_strategy_trains_on_each_workers_share(tmp_path):
    pattern, _ = make_files(tmp_path, SHARDS)
    addresses = [f'127.0.0.1:{port}' for port in free_ports(2)]
    tasks = []
    try:
        for index in range(2):
            config = {'cluster': {'worker': addresses}, 'task': {'type': 'worker', 'index': index}}
            command = [sys.executable, str(PROGRAMS / 'tf2_worker.py'), '--data', pattern,
                       '--num-samples', str(TOTAL), '--batch', '10']
            tasks.append(Task(command, tmp_path, f'worker{index}',
                              env=dict(os.environ, TF_CONFIG=json.dumps(config))))
        results = [task.result() for task in tasks]
    finally:
        for task in tasks:
            task.end()
    # workers.from_tf_config() gives each its share: every record once over the workers.
    assert [result['numbers'] for result in results] == SHARES
    assert [result['steps'] for result in results] == [6, 6]  # 60 records in batches of 10
    # One model, mirrored: the same on both workers, moved from zero towards y = 3x + 1.
    assert results[0]['weight'] == results[1]['weight'] > 0
    assert results[0]['bias'] == results[1]['bias'] > 0
