"""SSD's training input, one example at a time: augmentation, anchors, and target encoding.

This is the per-example part of the SSD input pipeline as SSD-Tensorflow builds it
(`preprocessing/ssd_vgg_preprocessing.py` and `nets/ssd_common.py` there), written for
`DatasetDataProvider` items (`image` uint8 [H, W, 3], `object/bbox` float [N, 4] as
ymin, xmin, ymax, xmax in [0, 1], `object/label` int64 [N]):

  1. `preprocess_for_train`: a random crop that keeps part of some object
     (`tf.image.sample_distorted_bounding_box`), the boxes moved into the crop's frame, boxes
     that are mostly cut away dropped and the rest clipped; a resize to a square; a random
     horizontal flip of the image and its boxes; mild colour distortion.
     (`preprocess_for_eval` is its resize alone, for the evaluation.)
  2. `make_anchors`: the default boxes of every feature map, in the order the network's
     prediction heads emit them.
  3. `encode_ground_truth`: every anchor matched to a ground-truth box (IoU >= threshold, and
     the best anchor of each box), giving a class target per anchor (0 = background) and the
     box's centre/size offsets from the anchor, scaled by the prior variances.

Step 3 makes every example's targets the same size whatever its number of objects, so the
examples can be batched with `tf.compat.v1.train.batch` like any fixed-size tensors.

Boxes are (ymin, xmin, ymax, xmax) corners, normalised to [0, 1], everywhere except anchors,
which are (cy, cx, h, w): centre and size, normalised the same way.
"""

import math
from typing import Optional, Sequence, Tuple

import numpy as np

from slimdata._tf import tf

#: Scaling of the encoded (cy, cx, h, w) offsets, SSD's "prior variances": the centre
#: offsets are divided by 0.1 and the log size ratios by 0.2, so all four have similar spread.
PRIOR_VARIANCES = (0.1, 0.1, 0.2, 0.2)


# --- Augmentation ------------------------------------------------------------------------------

def flip_left_right(image: tf.Tensor, boxes: tf.Tensor) -> Tuple[tf.Tensor, tf.Tensor]:
    """Mirrors `image` [H, W, C] and its `boxes` [N, 4] (corners) about the vertical axis.

    A box (ymin, xmin, ymax, xmax) becomes (ymin, 1 - xmax, ymax, 1 - xmin).
    """
    ymin, xmin, ymax, xmax = tf.unstack(boxes, num=4, axis=1)
    flipped_boxes = tf.stack([ymin, 1.0 - xmax, ymax, 1.0 - xmin], axis=1)
    return tf.reverse(image, axis=[1]), flipped_boxes


def random_flip_left_right(image: tf.Tensor, boxes: tf.Tensor,
                           seed: Optional[int] = None) -> Tuple[tf.Tensor, tf.Tensor]:
    """`flip_left_right` with probability 1/2; image and boxes always stay consistent."""
    do_flip = tf.random.uniform([], seed=seed) < 0.5
    return tf.cond(do_flip, lambda: flip_left_right(image, boxes), lambda: (image, boxes))


def boxes_to_crop_frame(boxes: tf.Tensor, crop_box: tf.Tensor) -> tf.Tensor:
    """Expresses `boxes` [N, 4] in the frame of `crop_box` [4] (both corners in [0, 1]).

    The crop's top-left corner becomes (0, 0) and its bottom-right (1, 1); boxes reaching
    outside the crop get coordinates outside [0, 1] (see `keep_boxes_inside`).
    """
    crop_ymin, crop_xmin, crop_ymax, crop_xmax = tf.unstack(crop_box, num=4)
    origin = tf.stack([crop_ymin, crop_xmin, crop_ymin, crop_xmin])
    size = tf.stack([crop_ymax - crop_ymin, crop_xmax - crop_xmin] * 2)
    return (boxes - origin) / size


