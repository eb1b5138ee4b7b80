"""deeplab's input road and training example (train_examples/train_deeplab.py).

Preprocessing is checked against arrays built with numpy: image and label encode their pixel
positions, so a misaligned crop or a flip of one but not the other shows. The loss and the
metric are compared with numpy computations over the non-ignored pixels; training and
evaluation run on a tiny VOC tree converted by slimdata's own converter.
"""

import os
import sys

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from slimdata.datasets import segmentation, synthetic
from slimdata.queue_session import QueueSession

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), 'train_examples'))

import deeplab_preprocessing  # noqa: E402
import train_deeplab  # noqa: E402

IGNORE = 255
REAL_FCN = train_deeplab.fcn
DRAWS = 40  # random draws per preprocessing check; P(no flip seen) = 2 ** -40


def position_image_and_label(height, width):
    """An image whose channels are (row, col, row + col) and a label row * 100 + col."""
    rows, cols = np.mgrid[0:height, 0:width]
    image = np.stack([rows, cols, rows + cols], axis=-1).astype(np.float32)
    label = (rows * 100 + cols)[..., np.newaxis].astype(np.int32)
    return image, label


def numpy_pad(image, label, height, width):
    """Bottom/right padding to at least height x width: image with 127.5, label with 255."""
    padded_height, padded_width = max(height, image.shape[0]), max(width, image.shape[1])
    padded_image = np.full((padded_height, padded_width, 3), 127.5, np.float32)
    padded_label = np.full((padded_height, padded_width, 1), IGNORE, np.int32)
    padded_image[:image.shape[0], :image.shape[1]] = image
    padded_label[:label.shape[0], :label.shape[1]] = label
    return padded_image, padded_label


def matching_windows(out_image, out_label, padded_image, padded_label):
    """Every (row offset, col offset, flipped) whose window of the padded arrays is the output."""
    crop_height, crop_width = out_label.shape[:2]
    matches = []
    for top in range(padded_label.shape[0] - crop_height + 1):
        for left in range(padded_label.shape[1] - crop_width + 1):
            window = np.s_[top:top + crop_height, left:left + crop_width]
            for flipped in (False, True):
                image, label = padded_image[window], padded_label[window]
                if flipped:
                    image, label = image[:, ::-1], label[:, ::-1]
                if np.array_equal(out_image, image) and np.array_equal(out_label, label):
                    matches.append((top, left, flipped))
    return matches


@pytest.mark.parametrize('image_size, crop_size', [
    ((5, 7), (8, 8)),     # smaller than the crop both ways: all padding, offset 0
    ((20, 5), (6, 9)),    # taller than the crop, narrower: random rows, padded columns
    ((20, 30), (6, 9)),   # larger both ways: a random window, no padding
])
def test_pad_crop_flip_keep_image_and_label_aligned(graph, image_size, crop_size):
    image, label = position_image_and_label(*image_size)
    out_image, out_label = deeplab_preprocessing.preprocess_for_train(
        tf.constant(image), tf.constant(label), *crop_size, ignore_label=IGNORE)
    assert out_image.shape.as_list() == [*crop_size, 3]
    assert out_label.shape.as_list() == [*crop_size, 1]
    padded_image, padded_label = numpy_pad(image, label, *crop_size)
    seen = set()
    with tf.compat.v1.Session() as sess:
        for _ in range(DRAWS):
            image_value, label_value = sess.run([out_image, out_label])
            matches = matching_windows(image_value, label_value, padded_image, padded_label)
            assert len(matches) == 1, matches
            seen.add(matches[0])
    assert {flipped for _, _, flipped in seen} == {False, True}
    if image_size[0] > crop_size[0]:
        assert len({top for top, _, _ in seen}) > 1


def test_padding_uses_mean_pixel_and_ignore_label(graph):
    image, label = position_image_and_label(3, 4)
    padded_image, padded_label = deeplab_preprocessing.pad_to_at_least(
        tf.constant(image), tf.constant(label), 5, 4, IGNORE)
    with tf.compat.v1.Session() as sess:
        image_value, label_value = sess.run([padded_image, padded_label])
    assert image_value.shape == (5, 4, 3) and label_value.shape == (5, 4, 1)
    np.testing.assert_array_equal(image_value[:3], image)
    np.testing.assert_array_equal(label_value[:3], label)
    assert (image_value[3:] == 127.5).all()
    assert (label_value[3:] == IGNORE).all()


