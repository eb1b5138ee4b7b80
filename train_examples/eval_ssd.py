"""Evaluates a detector trained by train_ssd.py: one pass over a split, mAP@0.5 per class.

The road of SSD-Tensorflow's eval_ssd_network.py, on TensorFlow 2 in graph mode::

    dataset_factory.get_dataset -> DatasetDataProvider(num_epochs=1, shuffle=False)
      -> provider.get(['image', 'object/label', 'object/bbox', 'object/difficult'])
      -> ssd_preprocessing.preprocess_for_eval (resize to the square, as in training)
      -> tf.compat.v1.train.batch(dynamic_pad=True, allow_smaller_final_batch=True)
      -> train_ssd's network -> softmax, boxes decoded from the anchors
      -> tf.image.combined_non_max_suppression (per class: score above --select_threshold,
         NMS at --nms_threshold; --keep_top_k detections an image)
      -> voc_metrics.VocDetectionMetric: AP per class, VOC07 11-point and area (VOC2010+)

run by `slimdata.queue_session.QueueSession`, which restores the checkpoint and ends the loop
when the split has been read once; every image is evaluated exactly once (a count other than
the split's `num_samples` is an error). Objects marked difficult are ignored, as VOC does
(`--remove_difficult=false` counts them). Flags are named as in eval_ssd_network.py::

    python train_examples/eval_ssd.py --dataset_name=detection --dataset_split_name=val \\
        --dataset_dir=/data/my_records --checkpoint_path=/tmp/ssd

It prints a table: per class its objects, its detections, AP VOC07 and AP area, then both
mAPs. `main(argv)` returns them (see `main`).
"""

import argparse
import os
import sys
import time
import warnings
from typing import Any, Dict, Optional, Sequence, Set

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

import example_flags  # noqa: E402  (siblings: run this as a script, or put
import numpy as np  # noqa: E402
import ssd_preprocessing  # noqa: E402  train_examples/ on sys.path to import it)
import train_ssd  # noqa: E402
import voc_metrics  # noqa: E402

from slimdata import slim  # noqa: E402
from slimdata._tf import tf  # noqa: E402
from slimdata.datasets import dataset_factory  # noqa: E402
from slimdata.progress import Progress  # noqa: E402
from slimdata.queue_session import QueueSession  # noqa: E402

_TRUE, _FALSE = ('true', 't', '1', 'yes'), ('false', 'f', '0', 'no')


def _boolean(text: str) -> bool:
    """An absl-style boolean flag value (`--remove_difficult=false`)."""
    if text.lower() in _TRUE + _FALSE:
        return text.lower() in _TRUE
    raise argparse.ArgumentTypeError(f'expected true or false, got {text!r}')


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The flags of eval_ssd_network.py that this example uses, with the same names and
    defaults (but for the split and the image size, which follow train_ssd.py)."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    data = parser.add_argument_group('data')
    example_flags.add_dataset_flags(data, 'pascalvoc_2007', 'test', 'to evaluate',
                                    detection=True)
    example_flags.add_checkpoint_flag(data)
    data.add_argument('--eval_image_size', '--image_size', dest='image_size', type=int,
                      default=300, help='side of the square network input; the training\'s '
                                        '(default: %(default)s)')
    data.add_argument('--num_classes', type=int, default=None,
                      help='classes including the background (default: the dataset\'s)')
    data.add_argument('--batch_size', type=int, default=8,
                      help='images per batch; the last batch may be smaller (default: '
                           '%(default)s)')
    data.add_argument('--num_preprocessing_threads', type=int, default=2,
                      help='threads that decode, resize and batch (default: %(default)s)')
    detection = parser.add_argument_group('detections and matching')
    detection.add_argument('--select_threshold', type=float, default=0.01,
                           help='a detection\'s class score must exceed this (default: '
                                '%(default)s)')
    detection.add_argument('--select_top_k', type=int, default=400,
                           help='detections of each class kept for NMS (default: '
                                '%(default)s)')
    detection.add_argument('--keep_top_k', type=int, default=200,
                           help='detections of an image kept after NMS (default: '
                                '%(default)s)')
    detection.add_argument('--nms_threshold', type=float, default=0.45,
                           help='NMS drops a box overlapping a better one of its class by '
                                'more than this IoU (default: %(default)s)')
    detection.add_argument('--matching_threshold', type=float, default=0.5,
                           help='a detection matches an object of IoU above this (default: '
                                '%(default)s, VOC\'s)')
    detection.add_argument('--remove_difficult', type=_boolean, default=True,
                           help='ignore objects marked difficult, as VOC does (default: '
                                '%(default)s)')
    args = parser.parse_args(argv)
    example_flags.require_at_least_one(parser, args, (
        'image_size', 'batch_size', 'num_preprocessing_threads', 'select_top_k', 'keep_top_k'))
    for name in ('select_threshold', 'nms_threshold', 'matching_threshold'):
        if not 0.0 <= getattr(args, name) < 1.0:
            parser.error(f'--{name} must be in [0, 1), got {getattr(args, name)}')
    return args


