"""train_examples/train_ssd.py, eval_ssd.py and ssd_preprocessing.py: SSD's input pipeline,
loss, loop and evaluation.

The box transforms, anchors, matching and encoding are checked against values worked out by
hand (in the comments); the random crop against the pixels of objects painted into an image;
the training script end to end on a tiny synthetic VOC tree converted by the real converter;
training and evaluation on a dataset of the user's own classes (`detection`), the evaluation's
object counts against the source XML and its detection stage on the ground truth's own
encoding (every object found: AP 1).
"""

import math
import os
import sys

import numpy as np
import pytest

from slimdata._tf import tf
from slimdata.datasets import pascalvoc, synthetic

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                'train_examples'))

import eval_ssd  # noqa: E402
import ssd_preprocessing  # noqa: E402
import train_ssd  # noqa: E402
import voc_metrics  # noqa: E402

import detection_folders  # noqa: E402


def evaluate(fetches):
    """Runs `fetches` of the default graph once in a fresh session."""
    with tf.compat.v1.Session() as session:
        return session.run(fetches)


# --- Flip --------------------------------------------------------------------------------------

IMAGE_2X3 = np.array([[[1], [2], [3]],
                      [[4], [5], [6]]], np.float32)
BOXES = np.array([[0.1, 0.2, 0.5, 0.6],
                  [0.0, 0.0, 1.0, 0.25]], np.float32)
# (ymin, xmin, ymax, xmax) -> (ymin, 1 - xmax, ymax, 1 - xmin)
FLIPPED_BOXES = np.array([[0.1, 0.4, 0.5, 0.8],
                          [0.0, 0.75, 1.0, 1.0]], np.float32)
FLIPPED_IMAGE = np.array([[[3], [2], [1]],
                          [[6], [5], [4]]], np.float32)


def test_flip_reverses_columns_and_mirrors_boxes(graph):
    image, boxes = evaluate(ssd_preprocessing.flip_left_right(tf.constant(IMAGE_2X3),
                                                              tf.constant(BOXES)))
    np.testing.assert_array_equal(image, FLIPPED_IMAGE)
    np.testing.assert_allclose(boxes, FLIPPED_BOXES, atol=1e-6)


def test_random_flip_flips_image_and_boxes_together(graph):
    flipped = ssd_preprocessing.random_flip_left_right(tf.constant(IMAGE_2X3),
                                                       tf.constant(BOXES))
    outcomes = set()
    with tf.compat.v1.Session() as session:
        for _ in range(40):
            image, boxes = session.run(flipped)
            if np.array_equal(image, IMAGE_2X3):
                np.testing.assert_allclose(boxes, BOXES)
                outcomes.add('kept')
            else:
                np.testing.assert_array_equal(image, FLIPPED_IMAGE)
                np.testing.assert_allclose(boxes, FLIPPED_BOXES, atol=1e-6)
                outcomes.add('flipped')
    assert outcomes == {'kept', 'flipped'}  # each has probability 1/2 per run


# --- Crop --------------------------------------------------------------------------------------

def test_boxes_to_crop_frame_with_a_fixed_crop(graph):
    crop = tf.constant([0.2, 0.1, 0.6, 0.6])  # 0.4 high, 0.5 wide, origin (0.2, 0.1)
    boxes = tf.constant([[0.3, 0.2, 0.5, 0.4],     # inside the crop
                         [0.1, 0.3, 0.4, 0.7]])    # crosses its top and right edges
    result = evaluate(ssd_preprocessing.boxes_to_crop_frame(boxes, crop))
    # (0.3 - 0.2) / 0.4 = 0.25, (0.2 - 0.1) / 0.5 = 0.2, (0.5 - 0.2) / 0.4 = 0.75,
    # (0.4 - 0.1) / 0.5 = 0.6; (0.1 - 0.2) / 0.4 = -0.25, (0.7 - 0.1) / 0.5 = 1.2, ...
    np.testing.assert_allclose(result, [[0.25, 0.2, 0.75, 0.6],
                                        [-0.25, 0.4, 0.5, 1.2]], atol=1e-6)


