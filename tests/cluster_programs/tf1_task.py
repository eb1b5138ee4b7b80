"""One task of a TF1 cluster (a parameter server or a worker), built as docs/distributed.md's
recipe builds it: `replica_device_setter`, slimdata's `DatasetDataProvider`, a monitored
session whose sessions see only the parameter servers and their own worker (`device_filters`).

    python tf1_task.py CLUSTER_JSON ps 0
    python tf1_task.py CLUSTER_JSON worker TASK --data PATTERN --num-samples N [--split]
        [--pause-after K] [--sync-steps S] [--hold] [--hold-after-init]

A worker reads one epoch of the records (numbers n, see tests/test_cluster.py) and prints
`{"task": TASK, "numbers": [...], "global_step": G}` on stdout; with `--split` it reads its
share (`num_workers`, `worker_index`), without it the whole set. `--pause-after K` prints
`PAUSED [the K numbers]` after K records and waits on stdin (for the test to kill it).
`--sync-steps S` trains a small linear model with `SyncReplicasOptimizer` (both workers' gradients
averaged in every step) for S global steps on the provider's records, repeated, instead.
`--hold` prints `HELD` once TensorFlow is imported and waits for a line on stdin before it
starts its server (so a test can start it early and let it run when its turn comes);
`--hold-after-init` (the chief) prints `INITIALISED` once it has initialised the model and
its local variables, and waits for a line on stdin before its queue runners start.

A worker that waits for the chief to initialise the model says so on stderr (TensorFlow's
"Waiting for model to be ready"), and gives up after WAIT_SECONDS.
"""

import argparse
import json
import os
import sys

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

import tensorflow as tf  # noqa: E402

from slimdata import dataset, tfexample_decoder  # noqa: E402
from slimdata.dataset_data_provider import DatasetDataProvider  # noqa: E402

WAIT_SECONDS = 120  # a bound on waiting for the chief, only a hang reaches
RETRY_SECONDS = 0.5  # how often a waiting worker looks again (MonitoredTrainingSession: 30)


def numbers_dataset(pattern, num_samples):
    decoder = tfexample_decoder.TFExampleDecoder(
        {'n': tf.io.FixedLenFeature([], tf.int64)}, {'n': tfexample_decoder.Tensor('n')})
    return dataset.Dataset(pattern, tf.compat.v1.TFRecordReader, decoder, num_samples, {})


class WaitingWorkerSessionCreator(tf.compat.v1.train.SessionCreator):
    """TensorFlow's WorkerSessionCreator, looking every RETRY_SECONDS (not 30) whether the
    chief has initialised the model."""

    def __init__(self, master, config):
        self._scaffold = tf.compat.v1.train.Scaffold()
        self._master, self._config = master, config

    def create_session(self):
        self._scaffold.finalize()
        manager = tf.compat.v1.train.SessionManager(
            local_init_op=self._scaffold.local_init_op,
            ready_op=self._scaffold.ready_op,
            ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
            graph=tf.compat.v1.get_default_graph(), recovery_wait_secs=RETRY_SECONDS)
        return manager.wait_for_session(self._master, config=self._config,
                                        max_wait_secs=WAIT_SECONDS)


class HoldingChiefSessionCreator(tf.compat.v1.train.ChiefSessionCreator):
    """The chief's session creator, holding between the initialisation and the queue runners'
    start (MonitoredSession starts them when the session is created) until told to go on."""

    def create_session(self):
        session = super().create_session()
        hold('INITIALISED')
        return session


def hold(what):
    print(what, flush=True)
    sys.stdin.readline()


def session_creator(server, task, hold_after_init):
    # A worker's sessions see the parameter servers and itself only: it neither waits for
    # the other workers to start nor hangs when they have ended.
    config = tf.compat.v1.ConfigProto(
        device_filters=['/job:ps', f'/job:worker/task:{task}'],
        operation_timeout_in_ms=WAIT_SECONDS * 1000)
    if task == 0:
        chief = HoldingChiefSessionCreator if hold_after_init else \
            tf.compat.v1.train.ChiefSessionCreator
        return chief(master=server.target, config=config)
    return WaitingWorkerSessionCreator(server.target, config)


