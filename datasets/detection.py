"""Object detection records of the user's own classes: the core every detection format uses.

A format module (`pascalvoc`, and the COCO and YOLO ones) reads its annotations into
`DetectionObject`s (boxes normalised to the image's real size), and `make_record` turns an
image and its objects into one record of either layout:

  * `'ssd'`: SSD-Tensorflow's layout (`SSD_FEATURES`), the default: labels 1..N in the order
    of the user's classes (or a label map's ids), 0 the background 'none'.
  * `'od-api'`: the keys the Object Detection API's `create_pascal_tf_record.py` and
    `create_coco_tf_record.py` write (`OD_API_FEATURES`), with `label_map.pbtxt` beside the
    shards (`write_detection`).

Classes are the user's (`Classes.from_spec`: a comma list, a text file of names, an OD API
`label_map.pbtxt` whose ids are kept, or 'auto': the sorted names the annotations hold). An
object of a class not among them is an error naming where it is and `--classes` as the fix,
or with `on_unknown_class='skip'` is dropped and counted.

Boxes are checked by `check_box` (`on_bad_box`: 'clip', 'skip' or 'error'): a box crossing
the image edge is clipped to [0, 1] or its object dropped; a box entirely outside the image,
or inverted, is dropped (or stops the conversion with 'error'). Every clipped box, dropped
object and skipped class is a note in the writer's summary, and the records' objects per
class and images without objects are counted there.

Like every converter module, this one never imports TensorFlow (records are serialized by
`slimdata.records.example.serialize_example`).
"""

import collections
import dataclasses
import hashlib
import os
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from slimdata.datasets import convert_utils
from slimdata.records import dataset_info, fs, images, label_map
from slimdata.records.example import serialize_example
from slimdata.records.writer import EncodedExample, SplitSource, WriteSummary, write_dataset

LAYOUTS = ('ssd', 'od-api')
ON_UNKNOWN_CLASS = ('error', 'skip')
BAD_BOX_POLICIES = ('clip', 'skip', 'error')
#: The name of label 0, the background, in SSD-Tensorflow's labels.
BACKGROUND = 'none'
#: The OD API layout's label map, written beside the shards.
LABEL_MAP_FILENAME = 'label_map.pbtxt'

#: A box normalised to the image: (ymin, xmin, ymax, xmax), each in [0, 1] once checked.
Box = Tuple[float, float, float, float]

_BOX_FIELDS = ('ymin', 'xmin', 'ymax', 'xmax')
_BBOX_PREFIX = 'image/object/bbox/'
_OBJECT_PREFIX = 'image/object/'

#: SSD-Tensorflow's `keys_to_features` plus `label_text`, which its converter wrote too.
SSD_FEATURES = {
    'image/encoded': dataset_info.fixed_len([], 'string', ''),
    'image/format': dataset_info.fixed_len([], 'string', 'jpeg'),
    'image/height': dataset_info.fixed_len([1], 'int64'),
    'image/width': dataset_info.fixed_len([1], 'int64'),
    'image/channels': dataset_info.fixed_len([1], 'int64'),
    'image/shape': dataset_info.fixed_len([3], 'int64'),
    **{_BBOX_PREFIX + field: dataset_info.var_len('float32') for field in _BOX_FIELDS},
    _BBOX_PREFIX + 'label': dataset_info.var_len('int64'),
    _BBOX_PREFIX + 'label_text': dataset_info.var_len('string'),
    _BBOX_PREFIX + 'difficult': dataset_info.var_len('int64'),
    _BBOX_PREFIX + 'truncated': dataset_info.var_len('int64'),
}

