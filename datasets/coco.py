"""COCO detection JSON (COCO 2017, labelling-tool exports) -> detection records.

`slimdata convert coco SRC OUT` (`convert_coco`) reads boxes from a COCO "instances" JSON in
one of three layouts:

    SRC/annotations/instances_<split>.json + SRC/<split>/ (or SRC/images/<split>/)  COCO 2017
    SRC/<split>/_annotations.coco.json beside the split's images       Roboflow-style exports
    a JSON file as SRC, its images in --images DIR (default: the JSON's folder), one --split

and writes detection records (`slimdata.datasets.detection`: SSD-Tensorflow's layout, or the
OD API's with `layout='od-api'`), one per entry of "images".

What it does with the JSON:

  * Boxes are COCO's `[x, y, width, height]` in pixels from the image's top-left corner,
    normalised by the image's real size read from its header: (y / H, x / W, (y + h) / H,
    (x + w) / W). The JSON's `width`/`height` are only compared with it; a missing or
    disagreeing size is counted in the summary.
  * A box crossing the image edge is clipped, skipped or an error (`on_bad_box`, as for VOC);
    a box of zero or negative width or height is dropped (counted) or, with
    on_bad_box='error', stops the run. (The OD API's create_coco_tf_record.py drops both.)
  * Crowd regions (`iscrowd: 1`) are dropped and counted by default (`on_crowd='skip'`). The
    OD API's converter keeps them flagged `image/object/is_crowd`, and its training drops them
    (`filter_groundtruth_with_crowd_boxes`) while its COCO evaluation ignores them; SSD's layout
    has no such flag, so a kept crowd region would be trained on as one object. `on_crowd=
    'keep'` keeps them as ordinary objects (CVAT marks every mask annotation iscrowd).
  * An image listed without annotations is an image without objects.
  * Labels: without `classes`, the JSON's categories in the order of their ids. In the SSD
    layout they are 1..N (0 is the background), whatever the ids; in the OD API layout the
    category ids are kept as the labels (as create_coco_tf_record.py writes them, so COCO's
    own label map applies), unless a category id is 0 or negative, which a label map cannot
    hold: then they too are 1..N in id order, and the run says so. A category that no
    annotation uses and that other categories name as their `supercategory` (the dataset's
    own name, which Roboflow exports list as category 0) is left out, and the run says so.
    With `classes` (names, a file, or 'auto'), the classes are the user's, matched by
    category name; an annotation of another category follows `on_unknown_class`.
  * Errors name the JSON file and the annotation id (or image id): an annotation naming an
    unknown image or category id, a bbox that is not four finite numbers, an image whose
    file is missing, a value of the wrong type.

The JSON is read in bounded memory (`json_stream`: one element at a time, each checked and
kept in compact numpy columns): COCO train2017's 450 MB file costs tens of MB, where
`json.load` (and pycocotools) need several GB.
"""

import array
import dataclasses
import functools
import math
import os
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from slimdata import progress
from slimdata.datasets import convert_utils, detection, json_stream
from slimdata.records import fs
from slimdata.records.writer import EncodedExample, SplitSource, WriteSummary

ON_CROWD = ('skip', 'keep')
#: The annotation file of the export layout, in each split's folder.
EXPORT_JSON = '_annotations.coco.json'

#: One annotation as the records need it; an image's annotations are one array of these.
ANNOTATION_DTYPE = np.dtype([('id', '<i8'), ('category_id', '<i8'), ('iscrowd', 'u1'),
                             ('bbox', '<f8', (4,))])

_INT64 = (-(1 << 63), (1 << 63) - 1)


class CocoImage(NamedTuple):
    """One entry of "images" with its annotations: the writer's item.

    Attributes:
      file_name: the image file, relative to the split's image folder.
      image_id: its id in the JSON.
      size: (width, height) as the JSON gives them, or None when it gives none.
      annotations: its annotations (ANNOTATION_DTYPE), in file order.
    """
    file_name: str
    image_id: int
    size: Optional[Tuple[int, int]]
    annotations: np.ndarray

    def __repr__(self) -> str:  # named in the writer's errors: the image, not the array
        return (f'image id {self.image_id} ({self.file_name!r}, '
                f'{len(self.annotations)} annotations)')


