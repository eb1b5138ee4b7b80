"""models/research/slim's own cluster flags, ported, on a local parameter server and 2 workers.

Runs a ported `train_image_classifier.py` (see `slimdata port`) as slim's distributed recipe
does, with its own flags: `--worker_replicas=2 --num_ps_tasks=1 --task=0|1 --sync_replicas
--replicas_to_aggregate=2`, one parameter server and two workers on free ports of 127.0.0.1,
each task a process of its own, and trains a few steps of `lenet` on slimdata's records (the
output of `slimdata convert image-folder`, seen under the names slim's `flowers` descriptor
globs). Its model_deploy builds the input pipeline under `deploy_config.inputs_device()`
('/job:worker/device:CPU:0') and the variables on the parameter server; each worker reads the
whole set (the script passes no worker arguments, so each reads as tf_slim did).

slim's script does not start TensorFlow servers (it takes `--master`): each worker process
here starts its server, then runs the script with `--master` set to it, as a cluster manager's
per-task wrapper would. The parameter server is ended by its pid; the workers must end by
themselves (a bound on each: `timeout`). The chief ends as it did on TensorFlow 1.x: its last
checkpoint saved, then a RuntimeError after 120 s (KNOWN_SYNC_END), which the summary names.

model_deploy's device chooser places ops whose type starts with 'Variable' on the parameter
servers; today's variables are 'VarHandleOp's, and `slimdata port` makes the check accept them
(slimdata/port/variables.py), so the ported slim trains here with no hand edit
(docs/distributed.md, "models/research/slim").

    .venv/bin/python benchmarks/cluster_slim.py SLIM_DIR DATASET_DIR WORK_DIR [--steps 3]
        [--make-data]

SLIM_DIR is the ported research/slim folder; DATASET_DIR holds `slimdata convert image-folder`
output of 5 classes (`--make-data` writes a small synthetic one there first). Prints the
summary of `run_cluster_training` as JSON.
"""

import argparse
import glob
import json
import os
import re
import runpy
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

#: slim's `flowers` descriptor: 5 classes, files `flowers_<split>_*.tfrecord`.
DATASET_NAME, NUM_CLASSES = 'flowers', 5
TASK_TIMEOUT = 900  # seconds: a bound on each worker; only a hang reaches it
#: How the chief of slim.learning.train with --sync_replicas ends, after saving its last
#: checkpoint, on TensorFlow 1.x as today (tensorflow/models#6566): its SyncReplicasOptimizer
#: queue runner still waits for gradients, and the Supervisor's join gives up after 120 s.
KNOWN_SYNC_END = ('RuntimeError: Coordinator stopped with threads still running: '
                  'QueueRunnerThread-sync_token_q')
#: A line slim.learning.train logs for each step a worker runs.
STEP_LINE = re.compile(r'^INFO:tensorflow:global step \d+: loss = ', re.MULTILINE)


