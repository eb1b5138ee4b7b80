"""`make demo`: the whole slimdata road, from raw files to trained networks, on data it generates.

    raw files (synthetic)  ->  converters (sharded TFRecords + dataset_info.json)
      ->  verify (CRCs, counts)  ->  exact decode check (DatasetDataProvider vs source pixels)
      ->  train + evaluate a LeNet classifier, train an SSD detector, train + evaluate an FCN

Stages, each a function below:

1. generate: an image folder of 4 shape classes (classification), a Pascal VOC2007 detection
   tree and a VOC2012 segmentation tree (`slimdata.datasets.synthetic`). The demo rebuilds
   its folders under --output_dir on every run (generating takes seconds), so the numbers are
   always those of a fresh conversion and a fresh training run.
2. convert: `classification.convert_image_folder` (train/validation), `pascalvoc.convert_voc`
   (trainval) and `segmentation.convert_voc_seg` (train, val), with the writer's progress bars
   and summaries.
3. verify: the framing and both CRCs of every record of every shard, and the record counts
   against dataset_info.json (what `slimdata verify DIR` does).
4. exact check: every classification record, decoded through `get_dataset` ->
   `DatasetDataProvider` in a graph-mode session, equals the pixels and the label of exactly
   one source image, and every source image is found once.
5. train: `train_classifier.main` then `eval_classifier.main` on the held-out validation
   split; `train_ssd.main`; `train_deeplab.train` then `train_deeplab.evaluate` (mIoU on val).
   The training scripts are called in-process with argument lists, as a user's own program
   would call them; each builds its own graph.

At the end a table gives, per stage, the records (or steps), examples/s, the loss at the start
and at the end, the evaluation metric and the seconds, and `results.json` in --output_dir holds
the same figures. The exit status is 1, with the reasons printed, if the exact check fails, the
classifier's accuracy is not well above chance, or a training loss did not fall.

    python train_examples/demo.py                  # a few minutes on 2 CPU cores
    python train_examples/demo.py --quick          # tiny sizes, for the tests
"""

import argparse
import dataclasses
import glob
import json
import os
import shutil
import sys
import time
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

#: Before TensorFlow is imported: the demo's total time includes TensorFlow's start-up.
STARTED = time.perf_counter()
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

# The training scripts import their siblings by name (`import lenet`); running this file as a
# script puts train_examples/ on sys.path already, this keeps it so when it is run otherwise.
TRAIN_EXAMPLES = os.path.dirname(os.path.abspath(__file__))
if TRAIN_EXAMPLES not in sys.path:
    sys.path.insert(0, TRAIN_EXAMPLES)

import eval_classifier  # noqa: E402
import numpy as np  # noqa: E402
import train_classifier  # noqa: E402
import train_deeplab  # noqa: E402
import train_ssd  # noqa: E402
from PIL import Image  # noqa: E402

from slimdata import slim  # noqa: E402
from slimdata._tf import tf  # noqa: E402
from slimdata.datasets import classification, dataset_factory, pascalvoc, segmentation, synthetic  # noqa: E402
from slimdata.progress import Progress  # noqa: E402
from slimdata.queue_session import QueueSession  # noqa: E402
from slimdata.records import tfrecord  # noqa: E402
from slimdata.records.verify import verify_files  # noqa: E402
from slimdata.records.writer import WriteSummary  # noqa: E402

