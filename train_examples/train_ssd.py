"""Trains a small SSD-style detector on Pascal VOC records, in graph mode, as SSD-Tensorflow does.

The input road is SSD-Tensorflow's `train_ssd_network.py`, with slimdata in place of
`tf.contrib.slim`:

    dataset_factory.get_dataset('pascalvoc_2007', 'train', DIR)
      -> slim.dataset_data_provider.DatasetDataProvider(dataset, num_readers, ...)
      -> provider.get(['image', 'shape', 'object/label', 'object/bbox'])
      -> ssd_preprocessing.preprocess_for_train       (random crop, resize, flip, colour)
      -> ssd_preprocessing.encode_ground_truth        (anchors matched -> fixed-size targets)
      -> tf.compat.v1.train.batch -> slim.prefetch_queue.prefetch_queue
      -> a small SSD net -> softmax loss with 3:1 hard negative mining + smooth L1
      -> slim.learning.create_train_op, run in a QueueSession loop

The network is deliberately small (six strided 3x3 convolutions, predictions from the last
three, at strides 16, 32 and 64), so that it trains at a few steps per second on two CPU
cores; swap in SSD-VGG300 for real work. Run, for example:

    python train_examples/train_ssd.py --dataset_dir /data/voc2007_records \\
        --train_dir /tmp/ssd --max_number_of_steps 200

`--dataset_name=detection` reads any folder of the detection converters (the user's own
classes: the class heads are sized by the folder's `num_classes`); `eval_ssd.py` evaluates
the checkpoint (mAP@0.5 per class).

`main(argv)` returns the run's figures (steps, examples/s, loss at the start and at the end),
so other programs (the demo) can call it in-process.
"""

import argparse
import os
import time
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

import example_flags  # noqa: E402  (beside this script: run it as a script, or put
import ssd_preprocessing  # noqa: E402  train_examples/ on sys.path to import it)

from slimdata import slim  # noqa: E402
from slimdata._tf import tf  # noqa: E402
from slimdata.datasets import dataset_factory  # noqa: E402
from slimdata.progress import Progress  # noqa: E402
from slimdata.queue_session import QueueSession  # noqa: E402

#: Total strides of the feature maps the network predicts from (see `ssd_net`).
FEATURE_STRIDES = (16, 32, 64)
#: Anchor scale of each feature map, plus the one the last map's in-between anchor uses.
ANCHOR_SCALES = (0.15, 0.35, 0.6, 0.85)
#: Width/height ratios of the anchors at each location (plus one in-between square).
ASPECT_RATIOS = (1.0, 2.0, 0.5)
OPTIMIZERS = ('adam', 'momentum', 'rmsprop', 'sgd')


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The flags, named as SSD-Tensorflow's train_ssd_network.py names them."""
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n')[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    data = parser.add_argument_group('data')
    example_flags.add_dataset_flags(data, 'pascalvoc_2007', 'train', 'to train on',
                                    detection=True)
    data.add_argument('--num_readers', type=int, default=2,
                      help='parallel readers of the TFRecord shards')
    data.add_argument('--num_preprocessing_threads', type=int, default=2,
                      help='threads running the per-example preprocessing into the batch')
    data.add_argument('--image_size', '--train_image_size', dest='image_size', type=int,
                      default=300, help='side of the square network input')
    data.add_argument('--min_object_covered', type=float, default=0.3,
                      help='a random crop covers at least this fraction of some object')
    data.add_argument('--bbox_crop_overlap', type=float, default=0.5,
                      help='a box keeps its object after a crop if at least this fraction '
                           'of it is inside the crop')
    model = parser.add_argument_group('model and loss')
    model.add_argument('--num_classes', type=int, default=None,
                       help='classes including the background; default: the dataset\'s')
    model.add_argument('--match_threshold', type=float, default=0.5,
                       help='IoU from which an anchor is matched to a ground-truth box')
    model.add_argument('--negative_ratio', type=float, default=3.0,
                       help='hard negatives per positive anchor in the classification loss')
    model.add_argument('--loss_alpha', type=float, default=1.0,
                       help='weight of the localisation loss')
    model.add_argument('--weight_decay', type=float, default=0.00004)
    training = parser.add_argument_group('training')
    training.add_argument('--train_dir', default='/tmp/tfmodel/',
                          help='where the final checkpoint is written')
    training.add_argument('--batch_size', type=int, default=8)
    training.add_argument('--max_number_of_steps', type=int, default=200)
    training.add_argument('--optimizer', choices=OPTIMIZERS, default='adam')
    training.add_argument('--learning_rate', type=float, default=0.001)
    training.add_argument('--momentum', type=float, default=0.9,
                          help='for the momentum and rmsprop optimizers')
    training.add_argument('--log_every_n_steps', type=int, default=20)
    training.add_argument('--seed', type=int, default=None,
                          help='graph-level random seed (reading order stays nondeterministic)')
    args = parser.parse_args(argv)
    example_flags.require_at_least_one(parser, args, (
        'batch_size', 'max_number_of_steps', 'num_readers', 'num_preprocessing_threads',
        'image_size'))
    return args


