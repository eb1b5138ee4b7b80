"""slimdata.contrib.estimator, tf.estimator's successor: a TF1 Estimator program ported by
`slimdata port` and run, its numbers checked against numpy; the documented TF1 checks, TF_CONFIG,
TPUEstimator's use_tpu=False path, and what the port does with names it does not cover."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from slimdata._tf import tf
from slimdata.contrib import estimator as est
from slimdata.port import tree

v1 = tf.compat.v1
PROGRAM = Path(__file__).resolve().parent / 'port_fixture' / 'estimator_linear'
BATCH, LEARNING_RATE = 4, 0.05
TRUE_WEIGHTS, TRUE_BIAS = np.array([[1.5], [-2.0], [0.5]]), 0.25


def data(eval=False):
    """The program's data, made again here (the same seeds and formula as linear.py)."""
    rng = np.random.RandomState(1 if eval else 0)
    x = rng.uniform(-1, 1, (10 if eval else 12, 3)).astype(np.float32)
    y = (x.dot(TRUE_WEIGHTS) + TRUE_BIAS).astype(np.float32)
    return x, y


def sgd(weights, bias, steps):
    """`steps` SGD steps on the mean squared error, batches of BATCH from the input's start."""
    x, y = data()
    x, y = x.astype(np.float64), y.astype(np.float64)
    for step in range(steps):
        rows = slice((step % 3) * BATCH, (step % 3 + 1) * BATCH)
        error = x[rows] @ weights + bias - y[rows]
        gradient = 2 * error / BATCH
        weights = weights - LEARNING_RATE * x[rows].T @ gradient
        bias = bias - LEARNING_RATE * gradient.sum(axis=0)
    return weights, bias


def eval_values(weights, bias, batches=None):
    """mae over the examples and the mean of the batches' mean squared errors (tf.metrics.mean
    of a scalar loss per batch), over the first `batches` batches of BATCH."""
    x, y = data(eval=True)
    count = len(x) if batches is None else batches * BATCH
    error = (x[:count] @ weights + bias - y[:count])[:, 0]
    losses = [np.mean(error[i:i + BATCH] ** 2) for i in range(0, count, BATCH)]
    return {'mae': np.mean(np.abs(error)), 'loss': np.mean(losses)}


