"""Pascal VOC's detection metric: average precision per class at IoU 0.5, in both forms.

SSD-Tensorflow's `eval_ssd_network.py` reports both, and SSD users compare them:

  * `AP_VOC07`: the 11-point interpolated AP of the VOC2007 devkit: the mean, over the recalls
    0, 0.1, ..., 1, of the highest precision reached at that recall or above (0 where the
    recall is never reached). `tf_extended.metrics.average_precision_voc07` there.
  * `AP_VOC12` (here "area"): the all-point AP of the VOC2010+ devkit: the area under the
    precision/recall curve after each precision is raised to the highest precision at any
    higher recall. `tf_extended.metrics.average_precision_voc12` there.

Detections are matched to the ground truth as the VOC devkit does (`match_detections`): in
order of decreasing score, each detection takes the not yet taken ground-truth box of its
class and image of highest IoU; it is a true positive if that IoU is above the threshold
(strictly, as in SSD-Tensorflow and the devkit's Python port) and a false positive otherwise
or when that box was taken already. Objects marked difficult are ignored: they do not count
among the objects to find, and a detection whose best box is a difficult one (above the
threshold) is neither a true nor a false positive.

Boxes are (ymin, xmin, ymax, xmax) normalised to [0, 1], the records' and SSD-Tensorflow's
coordinates, so areas are plain products (the devkit's "+ 1" of pixel coordinates does not
apply). numpy only: the evaluation gathers each image's detections from the graph and scores
them here, once the split has been read.
"""

from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import numpy as np

#: The recalls of the VOC2007 11-point AP: k / 10 exactly. (The devkit's Python port and
#: SSD-Tensorflow step by 0.1 with np.arange, whose 0.30000000000000004 is not reached by a
#: recall of 3 objects out of 10: those recalls count here, as the devkit means them to.)
VOC07_RECALLS = np.arange(11) / 10


def iou_matrix(boxes_a: np.ndarray, boxes_b: np.ndarray) -> np.ndarray:
    """Intersection over union of every box of `boxes_a` [N, 4] with every one of `boxes_b`
    [M, 4] (corners): [N, M]; 0 where the union is empty."""
    a = np.asarray(boxes_a, np.float64).reshape(-1, 1, 4)
    b = np.asarray(boxes_b, np.float64).reshape(1, -1, 4)
    height = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
    width = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None)
    intersection = height * width
    union = _area(a) + _area(b) - intersection
    with np.errstate(invalid='ignore', divide='ignore'):
        return np.where(union > 0, intersection / union, 0.0)


def _area(boxes: np.ndarray) -> np.ndarray:
    return (np.clip(boxes[..., 2] - boxes[..., 0], 0, None)
            * np.clip(boxes[..., 3] - boxes[..., 1], 0, None))


def match_detections(scores: np.ndarray, boxes: np.ndarray, gt_boxes: np.ndarray,
                     gt_difficult: np.ndarray, iou_threshold: float = 0.5
                     ) -> Tuple[np.ndarray, np.ndarray]:
    """Marks one image's detections of one class as true or false positives (see the module
    docstring).

    Args:
      scores: [N] the detections' scores.
      boxes: [N, 4] their boxes.
      gt_boxes: [G, 4] the image's ground-truth boxes of the class.
      gt_difficult: [G] their difficult flags (all 0 to count difficult objects too).
      iou_threshold: a detection matches a box of IoU above this.

    Returns:
      (true_positive bool [N], false_positive bool [N]), in the order of `scores`; both are
      False for a detection of a difficult object.
    """
    num_detections = len(scores)
    true_positive = np.zeros(num_detections, bool)
    false_positive = np.zeros(num_detections, bool)
    if len(gt_boxes) == 0:
        false_positive[:] = True
        return true_positive, false_positive
    overlaps = iou_matrix(boxes, gt_boxes)
    taken = np.zeros(len(gt_boxes), bool)
    difficult = np.asarray(gt_difficult, bool)
    # Highest score first; a stable sort keeps the given order among equal scores.
    for index in np.argsort(-np.asarray(scores, np.float64), kind='stable'):
        best = int(np.argmax(overlaps[index]))
        if overlaps[index, best] <= iou_threshold:
            false_positive[index] = True
        elif difficult[best]:
            continue
        elif taken[best]:
            false_positive[index] = True
        else:
            true_positive[index] = taken[best] = True
    return true_positive, false_positive