class CocoFile(NamedTuple):
    """What a COCO JSON holds, checked.

    Attributes:
      path: the JSON file.
      images: one CocoImage per entry of "images", in file order.
      categories: category id -> name, in id order.
      supercategories: category id -> its 'supercategory' ('' when absent).
      num_annotations: annotations in the file.
      num_crowd: those with iscrowd 1.
      used_categories: the category ids annotations use, in id order.
      has_annotations: whether the file has an "annotations" array.
    """
    path: str
    images: List[CocoImage]
    categories: Dict[int, str]
    supercategories: Dict[int, str]
    num_annotations: int
    num_crowd: int
    used_categories: Tuple[int, ...]
    has_annotations: bool


class CocoSplit(NamedTuple):
    """A split to convert: its name, its JSON, the folder its file names are relative to."""
    split: str
    json_path: str
    image_dir: str


# --- Finding the splits ----------------------------------------------------------------------

def find_splits(src: str, images: Optional[str] = None,
                splits: Optional[Union[str, Sequence[str]]] = None) -> List[CocoSplit]:
    """The splits of `src` (see the module docstring's three layouts), those asked for.

    Args:
      src: a COCO 2017 folder, an export folder, or a JSON file.
      images: with a JSON file, the folder of its images (default: the JSON's folder).
      splits: the splits to convert (None: all); with a JSON file, exactly one name.

    Raises:
      ValueError: if `src` is none of the layouts, or a split asked for is not in it.
    """
    if not fs.isdir(src):
        asked = [splits] if isinstance(splits, str) else list(splits or [])
        if len(asked) != 1:
            raise ValueError(f'{src} is one JSON file, so one split: name it with --split NAME '
                             f'(got {asked or "none"})')
        return [CocoSplit(asked[0], src, images if images is not None
                          else os.path.dirname(src) or '.')]
    if images is not None:
        raise ValueError(f'--images names the image folder of a JSON file given as SRC; {src} '
                         'is a folder, whose layout says where its images are')
    found = _coco2017_splits(src) or _export_splits(src)
    if not found:
        raise ValueError(
            f'{src} holds no COCO annotations in a known layout: expected '
            f'{os.path.join(src, "annotations", "instances_<split>.json")} with the images in '
            f'{os.path.join(src, "<split>")}/, or {os.path.join(src, "<split>", EXPORT_JSON)} '
            'beside the images; or give the JSON file as SRC (with --images and --split)')
    names = convert_utils.select_splits(sorted(found), splits, src)
    return [_check_image_dir(found[name], src) for name in names]


def _coco2017_splits(src: str) -> Dict[str, CocoSplit]:
    folder = os.path.join(src, 'annotations')
    if not fs.isdir(folder):
        return {}
    found = {}
    for name in fs.listdir(folder):
        if not (name.startswith('instances_') and name.endswith('.json')):
            continue
        split = name[len('instances_'):-len('.json')]
        candidates = [os.path.join(src, split), os.path.join(src, 'images', split)]
        # A split without images (only its JSON downloaded) is refused only when asked for.
        image_dir = next((path for path in candidates if fs.isdir(path)), '')
        found[split] = CocoSplit(split, os.path.join(folder, name), image_dir)
    return found


def _check_image_dir(split: CocoSplit, src: str) -> CocoSplit:
    if not split.image_dir:
        raise ValueError(f'{split.json_path} has no image folder: expected '
                         f'{os.path.join(src, split.split)}/ or '
                         f'{os.path.join(src, "images", split.split)}/')
    return split


def _export_splits(src: str) -> Dict[str, CocoSplit]:
    found = {}
    for name in fs.listdir(src):
        json_path = os.path.join(src, name, EXPORT_JSON)
        if fs.exists(json_path):
            found[name] = CocoSplit(name, json_path, os.path.join(src, name))
    return found


# --- Reading the JSON ------------------------------------------------------------------------

