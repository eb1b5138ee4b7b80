"""A record's image and annotations, recognised by their feature keys (no TensorFlow).

`read_annotations(features, where)` takes a parsed Example (`example_schema.parse_example`)
and returns what `slimdata show` draws: the encoded image, a class label, boxes, a
segmentation map. It reads the layouts of slimdata's converters and of the scripts they
replace, told apart by their keys alone:

=====================================  =========================================================
keys                                   written by
=====================================  =========================================================
``image/encoded`` ``image/format``     every layout (``image/format`` b'raw' needs
                                       ``image/height``, ``image/width``, optional
                                       ``image/channels``)
``image/class/label`` (+ ``/text``)    models/research/slim classification (MNIST, CIFAR,
                                       flowers, ImageNet), slimdata's image-folder and MNIST
``image/object/bbox/{ymin,xmin,        SSD-Tensorflow's Pascal VOC (= slimdata's VOC layout),
ymax,xmax}`` ``.../bbox/label``        slim's ImageNet (the boxes' label is the image's class)
``.../bbox/label_text``
``.../bbox/difficult``
``image/object/class/label``           the TF Object Detection API (``create_pascal_tf_record``
``image/object/class/text``            and its other dataset tools), with the same bbox keys
``image/object/difficult``
``image/segmentation/class/encoded``   deeplab's ``build_voc2012_data`` etc. (= slimdata's
                                       segmentation layout): a PNG of class indices
=====================================  =========================================================

Box coordinates are normalised to [0, 1] of the image's height and width, as every one of
these writers stores them. A key that holds the wrong kind of list, box lists of unequal
lengths, or a record without ``image/encoded`` are `AnnotationError`s naming the record and
the key.
"""

import dataclasses
import math
from typing import Any, Mapping, Optional, Sequence, Tuple

IMAGE_KEY = 'image/encoded'
FORMAT_KEY = 'image/format'
CLASS_LABEL_KEY = 'image/class/label'
CLASS_TEXT_KEY = 'image/class/text'
SEGMENTATION_KEY = 'image/segmentation/class/encoded'
BOX_COORDINATE_KEYS = tuple(f'image/object/bbox/{name}' for name in ('ymin', 'xmin', 'ymax',
                                                                        'xmax'))
# Where each layout keeps the per-box label, its text and the difficult flag: slimdata /
# SSD-Tensorflow / slim ImageNet first, the Object Detection API second.
BOX_LABEL_KEYS = ('image/object/bbox/label', 'image/object/class/label')
BOX_TEXT_KEYS = ('image/object/bbox/label_text', 'image/object/class/text')
BOX_DIFFICULT_KEYS = ('image/object/bbox/difficult', 'image/object/difficult')

Features = Mapping[str, Tuple[Optional[str], Sequence[Any]]]


class AnnotationError(ValueError):
    """A record cannot be shown: the message names the record and the feature key."""


@dataclasses.dataclass(frozen=True)
class Box:
    """One object's box, as the record stores it.

    Attributes:
      ymin, xmin, ymax, xmax: normalised coordinates (fractions of the height and width).
      label: the box's label id, or None if the record has none.
      text: the box's label text stored in the record, or None.
      difficult: the record marks the object difficult.
    """
    ymin: float
    xmin: float
    ymax: float
    xmax: float
    label: Optional[int] = None
    text: Optional[str] = None
    difficult: bool = False


@dataclasses.dataclass(frozen=True)
class Annotations:
    """What one record holds to be looked at.

    Attributes:
      where: the record, as errors name it (`<file>: record <i>`).
      image: the encoded image bytes (PNG, JPEG, ... or raw pixels).
      raw_shape: (height, width, channels) when the image is raw uint8 pixels, else None.
      class_label: the image's class id (classification), or None.
      class_text: the class's text stored in the record, or None.
      boxes: the objects' boxes (detection), in the record's order: the first `max_boxes`
        that `read_annotations` was asked for.
      segmentation: the encoded class-index map (segmentation), or None.
      num_boxes: how many boxes the record has (`boxes` may hold fewer).
    """
    where: str
    image: bytes
    raw_shape: Optional[Tuple[int, int, int]] = None
    class_label: Optional[int] = None
    class_text: Optional[str] = None
    boxes: Tuple[Box, ...] = ()
    segmentation: Optional[bytes] = None
    num_boxes: int = 0