#: The keys (and the specs of the OD API's TfExampleDecoder for them) that the OD API's
#: create_pascal_tf_record.py writes; create_coco_tf_record.py writes the same keys but
#: difficult, truncated and view.
OD_API_FEATURES = {
    'image/encoded': dataset_info.fixed_len([], 'string', ''),
    'image/format': dataset_info.fixed_len([], 'string', 'jpeg'),
    'image/filename': dataset_info.fixed_len([], 'string', ''),
    'image/source_id': dataset_info.fixed_len([], 'string', ''),
    'image/key/sha256': dataset_info.fixed_len([], 'string', ''),
    'image/height': dataset_info.fixed_len([], 'int64', 1),
    'image/width': dataset_info.fixed_len([], 'int64', 1),
    **{_BBOX_PREFIX + field: dataset_info.var_len('float32') for field in _BOX_FIELDS},
    _OBJECT_PREFIX + 'class/text': dataset_info.var_len('string'),
    _OBJECT_PREFIX + 'class/label': dataset_info.var_len('int64'),
    _OBJECT_PREFIX + 'difficult': dataset_info.var_len('int64'),
    _OBJECT_PREFIX + 'truncated': dataset_info.var_len('int64'),
    _OBJECT_PREFIX + 'view': dataset_info.var_len('string'),
}

FEATURES_OF_LAYOUT = {'ssd': SSD_FEATURES, 'od-api': OD_API_FEATURES}


class DetectionObject(NamedTuple):
    """One object as a source format gives it, before any check.

    Attributes:
      name: the class name as in the source.
      box: (ymin, xmin, ymax, xmax) normalised to the image's real size (from its header),
        unchecked.
      difficult, truncated: the source's 0/1 flags (0 where it has none).
      where: where the object is, for messages: 'a.xml object 3', 'labels/x.txt:12',
        'ann.json annotation id 77'.
      view: the object's pose, as VOC's <pose> gives it (the OD API layout's
        `image/object/view`); '' where the source has none.
    """
    name: str
    box: Box
    difficult: int = 0
    truncated: int = 0
    where: str = ''
    view: str = ''


@dataclasses.dataclass(frozen=True)
class Classes:
    """The user's classes: names in label order and their label ids (the background, 0, is
    not one of them).

    Attributes:
      names: the class names, as the annotations spell them.
      ids: their label ids: 1..N in SSD-Tensorflow's layout, an OD API label map's ids as
        given there.
    """
    names: Tuple[str, ...]
    ids: Tuple[int, ...]

    def __post_init__(self):
        _check_classes(self.names, self.ids, 'classes')

    @classmethod
    def from_names(cls, names: Sequence[str], ids: Optional[Sequence[int]] = None
                   ) -> 'Classes':
        """Classes of these names; ids 1..N unless given (one per name)."""
        names = tuple(names)
        return cls(names, tuple(ids) if ids is not None else tuple(range(1, len(names) + 1)))

    @classmethod
    def from_spec(cls, spec: Optional[str], *, default: Optional[Sequence[str]],
                  found: Callable[[], Iterable[str]]) -> 'Classes':
        """The classes the command line's `--classes SPEC` names.

        Args:
          spec: None for `default`; 'auto' for the sorted names `found()` returns; the path
            of a file: a label map (`*.pbtxt`, or any file holding `item {`; its ids are
            kept), a `labels.txt` as converters write it (`id:name` lines; 0 is left out), or
            names one a line; anything else is a comma-separated list of names.
          default: the source format's own classes (VOC's 20), or None if it has none.
          found: the class names the listed annotations hold (called only for 'auto').

        Raises:
          ValueError: naming the spec (and file and line) if it gives no class, a class
            twice, an empty name, or `none` (the background's name); or if neither `spec` nor
            `default` gives classes.
        """
        if spec is None:
            if default is None:
                raise ValueError('no classes given: pass --classes (a comma list such as '
                                 '"cat,dog", a file of names one a line, a label_map.pbtxt, '
                                 'or auto for the names the annotations hold)')
            return cls.from_names(default)
        if spec == 'auto':
            found_names = sorted(set(found()))
            if not found_names:
                raise ValueError('--classes auto: the annotations hold no object, so no class '
                                 'name was found; name the classes with --classes')
            return cls.from_names(found_names)
        names, ids = convert_utils.read_class_spec(spec)
        if ids is not None:  # a label map's or a labels.txt's ids: 0, the background, is none
            pairs = [(name, label) for name, label in zip(names, ids) if label != 0]
            names, ids = tuple(name for name, _ in pairs), tuple(label for _, label in pairs)
        _check_classes(names, ids or tuple(range(1, len(names) + 1)), f'--classes {spec}')
        return cls.from_names(names, ids)

    def label_of(self, name: str, where: str, on_unknown_class: str = 'error'
                 ) -> Optional[int]:
        """The label id of class `name`; for a name not among the classes, None with
        `on_unknown_class='skip'`, else a ValueError naming `where`, the name, the known
        names and `--classes` as the fix."""
        label = self._labels().get(name)
        if label is None and on_unknown_class != 'skip':
            raise ValueError(
                f'{where}: unknown class name {name!r}; the classes are {list(self.names)}. '
                'Name the classes of your data with --classes (e.g. --classes '
                f'{",".join([*self.names[:1], name])}, or --classes auto for every name the '
                'annotations hold), or pass --on-unknown-class skip to leave such objects out')
        return label

    def labels_to_names(self) -> Dict[int, str]:
        """Label id -> name, 0 the background 'none' (dataset_info.json's, labels.txt's)."""
        return {0: BACKGROUND, **dict(zip(self.ids, self.names))}

    def num_classes(self) -> int:
        """The number of classes a network predicts, the background included: the largest
        id + 1 (len(names) + 1 for ids 1..N; a label map's gaps are classes never seen)."""
        return max(self.ids) + 1

    def _labels(self) -> Dict[str, int]:
        # Built on first use and cached on the (frozen) instance; a dict lookup per object.
        labels = self.__dict__.get('_label_dict')
        if labels is None:
            labels = dict(zip(self.names, self.ids))
            object.__setattr__(self, '_label_dict', labels)
        return labels

    def __getstate__(self) -> Dict[str, Any]:
        return {'names': self.names, 'ids': self.ids}  # the cache is rebuilt, not pickled