def port_program(destination: Path) -> str:
    done = subprocess.run([sys.executable, '-m', 'slimdata', 'port', str(PROGRAM),
                           str(destination)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def run_program(folder: Path, *args, env=None):
    environment = dict(env or os.environ, TF_CPP_MIN_LOG_LEVEL='3')
    done = subprocess.run([sys.executable, str(folder / 'linear.py'), *args],
                          capture_output=True, text=True, timeout=600, env=environment)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def summaries(folder: Path) -> dict:
    """{step: {tag: value}} of the event files in `folder`."""
    found: dict = {}
    for path in sorted(folder.glob('events.out.tfevents.*')):
        for event in v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                found.setdefault(event.step, {})[value.tag] = value.simple_value
    return found


@pytest.fixture(scope='module')
def ported(tmp_path_factory):
    work = tmp_path_factory.mktemp('estimator')
    report = port_program(work / 'ported')
    return work, report


@pytest.mark.slow
def test_ported_program_trains_resumes_evaluates_and_predicts_as_numpy_says(ported):
    work, report = ported
    assert ', 0 lines not ported' in report
    assert 'tf.estimator.Estimator -> slimdata.contrib.estimator.Estimator' in report
    model_dir = work / 'model'
    results = run_program(work / 'ported', str(model_dir), 'local')
    zero_w, zero_b = np.zeros((3, 1)), np.zeros(1)
    # steps adds to the checkpoint's step; each train call starts its input anew.
    assert (results['after_5'], results['after_9']) == (5, 9)
    weights, bias = sgd(*sgd(zero_w, zero_b, 5), 4)
    weights, bias = sgd(weights, bias, 3)  # max_steps=9 ran none; max_steps=12 three
    np.testing.assert_allclose(results['weights'], weights, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results['bias'], bias, rtol=1e-5, atol=1e-6)
    # evaluate: to the end of the input (10 examples in batches 4, 4, 2), or 2 batches
    for key, expected in (('evaluate', eval_values(weights, bias)),
                          ('evaluate_2', eval_values(weights, bias, batches=2))):
        assert results[key]['global_step'] == 12
        for metric in ('mae', 'loss'):
            assert results[key][metric] == pytest.approx(expected[metric], rel=1e-5), key
    x, _ = data(eval=True)
    np.testing.assert_allclose(results['predict'], x @ weights + bias, rtol=1e-5, atol=1e-6)
    assert results['predict_keys'] == [['double']]
    # train_and_evaluate: three more steps to max_steps=15, then the last checkpoint evaluated
    weights, bias = sgd(weights, bias, 3)
    np.testing.assert_allclose(results['weights_15'], weights, rtol=1e-5, atol=1e-6)
    final = results['train_and_evaluate']
    assert final['global_step'] == 15
    assert final['mae'] == pytest.approx(eval_values(weights, bias)['mae'], rel=1e-5)
    # The results are also summaries of model_dir/eval (and eval_two for name='two').
    written = summaries(model_dir / 'eval')
    assert written[15]['mae'] == pytest.approx(final['mae'])
    assert written[12]['loss'] == pytest.approx(results['evaluate']['loss'])
    assert summaries(model_dir / 'eval_two')[12]['mae'] == pytest.approx(
        results['evaluate_2']['mae'])
    assert v1.train.latest_checkpoint(str(model_dir)).endswith('model.ckpt-15')


# -- in this process: TF1's checks, hooks, listeners, warm start ------------------------------

def linear_model_fn(features, labels, mode, params):
    weights = v1.get_variable('weights', [3, 1], initializer=v1.zeros_initializer())
    bias = v1.get_variable('bias', [1], initializer=v1.zeros_initializer())
    prediction = tf.matmul(features['x'], weights) + bias
    if mode == est.ModeKeys.PREDICT:
        return est.EstimatorSpec(mode, predictions=prediction)
    loss = v1.losses.mean_squared_error(labels, prediction)
    train_op = v1.train.GradientDescentOptimizer(params['learning_rate']).minimize(
        loss, global_step=v1.train.get_global_step())
    return est.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
        'mae': v1.metrics.mean_absolute_error(labels, prediction)})


def tensors_input_fn():
    """(features, labels) tensors, not a Dataset: the same 4 first examples at every step."""
    x, y = data()
    return {'x': tf.constant(x[:BATCH])}, tf.constant(y[:BATCH])


def test_documented_checks_raise_value_errors(tmp_path):
    def no_features(inputs, labels):
        pass

    def no_params(features, labels, mode):
        return est.EstimatorSpec(mode, predictions=features['x'])

    def unexpected(features, labels, extra):
        pass

    with pytest.raises(ValueError, match='must include features'):
        est.Estimator(no_features, str(tmp_path))
    with pytest.raises(ValueError, match='does not include params'):
        est.Estimator(no_params, str(tmp_path), params={'a': 1})
    with pytest.raises(ValueError, match='not expected args'):
        est.Estimator(unexpected, str(tmp_path))
    with pytest.raises(ValueError, match='instance of RunConfig'):
        est.Estimator(no_params, str(tmp_path), config={'model_dir': str(tmp_path)})
    model = est.Estimator(linear_model_fn, str(tmp_path), params={'learning_rate': 0.1})
    with pytest.raises(ValueError, match='both steps and max_steps'):
        model.train(tensors_input_fn, steps=1, max_steps=2)
    with pytest.raises(ValueError, match='steps > 0'):
        model.train(tensors_input_fn, steps=0)
    with pytest.raises(ValueError, match='does not take labels'):
        est.Estimator(lambda features, mode: None, str(tmp_path / 'b')).train(
            tensors_input_fn, steps=1)
    with pytest.raises(ValueError, match='both save_checkpoints_steps and save_checkpoints_secs'):
        est.RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1)
    with tf.Graph().as_default():
        value = tf.constant(1.0)
        with pytest.raises(ValueError, match='Missing train_op'):
            est.EstimatorSpec(est.ModeKeys.TRAIN, loss=value)
        with pytest.raises(ValueError, match='Missing loss'):
            est.EstimatorSpec(est.ModeKeys.EVAL)
        with pytest.raises(ValueError, match='Missing predictions'):
            est.EstimatorSpec(est.ModeKeys.PREDICT)
        with pytest.raises(ValueError, match='Loss must be scalar'):
            est.EstimatorSpec(est.ModeKeys.EVAL, loss=tf.constant([1.0, 2.0]))
        assert est.EstimatorSpec(est.ModeKeys.EVAL, loss=tf.constant([3.0])).loss.shape == []