def test_scaling_keeps_image_and_label_aligned(graph):
    image, label = position_image_and_label(5, 7)
    scaled_image, scaled_label = deeplab_preprocessing.scale_image_and_label(
        tf.constant(image), tf.constant(label), tf.constant(2.0))
    with tf.compat.v1.Session() as sess:
        image_value, label_value = sess.run([scaled_image, scaled_label])
    assert image_value.shape == (10, 14, 3) and label_value.shape == (10, 14, 1)
    # Corners aligned: output row i samples source row i * (5 - 1) / (10 - 1); bilinear
    # interpolation of the linear ramp gives exactly that, nearest neighbour rounds it, and
    # here every source row and column is taken twice.
    rows = np.arange(10) * 4 / 9
    cols = np.arange(14) * 6 / 13
    np.testing.assert_allclose(image_value[..., 0], np.repeat(rows[:, None], 14, 1), atol=1e-5)
    np.testing.assert_allclose(image_value[..., 1], np.repeat(cols[None, :], 10, 0), atol=1e-5)
    np.testing.assert_array_equal(label_value, np.repeat(np.repeat(label, 2, 0), 2, 1))


def test_random_scale_draws_the_steps_between_min_and_max(graph):
    stepped = deeplab_preprocessing.get_random_scale(0.5, 2.0, 0.25)
    uniform = deeplab_preprocessing.get_random_scale(0.5, 2.0, 0.0)
    fixed = deeplab_preprocessing.get_random_scale(1.5, 1.5, 0.25)
    with tf.compat.v1.Session() as sess:
        draws = [sess.run([stepped, uniform, fixed]) for _ in range(200)]
    stepped_values, uniform_values, fixed_values = (np.array(v) for v in zip(*draws))
    np.testing.assert_allclose(np.unique(stepped_values), np.arange(0.5, 2.01, 0.25))
    assert ((uniform_values >= 0.5) & (uniform_values < 2.0)).all()
    assert len(np.unique(uniform_values)) > 100
    assert (fixed_values == 1.5).all()


def test_random_scale_refuses_bad_factors():
    with pytest.raises(ValueError, match='min_scale_factor=2.0'):
        deeplab_preprocessing.get_random_scale(2.0, 0.5, 0.25)


