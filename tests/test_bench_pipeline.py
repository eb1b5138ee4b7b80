"""The pipeline benchmark: its record sets, its pipelines, and its measuring and tables.

Record sets are tiny here (a few small images); the timings are never asserted, only what the
harness computes from them (on fake clocks and fake results).
"""

import argparse
import dataclasses
import io
import os
import sys

import numpy as np
import pytest
from PIL import Image

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPOSITORY, 'benchmarks'))

import bench_pipeline  # noqa: E402
import pipelines  # noqa: E402
import profile_pipeline  # noqa: E402
import record_sets  # noqa: E402

BATCH = 4
#: Small queues, so that tiny sets fill them.
TINY_OPTIONS = pipelines.PipelineOptions(batch_size=BATCH, common_queue_capacity=16,
                                         common_queue_min=4, batch_capacity=8,
                                         prefetch_capacity=2)
TINY_SPECS = {
    'voc': dataclasses.replace(record_sets.RECORD_SETS['voc'], num_records=6, num_shards=2,
                               image_size=(64, 48)),
    'mnist': dataclasses.replace(record_sets.RECORD_SETS['mnist'], num_records=8,
                                 num_shards=2),
    'deeplab': dataclasses.replace(record_sets.RECORD_SETS['deeplab'], num_records=5,
                                   num_shards=2, image_size=(64, 48)),
}


@pytest.fixture(scope='module')
def records_root(tmp_path_factory):
    root = str(tmp_path_factory.mktemp('records'))
    for spec in TINY_SPECS.values():
        record_sets.ensure_record_set(spec, root, workers=1)
    return root


def _examples(records_root, set_name):
    """The set's records read by TensorFlow's own reader and parsed with the descriptor's
    keys_to_features."""
    import tensorflow as tf
    spec = TINY_SPECS[set_name]
    features = pipelines.TASKS[set_name].keys_to_features()
    files = sorted(tf.io.gfile.glob(os.path.join(records_root, set_name, 'train-*.tfrecord')))
    assert len(files) == spec.num_shards
    return [tf.io.parse_single_example(record, features)
            for record in tf.data.TFRecordDataset(files)]


# ----------------------------------------------------------------------------------------
# Record sets


def test_voc_records_hold_jpegs_and_boxes_in_the_descriptor_layout(records_root):
    import tensorflow as tf
    examples = _examples(records_root, 'voc')
    assert len(examples) == 6
    for example in examples:
        image = Image.open(io.BytesIO(example['image/encoded'].numpy()))
        assert (image.format, image.size, image.mode) == ('JPEG', (64, 48), 'RGB')
        assert example['image/shape'].numpy().tolist() == [48, 64, 3]
        boxes = np.stack([tf.sparse.to_dense(example['image/object/bbox/' + f]).numpy()
                          for f in ('ymin', 'xmin', 'ymax', 'xmax')], axis=1)
        labels = tf.sparse.to_dense(example['image/object/bbox/label']).numpy()
        assert 1 <= len(boxes) <= 6 and len(labels) == len(boxes)
        assert ((boxes >= 0) & (boxes <= 1)).all()
        assert (boxes[:, 0] < boxes[:, 2]).all() and (boxes[:, 1] < boxes[:, 3]).all()
        assert ((labels >= 1) & (labels <= 20)).all()


def test_mnist_records_hold_28x28_grayscale_pngs(records_root):
    examples = _examples(records_root, 'mnist')
    assert len(examples) == 8
    for example in examples:
        image = Image.open(io.BytesIO(example['image/encoded'].numpy()))
        assert (image.format, image.size, image.mode) == ('PNG', (28, 28), 'L')
        assert np.asarray(image).max() > 0
        assert 0 <= example['image/class/label'].numpy()[0] <= 9


def test_deeplab_records_hold_a_jpeg_and_a_label_png_of_the_same_size(records_root):
    for example in _examples(records_root, 'deeplab'):
        image = Image.open(io.BytesIO(example['image/encoded'].numpy()))
        label = Image.open(io.BytesIO(example['image/segmentation/class/encoded'].numpy()))
        assert (image.format, label.format, label.mode) == ('JPEG', 'PNG', 'L')
        assert image.size == label.size == (64, 48)
        values = set(np.unique(np.asarray(label)).tolist())
        assert values <= set(range(21)) | {255} and 255 in values


@pytest.mark.parametrize('set_name', sorted(TINY_SPECS))
def test_record_sets_are_read_by_the_dataset_factory(records_root, set_name):
    spec = TINY_SPECS[set_name]
    dataset = bench_pipeline.record_set(set_name, records_root).dataset()
    assert dataset.num_samples == spec.num_records


def test_examples_are_deterministic_functions_of_seed_and_index():
    spec = TINY_SPECS['voc']
    first = record_sets.encode_voc_example(3, spec)
    assert record_sets.encode_voc_example(3, spec) == first
    assert record_sets.encode_voc_example(4, spec) != first
    assert record_sets.encode_voc_example(3, dataclasses.replace(spec, seed=1)) != first