def precision_recall(scores: np.ndarray, true_positive: np.ndarray,
                     false_positive: np.ndarray, num_objects: int
                     ) -> Tuple[np.ndarray, np.ndarray]:
    """The precision and recall after each detection, in order of decreasing score.

    Detections that are neither true nor false positives (of difficult objects) are left
    out. `num_objects` is the number of (not difficult) objects to find, at least 1.
    """
    counted = np.logical_or(true_positive, false_positive)
    order = np.argsort(-np.asarray(scores, np.float64)[counted], kind='stable')
    true_positives = np.cumsum(np.asarray(true_positive)[counted][order])
    false_positives = np.cumsum(np.asarray(false_positive)[counted][order])
    recall = true_positives / num_objects
    precision = true_positives / np.maximum(true_positives + false_positives, 1)
    return precision, recall


def average_precision_voc07(precision: np.ndarray, recall: np.ndarray) -> float:
    """The VOC2007 11-point interpolated AP (see the module docstring)."""
    # The highest precision at each recall or above: a running maximum from the end.
    best_from_here = np.maximum.accumulate(np.append(precision, 0.0)[::-1])[::-1]
    first_reaching = np.searchsorted(recall, VOC07_RECALLS, side='left')
    # recall is non-decreasing, so the first detection reaching a recall starts the suffix
    # of every detection reaching it; one past the end (never reached) holds the 0.
    return float(np.mean(best_from_here[first_reaching]))


def average_precision_area(precision: np.ndarray, recall: np.ndarray) -> float:
    """The all-point AP of the VOC2010+ devkit (see the module docstring)."""
    envelope = np.maximum.accumulate(np.append(precision, 0.0)[::-1])[::-1][:-1]
    steps = np.diff(np.concatenate([[0.0], recall]))
    return float(np.sum(steps * envelope))


class ClassResult(NamedTuple):
    """The metric of one class over the evaluated images.

    Attributes:
      label: the class's label id.
      name: its name.
      num_objects: the objects to find (difficult ones not counted).
      num_detections: its detections, those of difficult objects included.
      ap_voc07: the 11-point AP, or None when the images hold no object of the class.
      ap_area: the all-point AP, likewise.
    """
    label: int
    name: str
    num_objects: int
    num_detections: int
    ap_voc07: Optional[float]
    ap_area: Optional[float]