# --- Input --------------------------------------------------------------------------------------

def build_inputs(dataset: Any, anchors: Any, args: argparse.Namespace
                 ) -> Tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """The batched training input: (images [B, S, S, 3], class_targets [B, A],
    box_targets [B, A, 4]), read, augmented and encoded by queue-runner threads."""
    with tf.device('/cpu:0'), tf.name_scope('inputs'):
        provider = slim.dataset_data_provider.DatasetDataProvider(
            dataset, num_readers=args.num_readers,
            common_queue_capacity=20 * args.batch_size,
            common_queue_min=10 * args.batch_size, shuffle=True)
        # The items SSD-Tensorflow reads; 'shape' (as stored) is not needed for training.
        image, _, labels, boxes = provider.get(['image', 'shape', 'object/label',
                                                'object/bbox'])
        image, labels, boxes = ssd_preprocessing.preprocess_for_train(
            image, labels, boxes, args.image_size,
            min_object_covered=args.min_object_covered,
            min_visible_fraction=args.bbox_crop_overlap)
        class_targets, box_targets = ssd_preprocessing.encode_ground_truth(
            labels, boxes, anchors, threshold=args.match_threshold)
        batch = tf.compat.v1.train.batch(
            [image, class_targets, box_targets], batch_size=args.batch_size,
            num_threads=args.num_preprocessing_threads, capacity=5 * args.batch_size)
        batch_queue = slim.prefetch_queue.prefetch_queue(batch, capacity=2)
        return batch_queue.dequeue()


# --- Network and loss ---------------------------------------------------------------------------

def ssd_net(images: tf.Tensor, num_classes: int, num_anchors_per_location: int,
            weight_decay: float = 0.00004) -> Tuple[tf.Tensor, tf.Tensor, List[Any]]:
    """A small SSD: strided convolutions, with class and box heads on the last three maps.

    Args:
      images: [B, S, S, 3].
      num_classes: classes including the background.
      num_anchors_per_location: anchors at each location of each map.
      weight_decay: L2 weight of the convolution kernels (added to the regularisation losses).

    Returns:
      (class_logits [B, A, num_classes], box_offsets [B, A, 4], the maps' static sides),
      the anchors in `ssd_preprocessing.make_anchors` order.
    """
    with tf.compat.v1.variable_scope('ssd_net'), slim.arg_scope(
            [slim.conv2d], kernel_size=[3, 3], padding='SAME',
            weights_regularizer=slim.l2_regularizer(weight_decay)):
        net = images
        feature_maps = []
        # Strides 2, 4, 8 then the predicting maps at 16, 32, 64 (FEATURE_STRIDES).
        for index, depth in enumerate((16, 32, 64, 64, 128, 128)):
            net = slim.conv2d(net, depth, stride=2, scope=f'conv{index + 1}')
            if index >= 3:
                feature_maps.append(net)
        class_logits, box_offsets, sides = [], [], []
        for index, feature_map in enumerate(feature_maps):
            sides.append(feature_map.shape[1])
            with tf.compat.v1.variable_scope(f'head{index + 1}'):
                class_logits.append(_flatten_locations(slim.conv2d(
                    feature_map, num_anchors_per_location * num_classes, activation_fn=None,
                    scope='classes'), num_classes))
                box_offsets.append(_flatten_locations(slim.conv2d(
                    feature_map, num_anchors_per_location * 4, activation_fn=None,
                    scope='boxes'), 4))
        return tf.concat(class_logits, axis=1), tf.concat(box_offsets, axis=1), sides


