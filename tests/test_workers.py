"""Reading on several workers: over all workers, every record exactly once per epoch, and
each pipeline's state on the worker that reads.

Each worker's pipeline is built in a graph (or, for the bridge, a dataset) of its own, as in
separate processes; the records each reads are compared with the files' records, written by
TensorFlow's own writer. Where the graph places a pipeline's ops on a cluster is read from the
graph here; tests/test_cluster.py runs real clusters.
"""

import collections
import json
import logging

import pytest
import tensorflow as tf

from conftest import drain, write_with_tf
from slimdata import dataset, parallel_reader, prefetch_queue, tfdata, tfexample_decoder, workers
from slimdata.dataset_batch_provider import DatasetBatchProvider
from slimdata.dataset_data_provider import DatasetDataProvider


def number_records(first, count):
    return [tf.train.Example(features=tf.train.Features(feature={
        'n': tf.train.Feature(int64_list=tf.train.Int64List(value=[n]))})).SerializeToString()
        for n in range(first, first + count)]


def make_files(tmp_path, sizes):
    """Files of consecutive numbers: file k holds sizes[k] of them; returns (pattern, total)."""
    first = 0
    for k, size in enumerate(sizes):
        write_with_tf(tmp_path / f'train-{k:05d}.tfrecord', number_records(first, size))
        first += size
    return str(tmp_path / 'train-*.tfrecord'), first


def numbers_dataset(pattern, total):
    decoder = tfexample_decoder.TFExampleDecoder(
        {'n': tf.io.FixedLenFeature([], tf.int64)}, {'n': tfexample_decoder.Tensor('n')})
    return dataset.Dataset(pattern, tf.compat.v1.TFRecordReader, decoder, total, {})


def read_with_provider(data, worker_index, num_workers, shuffle, batched=False):
    with tf.Graph().as_default():
        if batched:
            provider = DatasetBatchProvider(data, batch_size=1, shuffle=shuffle, num_epochs=1,
                                            allow_smaller_final_batch=True,
                                            num_workers=num_workers, worker_index=worker_index)
        else:
            provider = DatasetDataProvider(data, shuffle=shuffle, num_epochs=1, seed=3,
                                           num_workers=num_workers, worker_index=worker_index)
        [n] = provider.get(['n'])
        return [int(value) for value in _flat(drain(n))]


def _flat(values):
    for value in values:
        yield from (value.ravel() if hasattr(value, 'ravel') else [value])


def read_with_bridge(data, worker_index, num_workers, shuffle):
    ds = tfdata.to_tf_data(data, items=['n'], shuffle=shuffle, num_epochs=1, seed=3,
                           num_workers=num_workers, worker_index=worker_index)
    return [int(element['n']) for element in ds]


READERS = {
    'provider': lambda data, index, workers_, shuffle: read_with_provider(
        data, index, workers_, shuffle),
    'batch provider': lambda data, index, workers_, shuffle: read_with_provider(
        data, index, workers_, shuffle, batched=True),
    'tf.data bridge': read_with_bridge,
}


@pytest.mark.slow
@pytest.mark.parametrize('reader', sorted(READERS))
@pytest.mark.parametrize('sizes, num_workers', [
    ([5, 3, 4, 6, 2], 2),   # files divided: 3 and 2 files
    ([7, 9], 3),            # fewer files than workers: records divided
])
@pytest.mark.parametrize('shuffle', [False, True])
def test_every_record_is_read_once_over_all_workers(tmp_path, reader, sizes, num_workers,
                                                    shuffle):
    pattern, total = make_files(tmp_path, sizes)
    data = numbers_dataset(pattern, total)
    seen = collections.Counter()
    shares = []
    for index in range(num_workers):
        numbers = READERS[reader](data, index, num_workers, shuffle)
        shares.append(len(numbers))
        seen.update(numbers)
    assert sorted(seen.elements()) == list(range(total))  # each exactly once, none lost
    assert all(share > 0 for share in shares)


def test_one_worker_reads_everything_as_tf_slim_does(tmp_path):
    pattern, total = make_files(tmp_path, [4, 4])
    assert sorted(READERS['provider'](numbers_dataset(pattern, total), 0, 1, False)) == \
        list(range(total))


