"""Trains and evaluates a small fully convolutional segmentation net on deeplab records.

The input road is old deeplab's (`utils/input_generator.py` + `input_preprocess.py`), with
slimdata in place of `tf.contrib.slim`:

    dataset_factory.get_dataset('pascal_voc_seg', split, dataset_dir)
      -> slim.dataset_data_provider.DatasetDataProvider(num_epochs=None, shuffle=True)
      -> provider.get(['image', 'image_name', 'height', 'width', 'labels_class'])
      -> random scale, pad (mean pixel / ignore_label), random crop, random flip
      -> tf.compat.v1.train.batch(dynamic_pad=True) -> slim.prefetch_queue
      -> a small FCN, softmax cross-entropy that skips ignore_label pixels
      -> slim.learning.create_train_op, run by a slimdata QueueSession

Evaluation reads the eval split once (`num_epochs=1, shuffle=False`), each image at its own
size, batched with `dynamic_pad=True` (a mask tells the real pixels from the padding), and
reports the mean intersection-over-union over exactly the split's images; the end of the
epoch ends the loop normally.

    python train_examples/train_deeplab.py --dataset_dir /data/voc_seg_records \\
        --train_logdir /tmp/deeplab_train --training_number_of_steps 200

Flag names are deeplab's train.py / eval.py ones where those exist.
"""

import argparse
import os
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

import deeplab_preprocessing  # noqa: E402  (beside this script)
import example_flags  # noqa: E402
import numpy as np  # noqa: E402

from slimdata import slim  # noqa: E402
from slimdata._tf import tf  # noqa: E402
from slimdata.datasets import dataset_factory  # noqa: E402
from slimdata.progress import Progress  # noqa: E402
from slimdata.queue_session import QueueSession  # noqa: E402

#: The training losses averaged for the reported start and end loss: this many steps, or a
#: quarter of a short run.
LOSS_WINDOW = 10
CHECKPOINT_NAME = 'model.ckpt'


# ----------------------------------------------------------------------------------------
# Input


def _provider_items(dataset_name: str, split: str, dataset_dir: str, num_readers: int,
                    is_training: bool) -> Tuple[Any, Dict[str, tf.Tensor]]:
    """The dataset descriptor and one example's items, read as deeplab reads them."""
    dataset = dataset_factory.get_dataset(dataset_name, split, dataset_dir)
    provider = slim.dataset_data_provider.DatasetDataProvider(
        dataset, num_readers=num_readers, num_epochs=None if is_training else 1,
        shuffle=is_training)
    names = ['image', 'image_name', 'height', 'width', 'labels_class']
    return dataset, dict(zip(names, provider.get(names)))


def train_inputs(args: argparse.Namespace) -> Tuple[Any, tf.Tensor, tf.Tensor]:
    """The training batches: (dataset, images [b, h, w, 3] float32, labels [b, h, w, 1]).

    Endless and shuffled; each example randomly scaled, padded, cropped to
    `args.train_crop_size` and flipped (deeplab_preprocessing.preprocess_for_train).
    """
    dataset, items = _provider_items(args.dataset, args.train_split, args.dataset_dir,
                                     args.num_readers, is_training=True)
    crop_height, crop_width = args.train_crop_size
    image, label = deeplab_preprocessing.preprocess_for_train(
        items['image'], items['labels_class'], crop_height, crop_width, dataset.ignore_label,
        args.min_scale_factor, args.max_scale_factor, args.scale_factor_step_size)
    # Every crop has the same size, so dynamic_pad pads nothing here; deeplab batches the
    # training and the evaluation input with the same call.
    images, labels = tf.compat.v1.train.batch(
        [image, label], batch_size=args.train_batch_size, num_threads=args.num_readers,
        capacity=4 * args.train_batch_size, dynamic_pad=True)
    images, labels = slim.prefetch_queue.prefetch_queue([images, labels]).dequeue()
    return dataset, images, labels


def eval_inputs(args: argparse.Namespace) -> Tuple[Any, tf.Tensor, tf.Tensor, tf.Tensor]:
    """One unshuffled epoch of evaluation batches at the images' own sizes.

    Returns:
      (dataset, images [b, H, W, 3] float32, labels [b, H, W, 1] int32, valid [b, H, W, 1]
      bool), where H, W are the largest height and width in the batch: `dynamic_pad` pads
      with zeros, so `valid` (ones before padding) marks the real pixels. The last batch may
      be smaller than `args.eval_batch_size`.
    """
    dataset, items = _provider_items(args.dataset, args.eval_split, args.dataset_dir,
                                     args.num_readers, is_training=False)
    image, label = deeplab_preprocessing.prepare_for_eval(items['image'], items['labels_class'])
    valid = tf.ones_like(label, dtype=tf.bool)
    # One thread keeps the record order; allow_smaller_final_batch keeps the last images.
    images, labels, valid = tf.compat.v1.train.batch(
        [image, label, valid], batch_size=args.eval_batch_size, num_threads=1,
        capacity=4 * args.eval_batch_size, dynamic_pad=True,
        allow_smaller_final_batch=True)
    images, labels, valid = slim.prefetch_queue.prefetch_queue(
        [images, labels, valid], dynamic_pad=True).dequeue()
    return dataset, images, labels, valid