def test_loss_is_not_a_metric_name_and_model_fn_returns_a_spec(tmp_path):
    def loss_metric(features, labels, mode):
        loss = tf.reduce_mean(labels)
        return est.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            'loss': v1.metrics.mean(loss)})

    with pytest.raises(ValueError, match='Metric with name "loss" is not allowed'):
        est.Estimator(loss_metric, str(tmp_path)).evaluate(tensors_input_fn, steps=1)
    with pytest.raises(ValueError, match='should return an EstimatorSpec'):
        est.Estimator(lambda features: {}, str(tmp_path / 'b')).predict(
            lambda: {'x': tf.zeros([1, 3])}).__next__()


def test_listeners_hooks_and_warm_start(tmp_path):
    class Steps(est.CheckpointSaverListener):
        def __init__(self):
            self.saved = []

        def after_save(self, session, global_step_value):
            self.saved.append(global_step_value)

    class Runs(est.SessionRunHook):
        def __init__(self):
            self.runs = 0

        def after_run(self, run_context, run_values):
            self.runs += 1

    listener, hook = Steps(), Runs()
    config = est.RunConfig(save_checkpoints_steps=2, log_step_count_steps=None)
    model = est.Estimator(linear_model_fn, str(tmp_path / 'a'), config,
                          params={'learning_rate': 0.1})
    model.train(tensors_input_fn, steps=5, hooks=[hook], saving_listeners=[listener])
    # a checkpoint when the session starts, every 2 steps, and at the end
    assert listener.saved == [0, 2, 4, 5] and hook.runs == 5
    weights, bias = sgd(np.zeros((3, 1)), np.zeros(1), 0)
    x, y = data()
    for _ in range(5):  # the same first batch each step: learning rate 0.1
        error = x[:BATCH] @ weights + bias - y[:BATCH]
        weights = weights - 0.1 * x[:BATCH].T @ (2 * error / BATCH)
        bias = bias - 0.1 * (2 * error / BATCH).sum(axis=0)
    np.testing.assert_allclose(model.get_variable_value('weights'), weights, rtol=1e-5)
    assert 'weights' in model.get_variable_names()
    # warm_start_from: a new model starts from a's variables (learning rate 0: it stays there)
    warm = est.Estimator(linear_model_fn, str(tmp_path / 'b'), params={'learning_rate': 0.0},
                         warm_start_from=model.model_dir)
    warm.train(tensors_input_fn, steps=1)
    np.testing.assert_allclose(warm.get_variable_value('weights'), weights, rtol=1e-5)
    assert warm.get_variable_value('global_step') == 1  # the step is not warm-started
    batches = list(warm.predict(lambda: tf.data.Dataset.from_tensors({'x': x}),
                                yield_single_examples=False))  # one batch: all 12 examples
    assert len(batches) == 1
    np.testing.assert_allclose(batches[0], x @ weights + bias, rtol=1e-5, atol=1e-6)