NUM_SHAPE_CLASSES = 4
#: The classifier must reach this accuracy on held-out data: 0.25 is chance for 4 classes.
MIN_ACCURACY = 0.6
#: Segmentation classes: background and VOC labels 1..5, the shapes synthetic.py draws.
NUM_SEG_CLASSES = 6
RESULTS_FILENAME = 'results.json'
#: Under --output_dir; removed and rebuilt on every run (nothing else there is touched).
DEMO_FOLDERS = ('raw', 'records', 'train')


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How much data the demo generates and how long it trains.

    Attributes:
      images_per_class: images of each of the 4 classification classes (28 x 28 grayscale).
      voc_images, voc_image_size: images of the detection tree, and their (width, height).
      seg_images, seg_image_size: the same for the segmentation tree.
      classifier_steps, ssd_steps, deeplab_steps: training steps of each network.
      ssd_image_size: the side of SSD's square input.
      deeplab_crop: the side of deeplab's square training crops.
    """
    images_per_class: int
    voc_images: int
    voc_image_size: Tuple[int, int]
    seg_images: int
    seg_image_size: Tuple[int, int]
    classifier_steps: int
    ssd_steps: int
    ssd_image_size: int
    deeplab_steps: int
    deeplab_crop: int


FULL = Sizes(images_per_class=500, voc_images=300, voc_image_size=(320, 240),
             seg_images=200, seg_image_size=(256, 192), classifier_steps=400, ssd_steps=300,
             ssd_image_size=300, deeplab_steps=300, deeplab_crop=129)
QUICK = Sizes(images_per_class=40, voc_images=24, voc_image_size=(160, 120),
              seg_images=16, seg_image_size=(128, 96), classifier_steps=80, ssd_steps=30,
              ssd_image_size=128, deeplab_steps=30, deeplab_crop=65)


@dataclasses.dataclass
class StageResult:
    """One row of the final table.

    Attributes:
      stage: what ran.
      count: how many records (or images, or steps) it handled.
      unit: what `count` counts.
      examples_per_sec: its throughput.
      seconds: its wall time.
      loss_start, loss_end: the training loss at the start and the end (training stages).
      metric: the evaluation result, e.g. 'accuracy 0.95'.
    """
    stage: str
    count: int
    unit: str
    examples_per_sec: float
    seconds: float
    loss_start: Optional[float] = None
    loss_end: Optional[float] = None
    metric: str = ''


@dataclasses.dataclass(frozen=True)
class Paths:
    """Where each stage reads and writes, under --output_dir."""
    root: str

    def raw(self, name: str) -> str:
        return os.path.join(self.root, 'raw', name)

    def records(self, name: str) -> str:
        return os.path.join(self.root, 'records', name)

    def train(self, name: str) -> str:
        return os.path.join(self.root, 'train', name)


class Checks:
    """The demo's must-hold conditions: each failure is kept, printed, and fails the run."""

    def __init__(self):
        self.failures: List[str] = []

    def require(self, condition: bool, failure: str) -> None:
        if not condition:
            self.failures.append(failure)

    def loss_fell(self, result: StageResult) -> None:
        self.require(result.loss_end < result.loss_start,
                     f'{result.stage}: the loss did not fall ({result.loss_start:.4f} -> '
                     f'{result.loss_end:.4f})')


class Timer:
    """Wall time of a `with` block, in `seconds`."""

    def __enter__(self) -> 'Timer':
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc_info) -> None:
        self.seconds = time.perf_counter() - self._start


def rate(count: int, seconds: float) -> float:
    """`count` per second."""
    return count / max(seconds, 1e-9)


def section(title: str) -> None:
    """Prints a stage's heading."""
    print(f'\n== {title}', flush=True)


# ----------------------------------------------------------------------------------------
# 1. Generate


def generate(paths: Paths, sizes: Sizes) -> StageResult:
    """Writes the three raw source trees with `slimdata.datasets.synthetic`."""
    section(f'generate raw data in {paths.raw("")} (rebuilt on every run)')
    with Timer() as timer:
        class_names = synthetic.make_image_folder(
            paths.raw('shapes'), num_classes=NUM_SHAPE_CLASSES,
            images_per_class=sizes.images_per_class)
        synthetic.make_voc_tree(paths.raw('VOCdevkit'), year='2007',
                                num_images=sizes.voc_images, image_size=sizes.voc_image_size)
        synthetic.make_voc_seg_tree(paths.raw('VOCdevkit'), num_images=sizes.seg_images,
                                    image_size=sizes.seg_image_size,
                                    num_classes=NUM_SEG_CLASSES)
    num_images = NUM_SHAPE_CLASSES * sizes.images_per_class + sizes.voc_images + sizes.seg_images
    print(f'{NUM_SHAPE_CLASSES * sizes.images_per_class} classification PNGs ({class_names}), '
          f'{sizes.voc_images} VOC2007 detection and {sizes.seg_images} VOC2012 segmentation '
          f'JPEGs in {timer.seconds:.1f} s')
    return StageResult('generate raw data', num_images, 'images',
                       rate(num_images, timer.seconds), timer.seconds)