def test_dividing_records_warns_what_it_costs(tmp_path, caplog):
    pattern, total = make_files(tmp_path, [6])
    with caplog.at_level(logging.WARNING, logger='slimdata'):
        numbers = read_with_bridge(numbers_dataset(pattern, total), 1, 3, False)
    assert numbers == [1, 4]
    assert ('1 data file(s) for 3 workers: every worker reads every record and keeps one in 3'
            in caplog.text)


@pytest.mark.parametrize('num_workers, worker_index, message', [
    (0, 0, 'num_workers must be an int >= 1, got 0'),
    (2, 2, 'worker_index must be an int in [0, num_workers=2), got 2'),
    (2, -1, 'worker_index must be an int in [0, num_workers=2), got -1'),
])
def test_bad_worker_arguments_are_refused(tmp_path, num_workers, worker_index, message):
    pattern, total = make_files(tmp_path, [2])
    with pytest.raises(ValueError) as raised:
        tfdata.to_tf_data(numbers_dataset(pattern, total), num_workers=num_workers,
                          worker_index=worker_index)
    assert str(raised.value) == message


@pytest.mark.parametrize('config, expected', [
    (None, {'num_workers': 1, 'worker_index': 0}),
    ({'cluster': {'worker': ['a:1', 'b:1', 'c:1']}, 'task': {'type': 'worker', 'index': 2}},
     {'num_workers': 3, 'worker_index': 2}),
    ({'cluster': {'chief': ['a:1'], 'worker': ['b:1', 'c:1']},
      'task': {'type': 'chief', 'index': 0}}, {'num_workers': 3, 'worker_index': 0}),
    ({'cluster': {'chief': ['a:1'], 'worker': ['b:1', 'c:1']},
      'task': {'type': 'worker', 'index': 1}}, {'num_workers': 3, 'worker_index': 2}),
    ({'cluster': {'worker': ['a:1'], 'evaluator': ['e:1']},
      'task': {'type': 'evaluator', 'index': 0}}, {'num_workers': 1, 'worker_index': 0}),
])
def test_worker_index_from_tf_config(config, expected):
    environ = {} if config is None else {'TF_CONFIG': json.dumps(config)}
    assert workers.from_tf_config(environ) == expected


def test_tf_config_for_a_parameter_server_or_of_another_form_is_refused():
    with pytest.raises(ValueError, match="task type 'ps' reads no training data"):
        workers.from_tf_config({'TF_CONFIG': json.dumps(
            {'cluster': {'ps': ['p:1']}, 'task': {'type': 'ps', 'index': 0}})})
    with pytest.raises(ValueError, match='TF_CONFIG is not a cluster and task description'):
        workers.from_tf_config({'TF_CONFIG': '{"cluster": {}}'})


# ----------------------------------------------------------------------------------------------
# Where a pipeline's state goes on a cluster

#: A cluster only described: graphs are built for it, never run.
CLUSTER = {'ps': ['127.0.0.1:1'], 'worker': ['127.0.0.1:2', '127.0.0.1:3']}
WORKER = '/job:worker/task:1'

PIPELINES = {
    'provider': lambda data: DatasetDataProvider(data, num_epochs=1).get(['n']),
    'provider, batch, prefetch_queue': lambda data: prefetch_queue.prefetch_queue(
        [tf.compat.v1.train.batch(DatasetDataProvider(data, num_epochs=1).get(['n']), 2)]),
    'batch provider': lambda data: DatasetBatchProvider(data, 2, num_epochs=1).get(['n']),
    'provider, records divided': lambda data: DatasetDataProvider(
        data, num_epochs=1, num_workers=3, worker_index=1).get(['n']),
    'provider, skip_corrupt': lambda data: DatasetDataProvider(
        data, num_epochs=1, skip_corrupt=True).get(['n']),
    'parallel_read': lambda data: parallel_reader.parallel_read(
        data.data_sources, tf.compat.v1.TFRecordReader, num_epochs=1),
    'single_pass_read': lambda data: parallel_reader.single_pass_read(
        data.data_sources, tf.compat.v1.TFRecordReader),
}


