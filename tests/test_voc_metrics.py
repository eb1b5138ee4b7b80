"""train_examples/voc_metrics.py: VOC's AP at IoU 0.5, 11-point and area forms.

Checked two ways: small cases worked out by hand with exact fractions (in the comments), and
random cases against a second implementation written here plainly after the published VOC
devkit algorithm (py-faster-rcnn's `voc_eval`/`voc_ap`: every detection of a class sorted by
score across all images, each looked up in its image's ground truth, loops and lists only).
"""

import os
import random
import sys
from fractions import Fraction

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                'train_examples'))

import voc_metrics  # noqa: E402

# --- The second implementation: the devkit's algorithm, plainly --------------------------------


def devkit_iou(a, b):
    """IoU of two (ymin, xmin, ymax, xmax) boxes, in normalised coordinates (no "+ 1")."""
    height = min(a[2], b[2]) - max(a[0], b[0])
    width = min(a[3], b[3]) - max(a[1], b[1])
    if height <= 0 or width <= 0:
        return 0.0
    intersection = height * width
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - intersection
    return intersection / union


def devkit_eval(detections, ground_truth, label, threshold=0.5, use_difficult=False):
    """(AP 11-point, AP area) of `label`, as VOC's voc_eval computes them.

    detections: [(image, label, score, box)]; ground_truth: {image: [(label, box, difficult)]}.
    """
    records = {}
    num_positives = 0
    for image, objects in ground_truth.items():
        mine = [(box, bool(difficult) and not use_difficult)
                for object_label, box, difficult in objects if object_label == label]
        records[image] = {'boxes': [box for box, _ in mine],
                          'difficult': [flag for _, flag in mine],
                          'det': [False] * len(mine)}
        num_positives += sum(1 for _, flag in mine if not flag)
    mine = [d for d in detections if d[1] == label]
    mine.sort(key=lambda d: -d[2])
    tp, fp = [0] * len(mine), [0] * len(mine)
    for d, (image, _, _, box) in enumerate(mine):
        record = records.get(image, {'boxes': [], 'difficult': [], 'det': []})
        best, best_index = -1.0, -1
        for index, gt_box in enumerate(record['boxes']):
            overlap = devkit_iou(box, gt_box)
            if overlap > best:
                best, best_index = overlap, index
        if best > threshold:
            if not record['difficult'][best_index]:
                if not record['det'][best_index]:
                    tp[d] = 1
                    record['det'][best_index] = True
                else:
                    fp[d] = 1
        else:
            fp[d] = 1
    recall, precision, cum_tp, cum_fp = [], [], 0, 0
    for d in range(len(mine)):
        cum_tp += tp[d]
        cum_fp += fp[d]
        if tp[d] or fp[d]:
            recall.append(cum_tp / num_positives)
            precision.append(cum_tp / (cum_tp + cum_fp))
    return devkit_ap(recall, precision, True), devkit_ap(recall, precision, False)


def devkit_ap(recall, precision, use_07_metric):
    if use_07_metric:
        ap = 0.0
        for k in range(11):
            t = k / 10
            reached = [p for r, p in zip(recall, precision) if r >= t]
            ap += (max(reached) if reached else 0.0) / 11
        return ap
    mrec = [0.0] + list(recall) + [1.0]
    mpre = [0.0] + list(precision) + [0.0]
    for i in range(len(mpre) - 2, -1, -1):
        mpre[i] = max(mpre[i], mpre[i + 1])
    return sum((mrec[i + 1] - mrec[i]) * mpre[i + 1] for i in range(len(mrec) - 1)
               if mrec[i + 1] != mrec[i])


def metric_of(detections, ground_truth, labels, **kwargs):
    """The results of voc_metrics.VocDetectionMetric over the same input."""
    metric = voc_metrics.VocDetectionMetric(labels, **kwargs)
    for image, objects in ground_truth.items():
        mine = [d for d in detections if d[0] == image]
        metric.add_image([d[1] for d in mine], [d[2] for d in mine], [d[3] for d in mine],
                         [o[0] for o in objects], [o[1] for o in objects],
                         [o[2] for o in objects])
    return metric.results({})


# --- Hand-computed cases ------------------------------------------------------------------------

def box(y, x, size=0.2):
    return (y, x, y + size, x + size)