def checkpoint_num_classes(checkpoint: str) -> int:
    """The number of classes (with the background) the network of `checkpoint` predicts,
    from the shape of its first class head."""
    head = 'ssd_net/head1/classes/weights'
    shapes = dict(tf.train.list_variables(checkpoint))
    if head not in shapes:
        raise ValueError(f'{checkpoint} holds no {head}: it is not a checkpoint of '
                         'train_examples/train_ssd.py')
    return shapes[head][-1] // ssd_preprocessing.anchors_per_location(train_ssd.ASPECT_RATIOS)


def _num_classes(args: argparse.Namespace, dataset: Any, checkpoint: str) -> int:
    """The classes to evaluate: `--num_classes` or the dataset's, which must be the
    checkpoint's (a restore would fail on the head's shape, naming neither)."""
    num_classes = args.num_classes or getattr(dataset, 'num_classes', None)
    trained = checkpoint_num_classes(checkpoint)
    if not num_classes:
        raise ValueError(f'dataset {args.dataset_name!r} does not say its number of classes; '
                         f'pass --num_classes (including the background; {checkpoint} was '
                         f'trained with {trained})')
    if num_classes != trained:
        raise ValueError(f'{checkpoint} was trained with {trained} classes (the background '
                         f'included), but {args.dataset_dir} split {args.dataset_split_name!r} '
                         f'has {num_classes}: evaluate it on the dataset it was trained on')
    return int(num_classes)


def build_detections(args: argparse.Namespace, dataset: Any, num_classes: int
                     ) -> Dict[str, tf.Tensor]:
    """Builds the input, network and detections of one batch in the default graph."""
    with tf.device('/cpu:0'), tf.name_scope('inputs'):
        provider = slim.dataset_data_provider.DatasetDataProvider(
            dataset, shuffle=False, num_epochs=1, common_queue_capacity=2 * args.batch_size,
            common_queue_min=args.batch_size)
        image, labels, boxes, difficult = provider.get(
            ['image', 'object/label', 'object/bbox', 'object/difficult'])
        image = ssd_preprocessing.preprocess_for_eval(image, args.image_size)
        # Objects padded to the batch's most (label 0, the background, which is not scored).
        images, gt_labels, gt_boxes, gt_difficult = tf.compat.v1.train.batch(
            [image, labels, boxes, difficult], batch_size=args.batch_size,
            num_threads=args.num_preprocessing_threads, capacity=5 * args.batch_size,
            dynamic_pad=True, allow_smaller_final_batch=True)
    class_logits, box_offsets = train_ssd.build_network(images, num_classes, args.image_size)
    return {**detect(class_logits, box_offsets, train_ssd.model_anchors(args.image_size), args),
            'gt_labels': gt_labels, 'gt_boxes': gt_boxes, 'gt_difficult': gt_difficult}


def detect(class_logits: tf.Tensor, box_offsets: tf.Tensor, anchors: Any,
           args: argparse.Namespace) -> Dict[str, tf.Tensor]:
    """The detections of a batch of network outputs, as SSD-Tensorflow selects them.

    Args:
      class_logits: [B, A, num_classes], the background first.
      box_offsets: [B, A, 4], encoded against `anchors` [A, 4] (cy, cx, h, w).
      args: the flags (`--select_threshold`, `--select_top_k`, `--nms_threshold`,
        `--keep_top_k`).

    Returns:
      {'boxes' [B, K, 4] clipped to the image, 'scores' [B, K], 'labels' int64 [B, K]
      (1 ... num_classes - 1), 'valid' [B]: how many of the K are detections}, best first.
    """
    with tf.name_scope('detections'):
        scores = tf.nn.softmax(class_logits)[..., 1:]           # the background left out
        decoded = ssd_preprocessing.decode_boxes(box_offsets, anchors)
        # Per class: scores above the threshold, NMS; then the best keep_top_k of the image.
        boxes, scores, classes, valid = tf.image.combined_non_max_suppression(
            tf.expand_dims(decoded, 2), scores, max_output_size_per_class=args.select_top_k,
            max_total_size=args.keep_top_k, iou_threshold=args.nms_threshold,
            score_threshold=args.select_threshold, clip_boxes=True)
    return {'boxes': boxes, 'scores': scores, 'labels': tf.cast(classes, tf.int64) + 1,
            'valid': valid}