def keep_boxes_inside(labels: tf.Tensor, boxes: tf.Tensor,
                      min_visible_fraction: float) -> Tuple[tf.Tensor, tf.Tensor]:
    """Drops boxes mostly outside the unit square and clips the others to it.

    Args:
      labels: [N] the boxes' labels (dropped together with their boxes).
      boxes: [N, 4] corners, in a frame where the image is [0, 1] x [0, 1].
      min_visible_fraction: a box is kept if at least this fraction of its area lies in the
        image (SSD-Tensorflow's `bboxes_filter_overlap` threshold). Boxes of zero area are
        always dropped: there is nothing of them to see.

    Returns:
      (labels [M], boxes [M, 4]) of the kept boxes, clipped to [0, 1].
    """
    clipped = tf.clip_by_value(boxes, 0.0, 1.0)
    visible_area = _areas(clipped)
    visible_fraction = tf.math.divide_no_nan(visible_area, _areas(boxes))
    keep = tf.logical_and(visible_area > 0.0, visible_fraction >= min_visible_fraction)
    return tf.boolean_mask(labels, keep), tf.boolean_mask(clipped, keep)


def random_crop_with_boxes(image: tf.Tensor, labels: tf.Tensor, boxes: tf.Tensor,
                           min_object_covered: float = 0.3,
                           aspect_ratio_range: Tuple[float, float] = (0.5, 2.0),
                           area_range: Tuple[float, float] = (0.1, 1.0),
                           max_attempts: int = 100,
                           min_visible_fraction: float = 0.5,
                           seed: Optional[int] = None) -> Tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """A random crop that keeps at least part of one object, with its boxes.

    The crop is drawn by `tf.image.sample_distorted_bounding_box`: it covers at least
    `min_object_covered` of one of the boxes, its width/height ratio (in pixels) lies in
    `aspect_ratio_range`, and its area is a fraction in `area_range` of the image's. After
    `max_attempts` draws that fail, the whole image is used (also when there are no boxes).
    The boxes are then moved into the crop's frame and filtered by `keep_boxes_inside`.

    Returns:
      (the cropped image [h, w, C], labels [M], boxes [M, 4] in the crop's frame).
    """
    crop_begin, crop_size, crop_box = tf.image.sample_distorted_bounding_box(
        tf.shape(image), bounding_boxes=tf.expand_dims(boxes, 0), seed=seed or 0,
        min_object_covered=min_object_covered, aspect_ratio_range=aspect_ratio_range,
        area_range=area_range, max_attempts=max_attempts, use_image_if_no_bounding_boxes=True)
    cropped = tf.slice(image, crop_begin, crop_size)
    cropped.set_shape([None, None, image.shape[-1]])
    labels, boxes = keep_boxes_inside(labels, boxes_to_crop_frame(boxes, crop_box[0, 0]),
                                      min_visible_fraction)
    return cropped, labels, boxes


def distort_colour(image: tf.Tensor, seed: Optional[int] = None) -> tf.Tensor:
    """Mild random brightness and saturation changes of a float RGB image in [0, 1]."""
    image = tf.image.random_brightness(image, max_delta=32.0 / 255.0, seed=seed)
    image = tf.image.random_saturation(image, lower=0.5, upper=1.5, seed=seed)
    return tf.clip_by_value(image, 0.0, 1.0)


def preprocess_for_train(image: tf.Tensor, labels: tf.Tensor, boxes: tf.Tensor,
                         image_size: int, min_object_covered: float = 0.3,
                         min_visible_fraction: float = 0.5, seed: Optional[int] = None
                         ) -> Tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """SSD's training augmentation of one decoded example.

    Args:
      image: uint8 [H, W, 3], as `DatasetDataProvider` returns the 'image' item.
      labels: int [N], the 'object/label' item.
      boxes: float [N, 4], the 'object/bbox' item (ymin, xmin, ymax, xmax in [0, 1]).
      image_size: the side of the square output image.
      min_object_covered, min_visible_fraction: see `random_crop_with_boxes`.
      seed: an op-level seed for the random choices (with the graph's seed).

    Returns:
      (image float32 [image_size, image_size, 3] scaled to [-1, 1], labels [M], boxes [M, 4]
      in the output image's frame). The crop is resized to the square without keeping its
      aspect ratio, as SSD does, so normalised boxes need no change for the resize.
    """
    with tf.name_scope('ssd_preprocessing_train'):
        labels = tf.cast(labels, tf.int64)
        boxes = tf.cast(boxes, tf.float32)
        image, labels, boxes = random_crop_with_boxes(
            image, labels, boxes, min_object_covered=min_object_covered,
            min_visible_fraction=min_visible_fraction, seed=seed)
        image = tf.image.resize(image, [image_size, image_size]) / 255.0
        image, boxes = random_flip_left_right(image, boxes, seed=seed)
        image = distort_colour(image, seed=seed)
        image.set_shape([image_size, image_size, 3])
        return to_network_range(image), labels, boxes


