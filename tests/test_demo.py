"""`make demo` (train_examples/demo.py): the whole road in its quick mode, and its exact check.

The quick run is a subprocess, as `make demo` runs it; what it printed and the results.json it
wrote are checked against the files it left (PNGs counted on disk, records counted by
tf.data). The exact check is also run in-process on a source folder changed after conversion,
to show that it fails when a record does not match its source.
"""

import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from slimdata._tf import tf
from slimdata.datasets.classification import convert_image_folder
from slimdata.datasets.synthetic import make_image_folder

TRAIN_EXAMPLES = Path(__file__).resolve().parent.parent / 'train_examples'
DEMO = TRAIN_EXAMPLES / 'demo.py'
sys.path.insert(0, str(TRAIN_EXAMPLES))

import demo  # noqa: E402

STAGES = ['generate raw data', 'convert shapes (image folder)', 'convert VOC2007 detection',
          'convert VOC2012 segmentation', 'verify CRCs and counts', 'exact decode check',
          'train classifier (LeNet)', 'eval classifier (validation)', 'train SSD',
          'train deeplab FCN', 'eval deeplab (val)']
TRAINING_STAGES = ['train classifier (LeNet)', 'train SSD', 'train deeplab FCN']


def tf_count(pattern):
    """Records in the files matching `pattern`, counted by tf.data."""
    files = sorted(glob.glob(pattern))
    assert files, f'no files match {pattern}'
    return int(tf.data.TFRecordDataset(files).reduce(0, lambda count, _: count + 1))


@pytest.fixture(scope='module')
def quick_run(tmp_path_factory):
    """(output_dir, completed process, results.json) of `demo.py --quick`."""
    output_dir = tmp_path_factory.mktemp('demo')
    process = subprocess.run(
        [sys.executable, str(DEMO), '--quick', '--output_dir', str(output_dir)],
        capture_output=True, text=True, timeout=600, cwd=output_dir)
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
    with open(output_dir / 'results.json', encoding='utf-8') as f:
        results = json.load(f)
    return output_dir, process, results


def stage(results, name):
    (row,) = [row for row in results['stages'] if row['stage'] == name]
    return row


@pytest.mark.slow
def test_quick_demo_passes_and_prints_a_row_per_stage(quick_run):
    _, process, results = quick_run
    assert results['mode'] == 'quick'
    assert results['ok'] is True and results['failures'] == []
    assert [row['stage'] for row in results['stages']] == STAGES
    assert 'all checks passed' in process.stdout
    table = process.stdout[process.stdout.index('== slimdata demo (quick)'):]
    table_lines = table.splitlines()
    for name in STAGES + ['start-up (import TensorFlow)', 'total']:
        assert any(line.startswith(name + ' ') for line in table_lines), name


@pytest.mark.slow
def test_quick_demo_converts_and_verifies_what_it_generated(quick_run):
    output_dir, _, results = quick_run
    pngs = glob.glob(str(output_dir / 'raw' / 'shapes' / '*' / '*.png'))
    voc_images = glob.glob(str(output_dir / 'raw' / 'VOCdevkit' / 'VOC2007' / 'JPEGImages' / '*'))
    seg_images = glob.glob(str(output_dir / 'raw' / 'VOCdevkit' / 'VOC2012' / 'JPEGImages' / '*'))
    records = output_dir / 'records'
    assert stage(results, 'generate raw data')['count'] == (
        len(pngs) + len(voc_images) + len(seg_images))
    assert stage(results, 'convert shapes (image folder)')['count'] == len(pngs) == tf_count(
        str(records / 'shapes' / '*.tfrecord'))
    assert stage(results, 'convert VOC2007 detection')['count'] == len(voc_images) == tf_count(
        str(records / 'voc2007' / 'trainval-*.tfrecord'))
    assert stage(results, 'convert VOC2012 segmentation')['count'] == len(seg_images) == (
        tf_count(str(records / 'voc_seg' / '*.tfrecord')))
    assert stage(results, 'verify CRCs and counts')['count'] == (
        len(pngs) + len(voc_images) + len(seg_images))


@pytest.mark.slow
def test_quick_demo_decodes_every_classification_record_exactly(quick_run):
    output_dir, process, results = quick_run
    num_pngs = len(glob.glob(str(output_dir / 'raw' / 'shapes' / '*' / '*.png')))
    exact = stage(results, 'exact decode check')
    assert num_pngs > 0
    assert exact['count'] == num_pngs
    assert exact['metric'] == f'{num_pngs}/{num_pngs} exact'
    assert f'{num_pngs}/{num_pngs} exact' in process.stdout