def _check_classes(names: Tuple[str, ...], ids: Tuple[int, ...], source: str) -> None:
    """ValueError naming `source` unless names and ids are one each, unique, ids >= 1, and
    every name a non-empty line of text other than the background's."""
    if not names:
        raise ValueError(f'{source}: no class given')
    if len(names) != len(ids):
        raise ValueError(f'{source}: {len(names)} names but {len(ids)} ids')
    for name, label in zip(names, ids):
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise ValueError(f'{source}: class name {name!r} is empty or has spaces around it')
        if any(ord(char) < 32 or ord(char) == 127 for char in name):
            raise ValueError(f'{source}: class name {name!r} holds a control character')
        if name == BACKGROUND:
            raise ValueError(f'{source}: {BACKGROUND!r} is the name of label 0, the '
                             'background; it cannot be a class')
        if isinstance(label, bool) or not isinstance(label, (int, np.integer)) or label < 1:
            raise ValueError(f'{source}: class {name!r} has label id {label!r}; ids start at '
                             '1 (0 is the background)')
    for what, values in (('name', names), ('id', ids)):
        seen = set()
        for value in values:
            if value in seen:
                raise ValueError(f'{source}: class {what} {value!r} is given twice')
            seen.add(value)


# --- Boxes ----------------------------------------------------------------------------------

def check_box(box: Box, on_bad_box: str, where: str
              ) -> Tuple[Optional[Box], List[Tuple[str, str]]]:
    """Applies `on_bad_box` ('clip', 'skip' or 'error'; see the module docstring) to a
    normalised (ymin, xmin, ymax, xmax) box.

    Returns the box to keep (None when its object is dropped) and the notes to count.
    """
    ymin, xmin, ymax, xmax = box
    if ymin > ymax or xmin > xmax:
        problem = 'inverted box'
    elif ymin > 1 or xmin > 1 or ymax < 0 or xmax < 0:
        problem = 'box entirely outside the image'
    elif min(box) >= 0 and max(box) <= 1:
        return box, []
    elif on_bad_box == 'clip':
        clipped = (_clip(ymin), _clip(xmin), _clip(ymax), _clip(xmax))
        return clipped, [('box clipped to the image', _box_detail(box, where))]
    else:
        problem = 'box crosses the image edge'
    detail = _box_detail(box, where)
    if on_bad_box == 'error':
        raise ValueError(f'{detail}: {problem} (on_bad_box="error"; choose "clip" or "skip" '
                         'to convert anyway)')
    return None, [(f'object dropped: {problem}', detail)]