class _Columns:
    """The checked fields of the JSON's elements, as compact columns while it is read."""

    def __init__(self, path: str):
        self.path = path
        self.image_ids = array.array('q')
        self.file_names: List[str] = []
        self.sizes: List[Optional[Tuple[int, int]]] = []
        self.annotation_ids = array.array('q')
        self.annotation_images = array.array('q')
        self.category_ids = array.array('q')
        self.iscrowd = array.array('B')
        self.bboxes = array.array('d')
        self.categories: Dict[int, str] = {}
        self.supercategories: Dict[int, str] = {}

    def add_image(self, index: int, image: Any) -> None:
        where = f'{self.path}: images[{index}]'
        fields = _object(image, where)
        image_id = _integer(fields, 'id', where)
        where = f'{self.path}: image id {image_id}'
        file_name = fields.get('file_name')
        if not isinstance(file_name, str) or not file_name:
            raise ValueError(f'{where}: file_name is {_shown(file_name)}; expected the image '
                             'file name')
        _check_file_name(file_name, where)
        width, height = fields.get('width'), fields.get('height')
        size = None
        if width is not None or height is not None:
            size = (_integer(fields, 'width', where), _integer(fields, 'height', where))
        self.image_ids.append(image_id)
        self.file_names.append(file_name)
        self.sizes.append(size)

    def add_annotation(self, index: int, annotation: Any) -> None:
        fields = _object(annotation, f'{self.path}: annotations[{index}]')
        annotation_id = _integer(fields, 'id', f'{self.path}: annotations[{index}]')
        where = f'{self.path}: annotation id {annotation_id}'
        image_id = _integer(fields, 'image_id', where)
        category_id = _integer(fields, 'category_id', where)
        crowd = fields.get('iscrowd', 0)
        if crowd not in (0, 1) or isinstance(crowd, float):
            raise ValueError(f'{where}: iscrowd is {_shown(crowd)}; expected 0 or 1')
        bbox = fields.get('bbox')
        if (not isinstance(bbox, list) or len(bbox) != 4 or
                not all(_is_number(value) and math.isfinite(value) for value in bbox)):
            raise ValueError(f'{where}: bbox is {_shown(bbox)}; expected [x, y, width, height], '
                             'four finite numbers in pixels')
        self.annotation_ids.append(annotation_id)
        self.annotation_images.append(image_id)
        self.category_ids.append(category_id)
        self.iscrowd.append(int(crowd))
        self.bboxes.extend(bbox)

    def add_category(self, index: int, category: Any) -> None:
        fields = _object(category, f'{self.path}: categories[{index}]')
        category_id = _integer(fields, 'id', f'{self.path}: categories[{index}]')
        where = f'{self.path}: category id {category_id}'
        name, supercategory = fields.get('name'), fields.get('supercategory', '')
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f'{where}: name is {_shown(name)}; expected the class name')
        if category_id in self.categories:
            raise ValueError(f'{where} appears twice in "categories"')
        twin = next((other for other, known in self.categories.items() if known == name), None)
        if twin is not None:
            raise ValueError(f'{where}: the name {name!r} is also category id {twin}\'s; '
                             'classes are told apart by name')
        self.categories[category_id] = name
        self.supercategories[category_id] = supercategory if isinstance(supercategory,
                                                                         str) else ''


def _object(value: Any, where: str) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f'{where} is {_shown(value)}; expected an object')
    return value


def _integer(fields: Dict[str, Any], key: str, where: str) -> int:
    value = fields.get(key)
    if type(value) is not int or not _INT64[0] <= value <= _INT64[1]:
        raise ValueError(f'{where}: {key} is {_shown(value)}; expected an integer')
    return value


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def _shown(value: Any) -> str:
    """A short description of a JSON value for a message (never a deep or long repr)."""
    if value is None:
        return 'missing'
    if isinstance(value, (list, dict)):
        return f'a JSON {"array" if isinstance(value, list) else "object"} of {len(value)}'
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + '...'


def _check_file_name(file_name: str, where: str) -> None:
    if any(ord(char) < 32 or ord(char) == 127 for char in file_name):
        raise ValueError(f'{where}: file_name {file_name!r} holds a control character')
    parts = file_name.replace('\\', '/').split('/')
    if os.path.isabs(file_name) or '..' in parts:
        raise ValueError(f'{where}: file_name {file_name!r} points outside the image folder')


def read_coco_json(path: str, policy: convert_utils.SourcePolicy) -> CocoFile:
    """Reads and checks a COCO detection JSON, in bounded memory (see the module docstring).

    Raises:
      ValueError: naming `path` and the image, annotation or category id at fault.
    """
    columns = _Columns(path)
    with fs.open_source(path, policy.roots(), policy.max_file_bytes) as file, \
            progress.Progress(file.size, f'reading {path}', unit='B', unit_scale=True,
                              delay=1.0) as shown:
        found = json_stream.stream_arrays(
            file, path, {'images': columns.add_image, 'annotations': columns.add_annotation,
                         'categories': columns.add_category}, on_bytes=shown.update)
    for key in ('images', 'categories'):
        if key not in found:
            raise ValueError(f'{path} has no "{key}" array; a COCO detection JSON has '
                             '"images", "annotations" and "categories"')
    if not columns.image_ids:
        raise ValueError(f'{path}: "images" is empty')
    images = _group(columns)
    category_ids = np.frombuffer(columns.category_ids, np.int64)
    return CocoFile(path, images, dict(sorted(columns.categories.items())),
                    columns.supercategories, len(columns.annotation_ids),
                    sum(columns.iscrowd), tuple(np.unique(category_ids).tolist()),
                    'annotations' in found)