def test_iou_of_boxes_by_hand():
    a, b = (0.0, 0.0, 0.5, 0.5), (0.25, 0.25, 0.75, 0.75)
    # intersection 0.25 * 0.25, union 2 * 0.25 - 0.0625
    np.testing.assert_allclose(voc_metrics.iou_matrix([a, b], [b, (0.6, 0.6, 0.7, 0.7)]),
                               [[0.0625 / 0.4375, 0.0], [1.0, 0.01 / 0.25]])
    assert voc_metrics.iou_matrix(np.zeros((0, 4)), [a]).shape == (0, 1)


def test_matching_tp_duplicate_difficult_and_threshold():
    gt = [box(0.0, 0.0), (0.5, 0.5, 0.75, 0.75), (0.0, 0.5, 0.4, 0.9)]
    difficult = [0, 0, 1]
    detections = [(0.9, box(0.0, 0.0)),          # TP: object 0
                  (0.8, box(0.01, 0.0)),         # IoU 0.038 / 0.042 with object 0: a duplicate
                  (0.7, (0.0, 0.5, 0.4, 0.8)),   # IoU 0.3 / 0.4 = 0.75 with the difficult one
                  (0.6, (0.0, 0.5, 0.4, 0.6)),   # IoU 0.1 / 0.4 = 0.25, best is difficult: FP
                  (0.5, (0.5, 0.5, 0.625, 0.75)),  # IoU exactly 0.5 with object 1: not above
                  (0.4, box(0.8, 0.0))]          # overlaps nothing
    scores = [score for score, _ in detections]
    tp, fp = voc_metrics.match_detections(scores, [b for _, b in detections], gt, difficult)
    assert tp.tolist() == [True, False, False, False, False, False]
    assert fp.tolist() == [False, True, False, True, True, True]
    # Order is by score, not as given: the lower-scored copy of a box is the duplicate.
    tp, fp = voc_metrics.match_detections([0.1, 0.9], [box(0.0, 0.0)] * 2, gt[:1], [0])
    assert tp.tolist() == [False, True] and fp.tolist() == [True, False]


def test_average_precision_by_hand_with_exact_fractions():
    """Ten objects; detections in score order T T F T F F T, then nothing.

    recall    1/10 2/10 2/10 3/10 3/10 3/10 4/10
    precision 1    1    2/3  3/4  3/5  1/2  4/7
    11-point: recall 0, 0.1, 0.2 -> 1; 0.3 -> 3/4 (the best at 3/10 or above); 0.4 -> 4/7;
      0.5 ... 1 -> 0. AP = (3 + 3/4 + 4/7) / 11.  (Reached at exactly 3/10, which the
      devkit's np.arange(0, 1.1, 0.1) misses by its 0.30000000000000004.)
    area: envelope 1 up to 2/10, 3/4 to 3/10, 4/7 to 4/10:
      AP = 2/10 * 1 + 1/10 * 3/4 + 1/10 * 4/7.
    """
    sequence = [1, 1, 0, 1, 0, 0, 1]
    tp = np.array(sequence, bool)
    scores = np.linspace(1.0, 0.4, len(sequence))
    precision, recall = voc_metrics.precision_recall(scores, tp, ~tp, num_objects=10)
    expected_07 = (3 + Fraction(3, 4) + Fraction(4, 7)) / 11
    expected_area = Fraction(2, 10) + Fraction(1, 10) * Fraction(3, 4) + \
        Fraction(1, 10) * Fraction(4, 7)
    assert voc_metrics.average_precision_voc07(precision, recall) == pytest.approx(
        float(expected_07), abs=1e-12)
    assert voc_metrics.average_precision_area(precision, recall) == pytest.approx(
        float(expected_area), abs=1e-12)


def test_perfect_and_empty_detections():
    precision, recall = voc_metrics.precision_recall(np.array([0.9, 0.8]),
                                                     np.array([True, True]),
                                                     np.array([False, False]), 2)
    assert voc_metrics.average_precision_voc07(precision, recall) == pytest.approx(1.0)
    assert voc_metrics.average_precision_area(precision, recall) == pytest.approx(1.0)
    precision, recall = voc_metrics.precision_recall(np.zeros(0), np.zeros(0, bool),
                                                     np.zeros(0, bool), 3)
    assert voc_metrics.average_precision_voc07(precision, recall) == 0.0
    assert voc_metrics.average_precision_area(precision, recall) == 0.0