def _clip(value: float) -> float:
    """`value` clipped into [0, 1]."""
    return min(max(value, 0.0), 1.0)


def _box_detail(box: Box, where: str) -> str:
    return f'{where}: ymin, xmin, ymax, xmax = {", ".join(f"{v:.4f}" for v in box)}'


def check_policies(layout: str, on_bad_box: str, on_unknown_class: str) -> None:
    """ValueError naming the argument if one of them is not among its choices."""
    for name, value, choices in (('layout', layout, LAYOUTS),
                                 ('on_bad_box', on_bad_box, BAD_BOX_POLICIES),
                                 ('on_unknown_class', on_unknown_class, ON_UNKNOWN_CLASS)):
        if value not in choices:
            raise ValueError(f'{name}={value!r}; expected one of {choices}')


# --- Records --------------------------------------------------------------------------------

class ObjectColumns(NamedTuple):
    """The objects a record holds, column by column (checked boxes, label ids, the class
    names as bytes, 0/1 flags, views as bytes)."""
    labels: List[int]
    texts: List[bytes]
    boxes: List[Box]
    difficult: List[int]
    truncated: List[int]
    views: List[bytes]


def make_record(image: bytes, info: images.ImageInfo, objects: Sequence[DetectionObject], *,
                classes: Classes, layout: str, on_bad_box: str, on_unknown_class: str,
                filename: str, source_id: str) -> EncodedExample:
    """One image and its objects as a serialized record of `layout` (no TensorFlow).

    Checks the boxes (`check_box`), maps class names to labels (`Classes.label_of`), and
    notes every clipped box, dropped object and skipped class; counts the objects of each
    class and an image left without objects.

    Args:
      image: the image file's bytes, stored unchanged.
      info: what its header says (`convert_utils.SourcePolicy.read_image`).
      objects: its objects, in source order.
      classes: the user's classes.
      layout: 'ssd' or 'od-api'.
      on_bad_box: 'clip', 'skip' or 'error'.
      on_unknown_class: 'error' or 'skip'.
      filename: the image's file name (the OD API layout's `image/filename`).
      source_id: the image's id in its source (`image/source_id`).

    Raises:
      ValueError: naming the object's `where`, for a bad box with 'error' or an unknown class
        with 'error'.
    """
    kept = ObjectColumns([], [], [], [], [], [])
    notes: List[Tuple[str, str]] = []
    for obj in objects:
        label = classes.label_of(obj.name, obj.where, on_unknown_class)
        if label is None:
            notes.append((f'object of an unknown class left out: {obj.name!r}', obj.where))
            continue
        box, box_notes = check_box(obj.box, on_bad_box, f'{obj.where} ({obj.name})')
        notes.extend(box_notes)
        if box is None:
            continue
        kept.labels.append(label)
        kept.texts.append(obj.name.encode())
        kept.boxes.append(box)
        kept.difficult.append(int(obj.difficult))
        kept.truncated.append(int(obj.truncated))
        kept.views.append(obj.view.encode())
    counts = {f'objects of class {text.decode()!r}': count
              for text, count in collections.Counter(kept.texts).items()}
    if not kept.labels:
        counts['images without objects'] = 1
    features = (ssd_features(image, info, kept) if layout == 'ssd'
                else od_api_features(image, info, kept, filename, source_id))
    return EncodedExample(data=serialize_example(features), notes=tuple(notes),
                          counts=counts)


def ssd_features(image: bytes, info: images.ImageInfo, kept: ObjectColumns) -> Dict[str, Any]:
    """The features of one record in SSD-Tensorflow's layout (`SSD_FEATURES`)."""
    # Plain lists of ints, floats and bytes take serialize_example's fast path; an image
    # without objects stores typed empty lists (an empty Python list has no type).
    features = {
        'image/encoded': image,
        'image/format': b'JPEG' if info.format == 'jpeg' else info.format.upper().encode(),
        'image/height': info.height,
        'image/width': info.width,
        'image/channels': info.channels,
        'image/shape': [info.height, info.width, info.channels],
        _BBOX_PREFIX + 'label': kept.labels or _NO_INTS,
        _BBOX_PREFIX + 'label_text': kept.texts or _NO_BYTES,
        _BBOX_PREFIX + 'difficult': kept.difficult or _NO_INTS,
        _BBOX_PREFIX + 'truncated': kept.truncated or _NO_INTS,
    }
    features.update(_box_columns(kept.boxes))
    return features