def _group(columns: _Columns) -> List[CocoImage]:
    """Each image with its annotations (views of one array sorted by image)."""
    path = columns.path
    image_ids = np.frombuffer(columns.image_ids, np.int64)
    order = np.argsort(image_ids, kind='stable')
    sorted_ids = image_ids[order]
    repeated = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1])
    if repeated.size:
        raise ValueError(f'{path}: image id {sorted_ids[repeated[0]]} appears twice in '
                         '"images"')
    table = np.zeros(len(columns.annotation_ids), ANNOTATION_DTYPE)
    table['id'] = np.frombuffer(columns.annotation_ids, np.int64)
    table['category_id'] = np.frombuffer(columns.category_ids, np.int64)
    table['iscrowd'] = np.frombuffer(columns.iscrowd, np.uint8)
    table['bbox'] = np.frombuffer(columns.bboxes, np.float64).reshape(-1, 4)
    owners = np.frombuffer(columns.annotation_images, np.int64)
    slot = np.minimum(np.searchsorted(sorted_ids, owners), len(sorted_ids) - 1)
    unknown = np.flatnonzero(sorted_ids[slot] != owners)
    if unknown.size:
        first = unknown[0]
        raise ValueError(f'{path}: annotation id {table["id"][first]} names image id '
                         f'{owners[first]}, which is not in "images"')
    categories = np.array(sorted(columns.categories), np.int64)
    known = np.isin(table['category_id'], categories)
    if not known.all():
        first = int(np.flatnonzero(~known)[0])
        raise ValueError(f'{path}: annotation id {table["id"][first]} names category id '
                         f'{table["category_id"][first]}, which is not in "categories"')
    image_of = order[slot]  # each annotation's index in "images"
    by_image = np.argsort(image_of, kind='stable')
    table, image_of = table[by_image], image_of[by_image]
    bounds = np.searchsorted(image_of, np.arange(len(image_ids) + 1))
    return [CocoImage(file_name, int(image_id), size, table[start:stop])
            for file_name, image_id, size, start, stop in
            zip(columns.file_names, image_ids.tolist(), columns.sizes, bounds[:-1].tolist(),
                bounds[1:].tolist())]


# --- Classes ---------------------------------------------------------------------------------

def dataset_classes(coco: CocoFile, spec: Optional[str], layout: str) -> detection.Classes:
    """The classes of the records (see the module docstring's "Labels").

    Raises:
      ValueError: from `detection.Classes.from_spec` for a bad `spec`.
    """
    if spec is not None:
        return detection.Classes.from_spec(
            spec, default=None, found=lambda: (coco.categories[i] for i in coco.used_categories))
    groups = set(coco.supercategories.values())
    kept = {category: name for category, name in coco.categories.items()
            if category in coco.used_categories or name not in groups}
    left_out = sorted(set(coco.categories) - set(kept))
    if left_out:
        progress.info(f'{coco.path}: left out the category '
                      + ', '.join(f'{i} {coco.categories[i]!r}' for i in left_out)
                      + ': no annotation uses it, and other categories name it as their '
                        'supercategory (a dataset\'s own name); --classes chooses otherwise')
    names = list(kept.values())
    if layout == 'od-api':
        if min(kept) >= 1:
            return detection.Classes.from_names(names, ids=list(kept))
        progress.info(f'{coco.path}: category id {min(kept)} cannot be an OD API label (0 is '
                      'the background): the labels are 1..N in category id order')
    return detection.Classes.from_names(names)


# --- Encoding one image ----------------------------------------------------------------------