def test_keep_boxes_inside_drops_mostly_cut_boxes_and_clips_the_rest(graph):
    labels = tf.constant([1, 2, 3, 4], tf.int64)
    boxes = tf.constant([[0.25, 0.25, 0.75, 0.75],    # inside: kept as is
                         [-0.25, 0.5, 0.5, 1.5],      # visible 0.5/0.75 x 0.5/1 = 1/3
                         [1.2, 0.1, 1.5, 0.3],        # entirely below the image
                         [0.4, 0.4, 0.4, 0.6]])       # zero height
    strict = evaluate(ssd_preprocessing.keep_boxes_inside(labels, boxes, 0.5))
    np.testing.assert_array_equal(strict[0], [1])
    np.testing.assert_allclose(strict[1], [[0.25, 0.25, 0.75, 0.75]])
    lenient = evaluate(ssd_preprocessing.keep_boxes_inside(labels, boxes, 0.3))
    np.testing.assert_array_equal(lenient[0], [1, 2])
    np.testing.assert_allclose(lenient[1], [[0.25, 0.25, 0.75, 0.75],
                                            [0.0, 0.5, 0.5, 1.0]])


def test_random_crop_boxes_follow_the_painted_objects(graph):
    """Two blocks painted into an image, each in its own channel: after every random crop
    a kept box must be the block's visible pixels in the crop, and a box is kept exactly
    when at least half of its block is visible."""
    height, width = 60, 80
    image = np.zeros((height, width, 3), np.uint8)
    blocks = {1: (0, (20, 40), (30, 60)),     # label: channel, rows [20, 40), cols [30, 60)
              2: (1, (5, 25), (4, 20))}
    for channel, (top, bottom), (left, right) in blocks.values():
        image[top:bottom, left:right, channel] = 255
    boxes = [[top / height, left / width, bottom / height, right / width]
             for _, (top, bottom), (left, right) in blocks.values()]
    crop = ssd_preprocessing.random_crop_with_boxes(
        tf.constant(image), tf.constant(list(blocks), tf.int64), tf.constant(boxes),
        min_object_covered=0.1, min_visible_fraction=0.5)
    crop_sizes = set()
    with tf.compat.v1.Session() as session:
        for _ in range(30):
            cropped, labels, crop_boxes = session.run(crop)
            crop_h, crop_w = cropped.shape[:2]
            crop_sizes.add((crop_h, crop_w))
            found = dict(zip(labels.tolist(), crop_boxes))
            for label, (channel, (top, bottom), (left, right)) in blocks.items():
                visible = cropped[..., channel] == 255
                fraction = visible.sum() / ((bottom - top) * (right - left))
                if abs(fraction - 0.5) < 1e-6:
                    continue  # on the threshold itself
                assert (label in found) == (fraction >= 0.5), (label, fraction, found)
                if label in found:
                    rows = np.flatnonzero(visible.any(axis=1))
                    cols = np.flatnonzero(visible.any(axis=0))
                    expected = [rows[0] / crop_h, cols[0] / crop_w,
                                (rows[-1] + 1) / crop_h, (cols[-1] + 1) / crop_w]
                    np.testing.assert_allclose(found[label], expected, atol=1e-5)
    assert len(crop_sizes) > 1  # the crops vary


def test_preprocess_for_train_shapes_and_range(graph):
    image = tf.constant(np.random.default_rng(0).integers(0, 256, (40, 50, 3), np.uint8))
    result = ssd_preprocessing.preprocess_for_train(
        image, tf.constant([5], tf.int64), tf.constant([[0.2, 0.2, 0.8, 0.8]]), 32)
    assert result[0].shape.as_list() == [32, 32, 3]
    out_image, labels, boxes = evaluate(result)
    assert out_image.dtype == np.float32 and -1.0 <= out_image.min() <= out_image.max() <= 1.0
    assert set(labels.tolist()) <= {5} and len(labels) == len(boxes)
    assert np.all((boxes >= 0) & (boxes <= 1))


# --- Anchors -----------------------------------------------------------------------------------