def od_api_features(image: bytes, info: images.ImageInfo, kept: ObjectColumns, filename: str,
                    source_id: str) -> Dict[str, Any]:
    """The features of one record in the OD API's layout (`OD_API_FEATURES`), as its
    create_pascal_tf_record.py writes them (`image/key/sha256` the hex digest of the image's
    bytes, `image/format` 'jpeg' or 'png')."""
    features = {
        'image/encoded': image,
        'image/format': info.format.encode(),
        'image/filename': os.fsencode(filename),
        'image/source_id': os.fsencode(source_id),
        'image/key/sha256': hashlib.sha256(image).hexdigest().encode(),
        'image/height': info.height,
        'image/width': info.width,
        _OBJECT_PREFIX + 'class/label': kept.labels or _NO_INTS,
        _OBJECT_PREFIX + 'class/text': kept.texts or _NO_BYTES,
        _OBJECT_PREFIX + 'difficult': kept.difficult or _NO_INTS,
        _OBJECT_PREFIX + 'truncated': kept.truncated or _NO_INTS,
        _OBJECT_PREFIX + 'view': kept.views or _NO_BYTES,
    }
    features.update(_box_columns(kept.boxes))
    return features


def _box_columns(boxes: Sequence[Box]) -> Dict[str, Any]:
    columns: List[Iterable[float]] = (list(zip(*boxes)) if boxes
                                      else [_NO_FLOATS] * len(_BOX_FIELDS))
    return {_BBOX_PREFIX + field: [float(value) for value in column] or _NO_FLOATS
            for field, column in zip(_BOX_FIELDS, columns)}


_NO_INTS, _NO_FLOATS, _NO_BYTES = (np.zeros(0, np.int64), np.zeros(0, np.float64),
                                   np.zeros(0, np.bytes_))


# --- Writing --------------------------------------------------------------------------------

def write_detection(output_dir: str, sources: Sequence[SplitSource], *, dataset_name: str,
                    classes: Classes, layout: str, processes: int = 1,
                    overwrite: bool = False, beam_options: Optional[Sequence[str]] = None,
                    absent_splits: Sequence[str] = (),
                    record_classes: bool = True) -> Dict[str, WriteSummary]:
    """Writes detection splits (`slimdata.records.writer.write_dataset`) with the layout's
    features, the classes in dataset_info.json and labels.txt, and for 'od-api' a
    `label_map.pbtxt` beside the shards.

    Args:
      output_dir: the folder of the shards.
      sources: the splits, each with an encode function that returns `make_record(...)`.
      dataset_name: the name dataset_info.json records.
      classes: the classes the records' labels are ids of.
      layout: 'ssd' or 'od-api'.
      processes, overwrite, beam_options, absent_splits: see `write_dataset`.
      record_classes: record `classes` and `layout` in dataset_info.json's `extra` beside
        `num_classes` (the largest id + 1). False only for VOC's own 20 classes in the SSD
        layout, whose folders have always recorded `num_classes` alone (so a folder
        converted before re-runs alike).

    Returns:
      split -> the writer's summary.
    """
    if layout not in LAYOUTS:
        raise ValueError(f'layout={layout!r}; expected one of {LAYOUTS}')
    extra: Dict[str, Any] = {'num_classes': classes.num_classes()}
    if record_classes:
        extra.update(classes=list(classes.names), layout=layout)
    summaries = write_dataset(
        output_dir, sources, dataset_name=dataset_name,
        labels_to_names=classes.labels_to_names(), keys_to_features=FEATURES_OF_LAYOUT[layout],
        extra=extra, processes=processes, overwrite=overwrite, absent_splits=absent_splits,
        beam_options=beam_options)
    if layout == 'od-api':
        fs.write_text_atomic(os.path.join(output_dir, LABEL_MAP_FILENAME),
                             label_map.format_label_map(classes.ids, classes.names))
    return summaries