def read_annotations(features: Features, where: str,
                     max_boxes: Optional[int] = None) -> Annotations:
    """Recognises a parsed Example's layout by its keys and returns its annotations.

    Args:
      features: feature key -> (list kind, values), as `example_schema.parse_example` returns.
      where: how errors name the record.
      max_boxes: the most boxes made (all are checked); None: all of them. A record of a
        million boxes then costs its lists, not a million `Box` objects.

    Raises:
      AnnotationError: no image, a key holding the wrong kind of values, or inconsistent
        box lists; the message names the record and the key.
    """
    reader = _FeatureReader(features, where)
    image = reader.single(IMAGE_KEY, 'bytes_list')
    if image is None:
        keys = ', '.join(sorted(features)) or 'none'
        raise AnnotationError(f'{where}: no image feature: expected {IMAGE_KEY!r} (one bytes '
                              f'value); the record has the keys {keys}')
    class_label = reader.single(CLASS_LABEL_KEY, 'int64_list')
    class_text = reader.single(CLASS_TEXT_KEY, 'bytes_list')
    boxes, num_boxes = _boxes(reader, max_boxes)
    return Annotations(
        where=where, image=image, raw_shape=_raw_shape(reader, len(image)),
        class_label=class_label, class_text=_text(class_text),
        boxes=boxes, segmentation=reader.single(SEGMENTATION_KEY, 'bytes_list'),
        num_boxes=num_boxes)


class _FeatureReader:
    """Typed access to a parsed Example's features, with errors naming the record and key."""

    def __init__(self, features: Features, where: str):
        self.features = features
        self.where = where

    def values(self, key: str, kind: str) -> Optional[Sequence[Any]]:
        """The values of `key` (None when absent); an error if they are not of `kind`."""
        if key not in self.features:
            return None
        found, values = self.features[key]
        if values and found != kind:
            raise AnnotationError(f'{self.where}: key {key!r} holds a {found}; expected a '
                                  f'{kind}')
        return values

    def single(self, key: str, kind: str) -> Any:
        """The one value of `key`, or None when absent or empty."""
        values = self.values(key, kind)
        if not values:
            return None
        if len(values) != 1:
            raise AnnotationError(f'{self.where}: key {key!r} holds {len(values)} values; '
                                  'expected one')
        return values[0]

    def first_of(self, keys: Sequence[str], kind: str
                 ) -> Tuple[Optional[str], Optional[Sequence[Any]]]:
        """(key, values) of the first of `keys` the record has, or (None, None)."""
        for key in keys:
            values = self.values(key, kind)
            if values is not None:
                return key, values
        return None, None


def _text(value: Optional[bytes]) -> Optional[str]:
    return None if value is None else value.decode('utf-8', errors='replace')


def _raw_shape(reader: _FeatureReader, num_bytes: int) -> Optional[Tuple[int, int, int]]:
    """(height, width, channels) of a raw-pixel image, from the record's size keys."""
    image_format = reader.single(FORMAT_KEY, 'bytes_list')
    if image_format is None or image_format.lower() != b'raw':
        return None
    height = reader.single('image/height', 'int64_list')
    width = reader.single('image/width', 'int64_list')
    if not height or not width or height < 1 or width < 1:
        raise AnnotationError(f"{reader.where}: key {FORMAT_KEY!r} is b'raw', which needs "
                              "'image/height' and 'image/width' (positive) to be shown")
    channels = reader.single('image/channels', 'int64_list') or num_bytes // (height * width)
    if channels not in (1, 3, 4) or height * width * channels != num_bytes:
        raise AnnotationError(f'{reader.where}: key {IMAGE_KEY!r} holds {num_bytes} bytes of '
                              f'raw pixels, which is not {height}x{width} (HxW) uint8 pixels '
                              'of 1, 3 or 4 channels')
    return height, width, channels


def _boxes(reader: _FeatureReader, max_boxes: Optional[int]) -> Tuple[Tuple[Box, ...], int]:
    """(the first `max_boxes` boxes, how many the record has)."""
    coordinates = {key: reader.values(key, 'float_list') or [] for key in BOX_COORDINATE_KEYS}
    num_boxes = max(len(values) for values in coordinates.values())
    if not num_boxes:
        return (), 0
    label_key, labels = reader.first_of(BOX_LABEL_KEYS, 'int64_list')
    text_key, texts = reader.first_of(BOX_TEXT_KEYS, 'bytes_list')
    difficult_key, difficult = reader.first_of(BOX_DIFFICULT_KEYS, 'int64_list')
    per_box = [*coordinates.items(), (label_key, labels), (text_key, texts),
               (difficult_key, difficult)]
    for key, values in per_box:
        if values is not None and len(values) != num_boxes:  # None: the record has no such key
            counts = ', '.join(f'{name.rsplit("/", 1)[1]} {len(values)}'
                               for name, values in coordinates.items())
            raise AnnotationError(f'{reader.where}: key {key!r} holds {len(values)} values, '
                                  f'but the record has {num_boxes} boxes ({counts})')
    for key, values in coordinates.items():
        if not all(math.isfinite(value) for value in values):
            raise AnnotationError(f'{reader.where}: key {key!r} holds a value that is not a '
                                  'finite number')
    ymin, xmin, ymax, xmax = coordinates.values()
    made = num_boxes if max_boxes is None else min(num_boxes, max_boxes)
    return tuple(
        Box(ymin[i], xmin[i], ymax[i], xmax[i],
            label=labels[i] if labels else None,
            text=_text(texts[i]) if texts else None,
            difficult=bool(difficult[i]) if difficult else False)
        for i in range(made)), num_boxes