def test_a_complete_set_is_reused_and_a_changed_spec_rebuilds_it(tmp_path):
    spec = dataclasses.replace(TINY_SPECS['mnist'], num_records=3, num_shards=1)
    folder = record_sets.ensure_record_set(spec, str(tmp_path), workers=1)
    shard = os.path.join(folder, 'train-00000-of-00001.tfrecord')
    os.utime(shard, (0, 0))
    record_sets.ensure_record_set(spec, str(tmp_path), workers=1)
    assert os.path.getmtime(shard) == 0
    changed = dataclasses.replace(spec, seed=spec.seed + 1)
    assert not record_sets.is_complete(changed, folder)
    record_sets.ensure_record_set(changed, str(tmp_path), workers=1)
    assert os.path.getmtime(shard) > 0 and record_sets.is_complete(changed, folder)


# ----------------------------------------------------------------------------------------
# Pipelines: every one yields batches of the expected shapes


def _expected_shapes(set_name, pipeline_name):
    """item -> shape, with None for a dimension that is the longest list in the batch."""
    images = {'voc': {'image': (BATCH, 300, 300, 3)},
              'mnist': {'image': (BATCH, 28, 28, 1)},
              'deeplab': {'image': (BATCH, 48, 64, 3), 'labels_class': (BATCH, 48, 64, 1)}}
    labels = {'voc': {'object/bbox': (BATCH, None, 4), 'object/label': (BATCH, None)},
              'mnist': {'label': (BATCH,)}, 'deeplab': {}}
    encoded = {'voc': {'image/encoded': (BATCH,)}, 'mnist': {'image/encoded': (BATCH,)},
               'deeplab': {'image/encoded': (BATCH,),
                           'image/segmentation/class/encoded': (BATCH,)}}
    if pipeline_name in ('queue_handoff', 'session_run'):
        return {'example': (BATCH,)}
    if pipeline_name in ('slimdata:read', 'tfdata:read'):
        return {'record': (BATCH,)}
    if pipeline_name == 'slimdata:parse':
        return {**encoded[set_name], **labels[set_name]}
    if pipeline_name == 'limit':
        shapes = dict(images[set_name])
    else:
        shapes = {**images[set_name], **labels[set_name]}
    if pipeline_name == 'slimdata:decode' and set_name == 'voc':
        shapes['image'] = (BATCH, 48, 64, 3)      # not resized yet
    return shapes


def _check_shapes(shapes, expected):
    assert set(shapes) == set(expected)
    for item, shape in expected.items():
        assert len(shapes[item]) == len(shape), item
        assert all(e is None or e == s for s, e in zip(shapes[item], shape)), (item, shapes)
    if 'object/bbox' in shapes:
        # Padded to the most boxes of the batch: 1..max_objects, the same for the labels.
        assert 1 <= shapes['object/bbox'][1] <= 6
        assert shapes['object/bbox'][1] == shapes['object/label'][1]


@pytest.mark.parametrize('pipeline_name', list(pipelines.PIPELINES))
@pytest.mark.parametrize('set_name', sorted(TINY_SPECS))
def test_every_pipeline_yields_batches_of_the_expected_shapes(records_root, set_name,
                                                               pipeline_name):
    if not pipelines.applies(pipeline_name, set_name):
        assert pipeline_name == 'slimdata_batch' and set_name != 'mnist'
        return
    record_set = bench_pipeline.record_set(set_name, records_root)
    with pipelines.PIPELINES[pipeline_name](record_set, TINY_OPTIONS) as next_batch:
        for _ in range(2):
            _check_shapes(next_batch(), _expected_shapes(set_name, pipeline_name))


# ----------------------------------------------------------------------------------------
# Measuring, summaries and tables


class FakeClocks:
    """Wall and CPU clocks that advance only when a batch is made."""

    def __init__(self, seconds_per_batch, cpu_per_batch, batch_size):
        self.wall = self.cpu = 0.0
        self.seconds_per_batch, self.cpu_per_batch = seconds_per_batch, cpu_per_batch
        self.batch_size = batch_size
        self.batches = 0

    def next_batch(self):
        self.wall += self.seconds_per_batch
        self.cpu += self.cpu_per_batch
        self.batches += 1
        return {'image': (self.batch_size, 2, 2), 'label': (self.batch_size,)}


def test_measure_warms_up_long_enough_then_counts_a_window():
    clocks = FakeClocks(seconds_per_batch=0.25, cpu_per_batch=0.375, batch_size=32)
    result = bench_pipeline.measure(clocks.next_batch, seconds=1.0, warmup_seconds=0.5,
                                    warmup_examples=100, clock=lambda: clocks.wall,
                                    cpu_clock=lambda: clocks.cpu)
    # Warm-up: 0.5 s pass after 2 batches, but 100 examples take 4 (128 examples, 1 s).
    assert result['first_batch_seconds'] == 0.25
    assert (result['warmup_examples'], result['warmup_seconds']) == (128, 1.0)
    # Window: 4 batches of 0.25 s.
    assert (result['examples'], result['seconds']) == (128, 1.0)
    assert result['examples_per_second'] == 128
    assert result['cores'] == 1.5
    assert clocks.batches == 8