def preprocess_for_eval(image: tf.Tensor, image_size: int) -> tf.Tensor:
    """The evaluation input: `image` (uint8 [H, W, 3]) resized to the square
    [image_size, image_size, 3] without keeping its aspect ratio (SSD-Tensorflow's default
    WARP_RESIZE, the training resize) and scaled to [-1, 1]; no augmentation. Normalised
    boxes need no change for it."""
    with tf.name_scope('ssd_preprocessing_eval'):
        image = tf.image.resize(image, [image_size, image_size]) / 255.0
        image.set_shape([image_size, image_size, 3])
        return to_network_range(image)


def to_network_range(image: tf.Tensor) -> tf.Tensor:
    """A float image in [0, 1] scaled to the network's input range, [-1, 1]."""
    return image * 2.0 - 1.0


# --- Anchors -----------------------------------------------------------------------------------

def feature_map_sizes(image_size: int, strides: Sequence[int]) -> Tuple[int, ...]:
    """The side of each feature map of a network of 'SAME'-padded strided layers.

    Halving a side n k times with 'SAME' padding gives ceil(n / 2**k), so a map of total
    stride s has side ceil(image_size / s).
    """
    return tuple(math.ceil(image_size / stride) for stride in strides)


def anchor_shapes(scale: float, next_scale: float,
                  aspect_ratios: Sequence[float]) -> Tuple[Tuple[float, float], ...]:
    """The (height, width) of the anchors at one location of a feature map.

    As in the SSD paper: for each aspect ratio r (width / height) a box of area scale**2,
    height scale / sqrt(r) and width scale * sqrt(r); and one more square box of side
    sqrt(scale * next_scale), between this map's scale and the next one's.
    """
    shapes = [(scale / math.sqrt(ratio), scale * math.sqrt(ratio)) for ratio in aspect_ratios]
    between = math.sqrt(scale * next_scale)
    return tuple(shapes[:1] + [(between, between)] + shapes[1:])


def make_anchors(map_sizes: Sequence[int], scales: Sequence[float],
                 aspect_ratios: Sequence[float]) -> np.ndarray:
    """The anchors (default boxes) of all feature maps, one row per anchor.

    Args:
      map_sizes: the side of each (square) feature map, finest first.
      scales: one more than `map_sizes`: the anchor scale (side of the square anchor, as a
        fraction of the image side) of each map, then the scale used for the last map's
        in-between square anchor.
      aspect_ratios: the width/height ratios of the anchors at every location; must start
        with 1.0 (see `anchor_shapes`).

    Returns:
      float32 [num_anchors, 4] of (cy, cx, h, w). The order is: map, then row, then column,
      then shape, which is the order of a head's [batch, rows, cols, shapes * k] output
      reshaped to [batch, rows * cols * shapes, k] and concatenated over the maps.
    """
    if len(scales) != len(map_sizes) + 1:
        raise ValueError(f'scales must have one more entry than map_sizes (the last map\'s '
                         f'in-between anchor uses it): got {len(scales)} scales for '
                         f'{len(map_sizes)} maps')
    if aspect_ratios[0] != 1.0:
        raise ValueError(f'aspect_ratios must start with 1.0, got {tuple(aspect_ratios)}')
    per_map = []
    for index, size in enumerate(map_sizes):
        shapes = np.array(anchor_shapes(scales[index], scales[index + 1], aspect_ratios))
        centres = (np.arange(size) + 0.5) / size
        cy, cx = np.meshgrid(centres, centres, indexing='ij')
        grid = np.stack([cy, cx], axis=-1).reshape(size * size, 1, 2)
        grid = np.broadcast_to(grid, (size * size, len(shapes), 2))
        sizes = np.broadcast_to(shapes, (size * size, len(shapes), 2))
        per_map.append(np.concatenate([grid, sizes], axis=-1).reshape(-1, 4))
    return np.concatenate(per_map).astype(np.float32)