def test_make_anchors_layout():
    anchors = ssd_preprocessing.make_anchors([2], scales=[0.5, 0.8], aspect_ratios=[1.0, 2.0])
    assert anchors.shape == (2 * 2 * 3, 4)
    square, between = 0.5, math.sqrt(0.5 * 0.8)
    wide = (0.5 / math.sqrt(2), 0.5 * math.sqrt(2))          # (h, w) of ratio 2
    expected_first_location = [[0.25, 0.25, square, square],
                               [0.25, 0.25, between, between],
                               [0.25, 0.25, *wide]]
    np.testing.assert_allclose(anchors[:3], expected_first_location, rtol=1e-6)
    # then row 0 column 1, row 1 column 0, row 1 column 1
    np.testing.assert_allclose(anchors[3::3, :2], [[0.25, 0.75], [0.75, 0.25], [0.75, 0.75]])
    with pytest.raises(ValueError, match='one more entry'):
        ssd_preprocessing.make_anchors([4, 2], scales=[0.3, 0.6], aspect_ratios=[1.0])


def test_feature_map_sizes_match_the_network(graph):
    # 300 -> 150 -> 75 -> 38 -> 19 -> 10 -> 5 with 'SAME' stride-2 convolutions
    assert ssd_preprocessing.feature_map_sizes(300, train_ssd.FEATURE_STRIDES) == (19, 10, 5)
    assert ssd_preprocessing.feature_map_sizes(150, train_ssd.FEATURE_STRIDES) == (10, 5, 3)
    images = tf.compat.v1.placeholder(tf.float32, [None, 150, 150, 3])
    logits, offsets, sides = train_ssd.ssd_net(images, num_classes=21,
                                               num_anchors_per_location=4)
    assert sides == [10, 5, 3]
    anchors = ssd_preprocessing.make_anchors(sides, train_ssd.ANCHOR_SCALES,
                                             train_ssd.ASPECT_RATIOS)
    assert len(anchors) == (100 + 25 + 9) * 4
    with tf.compat.v1.Session() as session:
        session.run(tf.compat.v1.global_variables_initializer())
        logits, offsets = session.run([logits, offsets],
                                      {images: np.zeros([2, 150, 150, 3], np.float32)})
    assert logits.shape == (2, len(anchors), 21) and offsets.shape == (2, len(anchors), 4)


# --- Matching and encoding ---------------------------------------------------------------------

# Four quarter anchors and one whole-image anchor, (cy, cx, h, w).
ANCHORS = np.array([[0.25, 0.25, 0.5, 0.5],    # a0: corners (0, 0, 0.5, 0.5)
                    [0.25, 0.75, 0.5, 0.5],    # a1: (0, 0.5, 0.5, 1)
                    [0.75, 0.25, 0.5, 0.5],    # a2: (0.5, 0, 1, 0.5)
                    [0.75, 0.75, 0.5, 0.5],    # a3: (0.5, 0.5, 1, 1)
                    [0.5, 0.5, 1.0, 1.0]],     # a4: (0, 0, 1, 1)
                   np.float32)
GT_BOXES = np.array([[0.0, 0.0, 0.5, 0.6],     # g0: IoU a0 0.25/0.3 = 0.83, a1 0.05/0.5 = 0.1,
                                               #     a4 0.3
                     [0.55, 0.55, 0.75, 0.75],  # g1: IoU a3 0.04/0.25 = 0.16, a4 0.04: below
                                               #     0.5, but a3 is its best anchor
                     [0.5, 0.0, 1.0, 0.55]],   # g2: IoU a2 0.25/0.275 = 0.91, a3 0.025/0.5,
                                               #     a4 0.275
                    np.float32)
GT_LABELS = np.array([7, 3, 12], np.int64)


def test_matching_threshold_and_best_anchor_per_box(graph):
    positive, matched = evaluate(ssd_preprocessing.match_anchors(
        tf.constant(GT_BOXES), tf.constant(ANCHORS), threshold=0.5))
    np.testing.assert_array_equal(positive, [True, False, True, True, False])
    np.testing.assert_array_equal(matched[positive], [0, 2, 1])