def test_evaluator_skips_a_checkpoint_the_trainer_deleted(tmp_path, monkeypatch):
    """A trainer keeps only its newest checkpoints: the one the evaluator found may be gone
    when it is restored. That pass evaluates nothing; the next takes the newest. Any other
    NotFoundError (here, of a checkpoint whose files are still there) is raised."""
    from slimdata.contrib.estimator.training import _Evaluator

    model = est.Estimator(linear_model_fn, str(tmp_path), est.RunConfig(
        save_checkpoints_steps=2, keep_checkpoint_max=1, log_step_count_steps=None),
        params={'learning_rate': 0.1})
    model.train(tensors_input_fn, steps=4)
    newest = model.latest_checkpoint()
    assert newest.endswith('model.ckpt-4') and not tf.io.gfile.glob(f'{tmp_path}/*ckpt-2.*')
    evaluator = _Evaluator(model, est.EvalSpec(tensors_input_fn, steps=1))
    monkeypatch.setattr(model, 'latest_checkpoint', lambda: str(tmp_path / 'model.ckpt-2'))
    assert evaluator.evaluate() is False and evaluator.metrics is None
    monkeypatch.setattr(model, 'latest_checkpoint', lambda: newest)
    assert evaluator.evaluate() is True and evaluator.metrics['global_step'] == 4

    def missing_input():
        records = tf.data.TFRecordDataset(str(tmp_path / 'missing.tfrecord'))
        return records.map(lambda _: ({'x': tf.zeros([1, 3])}, tf.zeros([1, 1])))

    evaluator = _Evaluator(model, est.EvalSpec(missing_input, steps=1))
    with pytest.raises(tf.errors.NotFoundError, match='missing.tfrecord'):
        evaluator.evaluate()


def test_run_config_reads_the_task_from_tf_config(monkeypatch):
    monkeypatch.delenv('TF_CONFIG', raising=False)
    local = est.RunConfig()
    assert (local.task_type, local.task_id, local.master, local.is_chief) == ('worker', 0, '',
                                                                              True)
    assert (local.num_ps_replicas, local.num_worker_replicas, local.global_id_in_cluster) == (
        0, 1, 0)
    assert local.save_checkpoints_secs == 600 and local.save_checkpoints_steps is None
    assert est.RunConfig(save_checkpoints_steps=5).save_checkpoints_secs is None
    replaced = local.replace(save_checkpoints_steps=7, model_dir='/m')
    assert (replaced.save_checkpoints_steps, replaced.save_checkpoints_secs,
            replaced.model_dir) == (7, None, '/m')
    cluster = {'chief': ['h:1'], 'worker': ['h:2', 'h:3'], 'ps': ['h:4']}

    def config(task_type, index=0, with_cluster=cluster):
        monkeypatch.setenv('TF_CONFIG', json.dumps({
            'cluster': with_cluster, 'task': {'type': task_type, 'index': index}}))
        return est.RunConfig()

    worker = config('worker', 1)
    assert (worker.master, worker.is_chief, worker.task_id) == ('grpc://h:3', False, 1)
    assert (worker.num_ps_replicas, worker.num_worker_replicas) == (1, 3)
    assert list(worker.training_session_config().device_filters) == ['/job:ps',
                                                                    '/job:worker/task:1']
    chief = config('chief')
    assert (chief.master, chief.is_chief) == ('grpc://h:1', True)
    # chief 0, the workers 1 and 2, the ps 3
    assert [config(kind, index).global_id_in_cluster for kind, index in (
        ('chief', 0), ('worker', 0), ('worker', 1), ('ps', 0), ('evaluator', 0))] == [
        0, 1, 2, 3, None]
    evaluator = config('evaluator')
    assert (evaluator.master, evaluator.is_chief, evaluator.cluster_spec.jobs) == ('', False, [])
    with pytest.raises(ValueError, match='must have one "chief"'):
        config('worker', 0, {'worker': ['h:2']})
    with pytest.raises(ValueError, match="'trainer' is not in the cluster"):
        config('trainer')
    with pytest.raises(ValueError, match='task index 2'):
        config('worker', 2)
    with pytest.raises(ValueError, match='task type must be WORKER'):
        config('ps', 0, {})


