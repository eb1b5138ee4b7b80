"""train_examples/train_classifier.py and eval_classifier.py: train, checkpoint, evaluate.

The scripts run in-process through `main(argv)` (train_examples/ is put on sys.path, as Python
does when it runs them), and once as scripts in a subprocess (slow). In-process training
passes --save_interval_secs=0 --save_summaries_secs=0: this pytest process runs eagerly, where
slim.learning.train's background service threads cannot run (see
check_supervisor_services_can_run); the scripts' own run covers them.
"""

import glob
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from slimdata.datasets.classification import convert_image_folder
from slimdata.datasets.synthetic import make_image_folder
from slimdata.records.tfrecord import count_records

TRAIN_EXAMPLES = Path(__file__).resolve().parent.parent / 'train_examples'
sys.path.insert(0, str(TRAIN_EXAMPLES))

import eval_classifier  # noqa: E402
import lenet  # noqa: E402
import train_classifier  # noqa: E402

NUM_CLASSES = 4
#: In-process training: only the final checkpoint, no background Supervisor threads.
NO_SERVICES = ['--save_interval_secs', '0', '--save_summaries_secs', '0']


def _convert(tmp_path_factory, name, images_per_class):
    raw = tmp_path_factory.mktemp(f'{name}_raw')
    make_image_folder(str(raw / 'images'), num_classes=NUM_CLASSES,
                      images_per_class=images_per_class, image_size=28, seed=0)
    records = tmp_path_factory.mktemp(f'{name}_records')
    convert_image_folder(str(raw / 'images'), str(records), validation_ratio=0.25, seed=0,
                         num_shards=2)
    return str(records)


@pytest.fixture(scope='module')
def tiny_records(tmp_path_factory):
    """4 classes x 10 images: 30 train and 10 validation records, 2 shards each."""
    return _convert(tmp_path_factory, 'tiny', images_per_class=10)


@pytest.fixture(scope='module')
def trained(tiny_records, tmp_path_factory):
    """A train_dir after 5 steps of batch 8, and what main returned."""
    train_dir = str(tmp_path_factory.mktemp('train'))
    results = train_classifier.main(
        ['--dataset_dir', tiny_records, '--train_dir', train_dir, '--max_number_of_steps', '5',
         '--batch_size', '8', '--num_readers', '2', '--num_preprocessing_threads', '2']
        + NO_SERVICES)
    return train_dir, results


def _split_records(records_dir, split):
    """Records of a split counted by slimdata.records.tfrecord (no TensorFlow, no dataset_info)."""
    return sum(count_records(path)
               for path in glob.glob(os.path.join(records_dir, f'{split}-*.tfrecord')))


def test_training_writes_a_checkpoint_of_the_lenet_and_finite_losses(trained):
    train_dir, results = trained
    assert results['steps'] == 5
    assert results['global_step'] == 5
    assert len(results['losses']) == 5
    assert all(math.isfinite(loss) and loss > 0 for loss in results['losses'])
    assert results['loss_start'] == pytest.approx(results['losses'][0])
    assert results['loss_end'] == pytest.approx(results['losses'][-1])
    assert results['examples_per_sec'] > 0
    checkpoint = tf.train.latest_checkpoint(train_dir)
    assert checkpoint == os.path.join(train_dir, 'model.ckpt-5')
    shapes = dict(tf.train.list_variables(checkpoint))
    # Grayscale PNGs decode as 3 channels (the image_folder descriptor's Image handler).
    assert shapes['LeNet/conv1/weights'] == [5, 5, 3, 16]
    assert shapes['LeNet/logits/weights'] == [256, NUM_CLASSES]
    assert tf.train.load_variable(checkpoint, 'global_step') == 5


def test_training_resumes_from_the_checkpoint_in_train_dir(tiny_records, trained,
                                                           tmp_path):
    train_dir = str(tmp_path / 'train')
    shutil.copytree(trained[0], train_dir)
    results = train_classifier.main(
        ['--dataset_dir', tiny_records, '--train_dir', train_dir, '--max_number_of_steps', '7',
         '--batch_size', '8'] + NO_SERVICES)
    assert results['steps'] == 2
    assert results['global_step'] == 7
    assert tf.train.latest_checkpoint(train_dir).endswith('model.ckpt-7')


def test_training_with_background_services_needs_graph_mode(tiny_records, tmp_path):
    assert tf.executing_eagerly()
    with pytest.raises(RuntimeError, match='disable_eager_execution'):
        train_classifier.main(['--dataset_dir', tiny_records, '--train_dir', str(tmp_path),
                               '--max_number_of_steps', '1'])
    assert os.listdir(tmp_path) == []


def _accuracy_computed_directly(records_dir, split, checkpoint):
    """The checkpoint's accuracy on a split, without the provider, the queues or the metric:
    records read by tf.data, the network run on each image, the hits counted in numpy."""
    images, labels = [], []
    for path in sorted(glob.glob(os.path.join(records_dir, f'{split}-*.tfrecord'))):
        for record in tf.data.TFRecordDataset(path):
            example = tf.train.Example.FromString(record.numpy())
            feature = example.features.feature
            images.append(tf.io.decode_png(feature['image/encoded'].bytes_list.value[0],
                                           channels=3).numpy())
            labels.append(feature['image/class/label'].int64_list.value[0])
    with tf.Graph().as_default():
        image = tf.compat.v1.placeholder(tf.uint8, [28, 28, 3])
        logits = lenet.lenet(lenet.preprocess_image(image, 28)[None], NUM_CLASSES)
        with tf.compat.v1.Session() as sess:
            tf.compat.v1.train.Saver().restore(sess, checkpoint)
            predictions = [int(np.argmax(sess.run(logits, {image: pixels})))
                           for pixels in images]
    return float(np.mean(np.array(predictions) == np.array(labels))), len(labels)