@pytest.mark.slow
def test_quick_demo_losses_fall_and_the_classifier_beats_chance(quick_run):
    output_dir, process, results = quick_run
    for name in TRAINING_STAGES:
        row = stage(results, name)
        assert math.isfinite(row['loss_start']) and math.isfinite(row['loss_end']), name
        assert row['loss_end'] < row['loss_start'], name
        assert row['count'] > 0 and row['unit'] == 'steps'
        assert f'{row["loss_start"]:.3f} -> {row["loss_end"]:.3f}' in process.stdout
    evaluation = stage(results, 'eval classifier (validation)')
    assert evaluation['count'] == tf_count(
        str(output_dir / 'records' / 'shapes' / 'validation-*.tfrecord'))
    accuracy = float(re.fullmatch(r'accuracy (\S+)', evaluation['metric']).group(1))
    assert accuracy >= 0.6  # 4 classes: chance is 0.25
    deeplab = stage(results, 'eval deeplab (val)')
    assert deeplab['count'] == tf_count(str(output_dir / 'records' / 'voc_seg' / 'val-*'))
    assert 0 < float(re.fullmatch(r'mIoU (\S+)', deeplab['metric']).group(1)) <= 1


# ----------------------------------------------------------------------------------------
# The exact check, in-process: it must fail when the records and the sources disagree.


def change_pixels(image_folder):
    """Brightens one pixel of one source PNG; returns its path."""
    path = sorted(glob.glob(os.path.join(image_folder, '*', '*.png')))[3]
    pixels = np.asarray(Image.open(path)).copy()
    pixels[0, 0] = 255 if pixels[0, 0] < 255 else 0
    Image.fromarray(pixels).save(path)
    return path


def move_to_another_class(image_folder):
    """Moves one source PNG into the next class folder (so its label changes)."""
    classes = sorted(os.listdir(image_folder))
    path = sorted(glob.glob(os.path.join(image_folder, classes[0], '*.png')))[0]
    moved = os.path.join(image_folder, classes[1], os.path.basename(path))
    shutil.move(path, moved)
    return moved


@pytest.mark.parametrize('change, expected', [
    (change_pixels, ['records differ', 'its pixels equal no source image',
                     'source images are in no record']),
    (move_to_another_class, ['records differ', 'but label 0, expected 1']),
])
def test_exact_check_fails_when_a_source_image_changed(tmp_path, change, expected):
    image_folder, records = str(tmp_path / 'shapes'), str(tmp_path / 'records')
    make_image_folder(image_folder, num_classes=2, images_per_class=4, seed=3)
    convert_image_folder(image_folder, records, validation_ratio=0.25, num_shards=1)

    unchanged = demo.Checks()
    result = demo.exact_check(image_folder, records, unchanged)
    assert unchanged.failures == []
    assert (result.count, result.metric) == (8, '8/8 exact')

    changed_path = change(image_folder)
    checks = demo.Checks()
    result = demo.exact_check(image_folder, records, checks)
    failures = '\n'.join(checks.failures)
    for text in expected:
        assert text in failures
    assert changed_path in failures
    assert result.metric == '7/8 exact'


# ----------------------------------------------------------------------------------------
# The verdict: a failed check makes the exit status 1 and is printed and recorded.


def training_row(loss_start, loss_end):
    return demo.StageResult('train X', 10, 'steps', 100.0, 1.0, loss_start=loss_start,
                            loss_end=loss_end)


@pytest.mark.parametrize('loss_start, loss_end, fell', [(2.0, 1.5, True), (1.5, 1.5, False),
                                                        (1.5, 2.0, False)])
def test_a_loss_that_did_not_fall_is_a_failure(loss_start, loss_end, fell):
    checks = demo.Checks()
    checks.loss_fell(training_row(loss_start, loss_end))
    assert checks.failures == ([] if fell else
                               [f'train X: the loss did not fall ({loss_start:.4f} -> '
                                f'{loss_end:.4f})'])


@pytest.mark.parametrize('failures', [[], ['classifier: accuracy 0.300, expected more']])
def test_report_exits_1_and_records_the_failures(tmp_path, capsys, failures):
    checks = demo.Checks()
    for failure in failures:
        checks.require(False, failure)
    rows = [training_row(2.0, 1.0)]
    status = demo.report(str(tmp_path), 'quick', rows, checks, startup_seconds=1.0,
                         total_seconds=3.0)
    out = capsys.readouterr().out
    with open(tmp_path / 'results.json', encoding='utf-8') as f:
        results = json.load(f)
    assert status == (1 if failures else 0)
    assert results['ok'] == (not failures)
    assert results['failures'] == failures
    assert results['stages'][0]['loss_end'] == 1.0
    assert '2.000 -> 1.000' in out
    assert ('DEMO FAILED' in out) is bool(failures)
    assert all(failure in out for failure in failures)