# ----------------------------------------------------------------------------------------
# Model, loss, metric


def fcn(images: tf.Tensor, num_classes: int, weight_decay: float = 1e-4,
        scope: str = 'fcn') -> tf.Tensor:
    """A small fully convolutional net: logits `[b, h, w, num_classes]` at the input size.

    Three stride-2 convolutions (output stride 8), one atrous convolution to widen the
    receptive field, 1x1 logits, and a bilinear resize back to the input size (deeplab's
    `upsample_logits`), so the loss is computed against the full-resolution label.

    Args:
      images: float32 `[b, h, w, 3]` in [0, 255]; the mean pixel (padding) maps to 0.
      num_classes: the number of output classes.
      weight_decay: the L2 regularisation of the convolution weights.
      scope: the variable scope.
    """
    net = (images - deeplab_preprocessing.MEAN_PIXEL) / deeplab_preprocessing.MEAN_PIXEL
    with tf.compat.v1.variable_scope(scope, values=[images]):
        with slim.arg_scope([slim.conv2d], activation_fn=tf.nn.relu,
                            weights_regularizer=slim.l2_regularizer(weight_decay)):
            net = slim.conv2d(net, 16, [3, 3], stride=2, scope='conv1')
            net = slim.conv2d(net, 32, [3, 3], stride=2, scope='conv2')
            net = slim.conv2d(net, 64, [3, 3], stride=2, scope='conv3')
            net = slim.conv2d(net, 64, [3, 3], rate=2, scope='conv4_atrous')
            logits = slim.conv2d(net, num_classes, [1, 1], activation_fn=None,
                                 scope='logits')
    return tf.compat.v1.image.resize_bilinear(logits, tf.shape(images)[1:3],
                                              align_corners=True)


def _labels_and_weights(labels: tf.Tensor, ignore_label: int,
                        valid: Optional[tf.Tensor] = None) -> Tuple[tf.Tensor, tf.Tensor]:
    """Flat labels with ignored pixels set to class 0, and float weights that are 0 there.

    The ops below need every label to be a valid class index even where it is ignored
    (`ignore_label` 255 is out of range for 21 classes), so those pixels get class 0 and
    weight 0. `valid` (optional, same shape as `labels`) marks further pixels to ignore.
    """
    labels = tf.reshape(labels, [-1])
    keep = tf.not_equal(labels, ignore_label)
    if valid is not None:
        keep = tf.logical_and(keep, tf.reshape(valid, [-1]))
    return tf.where(keep, labels, tf.zeros_like(labels)), tf.cast(keep, tf.float32)


def segmentation_loss(logits: tf.Tensor, labels: tf.Tensor, ignore_label: int) -> tf.Tensor:
    """Mean softmax cross-entropy over the pixels whose label is not `ignore_label`.

    Args:
      logits: `[b, h, w, num_classes]`.
      labels: integer `[b, h, w, 1]` or `[b, h, w]` of class indices or `ignore_label`.
      ignore_label: the label of pixels that do not count.

    Returns:
      The scalar loss (0 if every pixel is ignored), also added to the LOSSES collection.
    """
    flat_labels, weights = _labels_and_weights(labels, ignore_label)
    flat_logits = tf.reshape(logits, [-1, tf.shape(logits)[-1]])
    # SUM_BY_NONZERO_WEIGHTS (the default): the sum over kept pixels / their number.
    return tf.compat.v1.losses.sparse_softmax_cross_entropy(flat_labels, flat_logits,
                                                            weights=weights)


def mean_iou(predictions: tf.Tensor, labels: tf.Tensor, num_classes: int, ignore_label: int,
             valid: Optional[tf.Tensor] = None) -> Tuple[tf.Tensor, tf.Tensor]:
    """Streaming mean intersection-over-union that skips `ignore_label` (and `~valid`) pixels.

    Args:
      predictions: integer `[b, h, w]` (or `[b, h, w, 1]`) predicted classes.
      labels: integer labels of the same number of pixels.
      num_classes: the number of classes.
      ignore_label: the label of pixels that do not count.
      valid: optional bool mask of the pixels that count (e.g. not batch padding).

    Returns:
      `(miou, update_op)` of `tf.compat.v1.metrics.mean_iou`: the mean over the classes that
      occur in the labels or the predictions of TP / (TP + FP + FN).
    """
    flat_labels, weights = _labels_and_weights(labels, ignore_label, valid)
    return tf.compat.v1.metrics.mean_iou(flat_labels, tf.reshape(predictions, [-1]),
                                         num_classes, weights=weights)