# ----------------------------------------------------------------------------------------
# 2. Convert: each function is the call a user makes on their own data.


def convert_shapes(paths: Paths, workers: int) -> List[WriteSummary]:
    """The image folder -> 'train' and 'validation' (a quarter of the images, held out)."""
    return list(classification.convert_image_folder(
        paths.raw('shapes'), paths.records('shapes'), validation_ratio=0.25, num_shards=4,
        processes=workers).values())


def convert_voc_detection(paths: Paths, workers: int) -> List[WriteSummary]:
    """The VOC2007 tree -> 'trainval' (what SSD-Tensorflow trains on)."""
    return list(pascalvoc.convert_voc(paths.raw('VOCdevkit'), paths.records('voc2007'),
                                      '2007', 'trainval', num_shards=4, processes=workers,
                                      seed=0).values())


def convert_voc_segmentation(paths: Paths, workers: int) -> List[WriteSummary]:
    """The VOC2012 segmentation tree -> 'train' and 'val', with its 6 classes."""
    voc2012 = os.path.join(paths.raw('VOCdevkit'), 'VOC2012')
    return list(segmentation.convert_voc_seg(voc2012, paths.records('voc_seg'), ['train', 'val'],
                                             num_classes=NUM_SEG_CLASSES, num_shards=2,
                                             processes=workers).values())


CONVERSIONS = (('convert shapes (image folder)', convert_shapes),
               ('convert VOC2007 detection', convert_voc_detection),
               ('convert VOC2012 segmentation', convert_voc_segmentation))


def convert_all(paths: Paths, workers: int) -> List[StageResult]:
    """Runs each conversion, printing the writer's summary of every split it wrote."""
    results = []
    for stage, conversion in CONVERSIONS:
        section(stage)
        with Timer() as timer:
            summaries = conversion(paths, workers)
        for summary in summaries:
            print(summary.format())
        num_records = sum(summary.num_records for summary in summaries)
        results.append(StageResult(stage, num_records, 'records',
                                   rate(num_records, timer.seconds), timer.seconds))
    return results


# ----------------------------------------------------------------------------------------
# 3. Verify


def verify_folder(folder: str) -> Tuple[int, int, List[str]]:
    """Verifies every shard of `folder` and its dataset_info.json (counts, sizes, CRC-32Cs),
    as `slimdata verify FOLDER` does.

    Returns:
      (shards, records, problems).
    """
    files = tfrecord.expand_paths([folder])
    report = verify_files(files)
    return len(files), report.num_records, report.problems


def verify(folders: Sequence[str], checks: Checks) -> StageResult:
    """Checks every record's CRCs, and each folder's counts against its dataset_info.json."""
    section('verify shards (CRCs, and record counts against dataset_info.json)')
    num_shards = num_records = 0
    with Timer() as timer:
        for folder in folders:
            folder_shards, folder_records, problems = verify_folder(folder)
            print(f'{folder}: {folder_shards} shards, {folder_records} records: '
                  f'{"FAIL" if problems else "ok"}')
            for problem in problems:
                checks.require(False, f'verify: {problem}')
            num_shards += folder_shards
            num_records += folder_records
    print(f'{num_shards} shards, {num_records} records verified in {timer.seconds:.2f} s')
    return StageResult('verify CRCs and counts', num_records, 'records',
                       rate(num_records, timer.seconds), timer.seconds)


# ----------------------------------------------------------------------------------------
# 4. Exact check


def source_images(image_folder: str) -> Dict[bytes, Tuple[str, int]]:
    """Every source image's pixels (as bytes) -> (its path, its label), read with Pillow.

    Labels are the indices of the sorted class folders, as the converter numbers them.

    Raises:
      ValueError: if two images have the same pixels (a record could not tell which it is).
    """
    images: Dict[bytes, Tuple[str, int]] = {}
    for label, class_name in enumerate(sorted(os.listdir(image_folder))):
        for path in sorted(glob.glob(os.path.join(image_folder, class_name, '*.png'))):
            pixels = np.asarray(Image.open(path)).tobytes()
            if pixels in images:
                raise ValueError(f'{path} has the same pixels as {images[pixels][0]}; the '
                                 'exact check needs distinct images')
            images[pixels] = (path, label)
    return images