def test_encoded_targets_by_hand_and_decoded_back(graph):
    class_targets, box_targets = ssd_preprocessing.encode_ground_truth(
        tf.constant(GT_LABELS), tf.constant(GT_BOXES), ANCHORS, threshold=0.5)
    decoded = ssd_preprocessing.decode_boxes(box_targets, ANCHORS)
    class_targets, box_targets, decoded = evaluate([class_targets, box_targets, decoded])
    np.testing.assert_array_equal(class_targets, [7, 0, 12, 3, 0])
    # a0 <- g0: centre (0.25, 0.3), size (0.5, 0.6); anchor centre (0.25, 0.25), size 0.5:
    # (0 / 0.5 / 0.1, 0.05 / 0.5 / 0.1, log(0.5 / 0.5) / 0.2, log(0.6 / 0.5) / 0.2)
    np.testing.assert_allclose(box_targets[0], [0.0, 1.0, 0.0, math.log(1.2) / 0.2],
                               atol=1e-5)
    # a3 <- g1: centre (0.65, 0.65), size 0.2; anchor centre 0.75, size 0.5
    offset = (0.65 - 0.75) / 0.5 / 0.1
    np.testing.assert_allclose(box_targets[3], [offset, offset, math.log(0.4) / 0.2,
                                                math.log(0.4) / 0.2], atol=1e-5)
    np.testing.assert_array_equal(box_targets[[1, 4]], 0.0)   # background anchors
    np.testing.assert_allclose(decoded[[0, 2, 3]], GT_BOXES[[0, 2, 1]], atol=1e-6)


def test_an_example_without_boxes_is_all_background(graph):
    class_targets, box_targets = evaluate(ssd_preprocessing.encode_ground_truth(
        tf.zeros([0], tf.int64), tf.zeros([0, 4]), ANCHORS))
    np.testing.assert_array_equal(class_targets, np.zeros(5))
    np.testing.assert_array_equal(box_targets, np.zeros((5, 4)))


# --- Loss --------------------------------------------------------------------------------------

def test_loss_counts_positives_and_the_hardest_negatives(graph):
    # One image, six anchors, three classes; anchor 0 is positive (class 2).
    logits = np.zeros((1, 6, 3), np.float32)
    logits[0, :, 0] = [0.0, 3.0, -1.0, 2.0, -2.0, 0.5]   # background logit of each anchor
    targets = np.array([[2, 0, 0, 0, 0, 0]], np.int64)

    def cross_entropy(row, label):
        return math.log(sum(math.exp(v) for v in row)) - row[label]

    losses = [cross_entropy(logits[0, i], targets[0, i]) for i in range(6)]
    # negatives by loss, highest first: anchor 4 (logit -2), 2 (-1), 5 (0.5), 3, 1
    box_targets = np.zeros((1, 6, 4), np.float32)
    box_offsets = np.zeros((1, 6, 4), np.float32)
    box_targets[0, 0] = [0.5, -2.0, 0.0, 0.0]
    box_offsets[0, 1] = [9.0, 9.0, 9.0, 9.0]             # a negative: not counted
    # smooth L1: 0.5 * 0.5**2 = 0.125 and |-2| - 0.5 = 1.5
    for ratio, hardest in ((1.0, [4]), (3.0, [4, 2, 5])):
        classification, localisation = evaluate(train_ssd.ssd_losses(
            tf.constant(logits), tf.constant(box_offsets), tf.constant(targets),
            tf.constant(box_targets), negative_ratio=ratio))
        expected = losses[0] + sum(losses[i] for i in hardest)
        assert classification == pytest.approx(expected, rel=1e-5)
        assert localisation == pytest.approx(0.125 + 1.5, rel=1e-5)


def test_loss_of_an_image_without_positives_counts_ratio_negatives(graph):
    logits = np.zeros((2, 4, 2), np.float32)
    logits[1, :, 0] = [1.0, -1.0, 0.0, 2.0]
    targets = np.array([[1, 1, 0, 0], [0, 0, 0, 0]], np.int64)
    classification, _ = evaluate(train_ssd.ssd_losses(
        tf.constant(logits), tf.zeros([2, 4, 4]), tf.constant(targets), tf.zeros([2, 4, 4]),
        negative_ratio=1.0))
    log2 = math.log(2.0)
    # image 0: two positives (log 2 each) + its two negatives (log 2 each);
    # image 1: no positives, so 1 * max(0, 1) = 1 negative, the hardest: logit -1.
    hardest = math.log(math.exp(-1.0) + 1.0) + 1.0
    assert classification == pytest.approx((4 * log2 + hardest) / 2, rel=1e-5)