def encode_image(image: CocoImage, *, json_path: str, image_dir: str,
                 categories: Dict[int, str], classes: detection.Classes, layout: str,
                 on_bad_box: str, on_unknown_class: str, on_crowd: str,
                 policy: convert_utils.SourcePolicy) -> EncodedExample:
    """Reads, checks and serializes one image with its boxes (the writer's encode function).

    Args:
      image: the image's entry and annotations.
      json_path: the JSON it came from (named in messages).
      image_dir: the folder its file name is relative to.
      categories: category id -> name.
      classes, layout, on_bad_box, on_unknown_class: see `detection.make_record`.
      on_crowd: 'skip' or 'keep' crowd regions (see the module docstring).
      policy: how the image file is read and checked.

    Raises:
      ValueError: naming the image (its id and the JSON) or the annotation at fault.
    """
    path = source_path(image_dir, image)
    try:
        data, info = policy.read_image(path)
    except (FileNotFoundError, NotADirectoryError) as error:
        raise ValueError(f'{path} does not exist, but {json_path} lists it as image id '
                         f'{image.image_id}') from error
    notes = _compare_sizes(image, info.width, info.height, json_path, path)
    objects = []
    for annotation in image.annotations.tolist():
        annotation_id, category_id, crowd, (x, y, width, height) = annotation
        where = f'{json_path} annotation id {annotation_id}'
        if crowd and on_crowd == 'skip':
            notes.append(('crowd region dropped (iscrowd: 1)', where))
            continue
        if crowd:
            notes.append(('crowd region kept as an object (iscrowd: 1)', where))
        if width <= 0 or height <= 0:
            detail = f'{where}: bbox width {width}, height {height}'
            if on_bad_box == 'error':
                raise ValueError(f'{detail}: an empty box (on_bad_box="error"; choose "clip" '
                                 'or "skip" to convert anyway)')
            notes.append(('object dropped: empty box (width or height <= 0)', detail))
            continue
        box = (y / info.height, x / info.width, (y + height) / info.height,
               (x + width) / info.width)
        objects.append(detection.DetectionObject(categories[category_id], box, where=where))
    record = detection.make_record(
        data, info, objects, classes=classes, layout=layout, on_bad_box=on_bad_box,
        on_unknown_class=on_unknown_class, filename=image.file_name,
        source_id=str(image.image_id))
    return dataclasses.replace(record, notes=tuple(notes) + tuple(record.notes))


def source_path(image_dir: str, image: CocoImage) -> str:
    """The image file of an entry of "images"."""
    return os.path.join(image_dir, *image.file_name.replace('\\', '/').split('/'))


def _compare_sizes(image: CocoImage, width: int, height: int, json_path: str,
                   path: str) -> List[Tuple[str, str]]:
    """Notes when the JSON's width/height are missing or disagree with the image (which
    wins)."""
    if image.size is None:
        return [('image size from the image: the JSON gives none',
                 f'{json_path} image id {image.image_id}: {path} is {width}x{height}')]
    if image.size != (width, height):
        return [('image size from the image: the JSON disagrees',
                 f'{json_path} image id {image.image_id} says {image.size[0]}x{image.size[1]}, '
                 f'{path} is {width}x{height} (width x height)')]
    return []


# --- The converter ---------------------------------------------------------------------------

def convert_coco(src: str, output_dir: str, splits: Optional[Union[str, Sequence[str]]] = None,
                 images: Optional[str] = None, classes: Optional[str] = None,
                 layout: str = 'ssd', on_bad_box: str = 'clip', on_unknown_class: str = 'error',
                 on_crowd: str = 'skip', num_shards: Optional[int] = None, processes: int = 1,
                 seed: Optional[int] = 0, overwrite: bool = False,
                 beam_options: Optional[Sequence[str]] = None,
                 **source_options: Any) -> Dict[str, WriteSummary]:
    """Converts COCO detection JSON and its images to sharded detection TFRecords.

    Args:
      src: a COCO 2017 folder, an export folder, or a JSON file (see the module docstring).
      output_dir: where the shards, dataset_info.json and labels.txt are written (and
        label_map.pbtxt for the OD API layout).
      splits: the splits to write (None: every split `src` holds); with a JSON file, the
        name of its one split.
      images: with a JSON file as `src`, the folder its file names are relative to (default:
        the JSON's folder).
      classes: None (the JSON's categories), a comma list of names, a labels.txt or
        label_map.pbtxt, or 'auto' (`detection.Classes.from_spec`).
      layout: 'ssd' or 'od-api' (`detection.LAYOUTS`).
      on_bad_box: 'clip', 'skip' or 'error' (`detection.check_box`).
      on_unknown_class: 'error' or 'skip' an annotation whose category is not in `classes`.
      on_crowd: 'skip' (counted) or 'keep' crowd regions.
      num_shards: shards per split; None chooses them by size.
      processes: processes that read, check and encode images.
      seed: the order of the records (a seeded shuffle of the JSON's order); None keeps it.
      overwrite: replace splits of other input already in `output_dir`.
      beam_options: write with an Apache Beam pipeline with these options.
      **source_options: `check_images`, `follow_symlinks`, `max_file_bytes` (the JSON too),
        `max_image_pixels` (`convert_utils.SourcePolicy`).

    Returns:
      split -> the writer's summary.

    Raises:
      ValueError: for bad arguments or bad input, naming the file and the id at fault.
      OSError: for an I/O error, naming the file.
    """
    detection.check_policies(layout, on_bad_box, on_unknown_class)
    if on_crowd not in ON_CROWD:
        raise ValueError(f'on_crowd={on_crowd!r}; expected one of {ON_CROWD}')
    found = find_splits(src, images, splits)
    root = src if fs.isdir(src) else os.path.dirname(src) or '.'
    policy = convert_utils.SourcePolicy(
        root, other_roots=tuple({split.image_dir for split in found} - {root}),
        **source_options)
    parsed = [(split, read_coco_json(split.json_path, policy)) for split in found]
    chosen = _same_classes([dataset_classes(coco, classes, layout) for _, coco in parsed],
                           [split.json_path for split, _ in parsed])
    if on_unknown_class == 'error':
        for _, coco in parsed:
            check_known_classes(coco, chosen)
    sources = [_split_source(split, coco, chosen, layout=layout, on_bad_box=on_bad_box,
                             on_unknown_class=on_unknown_class, on_crowd=on_crowd,
                             num_shards=num_shards, seed=seed, policy=policy)
               for split, coco in parsed]
    return detection.write_detection(output_dir, sources, dataset_name='coco', classes=chosen,
                                     layout=layout, processes=processes, overwrite=overwrite,
                                     beam_options=beam_options)