def decode_split(records_dir: str, split: str) -> List[Tuple[np.ndarray, int]]:
    """One unshuffled epoch of a classification split through the TF-Slim data road:
    dataset_factory.get_dataset -> DatasetDataProvider -> (image, label) of every record."""
    decoded = []
    with tf.Graph().as_default():
        dataset = dataset_factory.get_dataset('image_folder', split, records_dir)
        provider = slim.dataset_data_provider.DatasetDataProvider(
            dataset, shuffle=False, num_epochs=1)
        image, label = provider.get(['image', 'label'])
        with Progress(dataset.num_samples, f'decode {split}', unit='ex') as bar:
            with QueueSession() as session:
                while True:  # until the epoch is used up: QueueSession ends the block there
                    decoded.append(session.run([image, label]))
                    bar.update()
    return decoded


def compare_with_sources(image: np.ndarray, label: int,
                         sources: Dict[bytes, Tuple[str, int]],
                         matched: Dict[bytes, str]) -> Optional[str]:
    """Why a decoded record is not a source image not yet matched; None if it is one.

    Args:
      image: the decoded uint8 [height, width, 3] image (the descriptor decodes 3 channels,
        so a grayscale PNG repeats its one channel).
      label: the decoded label.
      sources: see `source_images`.
      matched: pixels -> the record already found to hold them.
    """
    gray = image[..., 0]
    if not all(np.array_equal(image[..., channel], gray) for channel in (1, 2)):
        return 'its 3 channels differ, expected a grayscale image repeated'
    pixels = gray.tobytes()
    if pixels not in sources:
        return 'its pixels equal no source image'
    path, source_label = sources[pixels]
    if label != source_label:
        return f'it holds {path} but label {label}, expected {source_label}'
    if pixels in matched:
        return f'it repeats {path}, already in {matched[pixels]}'
    return None


def exact_check(image_folder: str, records_dir: str, checks: Checks) -> StageResult:
    """Every decoded record must equal one source image, pixels and label, and every source
    image must be in exactly one record."""
    section('exact check: decoded classification records vs the source PNGs')
    with Timer() as timer:
        sources = source_images(image_folder)
        matched: Dict[bytes, str] = {}
        mismatches = []
        for split in ('train', 'validation'):
            for index, (image, label) in enumerate(decode_split(records_dir, split)):
                record = f'{split} record {index}'
                problem = compare_with_sources(image, int(label), sources, matched)
                if problem:
                    mismatches.append(f'{record}: {problem}')
                else:
                    matched[image[..., 0].tobytes()] = record
    missing = [path for pixels, (path, _) in sources.items() if pixels not in matched]
    checks.require(not mismatches, f'exact check: {len(mismatches)} records differ from the '
                                   f'source images, e.g. {mismatches[:3]}')
    checks.require(not missing, f'exact check: {len(missing)} source images are in no '
                                f'record, e.g. {missing[:3]}')
    decoded = len(matched) + len(mismatches)
    print(f'{decoded} records decoded; {len(matched)} of the {len(sources)} source images '
          'found exactly once, pixels and label equal: '
          f'{"ok" if not (mismatches or missing) else "FAIL"}')
    return StageResult('exact decode check', decoded, 'records', rate(decoded, timer.seconds),
                       timer.seconds, metric=f'{len(matched)}/{len(sources)} exact')


# ----------------------------------------------------------------------------------------
# 5. Train and evaluate


def report_training(stage: str, figures: Dict[str, Any], seconds: float) -> StageResult:
    """Prints what a training script returned, and makes its row."""
    print(f'{stage}: {figures["steps"]} steps, {figures["examples_per_sec"]:,.0f} examples/s, '
          f'loss {figures["loss_start"]:.4f} -> {figures["loss_end"]:.4f}')
    return StageResult(stage, figures['steps'], 'steps', figures['examples_per_sec'], seconds,
                       loss_start=figures['loss_start'], loss_end=figures['loss_end'])