def test_tpu_estimator_runs_as_use_tpu_false_did(tmp_path):
    seen = {}

    def model_fn(features, labels, mode, params):
        seen.setdefault(mode, set()).add(params['batch_size'])
        weights = v1.get_variable('weights', [3, 1], initializer=v1.zeros_initializer())
        prediction = tf.matmul(features['x'], weights)
        loss = v1.losses.mean_squared_error(labels, prediction)
        train_op = v1.train.GradientDescentOptimizer(0.05).minimize(
            loss, global_step=v1.train.get_global_step())

        def metric_fn(labels, predictions):
            return {'mae': v1.metrics.mean_absolute_error(labels, predictions)}
        return est.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                        eval_metrics=(metric_fn, [labels, prediction]),
                                        scaffold_fn=lambda: v1.train.Scaffold())

    def input_fn(mode, params):
        x, y = data(eval=mode == est.ModeKeys.EVAL)
        return tf.data.Dataset.from_tensor_slices(({'x': x}, y)).batch(params['batch_size'])

    config = est.tpu.RunConfig(tpu_config=est.tpu.TPUConfig(iterations_per_loop=10),
                               save_checkpoints_steps=100)
    assert config.replace(keep_checkpoint_max=1).tpu_config.iterations_per_loop == 10
    model = est.tpu.TPUEstimator(model_fn, str(tmp_path), config, use_tpu=False,
                                 train_batch_size=4, eval_batch_size=5)
    model.train(input_fn)  # to the end of the 12 examples: 3 steps
    weights = model.get_variable_value('weights')
    assert model.get_variable_value('global_step') == 3
    expected = eval_values(weights, 0.0)['mae']
    results = model.evaluate(input_fn)
    assert results['mae'] == pytest.approx(expected, rel=1e-5)
    assert seen == {'train': {4}, 'eval': {5}}
    with pytest.raises(ValueError, match='use_tpu=True'):
        est.tpu.TPUEstimator(model_fn, str(tmp_path))
    with pytest.raises(ValueError, match='reserved'):
        est.tpu.TPUEstimator(model_fn, str(tmp_path), params={'batch_size': 1}, use_tpu=False)


def test_names_not_covered_raise_and_are_reported_by_the_port():
    with pytest.raises(AttributeError, match="no 'DNNClassifier'.*canned estimators"):
        est.DNNClassifier  # noqa: B018
    code = ('import tensorflow as tf\n'
            'model = tf.estimator.DNNClassifier([10], [])\n'
            'tpu = tf.contrib.tpu.TPUEstimator(model_fn, use_tpu=False)\n'
            'spec = tf.compat.v1.estimator.tpu.TPUEstimatorSpec\n'
            'mode = tf.compat.v1.estimator.ModeKeys.TRAIN\n'
            'fn = tf.estimator.inputs.numpy_input_fn\n')
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    ported, notes = results['m.py']
    assert 'slimdata.contrib.estimator.tpu.TPUEstimator(model_fn' in ported
    assert 'from slimdata.contrib.estimator.tpu import TPUEstimatorSpec as spec\n' in ported
    assert 'mode = slimdata.contrib.estimator.ModeKeys.TRAIN\n' in ported  # a class attribute
    namespace: dict = {}
    exec(ported.replace('model = ', '# ').replace('tpu = ', '# '), namespace)  # noqa: S102
    assert namespace['spec'] is est.tpu.TPUEstimatorSpec and namespace['mode'] == 'train'
    assert namespace['fn'] is est.inputs.numpy_input_fn
    not_ported = [(note.line, note.message) for note in notes if note.kind == 'not ported']
    assert len(not_ported) == 1  # on its line of the ported file
    assert 'tf.estimator.DNNClassifier' in ported.splitlines()[not_ported[0][0] - 1]
    assert 'tensorflow.estimator.DNNClassifier' in not_ported[0][1]
    assert 'canned estimators' in not_ported[0][1]