def check_known_classes(coco: CocoFile, classes: detection.Classes) -> None:
    """Before anything is written: ValueError (`Classes.label_of`'s, naming the JSON and the
    lowest annotation id) if an annotation's category is not among `classes`."""
    for category in coco.used_categories:
        name = coco.categories[category]
        if name not in classes.names:
            ids = np.concatenate([image.annotations['id'][
                image.annotations['category_id'] == category] for image in coco.images])
            classes.label_of(name, f'{coco.path} annotation id {ids.min()}')


def _same_classes(per_split: List[detection.Classes],
                  json_paths: List[str]) -> detection.Classes:
    """The classes every split agrees on; ValueError naming two JSONs that differ."""
    for other, path in zip(per_split[1:], json_paths[1:]):
        if (other.names, other.ids) != (per_split[0].names, per_split[0].ids):
            raise ValueError(f'{json_paths[0]} and {path} have other categories '
                             f'({list(per_split[0].names)} and {list(other.names)}); convert '
                             'them into separate folders, or name the classes with --classes')
    return per_split[0]


def _split_source(split: CocoSplit, coco: CocoFile, classes: detection.Classes, *,
                  layout: str, on_bad_box: str, on_unknown_class: str, on_crowd: str,
                  num_shards: Optional[int], seed: Optional[int],
                  policy: convert_utils.SourcePolicy) -> SplitSource:
    empty = sum(1 for image in coco.images if not len(image.annotations))
    progress.info(f'coco {split.split}: {len(coco.images)} images ({empty} without '
                  f'annotations), {coco.num_annotations} annotations ({coco.num_crowd} crowd) in '
                  f'{split.json_path}; images in {split.image_dir}'
                  + ('' if coco.has_annotations else '; the file has no "annotations"'))
    encode = functools.partial(
        encode_image, json_path=split.json_path, image_dir=split.image_dir,
        categories=coco.categories, classes=classes, layout=layout, on_bad_box=on_bad_box,
        on_unknown_class=on_unknown_class, on_crowd=on_crowd, policy=policy)
    options = {'converter': 'coco', 'split': split.split, 'annotations': split.json_path,
               'images': split.image_dir, 'seed': seed, 'layout': layout,
               'on_bad_box': on_bad_box, 'on_unknown_class': on_unknown_class,
               'on_crowd': on_crowd, 'categories': {str(k): v for k, v in coco.categories.items()},
               **policy.options()}
    files_of: Callable[[CocoImage], List[str]] = functools.partial(_files_of, split.image_dir)
    return SplitSource(split.split, convert_utils.deterministic_shuffle(coco.images, seed),
                       encode, num_shards, options, files_of, desc=f'coco {split.split}')


def _files_of(image_dir: str, image: CocoImage) -> List[str]:
    return [source_path(image_dir, image)]