def sync_training(numbers, global_step, num_workers, is_chief, steps):
    """Fetches [train op, batch of x] fitting y = 3x + 1 on x = n / 100 with
    SyncReplicasOptimizer, and the hooks it needs."""
    x = tf.cast(tf.compat.v1.train.batch([numbers], batch_size=4), tf.float32) / 100.
    weight = tf.compat.v1.get_variable('weight', [], initializer=tf.zeros_initializer())
    bias = tf.compat.v1.get_variable('bias', [], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(weight * x + bias - (3. * x + 1.)))
    optimizer = tf.compat.v1.train.SyncReplicasOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(0.5), replicas_to_aggregate=num_workers,
        total_num_replicas=num_workers)
    train_op = optimizer.minimize(loss, global_step=global_step)
    hooks = [optimizer.make_session_run_hook(is_chief),
             tf.compat.v1.train.StopAtStepHook(last_step=steps)]
    return [train_op, x], hooks


class AtTheEnd(tf.compat.v1.train.SessionRunHook):
    """Reads the global step and the model's variables when the session ends."""

    def __init__(self, global_step):
        self.tensors = {'global_step': global_step}
        self.tensors.update((v.op.name, v) for v in tf.compat.v1.trainable_variables())
        self.values = {}

    def end(self, session):
        self.values = {name: value.item() for name, value in session.run(self.tensors).items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('cluster')
    parser.add_argument('job')
    parser.add_argument('task', type=int)
    parser.add_argument('--data')
    parser.add_argument('--num-samples', type=int)
    parser.add_argument('--split', action='store_true')
    parser.add_argument('--pause-after', type=int)
    parser.add_argument('--sync-steps', type=int)
    parser.add_argument('--hold', action='store_true')
    parser.add_argument('--hold-after-init', action='store_true')
    args = parser.parse_args()
    if args.hold:  # started early (TensorFlow imported), held until the test lets it run
        hold('HELD')

    tf.compat.v1.disable_eager_execution()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    cluster = tf.train.ClusterSpec(json.loads(args.cluster))
    server = tf.distribute.Server(cluster, job_name=args.job, task_index=args.task)
    if args.job == 'ps':
        server.join()
    num_workers = cluster.num_tasks('worker')
    split = {'num_workers': num_workers, 'worker_index': args.task} if args.split else {}
    with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(
            worker_device=f'/job:worker/task:{args.task}', cluster=cluster)):
        global_step = tf.compat.v1.train.get_or_create_global_step()
        provider = DatasetDataProvider(
            numbers_dataset(args.data, args.num_samples), shuffle=False,
            num_epochs=None if args.sync_steps else 1, **split)
        [numbers] = provider.get(['n'])
        if args.sync_steps:
            fetches, hooks = sync_training(numbers, global_step, num_workers, args.task == 0,
                                           args.sync_steps)
        else:
            fetches, hooks = [numbers, tf.compat.v1.assign_add(global_step, 1)], []
    at_the_end = AtTheEnd(global_step)
    read = []
    # A short grace for the queue runners to stop: the chief's SyncReplicasOptimizer runner is
    # still waiting for gradients when training ends (MonitoredSession waits 120 s by default).
    with tf.compat.v1.train.MonitoredSession(session_creator(server, args.task,
                                                             args.hold_after_init),
                                             hooks=hooks + [at_the_end],
                                             stop_grace_period_secs=2) as session:
        while not session.should_stop():
            if args.sync_steps:
                read.extend(int(round(value * 100)) for value in session.run(fetches)[1])
            else:
                read.append(int(session.run(fetches)[0]))
            if len(read) == args.pause_after:
                hold('PAUSED ' + json.dumps(read))
    print(json.dumps({'task': args.task, 'numbers': read, **at_the_end.values}), flush=True)


if __name__ == '__main__':
    main()