def run_classifier(paths: Paths, sizes: Sizes, checks: Checks) -> List[StageResult]:
    """Trains the LeNet on the train split, evaluates it on the held-out validation split."""
    section('train the classifier (train_classifier.main), evaluate it (eval_classifier.main)')
    records, train_dir = paths.records('shapes'), paths.train('classifier')
    with Timer() as train_timer:
        # This process runs eagerly (TensorFlow 2's default), where slim.learning.train's
        # Supervisor cannot run its background checkpoint and summary threads: save only the
        # final checkpoint (see train_classifier.check_supervisor_services_can_run).
        trained = train_classifier.main([
            '--dataset_name=image_folder', f'--dataset_dir={records}',
            f'--train_dir={train_dir}', f'--max_number_of_steps={sizes.classifier_steps}',
            '--batch_size=32', '--save_interval_secs=0', '--save_summaries_secs=0'])
    train_result = report_training('train classifier (LeNet)', trained, train_timer.seconds)
    checks.loss_fell(train_result)
    with Timer() as eval_timer:
        evaluated = eval_classifier.main([
            '--dataset_name=image_folder', '--dataset_split_name=validation',
            f'--dataset_dir={records}', f'--checkpoint_path={train_dir}'])
    accuracy = evaluated['accuracy']
    checks.require(accuracy >= MIN_ACCURACY,
                   f'classifier: accuracy {accuracy:.3f} on the held-out validation split, '
                   f'expected at least {MIN_ACCURACY} (chance is {1 / NUM_SHAPE_CLASSES:.2f})')
    print(f'accuracy {accuracy:.4f} on {evaluated["num_examples"]} held-out examples '
          f'(chance {1 / NUM_SHAPE_CLASSES:.2f})')
    return [train_result,
            StageResult('eval classifier (validation)', evaluated['num_examples'], 'records',
                        evaluated['examples_per_sec'], eval_timer.seconds,
                        metric=f'accuracy {accuracy:.3f}')]


def run_ssd(paths: Paths, sizes: Sizes, checks: Checks) -> List[StageResult]:
    """Trains the small SSD on the VOC2007 trainval records."""
    section('train the SSD detector (train_ssd.main)')
    with Timer() as timer:
        trained = train_ssd.main([
            f'--dataset_dir={paths.records("voc2007")}', '--dataset_name=pascalvoc_2007',
            '--dataset_split_name=trainval', f'--train_dir={paths.train("ssd")}',
            f'--max_number_of_steps={sizes.ssd_steps}', f'--image_size={sizes.ssd_image_size}',
            '--batch_size=8', '--seed=0'])
    result = report_training('train SSD', trained, timer.seconds)
    checks.loss_fell(result)
    return [result]


def run_deeplab(paths: Paths, sizes: Sizes, checks: Checks) -> List[StageResult]:
    """Trains the small FCN on the segmentation train split, evaluates mIoU on val."""
    section('train the segmentation FCN (train_deeplab.train), evaluate it '
            '(train_deeplab.evaluate)')
    crop = str(sizes.deeplab_crop)
    argv = [f'--dataset_dir={paths.records("voc_seg")}', '--dataset=pascal_voc_seg',
            f'--train_logdir={paths.train("deeplab")}',
            f'--training_number_of_steps={sizes.deeplab_steps}',
            '--train_crop_size', crop, crop, '--train_batch_size=8']
    with Timer() as train_timer:
        trained = train_deeplab.train(argv)
    train_result = report_training('train deeplab FCN', trained, train_timer.seconds)
    checks.loss_fell(train_result)
    with Timer() as eval_timer:
        evaluated = train_deeplab.evaluate(argv)
    print(f'mIoU {evaluated["miou"]:.4f} on {evaluated["num_examples"]} val images')
    return [train_result,
            StageResult('eval deeplab (val)', evaluated['num_examples'], 'records',
                        evaluated['examples_per_sec'], eval_timer.seconds,
                        metric=f'mIoU {evaluated["miou"]:.3f}')]


# ----------------------------------------------------------------------------------------
# Report