def anchors_per_location(aspect_ratios: Sequence[float]) -> int:
    """How many anchors `make_anchors` places at each location of a map."""
    return len(aspect_ratios) + 1


# --- Matching and encoding ----------------------------------------------------------------------

def anchor_corners(anchors: tf.Tensor) -> tf.Tensor:
    """(cy, cx, h, w) anchors [A, 4] as (ymin, xmin, ymax, xmax) corners."""
    cy, cx, h, w = tf.unstack(tf.convert_to_tensor(anchors, tf.float32), num=4, axis=1)
    return tf.stack([cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2], axis=1)


def _areas(boxes: tf.Tensor) -> tf.Tensor:
    ymin, xmin, ymax, xmax = tf.unstack(boxes, num=4, axis=-1)
    return tf.maximum(ymax - ymin, 0.0) * tf.maximum(xmax - xmin, 0.0)


def pairwise_iou(boxes_a: tf.Tensor, boxes_b: tf.Tensor) -> tf.Tensor:
    """Intersection over union of every box of `boxes_a` [N, 4] with every one of `boxes_b`
    [M, 4] (corners): [N, M]; 0 where both boxes have zero area."""
    a = tf.expand_dims(boxes_a, 1)
    b = tf.expand_dims(boxes_b, 0)
    intersection = _areas(tf.concat([tf.maximum(a[..., :2], b[..., :2]),
                                     tf.minimum(a[..., 2:], b[..., 2:])], axis=-1))
    union = _areas(a) + _areas(b) - intersection
    return tf.math.divide_no_nan(intersection, union)


def match_anchors(gt_boxes: tf.Tensor, anchors: tf.Tensor,
                  threshold: float = 0.5) -> Tuple[tf.Tensor, tf.Tensor]:
    """Assigns ground-truth boxes to anchors.

    An anchor is positive if its IoU with some box is at least `threshold` (it takes the box
    of highest IoU), or if it is the anchor of highest IoU of some box (so every box that
    overlaps any anchor gets at least one; when it is the best anchor of several boxes, the
    first of them). Boxes that overlap no anchor at all are not matched.

    Args:
      gt_boxes: [G, 4] corners; G may be 0.
      anchors: [A, 4] (cy, cx, h, w).
      threshold: the IoU from which an anchor is positive.

    Returns:
      (positive bool [A], matched int32 [A]: the index of the anchor's box in `gt_boxes`,
      meaningful where `positive`).
    """
    iou = pairwise_iou(anchor_corners(anchors), gt_boxes)          # [A, G]
    num_anchors = tf.shape(iou)[0]
    # With no boxes there is nothing to reduce over; a column of zeros matches nothing.
    iou = tf.concat([iou, tf.zeros([num_anchors, 1])], axis=1)
    best_gt = tf.argmax(iou, axis=1, output_type=tf.int32)
    best_iou = tf.reduce_max(iou, axis=1)

    best_anchor = tf.argmax(iou, axis=0, output_type=tf.int32)     # [G + 1]
    overlaps_some_anchor = tf.reduce_max(iou, axis=0) > 0.0
    forced = tf.logical_and(tf.one_hot(best_anchor, num_anchors, on_value=True,
                                       off_value=False, axis=0),   # [A, G + 1]
                            overlaps_some_anchor)
    is_forced = tf.reduce_any(forced, axis=1)
    forced_gt = tf.argmax(tf.cast(forced, tf.int32), axis=1, output_type=tf.int32)

    positive = tf.logical_or(is_forced, best_iou >= threshold)
    matched = tf.where(is_forced, forced_gt, best_gt)
    return positive, matched