def test_train_preprocessing_scales_then_crops_image_and_label_together(graph):
    """Scale fixed at 2, crop = the scaled size: the output is the scaled pair, maybe flipped."""
    image, label = position_image_and_label(5, 7)
    out_image, out_label = deeplab_preprocessing.preprocess_for_train(
        tf.constant(image), tf.constant(label), 10, 14, ignore_label=IGNORE,
        min_scale_factor=2.0, max_scale_factor=2.0)
    expected_label = np.repeat(np.repeat(label, 2, 0), 2, 1)
    with tf.compat.v1.Session() as sess:
        for _ in range(10):
            image_value, label_value = sess.run([out_image, out_label])
            if image_value[0, 0, 1] > image_value[0, -1, 1]:  # columns run right to left
                image_value, label_value = image_value[:, ::-1], label_value[:, ::-1]
            np.testing.assert_array_equal(label_value, expected_label)
            # Each pixel's label names the source pixel nearest to where the image sampled.
            np.testing.assert_array_less(np.abs(image_value[..., 0] - label_value[..., 0] // 100),
                                         0.5 + 1e-5)
            np.testing.assert_array_less(np.abs(image_value[..., 1] - label_value[..., 0] % 100),
                                         0.5 + 1e-5)


# ------------------------------------------------------------------------------------------
# Loss and metric


def numpy_cross_entropy(logits, labels):
    """Mean -log softmax(logits)[label] over the pixels whose label is not IGNORE."""
    logits = logits.reshape(-1, logits.shape[-1]).astype(np.float64)
    labels = labels.reshape(-1)
    kept = labels != IGNORE
    shifted = logits[kept] - logits[kept].max(axis=1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -log_softmax[np.arange(kept.sum()), labels[kept]].mean()


def test_loss_is_the_cross_entropy_of_the_pixels_not_ignored(graph):
    rng = np.random.RandomState(0)
    logits = rng.randn(2, 3, 4, 5).astype(np.float32) * 3
    labels = rng.randint(0, 5, size=(2, 3, 4, 1))
    labels[rng.rand(*labels.shape) < 0.3] = IGNORE
    assert (labels == IGNORE).any() and (labels != IGNORE).any()
    logits_input = tf.compat.v1.placeholder(tf.float32, logits.shape)
    loss = train_deeplab.segmentation_loss(logits_input, tf.constant(labels), IGNORE)
    assert tf.compat.v1.losses.get_losses() == [loss]
    # Ignored pixels' logits must not matter: make them extreme.
    wild = logits.copy()
    wild[np.broadcast_to(labels == IGNORE, logits.shape[:3] + (1,))[..., 0]] = 1e4
    with tf.compat.v1.Session() as sess:
        value = sess.run(loss, {logits_input: logits})
        wild_value = sess.run(loss, {logits_input: wild})
    np.testing.assert_allclose(value, numpy_cross_entropy(logits, labels), rtol=1e-5)
    np.testing.assert_allclose(wild_value, value, rtol=1e-5)


def test_loss_of_an_all_ignored_batch_is_zero(graph):
    loss = train_deeplab.segmentation_loss(tf.ones([1, 2, 2, 3]),
                                           tf.fill([1, 2, 2, 1], IGNORE), IGNORE)
    with tf.compat.v1.Session() as sess:
        assert sess.run(loss) == 0.0


def numpy_mean_iou(predictions, labels, num_classes, mask):
    """Mean over classes present in labels or predictions of TP / (TP + FP + FN)."""
    kept = mask.reshape(-1)
    labels, predictions = labels.reshape(-1)[kept], predictions.reshape(-1)[kept]
    ious = []
    for cls in range(num_classes):
        true_positive = np.sum((labels == cls) & (predictions == cls))
        union = np.sum((labels == cls) | (predictions == cls))
        if union:
            ious.append(true_positive / union)
    return np.mean(ious)


def run_mean_iou(predictions, labels, num_classes, valid=None):
    with tf.Graph().as_default():
        miou, update_op = train_deeplab.mean_iou(
            tf.constant(predictions), tf.constant(labels), num_classes, IGNORE,
            None if valid is None else tf.constant(valid))
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.local_variables_initializer())
            sess.run(update_op)
            return sess.run(miou)


def test_mean_iou_by_hand():
    labels = np.array([[[0, 0, 1, 1], [2, IGNORE, 1, 0]]])
    predictions = np.array([[[0, 1, 1, 1], [2, 2, 0, 0]]])
    # Kept (label, prediction) pairs: (0,0) (0,1) (1,1) (1,1) (2,2) (1,0) (0,0); class 3 is
    # absent. IoU: class 0: 2 / (2 + 1 + 1), class 1: 2 / (2 + 1 + 1), class 2: 1 / 1.
    np.testing.assert_allclose(run_mean_iou(predictions, labels, 4), (0.5 + 0.5 + 1) / 3,
                               rtol=1e-6)
    # Masking pixel (0, 1) out as well (batch padding): class 0: 2/3, class 1: 2/3, class 2: 1.
    valid = np.ones_like(labels, dtype=bool)
    valid[0, 0, 1] = False
    np.testing.assert_allclose(run_mean_iou(predictions, labels, 4, valid),
                               (2 / 3 + 2 / 3 + 1) / 3, rtol=1e-6)


def test_mean_iou_matches_numpy_on_random_maps():
    rng = np.random.RandomState(1)
    labels = rng.randint(0, 6, size=(3, 8, 9))
    labels[rng.rand(*labels.shape) < 0.2] = IGNORE
    predictions = np.where(rng.rand(*labels.shape) < 0.6, labels, rng.randint(0, 6, labels.shape))
    predictions[predictions == IGNORE] = 0
    valid = rng.rand(*labels.shape) < 0.9
    expected = numpy_mean_iou(predictions, labels, 6, valid & (labels != IGNORE))
    np.testing.assert_allclose(run_mean_iou(predictions, labels, 6, valid), expected,
                               rtol=1e-5)


# ------------------------------------------------------------------------------------------
# Training and evaluation on converted records

NUM_CLASSES = 6
#: Two image sizes in the val split, so evaluation batches need dynamic padding.
TRAIN_SIZE = (48, 40)    # (width, height), as make_voc_seg_tree takes it
OTHER_SIZE = (36, 52)


def merge_val_images(voc_folder, other_folder, prefix):
    """Adds `other_folder`'s val images (ids prefixed) to `voc_folder`'s val list."""
    list_path = os.path.join('ImageSets', 'Segmentation', 'val.txt')
    with open(os.path.join(other_folder, list_path)) as f:
        ids = f.read().split()
    for image_id in ids:
        for folder, extension in (('JPEGImages', '.jpg'), ('SegmentationClass', '.png')):
            os.rename(os.path.join(other_folder, folder, image_id + extension),
                      os.path.join(voc_folder, folder, prefix + image_id + extension))
    with open(os.path.join(voc_folder, list_path), 'a') as f:
        f.write(''.join(f'{prefix}{image_id}\n' for image_id in ids))
    return len(ids)


@pytest.fixture(scope='module')
def records(tmp_path_factory):
    """(records folder, VOC folder, val size): 9 train and 3 + 2 val images of two sizes,
    6 classes."""
    base = tmp_path_factory.mktemp('deeplab')
    voc = synthetic.make_voc_seg_tree(str(base / 'a'), num_images=12, image_size=TRAIN_SIZE,
                                      num_classes=NUM_CLASSES, max_objects=2)
    other = synthetic.make_voc_seg_tree(str(base / 'b'), num_images=2, image_size=OTHER_SIZE,
                                        num_classes=NUM_CLASSES, max_objects=2,
                                        splits={'val': 1.0}, seed=1)
    num_val = 3 + merge_val_images(voc, other, 'b')
    for split in ('train', 'val'):
        segmentation.convert_voc_seg(voc, str(base / 'records'), split, num_classes=NUM_CLASSES,
                                     num_shards=2)
    return str(base / 'records'), voc, num_val


@pytest.fixture(scope='module')
def trained(records, tmp_path_factory):
    """(flags, train result) of a 4-step training run on `records`."""
    argv = ['--dataset_dir', records[0],
            '--train_logdir', str(tmp_path_factory.mktemp('train_logdir')),
            '--training_number_of_steps', '4', '--train_batch_size', '2',
            '--train_crop_size', '33', '41']
    return argv, train_deeplab.train(argv)


def test_short_training_run_gives_finite_losses(trained):
    argv, result = trained
    assert result['steps'] == 4 and len(result['losses']) == 4
    assert np.isfinite(result['losses']).all()
    # An untrained net is close to uniform over the classes: loss near ln(6) (plus the
    # small weight decay), which shows the 6 classes of dataset_info.json reached the net.
    assert 0.5 * np.log(NUM_CLASSES) < result['losses'][0] < 2 * np.log(NUM_CLASSES)
    assert result['loss_start'] == result['losses'][0]  # a quarter of 4 steps: 1
    assert result['loss_end'] == result['losses'][-1]
    assert result['examples_per_sec'] > 0
    logdir = argv[argv.index('--train_logdir') + 1]
    assert tf.train.latest_checkpoint(logdir) == result['checkpoint']
    assert result['checkpoint'].endswith('model.ckpt-4')


def test_eval_reads_the_split_once_and_ends_cleanly(trained, records):
    argv, _ = trained
    # 5 images in batches of 2: the last batch holds one.
    result = train_deeplab.evaluate(argv + ['--eval_batch_size', '2'])
    assert result['num_examples'] == result['num_samples'] == records[2]
    assert 0.0 <= result['miou'] <= 1.0


def drain_once(fetches):
    """Runs `fetches` until the one epoch of the graph's input ends; returns every value."""
    values = []
    with QueueSession() as session:
        while True:
            values.append(session.run(fetches))
    return values


def test_eval_batches_pad_to_the_largest_image_and_mark_the_padding(records, graph):
    args = train_deeplab.parse_args(['--dataset_dir', records[0], '--train_logdir', 'unused',
                                     '--eval_batch_size', str(records[2])])
    dataset, images, labels, valid = train_deeplab.eval_inputs(args)
    assert dataset.num_classes == NUM_CLASSES and dataset.ignore_label == IGNORE
    (images_value, labels_value, valid_value), = drain_once([images, labels, valid])
    width, height = max(TRAIN_SIZE[0], OTHER_SIZE[0]), max(TRAIN_SIZE[1], OTHER_SIZE[1])
    assert images_value.shape == (records[2], height, width, 3)
    sizes = []
    for image, label, mask in zip(images_value, labels_value, valid_value):
        rows, cols = np.nonzero(mask[..., 0])
        size = (cols.max() + 1, rows.max() + 1)
        sizes.append(size)
        # The real pixels are the top-left rectangle of the image's size; the rest is padding.
        assert mask[:size[1], :size[0]].all() and mask.sum() == size[0] * size[1]
        assert (image[~mask[..., 0]] == 0).all() and (label[~mask] == 0).all()
        assert set(np.unique(label[mask])) <= set(range(NUM_CLASSES)) | {IGNORE}
    assert sorted(sizes) == sorted([OTHER_SIZE] * 2 + [TRAIN_SIZE] * 3)


def all_background_miou(voc_folder, split):
    """mIoU of predicting class 0 everywhere: IoU(0) / the number of classes in the labels."""
    with open(os.path.join(voc_folder, 'ImageSets', 'Segmentation', f'{split}.txt')) as f:
        labels = np.concatenate([
            np.asarray(Image.open(os.path.join(voc_folder, 'SegmentationClass',
                                               f'{image_id}.png'))).ravel()
            for image_id in f.read().split()])
    labels = labels[labels != IGNORE]
    return np.mean(labels == 0) / len(np.unique(labels))


def background_net(images, num_classes, weight_decay=0.0):
    """The real net (so the checkpoint restores), with logits that say class 0 everywhere."""
    logits = REAL_FCN(images, num_classes, weight_decay)
    return tf.concat([tf.fill(tf.shape(logits[..., :1]), 1e4), logits[..., 1:]], axis=-1)


@pytest.mark.parametrize('eval_batch_size', [1, 5])
def test_eval_miou_counts_exactly_the_real_labelled_pixels(trained, records, monkeypatch,
                                                           eval_batch_size):
    """A net that predicts background everywhere: the mIoU is known from the label PNGs, and
    batch padding (label 0 = background) would raise it if it were counted."""
    monkeypatch.setattr(train_deeplab, 'fcn', background_net)
    argv, _ = trained
    result = train_deeplab.evaluate(argv + ['--eval_batch_size', str(eval_batch_size)])
    assert result['num_examples'] == result['num_samples'] == records[2]
    np.testing.assert_allclose(result['miou'], all_background_miou(records[1], 'val'),
                               rtol=1e-6)


def test_eval_without_a_checkpoint_names_the_folder(records, tmp_path):
    with pytest.raises(ValueError, match=f'no checkpoint in {tmp_path}'):
        train_deeplab.evaluate(['--dataset_dir', records[0], '--train_logdir', str(tmp_path)])


@pytest.mark.slow
def test_loss_falls_and_eval_beats_all_background(tmp_path):
    voc = synthetic.make_voc_seg_tree(str(tmp_path / 'voc'), num_images=48,
                                      image_size=(160, 120), num_classes=NUM_CLASSES)
    for split in ('train', 'val'):
        segmentation.convert_voc_seg(voc, str(tmp_path / 'records'), split,
                                     num_classes=NUM_CLASSES, num_shards=2)
    argv = ['--dataset_dir', str(tmp_path / 'records'), '--train_logdir', str(tmp_path / 'log'),
            '--training_number_of_steps', '100']
    trained_result = train_deeplab.train(argv)
    assert trained_result['loss_end'] < 0.6 * trained_result['loss_start']
    evaluated = train_deeplab.evaluate(argv)
    assert evaluated['num_examples'] == 12
    assert evaluated['miou'] > all_background_miou(voc, 'val') + 0.05