def format_table(results: Sequence[StageResult], startup_seconds: float,
                 total_seconds: float) -> str:
    """The final table: one row per stage, the start-up (imports) and the total time."""
    header = ('stage', 'records/steps', 'examples/s', 'loss start -> end', 'eval', 'seconds')
    rows = [header] + [
        (r.stage, f'{r.count} {r.unit}', f'{r.examples_per_sec:,.0f}',
         '' if r.loss_start is None else f'{r.loss_start:.3f} -> {r.loss_end:.3f}',
         r.metric, f'{r.seconds:.1f}')
        for r in results]
    rows.append(('start-up (import TensorFlow)', '', '', '', '', f'{startup_seconds:.1f}'))
    rows.append(('total', '', '', '', '', f'{total_seconds:.1f}'))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ['  '.join(cell.ljust(width) if i in (0, 4) else cell.rjust(width)
                       for i, (cell, width) in enumerate(zip(row, widths))).rstrip()
             for row in rows]
    lines.insert(1, '-' * len(lines[0]))
    return '\n'.join(lines)


def write_results(path: str, mode: str, results: Sequence[StageResult], failures: List[str],
                  startup_seconds: float, total_seconds: float) -> None:
    """Writes the table's figures as JSON, for the tests and for comparing runs."""
    with open(path, 'w', encoding='utf-8') as f:
        json.dump({'mode': mode, 'ok': not failures, 'failures': failures,
                   'startup_seconds': startup_seconds, 'total_seconds': total_seconds,
                   'stages': [dataclasses.asdict(result) for result in results]}, f, indent=2)


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    """The demo's flags; `sys.argv[1:]` when `argv` is None."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--output_dir', default='demo_out',
                        help='where the raw data, records and checkpoints go; its raw/, '
                             'records/ and train/ folders are rebuilt on every run (default: '
                             '%(default)s)')
    parser.add_argument('--quick', action='store_true',
                        help='tiny data and few steps: the whole road in well under a minute')
    parser.add_argument('--workers', type=int, default=1,
                        help='converter processes (default: %(default)s: each pool worker '
                             'starts by importing this script, TensorFlow included, which takes '
                             'longer than converting these small trees)')
    return parser.parse_args(argv)


def report(output_dir: str, mode: str, results: Sequence[StageResult], checks: Checks,
           startup_seconds: float, total_seconds: float) -> int:
    """Prints the table and the verdict, writes results.json; returns the exit status."""
    section(f'slimdata demo ({mode}) in {output_dir}')
    print(format_table(results, startup_seconds, total_seconds))
    results_path = os.path.join(output_dir, RESULTS_FILENAME)
    write_results(results_path, mode, results, checks.failures, startup_seconds, total_seconds)
    print(f'figures in {results_path}')
    if checks.failures:
        print('\nDEMO FAILED:\n' + '\n'.join(f'  {failure}' for failure in checks.failures))
        return 1
    print('all checks passed: records verified, decoded exactly, every loss fell, '
          f'classifier accuracy >= {MIN_ACCURACY} (chance {1 / NUM_SHAPE_CLASSES:.2f})')
    return 0


def remove_previous_run(output_dir: str) -> None:
    """Removes the demo's own folders under `output_dir` (nothing else there)."""
    for name in DEMO_FOLDERS:
        folder = os.path.join(output_dir, name)
        if os.path.exists(folder):
            shutil.rmtree(folder)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs every stage, prints the table; returns the exit status (1 if a check failed)."""
    args = parse_args(argv)
    mode = 'quick' if args.quick else 'full'
    sizes = QUICK if args.quick else FULL
    # The queue API's deprecation notices are expected here: this is the legacy road, on purpose.
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    # tf_slim's layers call Keras' deprecated `layer.apply` and `tf.layers.flatten`: nothing a
    # user of slimdata can change.
    warnings.filterwarnings('ignore', category=UserWarning,
                            message=r'`(layer\.apply|tf\.layers\.flatten)` is deprecated')
    startup_seconds = time.perf_counter() - STARTED
    remove_previous_run(args.output_dir)
    paths, checks = Paths(args.output_dir), Checks()

    results = [generate(paths, sizes)]
    results += convert_all(paths, args.workers)
    results.append(verify([paths.records(name) for name in ('shapes', 'voc2007', 'voc_seg')],
                          checks))
    results.append(exact_check(paths.raw('shapes'), paths.records('shapes'), checks))
    for run in (run_classifier, run_ssd, run_deeplab):
        results += run(paths, sizes, checks)
    return report(args.output_dir, mode, results, checks, startup_seconds,
                  time.perf_counter() - STARTED)


if __name__ == '__main__':
    sys.exit(main())