def model_anchors(image_size: int) -> Any:
    """The anchors of `ssd_net` on square images of side `image_size` (cy, cx, h, w)."""
    map_sides = ssd_preprocessing.feature_map_sizes(image_size, FEATURE_STRIDES)
    return ssd_preprocessing.make_anchors(map_sides, ANCHOR_SCALES, ASPECT_RATIOS)


def build_network(images: tf.Tensor, num_classes: int, image_size: int,
                  weight_decay: float = 0.00004) -> Tuple[tf.Tensor, tf.Tensor]:
    """`ssd_net` with this script's anchor layout, checked against `model_anchors`.

    Returns:
      (class_logits [B, A, num_classes], box_offsets [B, A, 4]).
    """
    class_logits, box_offsets, net_sides = ssd_net(
        images, num_classes, ssd_preprocessing.anchors_per_location(ASPECT_RATIOS),
        weight_decay)
    map_sides = ssd_preprocessing.feature_map_sizes(image_size, FEATURE_STRIDES)
    if tuple(net_sides) != map_sides:
        raise ValueError(f'the network\'s feature maps have sides {tuple(net_sides)} but the '
                         f'anchors were laid out for {map_sides} (FEATURE_STRIDES is wrong)')
    return class_logits, box_offsets


def _flatten_locations(head: tf.Tensor, depth: int) -> tf.Tensor:
    """[B, rows, cols, shapes * depth] -> [B, rows * cols * shapes, depth]."""
    return tf.reshape(head, [tf.shape(head)[0], -1, depth])


def ssd_losses(class_logits: tf.Tensor, box_offsets: tf.Tensor, class_targets: tf.Tensor,
               box_targets: tf.Tensor, negative_ratio: float = 3.0
               ) -> Tuple[tf.Tensor, tf.Tensor]:
    """SSD's loss: softmax over anchors with hard negative mining, smooth L1 on positives.

    In each example the positive anchors (class target > 0) and the `negative_ratio` times as
    many background anchors of highest classification loss count in the classification
    loss (an example without positives still counts `negative_ratio` negatives). Both losses
    are summed and divided by the number of positive anchors in the batch (at least 1).

    Returns:
      (classification_loss, localisation_loss), scalars.
    """
    with tf.name_scope('ssd_losses'):
        cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=class_targets, logits=class_logits)                    # [B, A]
        positive = class_targets > 0
        num_positive = tf.reduce_sum(tf.cast(positive, tf.int32), axis=1)  # [B]
        num_anchors = tf.shape(class_targets)[1]
        num_negative = tf.minimum(
            tf.cast(negative_ratio * tf.cast(tf.maximum(num_positive, 1), tf.float32),
                    tf.int32),
            num_anchors - num_positive)
        # Rank the background anchors by loss, highest first; positives rank last.
        negative_loss = tf.where(positive, -tf.ones_like(cross_entropy), cross_entropy)
        order = tf.argsort(negative_loss, axis=1, direction='DESCENDING', stable=True)
        rank = tf.argsort(order, axis=1)
        hard_negative = tf.logical_and(tf.logical_not(positive),
                                       rank < num_negative[:, tf.newaxis])
        normaliser = tf.cast(tf.maximum(tf.reduce_sum(num_positive), 1), tf.float32)
        counted = tf.cast(tf.logical_or(positive, hard_negative), tf.float32)
        classification_loss = tf.reduce_sum(cross_entropy * counted) / normaliser
        smooth_l1 = tf.compat.v1.losses.huber_loss(
            box_targets, box_offsets, delta=1.0, reduction=tf.compat.v1.losses.Reduction.NONE,
            loss_collection=None)
        localisation_loss = tf.reduce_sum(
            tf.reduce_sum(smooth_l1, axis=2) * tf.cast(positive, tf.float32)) / normaliser
        return classification_loss, localisation_loss


def make_optimizer(args: argparse.Namespace) -> Any:
    """The `tf.compat.v1.train` optimizer named by `--optimizer`."""
    train = tf.compat.v1.train
    return {
        'adam': lambda: train.AdamOptimizer(args.learning_rate),
        'momentum': lambda: train.MomentumOptimizer(args.learning_rate, args.momentum),
        'rmsprop': lambda: train.RMSPropOptimizer(args.learning_rate, momentum=args.momentum),
        'sgd': lambda: train.GradientDescentOptimizer(args.learning_rate),
    }[args.optimizer]()