class VocDetectionMetric:
    """Gathers detections and ground truth image by image, and gives the AP of each class.

    Args:
      labels: the label ids of the classes to score (the background, 0, is not one).
      iou_threshold: a detection matches a box of IoU above this (0.5 in VOC).
      use_difficult: count objects marked difficult as ordinary objects (SSD-Tensorflow's
        `--remove_difficult=False`); by default they are ignored, as in VOC.
    """

    def __init__(self, labels: Sequence[int], iou_threshold: float = 0.5,
                 use_difficult: bool = False):
        if not 0.0 <= iou_threshold < 1.0:
            raise ValueError(f'iou_threshold must be in [0, 1), got {iou_threshold}')
        self.labels = tuple(int(label) for label in labels)
        self.iou_threshold = iou_threshold
        self.use_difficult = use_difficult
        self.num_images = 0
        self._num_objects = dict.fromkeys(self.labels, 0)
        self._scores: Dict[int, List[np.ndarray]] = {label: [] for label in self.labels}
        self._true: Dict[int, List[np.ndarray]] = {label: [] for label in self.labels}
        self._false: Dict[int, List[np.ndarray]] = {label: [] for label in self.labels}

    def add_image(self, labels: np.ndarray, scores: np.ndarray, boxes: np.ndarray,
                  gt_labels: np.ndarray, gt_boxes: np.ndarray,
                  gt_difficult: Optional[np.ndarray] = None) -> None:
        """Adds one image's detections (`labels` [N], `scores` [N], `boxes` [N, 4]) and its
        ground truth (`gt_labels` [G], `gt_boxes` [G, 4], `gt_difficult` [G], None for
        none difficult). Detections and objects of labels not scored are ignored."""
        labels, scores = np.asarray(labels), np.asarray(scores, np.float64)
        boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
        gt_labels = np.asarray(gt_labels)
        gt_boxes = np.asarray(gt_boxes, np.float64).reshape(-1, 4)
        difficult = (np.zeros(len(gt_labels), bool) if gt_difficult is None or self.use_difficult
                     else np.asarray(gt_difficult, bool))
        for label in self.labels:
            mine, gt_mine = labels == label, gt_labels == label
            self._num_objects[label] += int(np.sum(gt_mine & ~difficult))
            true_positive, false_positive = match_detections(
                scores[mine], boxes[mine], gt_boxes[gt_mine], difficult[gt_mine],
                self.iou_threshold)
            self._scores[label].append(scores[mine])
            self._true[label].append(true_positive)
            self._false[label].append(false_positive)
        self.num_images += 1

    def results(self, labels_to_names: Mapping[int, str]) -> List[ClassResult]:
        """The AP of each class, in label order; names from `labels_to_names` (else the
        label id)."""
        results = []
        for label in self.labels:
            scores = np.concatenate(self._scores[label] or [np.zeros(0)])
            num_objects = self._num_objects[label]
            ap_voc07 = ap_area = None
            if num_objects:
                precision, recall = precision_recall(
                    scores, np.concatenate(self._true[label] or [np.zeros(0, bool)]),
                    np.concatenate(self._false[label] or [np.zeros(0, bool)]), num_objects)
                ap_voc07 = average_precision_voc07(precision, recall)
                ap_area = average_precision_area(precision, recall)
            results.append(ClassResult(label, labels_to_names.get(label, str(label)),
                                       num_objects, len(scores), ap_voc07, ap_area))
        return results


def mean_average_precision(results: Sequence[ClassResult]) -> Dict[str, Optional[float]]:
    """{'voc07': mAP, 'area': mAP} over the classes that have objects to find (a class
    absent from the evaluated split has no AP, and is left out of the mean rather than
    counted as 0); None for both when no class has any."""
    scored = [result for result in results if result.num_objects]
    if not scored:
        return {'voc07': None, 'area': None}
    return {'voc07': float(np.mean([result.ap_voc07 for result in scored])),
            'area': float(np.mean([result.ap_area for result in scored]))}


def format_table(results: Sequence[ClassResult]) -> str:
    """The per-class table and the two means, as the evaluation prints them."""
    width = max([len('class')] + [len(result.name) for result in results])
    lines = [f'{"class":<{width}}  {"label":>5}  {"objects":>7}  {"detections":>10}  '
             f'{"AP VOC07":>8}  {"AP area":>8}']
    for result in results:
        lines.append(f'{result.name:<{width}}  {result.label:>5}  {result.num_objects:>7}  '
                     f'{result.num_detections:>10}  {_percent(result.ap_voc07):>8}  '
                     f'{_percent(result.ap_area):>8}')
    means = mean_average_precision(results)
    absent = [result.name for result in results if not result.num_objects]
    lines.append(f'mAP@0.5 VOC07 11-point: {_percent(means["voc07"])}   '
                 f'area (VOC2010+): {_percent(means["area"])}'
                 + (f'   (no objects, left out: {", ".join(absent)})' if absent else ''))
    return '\n'.join(lines)


def _percent(value: Optional[float]) -> str:
    return 'n/a' if value is None else f'{100 * value:.2f}'
