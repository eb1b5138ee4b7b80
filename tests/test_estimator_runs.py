"""The pieces of slimdata.contrib.estimator's Estimator that have logic of their own: calling
model_fn and input_fn (`calls`), the session and Saver the runs share (`session`), and the
train, evaluate and predict runs' helpers. The runs end to end: tests/test_estimator.py."""

import functools

import numpy as np
import pytest

from slimdata._tf import tf
from slimdata.contrib import estimator as est
from slimdata.contrib.estimator import calls, evaluate_run, predict_run, session, train_run

v1 = tf.compat.v1


def test_fn_args_leaves_out_bound_keywords_self_and_varargs():
    def model_fn(features, labels, mode, params, *args, **kwargs):
        pass

    class Model:
        def model_fn(self, features, mode):
            pass

    assert calls.fn_args(model_fn) == ('features', 'labels', 'mode', 'params')
    assert calls.fn_args(functools.partial(model_fn, params={})) == ('features', 'labels',
                                                                     'mode')
    assert calls.fn_args(Model().model_fn) == ('features', 'mode')
    assert calls.named_arguments(Model().model_fn, {'mode': 'train', 'params': {}}) == {
        'mode': 'train'}


def test_parse_input_splits_datasets_pairs_and_features(graph):
    features, labels, hooks = calls.parse_input(tf.data.Dataset.from_tensor_slices(
        ({'x': np.arange(3.0)}, np.arange(3) * 10)))
    assert len(hooks) == 1  # the iterator's initializer runs once the session exists
    with v1.train.MonitoredSession(hooks=hooks) as run:
        assert [tuple(run.run([features['x'], labels])) for _ in range(3)] == [
            (0.0, 0), (1.0, 10), (2.0, 20)]
    alone = tf.constant([1.0])
    assert calls.parse_input(alone) == (alone, None, [])
    assert calls.parse_input((alone, alone))[:2] == (alone, alone)
    with pytest.raises(ValueError, match='len 2 tuple, given a tuple of 3'):
        calls.parse_input((alone, alone, alone))