# --- Training -----------------------------------------------------------------------------------

def build_training(args: argparse.Namespace) -> Dict[str, tf.Tensor]:
    """Builds the input, network, losses and train op in the default graph."""
    if args.seed is not None:
        tf.compat.v1.set_random_seed(args.seed)
    dataset = dataset_factory.get_dataset(args.dataset_name, args.dataset_split_name,
                                          args.dataset_dir)
    num_classes = args.num_classes or getattr(dataset, 'num_classes', None)
    if not num_classes:
        raise ValueError(f'dataset {args.dataset_name!r} does not say its number of classes; '
                         'pass --num_classes (including the background)')
    anchors = model_anchors(args.image_size)
    images, class_targets, box_targets = build_inputs(dataset, anchors, args)
    class_logits, box_offsets = build_network(images, num_classes, args.image_size,
                                              args.weight_decay)
    classification_loss, localisation_loss = ssd_losses(
        class_logits, box_offsets, class_targets, box_targets, args.negative_ratio)
    detection_loss = classification_loss + args.loss_alpha * localisation_loss
    tf.compat.v1.losses.add_loss(detection_loss)
    total_loss = tf.compat.v1.losses.get_total_loss()   # + the weight decay
    train_op = slim.learning.create_train_op(
        total_loss, make_optimizer(args),
        global_step=tf.compat.v1.train.get_or_create_global_step())
    return {'train_op': train_op, 'loss': detection_loss,
            'classification_loss': classification_loss,
            'localisation_loss': localisation_loss,
            'positives_per_image': tf.reduce_mean(
                tf.reduce_sum(tf.cast(class_targets > 0, tf.float32), axis=1))}


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values))


def summarise(history: Dict[str, List[float]], step_seconds: List[float],
              batch_size: int) -> Dict[str, Any]:
    """The run's figures: losses averaged over the first and last few steps, examples/s
    over the steps after a short warm-up (queues filling, first-run graph optimisation)."""
    steps = len(step_seconds)
    window = max(1, min(10, steps // 5))
    warm_up = min(5, steps - 1)
    timed = step_seconds[warm_up:]
    figures = {'steps': steps, 'batch_size': batch_size,
               'seconds': round(sum(step_seconds), 2),
               'examples_per_sec': round(batch_size * len(timed) / sum(timed), 2)}
    for name, values in history.items():
        figures[f'{name}_start'] = round(_mean(values[:window]), 4)
        figures[f'{name}_end'] = round(_mean(values[-window:]), 4)
    return figures


def main(argv: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """Trains for `--max_number_of_steps` steps; returns the figures of `summarise`."""
    args = parse_args(argv)
    with tf.Graph().as_default(), warnings.catch_warnings():
        # tf_slim's layers call Keras' deprecated `layer.apply`; nothing a user can change.
        warnings.filterwarnings('ignore', message='`layer.apply` is deprecated')
        fetches = build_training(args)
        saver = tf.compat.v1.train.Saver()
        history: Dict[str, List[float]] = {name: [] for name in fetches if name != 'train_op'}
        step_seconds = []
        with QueueSession() as session:
            with Progress(args.max_number_of_steps, 'train_ssd', unit='step') as progress:
                for step in range(args.max_number_of_steps):
                    start = time.perf_counter()
                    values = session.run(fetches)
                    step_seconds.append(time.perf_counter() - start)
                    for name in history:
                        history[name].append(float(values[name]))
                    if (step + 1) % args.log_every_n_steps == 0:
                        progress.set_postfix(loss=f'{values["loss"]:.3f}')
                    progress.update()
            os.makedirs(args.train_dir, exist_ok=True)
            checkpoint = saver.save(session.session, os.path.join(args.train_dir, 'model.ckpt'),
                                    global_step=args.max_number_of_steps)
    figures = summarise(history, step_seconds, args.batch_size)
    figures['checkpoint'] = checkpoint
    return figures


if __name__ == '__main__':
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    for key, value in main().items():
        print(f'{key:>28}: {value}')