def test_eval_reads_every_example_once_and_matches_a_direct_computation(tiny_records,
                                                                        trained, tmp_path):
    train_dir, _ = trained
    # batch 4 over 10 examples: batches of 4, 4 and a smaller final one of 2.
    results = eval_classifier.main(
        ['--dataset_dir', tiny_records, '--dataset_split_name', 'validation',
         '--checkpoint_path', train_dir, '--batch_size', '4', '--eval_dir', str(tmp_path)])
    assert results['num_examples'] == _split_records(tiny_records, 'validation') == 10
    expected_accuracy, expected_count = _accuracy_computed_directly(
        tiny_records, 'validation', tf.train.latest_checkpoint(train_dir))
    assert expected_count == 10
    assert 0.0 <= results['accuracy'] <= 1.0
    assert results['accuracy'] == pytest.approx(expected_accuracy)
    assert results['checkpoint'] == tf.train.latest_checkpoint(train_dir)
    assert results['global_step'] == 5

    [events] = glob.glob(str(tmp_path / 'events.out.tfevents.*'))
    written = [(event.step, value.simple_value)
               for event in tf.compat.v1.train.summary_iterator(events)
               for value in event.summary.value if value.tag == 'eval/Accuracy']
    assert written == [(5, pytest.approx(results['accuracy']))]


def test_eval_accepts_a_checkpoint_file(tiny_records, trained):
    checkpoint = os.path.join(trained[0], 'model.ckpt-5')
    results = eval_classifier.main(['--dataset_dir', tiny_records, '--dataset_split_name',
                                    'train', '--checkpoint_path', checkpoint])
    assert results['num_examples'] == _split_records(tiny_records, 'train') == 30
    assert results['checkpoint'] == checkpoint


def test_eval_refuses_a_count_that_differs_from_num_samples(tiny_records, trained, tmp_path):
    records = tmp_path / 'records'
    shutil.copytree(tiny_records, records)
    info_path = records / 'dataset_info.json'
    info = json.loads(info_path.read_text())
    info['splits']['validation']['num_examples'] = 11
    info_path.write_text(json.dumps(info))
    # The pipeline itself refuses an epoch that ends short of num_samples (the eval's own
    # count would say so after it).
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r'the input ended after 1 epochs and 10 records; the 2 data files '
                             r'held 10 records per epoch .* num_samples says 11'):
        eval_classifier.main(['--dataset_dir', str(records), '--checkpoint_path', trained[0]])


@pytest.mark.parametrize('make_path, message', [
    (lambda tmp: tmp, 'holds no checkpoint'),
    (lambda tmp: tmp / 'model.ckpt-9', 'neither a folder of checkpoints nor a checkpoint'),
])
def test_eval_names_a_missing_checkpoint(tiny_records, tmp_path, make_path, message):
    path = str(make_path(tmp_path))
    with pytest.raises(ValueError, match=message) as error:
        eval_classifier.main(['--dataset_dir', tiny_records, '--checkpoint_path', path])
    assert path in str(error.value)


def _run_script(name, *args):
    result = subprocess.run([sys.executable, str(TRAIN_EXAMPLES / name), *args],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert 'Traceback' not in result.stderr
    # A run that ended well says "done", never the failure word "stopped" (issue 29 item 4).
    assert 'stopped after' not in result.stderr, result.stderr[-3000:]
    return result.stdout


@pytest.mark.slow
def test_scripts_run_with_the_supervisor_services_and_end_cleanly(tiny_records, tmp_path):
    train_dir = str(tmp_path / 'train')
    stdout = _run_script('train_classifier.py', '--dataset_dir', tiny_records, '--train_dir',
                         train_dir, '--max_number_of_steps', '6', '--batch_size', '8',
                         '--save_summaries_secs', '1', '--save_interval_secs', '1')
    assert 'trained 6 steps (global step 6)' in stdout
    assert tf.train.latest_checkpoint(train_dir).endswith('model.ckpt-6')
    assert glob.glob(os.path.join(train_dir, 'events.out.tfevents.*'))

    stdout = _run_script('eval_classifier.py', '--dataset_dir', tiny_records,
                         '--checkpoint_path', train_dir, '--batch_size', '3')
    assert ' over 10 examples ' in stdout


@pytest.mark.slow
def test_the_classifier_learns_well_above_chance_on_held_out_data(tmp_path_factory):
    records = _convert(tmp_path_factory, 'learn', images_per_class=100)
    train_dir = str(tmp_path_factory.mktemp('learn_train'))
    trained = train_classifier.main(
        ['--dataset_dir', records, '--train_dir', train_dir, '--max_number_of_steps', '200',
         '--batch_size', '32'] + NO_SERVICES)
    assert trained['loss_end'] < trained['loss_start'] / 4
    evaluated = eval_classifier.main(['--dataset_dir', records, '--dataset_split_name',
                                      'validation', '--checkpoint_path', train_dir])
    assert evaluated['num_examples'] == _split_records(records, 'validation') == 100
    assert evaluated['accuracy'] > 0.8  # chance is 0.25