# --- The script ----------------------------------------------------------------------------------

@pytest.fixture(scope='module')
def voc_records(tmp_path_factory):
    """A tiny synthetic VOC2007 'train' split, converted by the real converter."""
    root = tmp_path_factory.mktemp('ssd_voc')
    voc_folder = synthetic.make_voc_tree(str(root / 'VOCdevkit'), num_images=24,
                                         image_size=(200, 150), seed=3)
    records = str(root / 'records')
    pascalvoc.convert(voc_folder, records, '2007', 'train', num_shards=2)
    return records


def run_script(records, train_dir, steps, *extra):
    return train_ssd.main(['--dataset_dir', records, '--train_dir', str(train_dir),
                           '--max_number_of_steps', str(steps), *extra])


def test_flags_use_ssd_tensorflow_names():
    args = train_ssd.parse_args(['--dataset_dir', 'd', '--train_image_size', '200'])
    assert (args.dataset_name, args.dataset_split_name, args.image_size) == (
        'pascalvoc_2007', 'train', 200)
    with pytest.raises(SystemExit):
        train_ssd.parse_args(['--dataset_dir', 'd', '--batch_size', '0'])


def test_a_short_run_trains_and_saves_a_checkpoint(voc_records, tmp_path):
    figures = run_script(voc_records, tmp_path, 4, '--batch_size', '4', '--image_size', '96',
                         '--num_readers', '1', '--num_preprocessing_threads', '1')
    assert figures['steps'] == 4
    for key in ('loss_start', 'loss_end', 'classification_loss_end', 'localisation_loss_end',
                'examples_per_sec'):
        assert math.isfinite(figures[key]) and figures[key] > 0, (key, figures)
    assert figures['positives_per_image_start'] > 0
    assert tf.train.latest_checkpoint(str(tmp_path)) == figures['checkpoint']


def test_unknown_dataset_name_is_a_clear_error(voc_records, tmp_path):
    with pytest.raises(ValueError, match='no_such_set'):
        run_script(voc_records, tmp_path, 1, '--dataset_name', 'no_such_set')


@pytest.mark.slow
def test_loss_falls(voc_records, tmp_path):
    figures = run_script(voc_records, tmp_path, 150, '--batch_size', '8',
                         '--image_size', '160')
    assert figures['loss_end'] < 0.5 * figures['loss_start'], figures
    assert figures['localisation_loss_end'] < figures['localisation_loss_start'], figures


# --- The user's own classes: train and evaluate -------------------------------------------------

SMALL_RUN = ['--batch_size', '4', '--image_size', '96', '--num_readers', '1',
             '--num_preprocessing_threads', '1']


@pytest.fixture(scope='module')
def custom_records(tmp_path_factory):
    """(a VOC tree of three classes of the user's, its 'train' and 'val' records)."""
    root = tmp_path_factory.mktemp('ssd_custom')
    voc_folder = detection_folders.custom_voc_tree(str(root / 'VOCdevkit'), num_images=24,
                                                   image_size=(128, 96), seed=3)
    records = str(root / 'records')
    detection_folders.convert_custom(voc_folder, records, ['train', 'val'])
    return voc_folder, records


@pytest.fixture(scope='module')
def custom_checkpoint(custom_records, tmp_path_factory):
    """A few training steps on the user's classes; the train_dir."""
    train_dir = tmp_path_factory.mktemp('ssd_custom_train')
    train_ssd.main(['--dataset_name', 'detection', '--dataset_dir', custom_records[1],
                    '--train_dir', str(train_dir), '--max_number_of_steps', '3', *SMALL_RUN])
    return str(train_dir)


def evaluate_script(records, checkpoint, *extra):
    return eval_ssd.main(['--dataset_name', 'detection', '--dataset_split_name', 'val',
                          '--dataset_dir', records, '--checkpoint_path', checkpoint,
                          '--eval_image_size', '96', '--batch_size', '4', *extra])


def test_training_takes_num_classes_from_the_folder(custom_checkpoint):
    checkpoint = tf.train.latest_checkpoint(custom_checkpoint)
    shapes = dict(tf.train.list_variables(checkpoint))
    per_location = ssd_preprocessing.anchors_per_location(train_ssd.ASPECT_RATIOS)
    assert shapes['ssd_net/head1/classes/weights'][-1] == per_location * 4  # 3 + background
    assert eval_ssd.checkpoint_num_classes(checkpoint) == 4