def run_cluster_training(slim_dir: str, dataset_dir: str, work_dir: str, steps: int = 3,
                         model_name: str = 'lenet', timeout: float = TASK_TIMEOUT
                         ) -> Dict[str, Any]:
    """Trains `steps` synchronous steps of slim's `train_image_classifier.py` on a local
    parameter server and 2 workers, with the script's own cluster flags.

    Args:
      slim_dir: the ported models/research/slim folder (holding train_image_classifier.py).
      dataset_dir: `slimdata convert image-folder` output of 5 classes (train-*.tfrecord,
        labels.txt), or slim's flowers converter's (flowers_train_*.tfrecord, labels.txt).
      work_dir: a folder for the records' slim names, the train dirs and the tasks' logs.
      steps: the global steps to train (`--max_number_of_steps`).
      model_name: a slim net (`--model_name`).
      timeout: seconds each worker may take.

    Returns:
      A dict: `ok` (the chief's last checkpoint is at `steps`, and each worker exited 0 or,
      the chief, ended as KNOWN_SYNC_END says), `global_step` (of the chief's last
      checkpoint, or None), `seconds`, `flags` (the script's flags but `--task` and
      `--train_dir`), and per task (`worker0`, `worker1`): its `exit` status (None: ended at
      the timeout), `known_sync_end` (whether its output ends with KNOWN_SYNC_END),
      `local_steps` (the training steps it ran, from its log), `seconds` and `log` (the
      path of its output).
    """
    work = Path(work_dir)
    work.mkdir(parents=True, exist_ok=True)
    data = slim_named_records(Path(dataset_dir), work / 'data')
    ps_port, *worker_ports = free_ports(3)
    cluster = {'ps': [f'127.0.0.1:{ps_port}'],
               'worker': [f'127.0.0.1:{port}' for port in worker_ports]}
    flags = [f'--dataset_name={DATASET_NAME}', '--dataset_split_name=train',
             f'--dataset_dir={data}', f'--model_name={model_name}', '--batch_size=4',
             f'--max_number_of_steps={steps}', '--clone_on_cpu=True', '--num_readers=1',
             '--num_preprocessing_threads=1', '--log_every_n_steps=1',
             '--save_summaries_secs=3600', '--save_interval_secs=3600',
             '--worker_replicas=2', '--num_ps_tasks=1', '--sync_replicas',
             '--replicas_to_aggregate=2']
    started = time.monotonic()
    ps = start_task(cluster, 'ps', 0, slim_dir, [], work / 'ps0.log')
    workers = {f'worker{task}': start_task(
        cluster, 'worker', task, slim_dir,
        flags + [f'--task={task}', f'--train_dir={work / f"train{task}"}'],
        work / f'worker{task}.log') for task in range(2)}
    try:
        ended = wait_for_all(workers, started + timeout)
    finally:
        for process in [ps, *workers.values()]:
            end_by_pid(process)
    tasks = {name: {'exit': workers[name].returncode if name in ended else None,
                    **steps_and_end(work / f'{name}.log'),
                    'seconds': round(ended.get(name, time.monotonic()) - started, 1),
                    'log': str(work / f'{name}.log')} for name in workers}
    global_step = last_checkpoint_step(work / 'train0')
    ended = all(task['exit'] == 0 or task['known_sync_end'] for task in tasks.values())
    return {'ok': ended and global_step == steps, 'global_step': global_step,
            'seconds': round(time.monotonic() - started, 1), 'flags': flags, **tasks}


def slim_named_records(dataset_dir: Path, folder: Path) -> Path:
    """`folder`, holding links to the train shards of `dataset_dir` under the names slim's
    flowers descriptor globs (`flowers_train_00000-of-00002.tfrecord`) and its labels.txt;
    or `dataset_dir` itself when it already holds such shards (slim's own flowers converter
    wrote it, as benchmarks/port_corpus.py runs it)."""
    if (sorted(dataset_dir.glob(f'{DATASET_NAME}_train_*.tfrecord'))
            and (dataset_dir / 'labels.txt').is_file()):
        return dataset_dir
    folder.mkdir(parents=True, exist_ok=True)
    shards = sorted(dataset_dir.glob('train-*.tfrecord'))
    if not shards or not (dataset_dir / 'labels.txt').is_file():
        raise ValueError(f'{dataset_dir} holds no train-*.tfrecord shards and labels.txt of '
                         '`slimdata convert image-folder` (run with --make-data to write them)')
    for shard in shards:
        link = folder / shard.name.replace('train-', f'{DATASET_NAME}_train_')
        if not link.exists():
            link.symlink_to(shard.resolve())
    labels = folder / 'labels.txt'
    if not labels.exists():
        labels.symlink_to((dataset_dir / 'labels.txt').resolve())
    return folder