def _optimizer(args: argparse.Namespace, global_step: tf.Tensor) -> Any:
    """deeplab's optimizers: momentum with the 'poly' learning rate, or Adam."""
    if args.optimizer == 'adam':
        return tf.compat.v1.train.AdamOptimizer(args.adam_learning_rate)
    learning_rate = tf.compat.v1.train.polynomial_decay(
        args.base_learning_rate, global_step, args.training_number_of_steps,
        end_learning_rate=0.0, power=args.learning_power)
    return tf.compat.v1.train.MomentumOptimizer(learning_rate, args.momentum)


# ----------------------------------------------------------------------------------------
# Train and evaluate


def train(argv: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """Trains for `--training_number_of_steps` steps and saves a checkpoint.

    Args:
      argv: the command-line flags (see `parse_args`); `sys.argv[1:]` when None.

    Returns:
      A dict: `steps`, `examples_per_sec` (after the first step, which fills the queues),
      `loss_start` and `loss_end` (the mean total loss, cross-entropy plus weight decay, of
      the first and last `LOSS_WINDOW` steps, or of a quarter of a short run), `losses`
      (every step's),
      `seconds`, `checkpoint` (the saved path).
    """
    args = parse_args(argv)
    tf.io.gfile.makedirs(args.train_logdir)
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(args.seed)
        dataset, images, labels = train_inputs(args)
        logits = fcn(images, dataset.num_classes, args.weight_decay)
        segmentation_loss(logits, labels, dataset.ignore_label)
        total_loss = tf.compat.v1.losses.get_total_loss()
        global_step = tf.compat.v1.train.get_or_create_global_step()
        train_op = slim.learning.create_train_op(total_loss,
                                                 _optimizer(args, global_step),
                                                 global_step=global_step)
        saver = tf.compat.v1.train.Saver()
        started = time.perf_counter()
        with QueueSession() as session:
            with Progress(args.training_number_of_steps, 'train deeplab', unit='step') as bar:
                losses = []
                for step in range(args.training_number_of_steps):
                    losses.append(float(session.run(train_op)))
                    if step == 0:  # the first step also fills the queues: not timed
                        first_step_done = time.perf_counter()
                    bar.set_postfix(loss=f'{losses[-1]:.3f}')
                    bar.update()
            last_step_done = time.perf_counter()
            checkpoint = saver.save(session.session,
                                    os.path.join(args.train_logdir, CHECKPOINT_NAME),
                                    global_step=global_step)
        finished = time.perf_counter()
    timed_steps = len(losses) - 1
    examples_per_sec = (timed_steps * args.train_batch_size / (last_step_done - first_step_done)
                        if timed_steps else float('nan'))
    window = max(1, min(LOSS_WINDOW, len(losses) // 4))
    return {
        'steps': len(losses),
        'examples_per_sec': examples_per_sec,
        'loss_start': float(np.mean(losses[:window])),
        'loss_end': float(np.mean(losses[-window:])),
        'losses': losses,
        'seconds': finished - started,
        'checkpoint': checkpoint,
    }


def evaluate(argv: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """Evaluates the latest checkpoint on one pass over `--eval_split`.

    Args:
      argv: the command-line flags (see `parse_args`); the checkpoint is the latest in
        `--checkpoint_dir` (default `--train_logdir`).

    Returns:
      A dict: `miou`, `num_examples` (the images read; equals the split's `num_samples`),
      `num_samples` (the split's size as its descriptor records it), `examples_per_sec`,
      `seconds`, `checkpoint`.

    Raises:
      ValueError: if there is no checkpoint in the checkpoint folder.
    """
    args = parse_args(argv)
    checkpoint_dir = args.checkpoint_dir or args.train_logdir
    checkpoint = tf.train.latest_checkpoint(checkpoint_dir)
    if checkpoint is None:
        raise ValueError(f'no checkpoint in {checkpoint_dir}; train first '
                         '(train_examples/train_deeplab.py --train_logdir DIR) or pass '
                         '--checkpoint_dir')
    with tf.Graph().as_default():
        dataset, images, labels, valid = eval_inputs(args)
        logits = fcn(images, dataset.num_classes)
        predictions = tf.argmax(logits, axis=3, output_type=tf.int32)
        miou, update_op = mean_iou(predictions, labels, dataset.num_classes,
                                   dataset.ignore_label, valid)
        batch_size = tf.shape(images)[0]
        saver = tf.compat.v1.train.Saver(tf.compat.v1.global_variables())
        num_examples, miou_value = 0, float('nan')
        started = time.perf_counter()
        with Progress(dataset.num_samples, 'eval deeplab', unit='image') as bar:
            with QueueSession(init_fn=lambda sess: saver.restore(sess, checkpoint)) as session:
                while True:  # until the epoch is read: QueueSession ends the block then
                    _, count = session.run([update_op, batch_size])
                    miou_value = float(session.run(miou))
                    num_examples += int(count)
                    bar.update(int(count))
        seconds = time.perf_counter() - started
    if num_examples != dataset.num_samples:
        print(f'warning: read {num_examples} images from {args.dataset_dir} split '
              f'{args.eval_split}, but its descriptor says {dataset.num_samples}',
              file=sys.stderr)
    return {
        'miou': miou_value,
        'num_examples': num_examples,
        'num_samples': dataset.num_samples,
        'examples_per_sec': num_examples / seconds,
        'seconds': seconds,
        'checkpoint': checkpoint,
    }


# ----------------------------------------------------------------------------------------
# Flags and main


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The flags of training and evaluation (deeplab's names where it has them)."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    data = parser.add_argument_group('data')
    data.add_argument('--dataset', default='pascal_voc_seg',
                      help='a segmentation dataset of slimdata.datasets.dataset_factory: '
                           'pascal_voc_seg, cityscapes, ade20k (default: %(default)s)')
    data.add_argument('--dataset_dir', required=True, help='the folder of the records')
    data.add_argument('--train_split', default='train', help='default: %(default)s')
    data.add_argument('--eval_split', default='val', help='default: %(default)s')
    data.add_argument('--num_readers', type=int, default=1,
                      help='parallel record readers (and batching threads); '
                           'default: %(default)s')

    training = parser.add_argument_group('training')
    training.add_argument('--train_logdir', required=True,
                          help='where the checkpoint is written')
    training.add_argument('--train_batch_size', type=int, default=8,
                          help='default: %(default)s')
    training.add_argument('--training_number_of_steps', type=int, default=100,
                          help='default: %(default)s')
    training.add_argument('--train_crop_size', type=int, nargs=2, default=[129, 129],
                          metavar=('HEIGHT', 'WIDTH'), help='default: %(default)s')
    training.add_argument('--min_scale_factor', type=float, default=0.5,
                          help='default: %(default)s')
    training.add_argument('--max_scale_factor', type=float, default=2.0,
                          help='default: %(default)s')
    training.add_argument('--scale_factor_step_size', type=float, default=0.25,
                          help='0 draws the scale uniformly; default: %(default)s')
    training.add_argument('--optimizer', choices=('momentum', 'adam'), default='momentum',
                          help='default: %(default)s')
    training.add_argument('--base_learning_rate', type=float, default=0.03,
                          help='momentum: the start of the poly schedule; '
                               'default: %(default)s')
    training.add_argument('--learning_power', type=float, default=0.9,
                          help='the power of the poly schedule; default: %(default)s')
    training.add_argument('--momentum', type=float, default=0.9, help='default: %(default)s')
    training.add_argument('--adam_learning_rate', type=float, default=0.001,
                          help='default: %(default)s')
    training.add_argument('--weight_decay', type=float, default=1e-4,
                          help='default: %(default)s')
    training.add_argument('--seed', type=int, default=0,
                          help='graph-level random seed; default: %(default)s')

    evaluation = parser.add_argument_group('evaluation')
    evaluation.add_argument('--checkpoint_dir', default=None,
                            help='the checkpoint to evaluate (latest in the folder); '
                                 'default: --train_logdir')
    evaluation.add_argument('--eval_batch_size', type=int, default=1,
                            help='images per evaluation step, padded to the largest; '
                                 'default: %(default)s')
    args = parser.parse_args(argv)
    example_flags.require_at_least_one(parser, args, (
        'train_batch_size', 'training_number_of_steps', 'num_readers', 'eval_batch_size'))
    if min(args.train_crop_size) < 1:
        parser.error(f'--train_crop_size must be positive, got {args.train_crop_size}')
    return args


def main(argv: Optional[List[str]] = None) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """Trains, then evaluates the checkpoint; prints both results."""
    # The queue API's deprecation notices are expected here: this is the legacy road.
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    trained = train(argv)
    print(f'trained {trained["steps"]} steps in {trained["seconds"]:.1f} s, '
          f'{trained["examples_per_sec"]:.1f} examples/s, loss {trained["loss_start"]:.3f} '
          f'-> {trained["loss_end"]:.3f}; checkpoint {trained["checkpoint"]}')
    evaluated = evaluate(argv)
    print(f'evaluated {evaluated["num_examples"]} images in {evaluated["seconds"]:.1f} s: '
          f'mIoU {evaluated["miou"]:.4f}')
    return trained, evaluated


if __name__ == '__main__':
    main()