def pipeline_ops(tmp_path, build, device):
    """The ops `build` adds to a graph under the device scope `device`, next to a model's
    global step made first (which replica_device_setter puts on the parameter server)."""
    pattern, total = make_files(tmp_path, [3, 3])
    data = numbers_dataset(pattern, total)
    with tf.Graph().as_default() as graph, tf.compat.v1.device(device):
        tf.compat.v1.train.get_or_create_global_step()
        model = set(graph.get_operations())
        build(data)
    return [op for op in graph.get_operations() if op not in model]


@pytest.mark.parametrize('pipeline', sorted(PIPELINES))
def test_under_replica_device_setter_a_pipeline_stays_on_its_worker(tmp_path, pipeline):
    setter = tf.compat.v1.train.replica_device_setter(worker_device=WORKER, cluster=CLUSTER)
    ops = pipeline_ops(tmp_path, PIPELINES[pipeline], setter)
    assert ops and all(op.device.startswith(WORKER) for op in ops), sorted(
        (op.name, op.device) for op in ops if not op.device.startswith(WORKER))
    # The epoch counter is a variable: replica_device_setter alone would put it on the ps.
    if 'skip_corrupt' not in pipeline and 'divided' not in pipeline:
        assert any(op.type in ('VarHandleOp', 'VariableV2') for op in ops)


def _tf_slim_provider(data):
    from tf_slim.data.dataset_data_provider import DatasetDataProvider as TfSlimProvider
    return TfSlimProvider(data, num_epochs=1).get(['n'])


@pytest.mark.xfail(strict=True, reason='tf_slim 1.1.0 puts its epoch counter on the parameter '
                   'server, where every worker shares it by name')
def test_tf_slims_provider_leaves_its_epoch_counter_on_the_parameter_server(tmp_path):
    setter = tf.compat.v1.train.replica_device_setter(worker_device=WORKER, cluster=CLUSTER)
    ops = pipeline_ops(tmp_path, _tf_slim_provider, setter)
    assert all(op.device.startswith(WORKER) for op in ops)


def test_under_model_deploys_inputs_device_the_epoch_counter_is_there_too(tmp_path):
    # models/research/slim's DeploymentConfig.inputs_device() with parameter servers: the
    # worker job with no task (the session's own task is chosen when the graph runs).
    ops = pipeline_ops(tmp_path, PIPELINES['provider'], '/job:worker/device:CPU:0')
    [counter] = [op for op in ops if op.type in ('VarHandleOp', 'VariableV2')]
    assert counter.device == '/job:worker/device:CPU:0'


def test_a_pipeline_built_on_a_parameter_server_is_refused_naming_the_fix(tmp_path):
    with pytest.raises(ValueError, match=r'the input pipeline is being built on /job:ps/task:0, '
                                         r'a parameter server.*replica_device_setter\(worker_'
                                         r"device='/job:worker/task:%d' % task_index"):
        pipeline_ops(tmp_path, PIPELINES['provider'], '/job:ps/task:0')


def test_pipelines_placed_on_one_device_count_their_own_epochs(tmp_path):
    """Two graphs whose pipelines meet on one device of one server (two clients of one
    worker): each initialises its epoch counter, then each reads its epoch. Sharing one
    counter by name, the second would find it used up by the first and read nothing."""
    pattern, total = make_files(tmp_path, [3, 3])
    server = tf.distribute.Server.create_local_server()
    pipelines = []
    for _ in range(2):
        with tf.Graph().as_default() as graph:
            [n] = DatasetDataProvider(numbers_dataset(pattern, total), shuffle=False,
                                      num_epochs=1).get(['n'])
            init = tf.compat.v1.local_variables_initializer()
        session = tf.compat.v1.Session(server.target, graph=graph)
        session.run(init)
        pipelines.append((session, graph, n))
    for session, graph, n in pipelines:
        with session:
            assert read_all(session, graph, n) == list(range(total))


def read_all(session, graph, tensor):
    """Runs `tensor` until the input ends, with the graph's queue runners."""
    coordinator = tf.compat.v1.train.Coordinator()
    with graph.as_default():
        threads = tf.compat.v1.train.start_queue_runners(session, coord=coordinator)
    values = []
    try:
        while True:
            values.append(int(session.run(tensor)))
    except tf.errors.OutOfRangeError:
        pass
    finally:
        coordinator.request_stop()
        coordinator.join(threads, stop_grace_period_secs=10)
    return values