def make_records(dataset_dir: str, images_per_class: int = 40) -> None:
    """Writes a small synthetic 5-class image set and converts it with `slimdata convert`."""
    from slimdata.datasets import synthetic
    with tempfile.TemporaryDirectory() as scratch:
        source = os.path.join(scratch, 'images')
        synthetic.make_image_folder(source, num_classes=NUM_CLASSES,
                                    images_per_class=images_per_class, image_size=28)
        subprocess.run([sys.executable, '-m', 'slimdata', 'convert', 'image-folder', source,
                        dataset_dir, '--shards', '2', '--validation-ratio', '0.1', '-q'],
                       check=True)


def free_ports(count: int) -> List[int]:
    """Ports of 127.0.0.1 free now (bound, read and released together)."""
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(('127.0.0.1', 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


def start_task(cluster: Dict[str, List[str]], job: str, task: int, slim_dir: str,
               flags: List[str], log: Path) -> subprocess.Popen:
    """Starts one task of the cluster (this script with --run-task), its output to `log`."""
    with open(log, 'w') as out:
        return subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), '--run-task', json.dumps(cluster), job,
             str(task), slim_dir, *flags], stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)


def wait_for_all(processes: Dict[str, subprocess.Popen], deadline: float) -> Dict[str, float]:
    """Waits until every process has ended or `deadline` (time.monotonic()) has passed;
    returns when each that ended did."""
    ended: Dict[str, float] = {}
    while len(ended) < len(processes) and time.monotonic() < deadline:
        for name, process in processes.items():
            if name not in ended and process.poll() is not None:
                ended[name] = time.monotonic()
        time.sleep(0.2)  # polling the processes' state, bounded by the deadline
    return ended


def end_by_pid(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.wait()


def steps_and_end(log: Path) -> Dict[str, Any]:
    """The training steps a worker's log shows, and whether it ended as KNOWN_SYNC_END."""
    text = log.read_text(errors='replace')
    return {'local_steps': len(STEP_LINE.findall(text)),
            'known_sync_end': KNOWN_SYNC_END in text[-2000:]}


def last_checkpoint_step(train_dir: Path):
    """The global step of the last checkpoint in `train_dir` (model.ckpt-N), or None."""
    steps = [int(match.group(1)) for match in
             (re.search(r'model\.ckpt-(\d+)\.index$', path)
              for path in glob.glob(str(train_dir / 'model.ckpt-*.index'))) if match]
    return max(steps, default=None)


def run_task(cluster_json: str, job: str, task: int, slim_dir: str, flags: List[str]) -> None:
    """One task: a TensorFlow server in this process; the parameter server serves until it is
    ended, a worker runs train_image_classifier.py with `--master` set to its server."""
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '1')
    import tensorflow as tf
    server = tf.distribute.Server(tf.train.ClusterSpec(json.loads(cluster_json)),
                                  job_name=job, task_index=task)
    if job == 'ps':
        server.join()
    script = os.path.join(slim_dir, 'train_image_classifier.py')
    sys.path.insert(0, slim_dir)
    sys.argv = [script, *flags, f'--master={server.target}']
    runpy.run_path(script, run_name='__main__')


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == '--run-task':
        cluster_json, job, task, slim_dir, *flags = sys.argv[2:]
        run_task(cluster_json, job, int(task), slim_dir, flags)
        return
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('slim_dir', help='the ported models/research/slim folder')
    parser.add_argument('dataset_dir', help='slimdata convert image-folder output, 5 classes')
    parser.add_argument('work_dir', help='a folder for the run (train dirs, logs)')
    parser.add_argument('--steps', type=int, default=3)
    parser.add_argument('--model-name', default='lenet')
    parser.add_argument('--make-data', action='store_true',
                        help='first write a small synthetic 5-class set to DATASET_DIR')
    args = parser.parse_args()
    if args.make_data:
        make_records(args.dataset_dir)
    result = run_cluster_training(args.slim_dir, args.dataset_dir, args.work_dir, args.steps,
                                  args.model_name)
    print(json.dumps(result, indent=2))
    sys.exit(0 if result['ok'] else 1)


if __name__ == '__main__':
    main()