def test_select_and_examples_split_batches_as_tf1_did():
    predictions = {'a': np.array([1, 2]), 'b': np.array([[3], [4]])}
    assert predict_run.select(predictions, None) is predictions
    assert predict_run.select(predictions, ['b']) == {'b': predictions['b']}
    with pytest.raises(ValueError, match=r"\['c'\] are not predictions"):
        predict_run.select(predictions, ['a', 'c'])
    with pytest.raises(ValueError, match='non-dict predictions'):
        predict_run.select(np.zeros(2), ['a'])
    single = list(predict_run.examples(predictions, single=True))
    assert [(int(example['a']), example['b'].tolist()) for example in single] == [
        (1, [3]), (2, [4])]
    assert list(predict_run.examples(predictions, single=False)) == [predictions]
    assert [row.tolist() for row in predict_run.examples(np.eye(2), single=True)] == [
        [1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(ValueError, match='should be same'):
        list(predict_run.examples({'a': np.zeros(2), 'b': np.zeros(3)}, single=True))
    with pytest.raises(ValueError, match="'a' is a scalar"):
        list(predict_run.examples({'a': np.float32(1)}, single=True))


def test_write_results_keeps_numeric_scalars_but_the_global_step(tmp_path):
    evaluate_run.write_results(str(tmp_path), {'mae': np.float32(0.5), 'loss': 2.0,
                                               'global_step': 7, 'vector': np.zeros(2),
                                               'text': b'abc'}, step=7)
    found = {}
    for path in tmp_path.glob('events.out.tfevents.*'):
        for event in v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                found[(event.step, value.tag)] = value.simple_value
    assert found == {(7, 'loss'): 2.0, (7, 'mae'): 0.5}


def test_evaluations_in_the_same_second_keep_each_its_summaries(tmp_path):
    """An event file is named by the second it is made in: two evaluations written one
    right after the other (the same second, as a quick `evaluate` then `train_and_evaluate`)
    each keep their summaries, in files of their own."""
    for step in (12, 15):
        evaluate_run.write_results(str(tmp_path), {'loss': float(step)}, step=step)
    paths = sorted(tmp_path.glob('events.out.tfevents.*'))
    assert len(paths) == 2
    found = {event.step: value.simple_value for path in paths
             for event in v1.train.summary_iterator(str(path)) for value in event.summary.value}
    assert found == {12: 12.0, 15: 15.0}


def test_stop_after_n_evals_and_the_loss_metric(graph):
    counter = v1.get_variable('counter', [], dtype=tf.int64,
                              initializer=v1.zeros_initializer())
    add = v1.assign_add(counter, 1)
    with v1.train.MonitoredSession(hooks=[evaluate_run.StopAfterNEvalsHook(3)]) as run:
        while not run.should_stop():
            done = run.run(add)
    assert done == 3
    loss = tf.constant(2.0)
    spec = est.EstimatorSpec(est.ModeKeys.EVAL, loss=loss)
    assert sorted(evaluate_run.metric_ops(spec)) == ['loss']
    with pytest.raises(ValueError, match='Metric with name "loss" is not allowed'):
        evaluate_run.metric_ops(est.EstimatorSpec(est.ModeKeys.EVAL, loss=loss, eval_metric_ops={
            'loss': v1.metrics.mean(loss)}))


def test_scaffold_adds_tf1s_default_saver_only_when_none_is_given(graph, tmp_path):
    v1.get_variable('w', [1])
    spec = est.EstimatorSpec(est.ModeKeys.PREDICT, predictions=tf.constant([1.0]))
    config = est.RunConfig(model_dir=str(tmp_path), keep_checkpoint_max=2)
    scaffold = session.scaffold(spec, config)
    savers = v1.get_collection(v1.GraphKeys.SAVERS)
    assert scaffold.saver is None and len(savers) == 1
    assert savers[0]._max_to_keep == 2
    session.scaffold(spec, config)  # the graph has a saver now: none added
    assert len(v1.get_collection(v1.GraphKeys.SAVERS)) == 1
    with tf.Graph().as_default():
        v1.get_variable('w', [1])
        given = v1.train.Scaffold(saver=v1.train.Saver())
        own = est.EstimatorSpec(est.ModeKeys.PREDICT, predictions=tf.constant([1.0]),
                                scaffold=given)
        assert session.scaffold(own, config) is given
        assert v1.get_collection(v1.GraphKeys.SAVERS) == []


def test_checkpoint_to_restore(tmp_path):
    assert session.checkpoint_to_restore(None, str(tmp_path), 'predict') is None
    assert session.checkpoint_to_restore('/given/ckpt-3', str(tmp_path), 'predict') == (
        '/given/ckpt-3')
    with tf.Graph().as_default():
        v1.get_variable('w', [1])
        with v1.Session() as run:
            run.run(v1.global_variables_initializer())
            saved = v1.train.Saver().save(run, str(tmp_path / 'model.ckpt'), global_step=4)
    assert session.checkpoint_to_restore(None, str(tmp_path), 'predict') == saved


def test_device_fn_places_variables_on_the_ps_tasks(monkeypatch):
    monkeypatch.delenv('TF_CONFIG', raising=False)
    assert train_run.device_fn(est.RunConfig()) is None
    chosen = lambda op: '/cpu:0'  # noqa: E731
    assert train_run.device_fn(est.RunConfig(device_fn=chosen)) is chosen
    monkeypatch.setenv('TF_CONFIG', '{"cluster": {"chief": ["h:1"], "ps": ["h:2", "h:3"]}, '
                                    '"task": {"type": "chief", "index": 0}}')
    with tf.Graph().as_default() as graph, graph.device(train_run.device_fn(est.RunConfig())):
        first, second = v1.get_variable('a', [1]), v1.get_variable('b', [1])
        product = first * second
    assert (first.device, second.device) == ('/job:ps/task:0', '/job:ps/task:1')
    assert product.device == '/job:chief/task:0'


def test_saver_hooks_join_a_given_saver_or_make_one(graph, tmp_path):
    v1.train.get_or_create_global_step()
    loss = tf.constant(1.0)
    spec = est.EstimatorSpec(est.ModeKeys.TRAIN, loss=loss, train_op=tf.no_op())
    scaffold = v1.train.Scaffold()
    listener = v1.train.CheckpointSaverListener()
    config = est.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=3)
    made = train_run.saver_hooks(spec, scaffold, [], [listener], config)
    assert len(made) == 1 and made[0]._listeners == [listener]
    assert made[0]._timer._every_steps == 3
    given = v1.train.CheckpointSaverHook(str(tmp_path), save_steps=1, scaffold=scaffold)
    assert train_run.saver_hooks(spec, scaffold, [given], [listener], config) == []
    assert given._listeners == [listener]
    none = est.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=None,
                         save_checkpoints_secs=None)
    assert train_run.saver_hooks(spec, scaffold, [], [], none) == []
    with pytest.raises(ValueError, match='There should be a CheckpointSaverHook'):
        train_run.saver_hooks(spec, scaffold, [], [listener], none)