@pytest.mark.slow
def test_ported_program_trains_and_evaluates_on_a_cluster(ported, tmp_path):
    """TF_CONFIG: a ps, a chief, a worker and an evaluator on free ports of 127.0.0.1, each
    ended by its pid. The chief holds at step 5 until the worker has trained a step (without
    it, the chief may reach max_steps before the worker has imported TensorFlow); the
    evaluator's last results are those of the checkpoint it evaluated last (at max_steps or
    beyond), computed again with numpy."""
    from test_cluster import Task, free_ports

    work, _ = ported
    addresses = [f'127.0.0.1:{port}' for port in free_ports(3)]
    cluster = {'chief': addresses[:1], 'worker': addresses[1:2], 'ps': addresses[2:]}
    model_dir = tmp_path / 'model'
    tasks = {}

    def start(kind, **variables):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', TF_CONFIG=json.dumps(
            {'cluster': cluster, 'task': {'type': kind, 'index': 0}}), **variables)
        tasks[kind] = Task([sys.executable, str(work / 'ported' / 'linear.py'), str(model_dir),
                            'cluster'], tmp_path, kind, env=env)
        return tasks[kind]

    try:
        start('ps')
        chief = start('chief', HOLD_AT_STEP='5')
        chief.wait_for('HELD', stream='out')  # initialised the model and trains
        start('evaluator')
        start('worker').wait_for('loss = ')  # the worker trains too
        chief.release()
        results = {kind: tasks[kind].result() for kind in ('chief', 'worker', 'evaluator')}
    finally:
        for task in tasks.values():
            task.end()
    assert results['chief'] == {'task': 'chief', 'is_chief': True, 'metrics': None}
    assert results['worker'] == {'task': 'worker', 'is_chief': False, 'metrics': None}
    step = int(v1.train.load_variable(v1.train.latest_checkpoint(str(model_dir)), 'global_step'))
    assert step >= 60  # the chief stops at max_steps (the worker may pass it by one step)
    # The evaluator ends at the first checkpoint at max_steps or beyond: the final one, or one
    # saved at step 60 before the worker's last step made the final one 61 (TF1's rule).
    evaluated = summaries(model_dir / 'eval')
    last = max(evaluated)
    assert 60 <= last <= step
    checkpoint = str(model_dir / f'model.ckpt-{last}')
    expected = eval_values(v1.train.load_variable(checkpoint, 'weights'),
                           v1.train.load_variable(checkpoint, 'bias'))
    assert evaluated[last]['mae'] == pytest.approx(expected['mae'], rel=1e-5)
    assert evaluated[last]['loss'] == pytest.approx(expected['loss'], rel=1e-5)


def test_numpy_input_fn_gives_tf1s_batches(tmp_path):
    x, y = data()
    with pytest.raises(ValueError, match='shuffle must be provided'):
        est.inputs.numpy_input_fn({'x': x}, y)
    with pytest.raises(ValueError, match='mismatched'):
        est.inputs.numpy_input_fn({'x': x}, y[:5], shuffle=False)
    model = est.Estimator(linear_model_fn, str(tmp_path), params={'learning_rate': LEARNING_RATE})
    model.train(est.inputs.numpy_input_fn({'x': x}, y, batch_size=BATCH, num_epochs=1,
                                          shuffle=False))  # one epoch: batches 0, 1, 2
    weights, _ = sgd(np.zeros((3, 1)), np.zeros(1), 3)
    assert model.get_variable_value('global_step') == 3
    np.testing.assert_allclose(model.get_variable_value('weights'), weights, rtol=1e-5)
    eval_x, _ = data(eval=True)  # 10 examples in batches of 4: the last one smaller
    found = list(model.predict(est.inputs.numpy_input_fn({'x': eval_x}, batch_size=BATCH,
                                                         shuffle=False),
                               yield_single_examples=False))
    assert [len(batch) for batch in found] == [4, 4, 2]
    shuffled = est.inputs.numpy_input_fn(np.arange(12), batch_size=5, num_epochs=2,
                                         shuffle=True)
    with tf.Graph().as_default(), v1.Session() as session:
        batch, values = shuffled(), []
        while True:
            try:
                values.extend(session.run(batch).tolist())
            except tf.errors.OutOfRangeError:
                break
    assert sorted(values) == sorted(list(range(12)) * 2)  # each example once an epoch