def encode_boxes(boxes: tf.Tensor, anchors: tf.Tensor,
                 variances: Sequence[float] = PRIOR_VARIANCES) -> tf.Tensor:
    """Encodes corner boxes [A, 4] relative to anchors [A, 4] (cy, cx, h, w).

    Returns [A, 4]: ((cy - anchor_cy) / anchor_h, (cx - anchor_cx) / anchor_w,
    log(h / anchor_h), log(w / anchor_w)), each divided by its variance.
    """
    ymin, xmin, ymax, xmax = tf.unstack(boxes, num=4, axis=1)
    anchor_cy, anchor_cx, anchor_h, anchor_w = tf.unstack(
        tf.convert_to_tensor(anchors, tf.float32), num=4, axis=1)
    encoded = tf.stack([((ymin + ymax) / 2 - anchor_cy) / anchor_h,
                        ((xmin + xmax) / 2 - anchor_cx) / anchor_w,
                        tf.math.log((ymax - ymin) / anchor_h),
                        tf.math.log((xmax - xmin) / anchor_w)], axis=1)
    return encoded / tf.constant(variances, tf.float32)


def decode_boxes(encoded: tf.Tensor, anchors: tf.Tensor,
                 variances: Sequence[float] = PRIOR_VARIANCES) -> tf.Tensor:
    """The inverse of `encode_boxes`: offsets [..., A, 4] back to corner boxes [..., A, 4]."""
    offsets = encoded * tf.constant(variances, tf.float32)
    d_cy, d_cx, d_h, d_w = tf.unstack(offsets, num=4, axis=-1)
    anchor_cy, anchor_cx, anchor_h, anchor_w = tf.unstack(
        tf.convert_to_tensor(anchors, tf.float32), num=4, axis=-1)
    cy = anchor_cy + d_cy * anchor_h
    cx = anchor_cx + d_cx * anchor_w
    h = anchor_h * tf.exp(d_h)
    w = anchor_w * tf.exp(d_w)
    return tf.stack([cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2], axis=-1)


def encode_ground_truth(labels: tf.Tensor, boxes: tf.Tensor, anchors: np.ndarray,
                        threshold: float = 0.5,
                        variances: Sequence[float] = PRIOR_VARIANCES
                        ) -> Tuple[tf.Tensor, tf.Tensor]:
    """The training targets of one example (SSD-Tensorflow's `tf_ssd_bboxes_encode`).

    Args:
      labels: int [G] class ids (1 ... num_classes - 1; 0 is the background).
      boxes: float [G, 4] corners.
      anchors: [A, 4] (cy, cx, h, w), from `make_anchors`.
      threshold: the matching IoU (see `match_anchors`).
      variances: the prior variances of the encoding.

    Returns:
      (class_targets int64 [A]: the matched box's label, 0 for background anchors;
      box_targets float32 [A, 4]: the matched box encoded against the anchor, 0 for
      background anchors).
    """
    anchors = tf.convert_to_tensor(anchors, tf.float32)
    boxes = tf.convert_to_tensor(boxes, tf.float32)
    positive, matched = match_anchors(boxes, anchors, threshold)
    # A one-hot selection rather than tf.gather: it also works with no boxes at all.
    selection = tf.one_hot(matched, tf.shape(boxes)[0], on_value=True, off_value=False)
    selection = tf.logical_and(selection, positive[:, tf.newaxis])          # [A, G]
    class_targets = tf.reduce_sum(
        tf.where(selection, tf.cast(labels, tf.int64)[tf.newaxis, :], tf.constant(0, tf.int64)),
        axis=1)
    matched_boxes = tf.matmul(tf.cast(selection, tf.float32), boxes)
    # Background anchors "match" themselves, so their targets are exact zeros, not log(0).
    matched_boxes = tf.where(positive[:, tf.newaxis], matched_boxes, anchor_corners(anchors))
    return class_targets, encode_boxes(matched_boxes, anchors, variances)