def test_evaluation_scores_every_class_of_the_user(custom_records, custom_checkpoint):
    voc_folder, records = custom_records
    val_ids = detection_folders.split_ids(voc_folder, 'val')
    objects = [o for image_id in val_ids
               for o in detection_folders.annotations(voc_folder, image_id)]
    results = evaluate_script(records, custom_checkpoint)
    assert results['num_examples'] == len(val_ids)
    assert [(r.label, r.name, r.num_objects) for r in results['classes']] == [
        (label, name, sum(1 for o in objects if o.label == label and not o.difficult))
        for label, name in enumerate(detection_folders.NAMES, 1)]
    for result in results['classes']:
        for ap in (result.ap_voc07, result.ap_area):
            assert ap is None if not result.num_objects else 0.0 <= ap <= 1.0
    assert results['global_step'] == 3
    table = eval_ssd.format_results(results)
    for name in detection_folders.NAMES:
        assert f'\n{name} ' in table
    assert 'mAP@0.5 VOC07 11-point' in table and 'area (VOC2010+)' in table
    counted = evaluate_script(records, custom_checkpoint, '--remove_difficult=false')
    assert [r.num_objects for r in counted['classes']] == [
        sum(1 for o in objects if o.label == label) for label in (1, 2, 3)]


def test_evaluation_refuses_a_checkpoint_of_other_classes(voc_records, custom_checkpoint):
    with pytest.raises(ValueError, match=r'was trained with 4 classes \(the background '
                                         r'included\), but .* has 21'):
        eval_ssd.main(['--dataset_dir', voc_records, '--dataset_split_name', 'train',
                       '--checkpoint_path', custom_checkpoint])


def test_detections_of_the_ground_truths_own_encoding_find_every_object(graph):
    """The network's outputs replaced by the training targets of known boxes (a sure class
    logit, the encoded offsets): the detection stage must give back each box once, with its
    label, and the metric AP 1 for every class present."""
    image_size = 96
    anchors = train_ssd.model_anchors(image_size)
    gt_labels = np.array([1, 3, 3], np.int64)
    gt_boxes = np.array([[0.1, 0.1, 0.5, 0.4], [0.5, 0.55, 0.95, 0.9],
                         [0.05, 0.6, 0.35, 0.95]], np.float32)
    class_targets, box_targets = ssd_preprocessing.encode_ground_truth(
        tf.constant(gt_labels), tf.constant(gt_boxes), anchors)
    logits = 20.0 * tf.one_hot(class_targets, 4)
    args = eval_ssd.parse_args(['--dataset_dir', 'unused'])
    found = evaluate(eval_ssd.detect(logits[tf.newaxis], box_targets[tf.newaxis], anchors,
                                     args))
    valid = int(found['valid'][0])
    assert sorted(found['labels'][0, :valid].tolist()) == [1, 3, 3]
    for label, box in zip(gt_labels, gt_boxes):
        mine = found['boxes'][0, :valid][found['labels'][0, :valid] == label]
        assert np.min(np.abs(mine - box).max(axis=1)) < 1e-5
    metric = voc_metrics.VocDetectionMetric([1, 2, 3])
    metric.add_image(found['labels'][0, :valid], found['scores'][0, :valid],
                     found['boxes'][0, :valid], gt_labels, gt_boxes)
    assert [(r.ap_voc07, r.ap_area) for r in metric.results({})] == [
        (1.0, 1.0), (None, None), (1.0, 1.0)]


@pytest.mark.slow
def test_a_longer_run_detects_the_users_classes(custom_records, tmp_path):
    voc_folder, records = custom_records
    train_ssd.main(['--dataset_name', 'detection', '--dataset_dir', records, '--train_dir',
                    str(tmp_path), '--max_number_of_steps', '300', '--batch_size', '8',
                    '--image_size', '128', '--seed', '1'])
    results = evaluate_script(records, str(tmp_path), '--eval_image_size', '128')
    assert results['map_area'] > 0.3, eval_ssd.format_results(results)