def _result(rate, rss=100.0, cores=1.0):
    return {'examples_per_second': rate, 'peak_rss_mb': rss, 'cores': cores}


def test_summarise_takes_the_median_of_the_good_runs_and_counts_the_failed():
    summary = bench_pipeline.summarise([_result(100, 10, 1.0), _result(300, 30, 2.0),
                                        {'error': 'boom'}, _result(200, 50, 1.5)])
    # CPU us per example of the runs: 1.0 / 100, 2.0 / 300, 1.5 / 200 s.
    assert summary == {'median': 200, 'min': 100, 'max': 300, 'peak_rss_mb': 30,
                       'cores': 1.5, 'cpu_us_per_example': pytest.approx(7500), 'runs': 3,
                       'failed': 1}
    assert bench_pipeline.summarise([{'error': 'boom'}]) == {'failed': 1, 'error': 'boom'}


def test_ratios_and_table_against_the_references_present():
    summaries = {'limit': bench_pipeline.summarise([_result(200)]),
                 'tfdata': bench_pipeline.summarise([_result(100)]),
                 'slimdata': bench_pipeline.summarise([_result(150, 321, 1.25),
                                                       _result(140), _result(160)]),
                 'broken': bench_pipeline.summarise([{'error': 'no tf_slim'}])}
    ratios = bench_pipeline.ratios(summaries)
    assert ratios['slimdata'] == {'limit': 0.75, 'tfdata': 1.5}
    assert ratios['broken'] == {'limit': None, 'tfdata': None}
    table = bench_pipeline.format_table(summaries).splitlines()
    assert table[0] == ('| pipeline | ex/s (median) | min-max | x limit | x tfdata | '
                        'peak RSS MB | cores | CPU us/ex |')
    # CPU us per example of slimdata's runs: 1.25 / 150, 1 / 140, 1 / 160 s; median 1 / 140.
    assert table[4] == '| slimdata | 150 | 140-160 | 0.75x | 1.50x | 100 | 1.00 | 7143 |'
    assert table[5].startswith('| broken | FAILED | no tf_slim |')


def test_profile_table_adds_per_example_cpu_costs_stage_by_stage():
    summaries = {'slimdata:read': bench_pipeline.summarise([_result(10000, cores=1.0)]),
                 'slimdata:parse': bench_pipeline.summarise([_result(5000, cores=1.0)]),
                 'limit': bench_pipeline.summarise([_result(2000, cores=2.0)])}
    assert profile_pipeline.per_example(summaries['limit']) == {'wall_us': 500.0,
                                                                'cpu_us': 1000.0}
    rows = profile_pipeline.format_profile(summaries).splitlines()[2:]
    assert rows == ['| slimdata:read | 10000 | 1.00 | 100.0 | 100.0 |  |',
                    '| slimdata:parse | 5000 | 1.00 | 200.0 | 200.0 | +100.0 |',
                    '| limit | 2000 | 2.00 | 500.0 | 1000.0 |  |']


def test_arguments_quick_mode_and_unknown_names():
    args = bench_pipeline.parse_args(['--quick', '--sets', 'mnist', '--output', '/x'])
    assert (args.runs, args.seconds, args.sets) == (1, 2.0, ['mnist'])
    assert args.pipelines == list(pipelines.BENCHMARK_PIPELINES)
    assert args.records == os.path.abspath('/x/records')
    with pytest.raises(SystemExit):
        bench_pipeline.parse_args(['--pipelines', 'limit,nope'])


def test_the_common_queue_capacity_reaches_the_workers_pipelines():
    default = bench_pipeline.parse_args([])
    assert bench_pipeline.pipeline_options(default) == pipelines.PipelineOptions()
    args = bench_pipeline.parse_args(['--common-queue-capacity', '64', '--batch-size', '8'])
    command = bench_pipeline.worker_command('voc', 'slimdata', args)
    assert command[command.index('--common-queue-capacity') + 1] == '64'
    worker_args = bench_pipeline.parse_args(command[2:])
    assert worker_args._worker == ['voc', 'slimdata']
    options = bench_pipeline.pipeline_options(worker_args)
    assert (options.batch_size, options.common_queue_capacity, options.common_queue_min) == (
        8, 64, 32)


@pytest.mark.slow
def test_a_worker_process_measures_a_pipeline_and_reports_a_failure(records_root):
    args = argparse.Namespace(records=records_root, seconds=0.2, warmup=0.1, batch_size=BATCH,
                              common_queue_capacity=16)
    result = bench_pipeline.measure_in_fresh_process('mnist', 'tfdata', args)
    assert result['examples'] > 0 and result['examples'] % BATCH == 0
    assert result['peak_rss_mb'] > 0
    failed = bench_pipeline.measure_in_fresh_process('mnist', 'no_such_pipeline', args)
    assert 'no_such_pipeline' in failed['error']
