"""SavedModel export of slimdata.contrib.estimator (tf.estimator's `export_saved_model`, the
`export` module's receivers and outputs, the exporters of `EvalSpec`): a trained model exported,
loaded by TensorFlow's own loaders (TF2's `tf.saved_model.load`, TF1's `loader.load` in a
Session), fed, and its outputs checked against numpy; the exporters' folders after
`train_and_evaluate`; no export left half-written under its final name."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from slimdata._tf import tf
from slimdata.contrib import estimator as est
from slimdata.contrib.estimator import export
from test_estimator import BATCH, data, linear_model_fn, tensors_input_fn
from test_interruptions import as_from_a_terminal

v1 = tf.compat.v1
LEARNING_RATE = 0.1


def same_batch_sgd(steps):
    """The weights after `steps` SGD steps on the first batch (tensors_input_fn's), numpy."""
    weights, bias = np.zeros((3, 1)), np.zeros(1)
    x, y = data()
    for _ in range(steps):
        gradient = 2 * (x[:BATCH] @ weights + bias - y[:BATCH]) / BATCH
        weights = weights - LEARNING_RATE * x[:BATCH].T @ gradient
        bias = bias - LEARNING_RATE * gradient.sum(axis=0)
    return weights, bias


def trained(model_dir, steps=3, model_fn=linear_model_fn, **config):
    config.setdefault('log_step_count_steps', None)
    model = est.Estimator(model_fn, str(model_dir), est.RunConfig(**config),
                          params={'learning_rate': LEARNING_RATE})
    return model.train(tensors_input_fn, steps=steps)


def raw_receiver_fn():
    """TF1's usual raw receiver: made from a graph's placeholder, served under its name."""
    with tf.Graph().as_default():
        return export.build_raw_serving_input_receiver_fn(
            {'x': v1.placeholder(tf.float32, [None, 3], name='x')})


def exports_in(folder):
    return sorted(path.name for path in Path(folder).iterdir()) if Path(folder).exists() else []


def v1_outputs(path, signature_name, feeds):
    """The outputs of a signature of the SavedModel at `path`, loaded by TF1's loader."""
    with tf.Graph().as_default(), v1.Session() as session:
        meta = v1.saved_model.loader.load(session, [v1.saved_model.tag_constants.SERVING],
                                          path)
        signature = meta.signature_def[signature_name]
        feed = {signature.inputs[key].name: value for key, value in feeds.items()}
        names = sorted(signature.outputs)
        values = session.run([signature.outputs[key].name for key in names], feed)
        return dict(zip(names, values)), sorted(meta.signature_def)


def test_export_loads_in_tf2_and_in_a_tf1_session_and_predicts_as_numpy(tmp_path):
    model = trained(tmp_path / 'model')
    path = model.export_saved_model(str(tmp_path / 'export'), raw_receiver_fn())
    assert isinstance(path, bytes)
    assert os.path.dirname(path) == str(tmp_path / 'export').encode()
    assert len(os.path.basename(path)) == 10 and os.path.basename(path).isdigit()
    assert exports_in(tmp_path / 'export') == [os.path.basename(path).decode()]
    weights, bias = same_batch_sgd(3)
    x, _ = data(eval=True)
    expected = x @ weights + bias
    loaded = tf.saved_model.load(path.decode())  # TensorFlow 2's loader
    assert list(loaded.signatures) == ['serving_default']
    served = loaded.signatures['serving_default'](x=tf.constant(x))
    np.testing.assert_allclose(served['output'].numpy(), expected, rtol=1e-5, atol=1e-6)
    outputs, signatures = v1_outputs(path.decode(), 'serving_default', {'x': x})
    assert signatures == ['serving_default']
    np.testing.assert_allclose(outputs['output'], expected, rtol=1e-5, atol=1e-6)
    # the export_savedmodel alias, an older checkpoint, the pbtxt and extra assets
    (tmp_path / 'vocab.txt').write_text('a\nb\n')
    first = model.latest_checkpoint().replace('ckpt-3', 'ckpt-0')
    older = model.export_savedmodel(str(tmp_path / 'export'), raw_receiver_fn(), as_text=True,
                                    assets_extra={'sub/vocab.txt': str(tmp_path / 'vocab.txt')},
                                    checkpoint_path=first)
    assert older != path and (Path(older.decode()) / 'saved_model.pbtxt').exists()
    assert (Path(older.decode()) / 'assets.extra' / 'sub' / 'vocab.txt').read_text() == 'a\nb\n'
    outputs, _ = v1_outputs(older.decode(), 'serving_default', {'x': x})
    np.testing.assert_allclose(outputs['output'], np.zeros((10, 1)))  # the zero-initialised


def serving_model_fn(features, labels, mode, params):
    """linear_model_fn's model with PREDICT export outputs: a regression and a classification
    (scores of 'high', the sigmoid of the prediction), 'predict' the default."""
    if mode != est.ModeKeys.PREDICT:
        return linear_model_fn(features, labels, mode, params)
    prediction = linear_model_fn(features, labels, mode, params).predictions
    scores = tf.sigmoid(prediction)
    return est.EstimatorSpec(mode, predictions={'y': prediction}, export_outputs={
        'serving_default': export.PredictOutput({'y': prediction, 'twice': 2 * prediction}),
        'regress': export.RegressionOutput(prediction[:, 0]),
        'classify': export.ClassificationOutput(
            scores=scores, classes=tf.fill(tf.shape(scores), 'high'))})


def examples_of(x):
    return [tf.train.Example(features=tf.train.Features(feature={
        'x': tf.train.Feature(float_list=tf.train.FloatList(value=row))})).SerializeToString()
        for row in x]


def test_parsing_receiver_and_the_classify_regress_predict_signatures(tmp_path):
    model = trained(tmp_path / 'model', model_fn=serving_model_fn)
    receiver_fn = export.build_parsing_serving_input_receiver_fn(
        {'x': tf.io.FixedLenFeature([3], tf.float32)})
    path = model.export_saved_model(str(tmp_path / 'export'), receiver_fn).decode()
    weights, bias = same_batch_sgd(3)
    x, _ = data(eval=True)
    expected = x @ weights + bias
    serialized = examples_of(x)
    outputs, signatures = v1_outputs(path, 'regress', {'inputs': serialized})
    assert signatures == ['classify', 'regress', 'serving_default']
    np.testing.assert_allclose(outputs['outputs'], expected[:, 0], rtol=1e-5, atol=1e-6)
    outputs, _ = v1_outputs(path, 'classify', {'inputs': serialized})
    np.testing.assert_allclose(outputs['scores'], 1 / (1 + np.exp(-expected)), rtol=1e-5)
    assert outputs['classes'].tolist() == [[b'high']] * len(x)
    outputs, _ = v1_outputs(path, 'serving_default', {'examples': serialized})
    np.testing.assert_allclose(outputs['twice'], 2 * expected, rtol=1e-5, atol=1e-6)
    served = tf.saved_model.load(path).signatures['regress'](inputs=tf.constant(serialized))
    np.testing.assert_allclose(served['outputs'].numpy(), expected[:, 0], rtol=1e-5, atol=1e-6)


def test_receivers_and_outputs_check_as_tf1_did(graph):
    value = v1.placeholder(tf.float32, [None, 3])
    receiver = export.ServingInputReceiver(value, value)
    assert list(receiver.features) == ['feature'] and list(receiver.receiver_tensors) == [
        'input']
    assert export.TensorServingInputReceiver(value, {'x': value}).features is value
    with pytest.raises(ValueError, match='feature keys must be strings'):
        export.ServingInputReceiver({1: value}, value)
    with pytest.raises(ValueError, match='receiver_tensor x must be a Tensor'):
        export.ServingInputReceiver(value, {'x': np.zeros(3)})
    with pytest.raises(ValueError, match='scores must be a float32 Tensor'):
        export.ClassificationOutput(scores=tf.constant([1]))
    with pytest.raises(ValueError, match='At least one of scores and classes'):
        export.ClassificationOutput()
    assert list(export.PredictOutput(value).outputs) == ['output']
    single = export.RegressionOutput(value[:, 0])
    assert export.export_outputs_of({'regress': single}, None) == {
        'regress': single, 'serving_default': single}
    with pytest.raises(ValueError, match="none of them is named 'serving_default'"):
        export.export_outputs_of({'a': single, 'b': single}, None)
    # a Regress output on float inputs cannot be served: left out, with a warning
    signatures = export.signature_defs(export.ServingInputReceiver(value, {'x': value}), {
        'serving_default': export.PredictOutput(value), 'regress': single})
    assert sorted(signatures) == ['serving_default']


def test_no_export_is_left_when_the_receiver_fn_or_the_checkpoint_fails(tmp_path):
    model = trained(tmp_path / 'model')

    def failing_receiver_fn():
        raise RuntimeError('no receiver')

    with pytest.raises(RuntimeError, match='no receiver'):
        model.export_saved_model(str(tmp_path / 'export'), failing_receiver_fn)
    with pytest.raises(ValueError, match='not a valid checkpoint: .*elsewhere'):
        model.export_saved_model(str(tmp_path / 'export'), raw_receiver_fn(),
                                 checkpoint_path=str(tmp_path / 'elsewhere'))
    with tf.Graph().as_default():  # a checkpoint of the weights alone: no bias to restore
        v1.get_variable('weights', [3, 1])
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            partial = v1.train.Saver().save(session, str(tmp_path / 'partial' / 'model.ckpt'))
    with pytest.raises(ValueError, match='must not expect variables the checkpoint'):
        model.export_saved_model(str(tmp_path / 'export'), raw_receiver_fn(),
                                 checkpoint_path=partial)
    assert exports_in(tmp_path / 'export') == []
    untrained = est.Estimator(linear_model_fn, str(tmp_path / 'none'), params={
        'learning_rate': 0.1})
    with pytest.raises(ValueError, match="Couldn't find trained model"):
        untrained.export_saved_model(str(tmp_path / 'export'), raw_receiver_fn())
    with pytest.raises(ValueError, match='inside assets.extra'):
        model.export_saved_model(str(tmp_path / 'export'), raw_receiver_fn(),
                                 assets_extra={'../x': str(tmp_path / 'model' / 'checkpoint')})
    assert exports_in(tmp_path / 'export') == []


INTERRUPTED_EXPORT = textwrap.dedent('''
    import shutil
    import sys
    import time
    from slimdata._tf import tf
    from slimdata.contrib import estimator as est
    from slimdata.contrib.estimator import export
    v1 = tf.compat.v1
    model_dir, export_dir, asset = sys.argv[1:]

    def held(reader, writer):
        # The extra asset's copy, once the SavedModel is written: the process waits in Python
        # (which a signal interrupts; a FIFO held it in TensorFlow's C++ open, which retries
        # when interrupted, so that SIGINT was lost when it came late).
        print('copying', flush=True)
        time.sleep(3600)

    shutil.copyfileobj = held

    def model_fn(features, mode):
        weights = v1.get_variable('weights', [3, 1])
        return est.EstimatorSpec(mode, predictions=tf.matmul(features['x'], weights))

    model = est.Estimator(model_fn, model_dir)
    receiver_fn = export.build_raw_serving_input_receiver_fn({'x': tf.zeros([1, 3])})
    print('exporting', flush=True)
    model.export_saved_model(export_dir, receiver_fn, assets_extra={'a': asset})
''')


@pytest.mark.slow
@pytest.mark.parametrize('sent', [signal.SIGINT, signal.SIGKILL], ids=['SIGINT', 'SIGKILL'])
def test_an_interrupted_export_leaves_no_folder_under_a_timestamp(tmp_path, sent):
    """A process interrupted while exporting: the SavedModel is complete in temp-<timestamp>;
    SIGINT removes it, SIGKILL leaves it; no folder is ever under the timestamp's name."""
    with tf.Graph().as_default():
        v1.train.get_or_create_global_step()
        v1.get_variable('weights', [3, 1])
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            v1.train.Saver().save(session, str(tmp_path / 'model' / 'model.ckpt'), 0)
    (tmp_path / 'asset.txt').write_text('extra')
    script = tmp_path / 'interrupted.py'
    script.write_text(INTERRUPTED_EXPORT)
    process = subprocess.Popen([sys.executable, str(script), str(tmp_path / 'model'),
                                str(tmp_path / 'export'), str(tmp_path / 'asset.txt')],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3'),
                               preexec_fn=as_from_a_terminal)
    try:
        # 'exporting', then 'copying' once the SavedModel is written; a process that says
        # neither in 600 s is ended (its lines then end).
        watchdog = threading.Timer(600, process.kill)
        watchdog.start()
        try:
            lines = [process.stdout.readline(), process.stdout.readline()]
        finally:
            watchdog.cancel()
        assert lines == ['exporting\n', 'copying\n'], (
            process.stderr.read() if process.poll() is not None else lines)
        written = list((tmp_path / 'export').glob('temp-*/saved_model.pb'))
        assert written
        process.send_signal(sent)
        process.wait(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    left = exports_in(tmp_path / 'export')
    assert not [name for name in left if name.isdigit()]
    if sent == signal.SIGINT:
        assert process.returncode != 0 and left == []
    else:
        assert left == [written[0].parent.name]


@pytest.mark.slow
def test_train_and_evaluate_calls_the_exporters_after_each_evaluation(tmp_path):
    """Checkpoints at steps 2, 4, 6 (max_steps), each evaluated on the training batch (its
    loss falls with each step): FinalExporter exports 6; LatestExporter(exports_to_keep=2) 4
    and 6; BestExporter 2, 4, 6 by loss, and only 2 with a compare_fn preferring a larger
    loss. Each export predicts with its checkpoint's weights (computed with numpy)."""
    model = est.Estimator(linear_model_fn, str(tmp_path), est.RunConfig(
        save_checkpoints_steps=2, log_step_count_steps=None), params={
        'learning_rate': LEARNING_RATE})
    receiver_fn = raw_receiver_fn()

    def larger_loss(best_eval_result, current_eval_result):
        return current_eval_result['loss'] > best_eval_result['loss']

    exporters = [est.FinalExporter('final', receiver_fn),
                 est.LatestExporter('latest', receiver_fn, exports_to_keep=2),
                 est.BestExporter('best', receiver_fn),
                 est.BestExporter('worst', receiver_fn, compare_fn=larger_loss)]
    metrics, results = est.train_and_evaluate(
        model, est.TrainSpec(tensors_input_fn, max_steps=6),
        est.EvalSpec(tensors_input_fn, steps=1, exporters=exporters, throttle_secs=0))
    assert metrics['global_step'] == 6
    assert [result is None for result in results] == [False, False, False, True]
    x, _ = data(eval=True)

    def steps_of(name):
        """The training step of each export of `name`, by its predictions."""
        found = []
        for folder in exports_in(tmp_path / 'export' / name):
            outputs, _ = v1_outputs(str(tmp_path / 'export' / name / folder),
                                    'serving_default', {'x': x})
            matches = [step for step in (2, 4, 6) if np.allclose(
                outputs['output'], x @ same_batch_sgd(step)[0] + same_batch_sgd(step)[1],
                rtol=1e-5, atol=1e-6)]
            found.extend(matches)
        return found

    assert steps_of('final') == [6]
    assert steps_of('latest') == [4, 6]
    assert steps_of('best') == [2, 4, 6]
    assert steps_of('worst') == [2]
    assert results[0].decode() == str(tmp_path / 'export' / 'final' / exports_in(
        tmp_path / 'export' / 'final')[0])
    # A new BestExporter starts from the best evaluation in model_dir/eval's event files.
    best = est.BestExporter('again', receiver_fn)
    checkpoint = model.latest_checkpoint()
    assert best.export(model, str(tmp_path / 'again'), checkpoint,
                       {'loss': metrics['loss'] * 2, 'global_step': 7}, False) is None
    assert best.export(model, str(tmp_path / 'again'), checkpoint,
                       {'loss': metrics['loss'] / 2, 'global_step': 8}, False) is not None
    assert len(exports_in(tmp_path / 'again')) == 1


def test_eval_spec_checks_its_exporters():
    receiver_fn = lambda: None  # noqa: E731
    final = est.FinalExporter('a', receiver_fn)
    assert est.EvalSpec(lambda: None, exporters=final).exporters == (final,)
    with pytest.raises(ValueError, match='unique names'):
        est.EvalSpec(lambda: None, exporters=[final, est.LatestExporter('a', receiver_fn)])
    with pytest.raises(TypeError, match='must be an Exporter'):
        est.EvalSpec(lambda: None, exporters=[final, 'b'])
    with pytest.raises(ValueError, match='exports_to_keep'):
        est.LatestExporter('b', receiver_fn, exports_to_keep=0)


def test_the_port_rewrites_the_export_names_to_these():
    """The Object Detection API's model_lib builds its EvalSpec with a FinalExporter and its
    PREDICT spec with a PredictOutput; older code imports the export modules by private path."""
    from slimdata.port import tree

    code = ('import tensorflow as tf\n'
            'from tensorflow_estimator.python.estimator.export import export_output\n'
            'from tensorflow.python.estimator import exporter as exporter_lib\n'
            'final = tf.estimator.FinalExporter(name="Servo", serving_input_receiver_fn=fn)\n'
            'spec = tf.estimator.EvalSpec(name="0", input_fn=fn, steps=None, '
            'exporters=[final])\n'
            'receiver = tf.estimator.export.ServingInputReceiver\n'
            'raw = tf.compat.v1.estimator.export.build_raw_serving_input_receiver_fn\n'
            'outputs = {tf.compat.v1.saved_model.signature_constants.PREDICT_METHOD_NAME: '
            'tf.estimator.export.PredictOutput}\n'
            'best = exporter_lib.BestExporter\n'
            'regress = export_output.RegressionOutput\n')
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    ported, notes = results['m.py']
    assert not [note for note in notes if note.kind == 'not ported']
    namespace: dict = {'fn': lambda: None}
    exec(ported, namespace)  # noqa: S102
    assert isinstance(namespace['final'], est.FinalExporter)
    assert namespace['spec'].exporters == (namespace['final'],)
    assert namespace['receiver'] is export.ServingInputReceiver
    assert namespace['raw'] is export.build_raw_serving_input_receiver_fn
    assert list(namespace['outputs'].values()) == [export.PredictOutput]
    assert namespace['best'] is est.BestExporter
    assert namespace['regress'] is export.RegressionOutput