def test_difficult_objects_are_not_counted_unless_asked():
    """One image: a found ordinary object, a found difficult one, a missed ordinary one."""
    ground_truth = {'a': [(1, box(0.0, 0.0), 0), (1, box(0.5, 0.0), 1), (1, box(0.0, 0.5), 0)]}
    detections = [('a', 1, 0.9, box(0.0, 0.0)), ('a', 1, 0.8, box(0.5, 0.0))]
    ignored, = metric_of(detections, ground_truth, [1])
    # Two objects to find, one found at precision 1: recall 1/2.
    assert (ignored.num_objects, ignored.num_detections) == (2, 2)
    assert ignored.ap_area == pytest.approx(0.5)
    assert ignored.ap_voc07 == pytest.approx(6 / 11)     # recall 0 ... 0.5
    counted, = metric_of(detections, ground_truth, [1], use_difficult=True)
    assert counted.num_objects == 3
    assert counted.ap_area == pytest.approx(2 / 3)


def test_a_class_without_objects_has_no_ap_and_is_left_out_of_the_mean():
    ground_truth = {'a': [(1, box(0.0, 0.0), 0)], 'b': [(1, box(0.3, 0.3), 0)]}
    detections = [('a', 1, 0.9, box(0.0, 0.0)), ('b', 2, 0.5, box(0.3, 0.3))]
    results = metric_of(detections, ground_truth, [1, 2, 3])
    assert [(r.label, r.num_objects, r.num_detections) for r in results] == [
        (1, 2, 1), (2, 0, 1), (3, 0, 0)]
    assert results[0].ap_area == pytest.approx(0.5)
    assert results[1].ap_area is None and results[2].ap_voc07 is None
    means = voc_metrics.mean_average_precision(results)
    assert means == {'voc07': pytest.approx(6 / 11), 'area': pytest.approx(0.5)}
    table = voc_metrics.format_table(
        voc_metrics.VocDetectionMetric([1]).results({}) + results[:1])
    assert 'n/a' in table and '50.00' in table and 'left out: 1' in table


# --- Against the devkit's algorithm --------------------------------------------------------------

def random_case(rng, num_images, labels):
    """Ground truth of random boxes, and detections: noisy copies of most objects (some
    twice), plus random boxes, all with distinct random scores."""
    ground_truth, detections = {}, []
    for image in range(num_images):
        objects = []
        for _ in range(rng.randint(0, 5)):
            y, x = rng.uniform(0, 0.7), rng.uniform(0, 0.7)
            size = rng.uniform(0.1, 0.3)
            objects.append((rng.choice(labels), (y, x, y + size, x + size),
                            int(rng.random() < 0.2)))
        ground_truth[image] = objects
        for label, (y0, x0, y1, x1), _ in objects:
            for _ in range(rng.choice([0, 1, 1, 2])):
                jitter = [rng.gauss(0, 0.04) for _ in range(4)]
                detections.append((image, label, rng.random(),
                                   (y0 + jitter[0], x0 + jitter[1], y1 + jitter[2],
                                    x1 + jitter[3])))
        for _ in range(rng.randint(0, 3)):
            y, x = rng.uniform(0, 0.8), rng.uniform(0, 0.8)
            detections.append((image, rng.choice(labels), rng.random(),
                               (y, x, y + 0.2, x + 0.2)))
    return detections, ground_truth


@pytest.mark.parametrize('seed', range(12))
@pytest.mark.parametrize('use_difficult', [False, True])
def test_agrees_with_the_devkit_algorithm(seed, use_difficult):
    rng = random.Random(seed)
    labels = [1, 2, 3]
    detections, ground_truth = random_case(rng, num_images=rng.randint(1, 25), labels=labels)
    results = metric_of(detections, ground_truth, labels, use_difficult=use_difficult)
    for result in results:
        if not result.num_objects:
            continue
        expected_07, expected_area = devkit_eval(detections, ground_truth, result.label,
                                                 use_difficult=use_difficult)
        assert result.ap_voc07 == pytest.approx(expected_07, abs=1e-12), result
        assert result.ap_area == pytest.approx(expected_area, abs=1e-12), result
    assert sum(r.num_detections for r in results) == len(detections)


def test_bad_threshold_is_refused():
    with pytest.raises(ValueError, match='iou_threshold'):
        voc_metrics.VocDetectionMetric([1], iou_threshold=1.5)