def _add_batch(metric: voc_metrics.VocDetectionMetric, values: Dict[str, np.ndarray],
               unknown: Set[int]) -> int:
    """Adds a batch's images to `metric`; notes ground-truth labels it does not score in
    `unknown`. Returns the number of images."""
    for index, valid in enumerate(values['valid']):
        gt_labels = values['gt_labels'][index]
        present = gt_labels > 0                               # the batch's padding is 0
        unknown.update(set(gt_labels[present].tolist()) - set(metric.labels))
        metric.add_image(values['labels'][index, :valid], values['scores'][index, :valid],
                         values['boxes'][index, :valid], gt_labels[present],
                         values['gt_boxes'][index][present],
                         values['gt_difficult'][index][present])
    return len(values['valid'])


def main(argv: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """Evaluates one pass over the split, prints nothing, and returns what it measured.

    Args:
      argv: the flags (without the program name); `sys.argv[1:]` when None.

    Returns:
      A dict: `classes` (a `voc_metrics.ClassResult` per class, in label order),
      `map_voc07` and `map_area` (the means over the classes with objects in the split),
      `num_examples` (evaluated, equal to the split's `num_samples`), `examples_per_sec`,
      `checkpoint`, `global_step` (the checkpoint's), `seconds` (the whole call).

    Raises:
      ValueError: for a missing checkpoint, one trained with another number of classes,
        objects whose label the model does not predict, or a pass that evaluated another
        number of images than the split holds.
    """
    args = parse_args(argv)
    started = time.perf_counter()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    checkpoint = example_flags.resolve_checkpoint(args.checkpoint_path)
    with tf.Graph().as_default(), warnings.catch_warnings():
        # tf_slim's layers call Keras' deprecated `layer.apply`; nothing a user can change.
        warnings.filterwarnings('ignore', message='`layer.apply` is deprecated')
        dataset = dataset_factory.get_dataset(args.dataset_name, args.dataset_split_name,
                                              args.dataset_dir)
        num_classes = _num_classes(args, dataset, checkpoint)
        fetches = build_detections(args, dataset, num_classes)
        metric = voc_metrics.VocDetectionMetric(
            range(1, num_classes), args.matching_threshold,
            use_difficult=not args.remove_difficult)
        saver = tf.compat.v1.train.Saver(tf.compat.v1.global_variables())
        num_examples, unknown = 0, set()
        loop_started = time.perf_counter()
        # The bar outside the session: the end of the split ends the session's block (an
        # OutOfRangeError it turns into a normal end), and the bar then says "done".
        with Progress(dataset.num_samples, 'eval_ssd', unit='image') as bar:
            with QueueSession(init_fn=lambda sess: saver.restore(sess, checkpoint)) as session:
                while True:  # until the split is read: QueueSession ends the block there
                    count = _add_batch(metric, session.run(fetches), unknown)
                    num_examples += count
                    bar.update(count)
        loop_seconds = time.perf_counter() - loop_started
    if unknown:
        raise ValueError(f'{args.dataset_dir} split {args.dataset_split_name!r} holds objects '
                         f'of labels {sorted(unknown)}, outside the model\'s 1..'
                         f'{num_classes - 1}: its dataset_info.json and the records disagree')
    example_flags.check_read_once(num_examples, dataset, args, 'images')
    classes = metric.results(dataset.labels_to_names)
    means = voc_metrics.mean_average_precision(classes)
    return {
        'classes': classes,
        'map_voc07': means['voc07'],
        'map_area': means['area'],
        'num_examples': num_examples,
        'examples_per_sec': num_examples / loop_seconds,
        'checkpoint': checkpoint,
        'global_step': int(tf.train.load_variable(checkpoint, 'global_step')),
        'seconds': time.perf_counter() - started,
    }


def format_results(results: Dict[str, Any]) -> str:
    """The table of `voc_metrics.format_table` and a line saying what was evaluated."""
    return (f'{voc_metrics.format_table(results["classes"])}\n'
            f'{results["num_examples"]} images, checkpoint {results["checkpoint"]} (global '
            f'step {results["global_step"]}); {results["examples_per_sec"]:,.1f} images/s, '
            f'{results["seconds"]:.1f} s')


if __name__ == '__main__':
    print(format_results(main(sys.argv[1:])))
