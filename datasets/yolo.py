"""YOLO text labels (Ultralytics, Roboflow, darknet exports) -> detection TFRecords.

A YOLO dataset is a folder of images and, beside them, one text file of labels per image
(`<stem>.txt`), one object a line::

    <class id> <x centre> <y centre> <width> <height>     all but the class id in [0, 1]

The class ids index the class names of a `data.yaml` (Ultralytics and Roboflow write one) or
of a names file (darknet's `obj.names`, labelImg's `classes.txt`: one name a line). Two folder
layouts are read (`find_splits`)::

    SRC/<split>/images/*.jpg  SRC/<split>/labels/*.txt    Roboflow's export ('roboflow')
    SRC/images/<split>/*.jpg  SRC/labels/<split>/*.txt    Ultralytics' own ('ultralytics')

Converting (`convert_yolo`, or `slimdata convert yolo SRC OUT`) writes the records of
`slimdata.datasets.detection` (SSD-Tensorflow's layout, or the OD API's with `layout='od-api'`):

  * The class names come from `names_file`, else `data_yaml`, else `SRC/data.yaml`, else the
    one `*.yaml` in SRC. `names` is a list or an {id: name} mapping; `nc`, when given, must
    agree. The records' classes are those names in id order (labels 1..N), or `classes`
    (see `detection.Classes.from_spec`).
  * data.yaml's `train` / `val` / `test` keys name the splits: each is a folder of images,
    resolved as Ultralytics and Roboflow write it (relative to `path`, to the YAML's folder,
    or, as Roboflow's `../train/images`, to the folder above it), and must be one of the
    layout's image folders. Without such keys the splits are the layout's folder names.
  * The YAML is read with PyYAML's safe loader, after a pass over its events that refuses
    tags, anchors and aliases (a "billion laughs" file expands aliases into gigabytes),
    nesting deeper than `MAX_YAML_DEPTH`, and a file over `MAX_YAML_BYTES`: one line naming
    the file. Class names are only ever data.
  * An empty label file is an image without objects. A missing label file is read the way
    Ultralytics reads it: an image of background only; every one is counted in the summary
    ('image without a label file'). A split where no image has a label file is an error (the
    label folder is not where the layout puts it).
  * A line of 5 fields is a box. A line of a class id and three or more x y pairs (Ultralytics'
    segmentation labels) is a polygon: its object's box is the polygon's extent, as
    Ultralytics' detection training makes it, and every one is counted in the summary. Any
    other field count, a class id that is not an integer or has no name, a number that is not
    finite or is negative: a ValueError naming the label file and line.
  * A box that crosses the image edge (a centre near the edge) is clipped, skipped or an
    error by `on_bad_box`, as in the VOC converter (`detection.check_box`).
  * Images are read and checked through `convert_utils.SourcePolicy`. The records hold JPEG
    and PNG (what TensorFlow's decoders read, passed through unchanged): an image of another
    format (WebP, BMP: Ultralytics reads them) is an error naming it, or with
    `on_non_image='skip'` (`--skip-non-images`) its item is left out and counted. Label files
    are bounded by `MAX_LABEL_BYTES`.
  * Label files without an image (and files that are not images, by extension) are not
    converted, and are counted in the lines printed before writing.

This module imports no TensorFlow (worker processes import it to run `encode_item`).
"""

import dataclasses
import functools
import math
import os
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import yaml

from slimdata import progress
from slimdata.datasets import classification, convert_utils, detection
from slimdata.records import fs, images
from slimdata.records.writer import EncodedExample, SkipExample, SplitSource, WriteSummary

LAYOUTS = ('roboflow', 'ultralytics')
#: Ultralytics' image extensions (its IMG_FORMATS): files with them are the images of a split;
#: the records hold JPEG and PNG only, so another format among them is an error naming it.
IMAGE_EXTENSIONS = ('.bmp', '.dng', '.jpeg', '.jpg', '.mpo', '.png', '.tif', '.tiff', '.webp',
                    '.pfm', '.heic')
#: A data.yaml is a few lines; one over this is not one (and would be parsed in memory).
MAX_YAML_BYTES = 1 << 20
#: data.yaml is two or three levels deep; PyYAML's composer recurses once per level.
MAX_YAML_DEPTH = 32
#: A label file holds a line per object; 16 MiB is over 300,000 objects in one image.
MAX_LABEL_BYTES = 16 << 20
#: The data.yaml keys that name splits, in the order their splits are written.
SPLIT_KEYS = ('train', 'val', 'test')

MISSING_LABEL_FILE = 'image without a label file (background only, as Ultralytics reads it)'
POLYGON_TO_BOX = 'polygon label converted to its bounding box'


class ClassNames(NamedTuple):
    """The class names of a YOLO dataset.

    Attributes:
      by_id: class id -> name.
      source: the file they came from (named in messages).
      splits: data.yaml's split key -> its folder value(s), as written (empty for a names file).
      root: data.yaml's `path` key (None if absent).
    """
    by_id: Mapping[int, str]
    source: str
    splits: Mapping[str, Any] = {}
    root: Optional[str] = None

    def in_id_order(self) -> List[str]:
        """The names, by increasing class id."""
        return [self.by_id[class_id] for class_id in sorted(self.by_id)]


class SplitFolders(NamedTuple):
    """One split's image folder and label folder."""
    images: str
    labels: str


# --- data.yaml and names files -----------------------------------------------------------------

def read_data_yaml(path: str, policy: convert_utils.SourcePolicy) -> ClassNames:
    """The class names and split keys of an Ultralytics / Roboflow data.yaml.

    Raises:
      ValueError: naming `path`, for a file over MAX_YAML_BYTES, tags, anchors, aliases,
        nesting deeper than MAX_YAML_DEPTH, YAML that does not parse, or `names` / `nc`
        that are missing or disagree.
    """
    text = _read_text(path, policy, MAX_YAML_BYTES, 'a data.yaml')
    _check_yaml_events(text, path)
    try:
        content = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValueError(f'{path} is not YAML: {_yaml_problem(error)}') from error
    if not isinstance(content, dict) or 'names' not in content:
        raise ValueError(f'{path} has no `names` key; a data.yaml lists the class names as '
                         "`names: [a, b]` or `names: {0: a, 1: b}`")
    by_id = _names_by_id(content['names'], path)
    declared = content.get('nc')
    if declared is not None and declared != len(by_id):
        raise ValueError(f'{path}: nc is {declared!r} but names lists {len(by_id)} classes')
    root = content.get('path')
    if root is not None and not isinstance(root, str):
        raise ValueError(f'{path}: `path` is {root!r}; expected a folder')
    splits = {key: content[key] for key in SPLIT_KEYS if content.get(key) is not None}
    return ClassNames(by_id, path, splits, root)


def read_names_file(path: str, policy: convert_utils.SourcePolicy) -> ClassNames:
    """Class names one a line (darknet's obj.names, labelImg's classes.txt): line i (of the
    lines that are not blank) is class id i.

    Raises:
      ValueError: naming the file and line for a name given twice, or an empty file.
    """
    lines = convert_utils.read_text_lines(path, policy, 'a names file (one class name a line)')
    if not lines:
        raise ValueError(f'{path} holds no class names; expected one name a line')
    first_line: Dict[str, int] = {}
    for number, line in lines:
        name = line.strip()
        if name in first_line:
            raise ValueError(f'{path}:{number}: class name {name!r} is given twice (first on '
                             f'line {first_line[name]})')
        first_line[name] = number
    return ClassNames(dict(enumerate(first_line)), path)


def _read_text(path: str, policy: convert_utils.SourcePolicy, limit: int, what: str) -> str:
    """The UTF-8 text of `path`, refused (naming it) over `limit` bytes before it is read."""
    _check_size(path, limit, what)
    try:
        return policy.read(path).decode('utf-8')
    except UnicodeDecodeError as error:
        raise ValueError(f'{path} is not {what}: it is not UTF-8 text ({error})') from error


def _check_size(path: str, limit: int, what: str) -> None:
    num_bytes = fs.size(path)
    if num_bytes > limit:
        raise ValueError(f'{path}: refused, {num_bytes:,} bytes is more than {what} may hold '
                         f'({limit:,})')


def _check_yaml_events(text: str, path: str) -> None:
    """Refuses, naming `path`, what a data.yaml never holds: tags, anchors, aliases, deep
    nesting. PyYAML's parser is an iterative state machine, so this pass is bounded by the
    file's size whatever the nesting; only then does the (recursive) composer run."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            line = event.start_mark.line + 1 if event.start_mark else 0
            if isinstance(event, yaml.AliasEvent) or getattr(event, 'anchor', None):
                raise ValueError(f'{path}:{line}: refused, the YAML uses anchors or aliases '
                                 '(&name / *name), which a data.yaml does not need')
            if getattr(event, 'tag', None) is not None:
                raise ValueError(f'{path}:{line}: refused, the YAML has the tag '
                                 f'{event.tag!r}; a data.yaml holds plain values')
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise ValueError(f'{path}:{line}: refused, the YAML nests deeper than '
                                     f'{MAX_YAML_DEPTH} levels')
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError as error:
        raise ValueError(f'{path} is not YAML: {_yaml_problem(error)}') from error


def _yaml_problem(error: yaml.YAMLError) -> str:
    """PyYAML's problem and line, in one line (its message spans several)."""
    problem = getattr(error, 'problem', None)
    mark = getattr(error, 'problem_mark', None)
    if problem and mark:
        return f'{problem} (line {mark.line + 1}, column {mark.column + 1})'
    return ' '.join(str(error).split())


def _names_by_id(names: Any, path: str) -> Dict[int, str]:
    """`names` (a list, or an {id: name} mapping) as class id -> name."""
    if isinstance(names, list):
        pairs: Iterable[Tuple[Any, Any]] = enumerate(names)
    elif isinstance(names, dict):
        pairs = names.items()
    else:
        raise ValueError(f'{path}: `names` is {type(names).__name__} {names!r}; expected a '
                         'list of class names or an {id: name} mapping')
    by_id: Dict[int, str] = {}
    for class_id, name in pairs:
        if isinstance(class_id, bool) or not isinstance(class_id, int) or class_id < 0:
            raise ValueError(f'{path}: `names` has the key {class_id!r}; class ids are '
                             'integers from 0')
        if isinstance(name, bool) or not isinstance(name, (str, int)) or not str(name).strip():
            raise ValueError(f'{path}: class {class_id} has the name {name!r}; expected text')
        by_id[class_id] = str(name).strip()
    if not by_id:
        raise ValueError(f'{path}: `names` is empty')
    seen: Dict[str, int] = {}
    for class_id, name in sorted(by_id.items()):
        if name in seen:
            raise ValueError(f'{path}: classes {seen[name]} and {class_id} are both named '
                             f'{name!r}')
        seen[name] = class_id
    return by_id


def find_class_names(src: str, policy: convert_utils.SourcePolicy,
                     data_yaml: Optional[str] = None,
                     names_file: Optional[str] = None) -> ClassNames:
    """The class names: `names_file`, else `data_yaml`, else SRC/data.yaml, else the one
    *.yaml / *.yml in SRC.

    Raises:
      ValueError: when none of these is there, naming SRC and the options that give one.
    """
    # A file the user names may lie outside SRC: its folder is a root for reading it alone.
    if names_file is not None:
        return read_names_file(names_file, _also_in_folder_of(names_file, policy))
    if data_yaml is not None:
        return read_data_yaml(data_yaml, _also_in_folder_of(data_yaml, policy))
    found = [name for name in (fs.list_files(src) if fs.isdir(src) else [])
             if name.lower().endswith(('.yaml', '.yml'))]
    if 'data.yaml' in found:
        return read_data_yaml(os.path.join(src, 'data.yaml'), policy)
    if len(found) == 1:
        return read_data_yaml(os.path.join(src, found[0]), policy)
    raise ValueError(f'{src}: no class names: it holds no data.yaml' +
                     (f' and several YAML files {found}' if found else '') +
                     '; name one with --data FILE, or a names file (one class name a line, '
                     'e.g. classes.txt) with --names FILE')


def _also_in_folder_of(path: str, policy: convert_utils.SourcePolicy
                       ) -> convert_utils.SourcePolicy:
    return dataclasses.replace(policy, other_roots=(*policy.other_roots,
                                                    os.path.dirname(os.path.abspath(path))))


# --- Folders -----------------------------------------------------------------------------------

def find_splits(src: str) -> Tuple[str, Dict[str, SplitFolders]]:
    """The layout of `src` and its splits' folders: folder name -> (images, labels).

    Raises:
      ValueError: if `src` has neither layout, naming both.
    """
    ultralytics = os.path.join(src, 'images')
    if fs.isdir(ultralytics) and fs.isdir(os.path.join(src, 'labels')):
        splits = {name: SplitFolders(os.path.join(ultralytics, name),
                                     os.path.join(src, 'labels', name))
                  for name in sorted(fs.listdir(ultralytics))
                  if not name.startswith('.') and fs.isdir(os.path.join(ultralytics, name))}
        if splits:
            return 'ultralytics', splits
    splits = {name: SplitFolders(os.path.join(src, name, 'images'),
                                 os.path.join(src, name, 'labels'))
              for name in (sorted(fs.listdir(src)) if fs.isdir(src) else [])
              if not name.startswith('.') and fs.isdir(os.path.join(src, name, 'images'))}
    if splits:
        return 'roboflow', splits
    raise ValueError(f'{src} is not a YOLO dataset folder: expected <split>/images/ and '
                     '<split>/labels/ in it (Roboflow), or images/<split>/ and labels/<split>/ '
                     '(Ultralytics)')


def name_splits(names: ClassNames, src: str, folders: Dict[str, SplitFolders]
                ) -> Dict[str, SplitFolders]:
    """The splits to write: data.yaml's split keys, each matched to the folder it names, or
    (without such keys) the layout's folders by name. A key whose folder does not exist
    (an export without its test split) is left out, and said so.

    Raises:
      ValueError: naming data.yaml and the key whose value is a folder but not one of the
        layout's image folders, or is a list of image paths (which this converter does not
        read).
    """
    if not names.splits:
        return dict(folders)
    by_real_path = {os.path.realpath(split.images): split for split in folders.values()}
    yaml_folder = os.path.dirname(names.source)
    named = {}
    for key, value in names.splits.items():
        if not isinstance(value, str) or value.endswith('.txt'):
            raise ValueError(f'{names.source}: {key} is {value!r}; this converter reads a split '
                             'given as one folder of images (not a list, nor a .txt list of '
                             'image paths)')
        candidates = _folder_candidates(value, names.root, yaml_folder, src)
        existing = [os.path.realpath(path) for path in candidates if fs.isdir(path)]
        if not existing:
            progress.info(f'yolo: {names.source} names {key}: {value!r}, which is no folder '
                          f'(tried {candidates}): no {key} split')
            continue
        if existing[0] not in by_real_path:
            raise ValueError(
                f'{names.source}: {key}: {value!r} is {existing[0]}, none of the image folders '
                f'of {src} ({sorted(by_real_path)})')
        named[key] = by_real_path[existing[0]]
    if not named:
        raise ValueError(f'{names.source} names no split folder that exists: '
                         f'{dict(names.splits)}')
    return named


def _folder_candidates(value: str, root: Optional[str], yaml_folder: str,
                       src: str) -> List[str]:
    """Where a data.yaml split value may point, in the order Ultralytics and Roboflow mean it:
    under `path` (itself relative to the YAML's folder), under the YAML's folder, and for
    Roboflow's `../train/images` (written for a training script one folder up) the YAML's
    folder with the leading `../` removed; then the same below SRC (a YAML given with --data
    from elsewhere, its `path` written for another machine)."""
    if os.path.isabs(value):
        return [value]
    stripped = value
    while stripped.startswith('../'):
        stripped = stripped[3:]
    candidates = []
    for folder in dict.fromkeys([yaml_folder, src]):
        if root is not None and not os.path.isabs(root):
            candidates.append(os.path.join(folder, root, value))
        candidates += [os.path.join(folder, value), os.path.join(folder, stripped)]
    return list(dict.fromkeys(os.path.normpath(candidate) for candidate in candidates))


class Listing(NamedTuple):
    """A split's items and what its folders hold that is not converted.

    Attributes:
      items: (image path, label path or '' when there is none), sorted by image name.
      not_images: what the image folder holds besides images: files without an image
        extension, and folders (Ultralytics reads subfolders too; this converter does not).
      orphan_labels: label files without an image.
    """
    items: List[Tuple[str, str]]
    not_images: List[str]
    orphan_labels: List[str]


def list_split(folders: SplitFolders, names_source: str) -> Listing:
    """Pairs each image of a split with its label file (`<stem>.txt` in the label folder)."""
    if not fs.isdir(folders.images):
        raise ValueError(f'{folders.images} does not exist or is not a folder')
    label_names = set(fs.list_files(folders.labels)) if fs.isdir(folders.labels) else set()
    files = fs.list_files(folders.images)
    not_images = [os.path.join(folders.images, name)
                  for name in sorted(set(fs.listdir(folders.images)) - set(files))]
    items, stems = [], set()
    for name in files:
        stem, extension = os.path.splitext(name)
        if extension.lower() not in IMAGE_EXTENSIONS:
            not_images.append(os.path.join(folders.images, name))
            continue
        convert_utils.label_name(name, folders.images, 'image file name')
        stems.add(stem)
        label = stem + '.txt'
        items.append((os.path.join(folders.images, name),
                      os.path.join(folders.labels, label) if label in label_names else ''))
    orphans = [os.path.join(folders.labels, name) for name in sorted(label_names)
               if name.endswith('.txt') and name[:-4] not in stems
               and os.path.join(folders.labels, name) != names_source
               and name != 'classes.txt']
    return Listing(items, not_images, orphans)


# --- Label files -------------------------------------------------------------------------------

def read_labels(label_path: str, names: Mapping[int, str], policy: convert_utils.SourcePolicy
                ) -> Tuple[List[detection.DetectionObject], List[Tuple[str, str]]]:
    """The objects of one label file, and notes (polygons made boxes).

    Raises:
      ValueError: naming the file and line, for a bad field count, a class id that is not an
        integer or has no name, or a number that is not finite or is negative.
    """
    # One bounded read (the limit checked on the open descriptor), not a stat and a read:
    # label files are half of what a conversion opens.
    data = fs.read_source(label_path, policy.roots(), min(policy.max_file_bytes, MAX_LABEL_BYTES))
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as error:
        raise ValueError(f'{label_path} is not a YOLO label file (class x y w h lines): it is '
                         f'not UTF-8 text ({error})') from error
    objects, notes = [], []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        where = f'{label_path}:{number}'
        class_id = _class_id(fields[0], names, where)
        numbers = [_coordinate(field, where) for field in fields[1:]]
        if len(fields) == 5:
            cx, cy, width, height = numbers
            box = (cy - height / 2, cx - width / 2, cy + height / 2, cx + width / 2)
        elif len(fields) >= 7 and len(fields) % 2 == 1:
            xs, ys = numbers[0::2], numbers[1::2]
            box = (min(ys), min(xs), max(ys), max(xs))
            notes.append((POLYGON_TO_BOX, f'{where} ({len(xs)} points)'))
        else:
            raise ValueError(f'{where}: {len(fields)} fields in {_shown(line)}; expected 5 '
                             '(class x_centre y_centre width height) or a class and three or '
                             'more x y pairs (a polygon)')
        objects.append(detection.DetectionObject(names[class_id], box, where=where))
    return objects, notes


def _class_id(field: str, names: Mapping[int, str], where: str) -> int:
    if not field.isdigit() or not field.isascii():
        raise ValueError(f'{where}: class id {_shown(field)} is not a non-negative integer')
    class_id = int(field)
    if class_id not in names:
        raise ValueError(f'{where}: class id {class_id} has no name; the class ids are '
                         f'{_id_range(names)}')
    return class_id


def _id_range(names: Mapping[int, str]) -> str:
    ids = sorted(names)
    return f'0..{ids[-1]}' if ids == list(range(len(ids))) else str(ids)


def _coordinate(field: str, where: str) -> float:
    try:
        value = float(field)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f'{where}: {_shown(field)} is not a finite non-negative number '
                         '(YOLO coordinates are fractions of the image size)')
    return value


def _shown(text: str, limit: int = 80) -> str:
    """`text` quoted, cut to `limit` characters (a hostile line may be megabytes long)."""
    return repr(text if len(text) <= limit else text[:limit] + '...')


def encode_item(item: Tuple[str, str], names: Mapping[int, str],
                classes: detection.Classes, layout: str, on_bad_box: str,
                on_unknown_class: str, image_root: str, policy: convert_utils.SourcePolicy,
                on_non_image: str = 'error') -> EncodedExample:
    """Reads, checks and serializes one image and its labels (the writer's encode function).

    Args:
      item: (image path, label path or '' when the image has none).
      names: class id -> name.
      classes, layout, on_bad_box, on_unknown_class: see `detection.make_record`.
      image_root: the split's image folder: the record's filename is the path below it.
      policy: how source files are read and images checked.
      on_non_image: 'error' or 'skip' for an image that is not a JPEG or PNG.
    """
    image_path, label_path = item
    image = policy.read(image_path)
    if on_non_image == 'skip' and images.image_format_of(image) is None:
        raise SkipExample(classification.NON_IMAGE_REASON, image_path)
    info = images.check_image(image, image_path, policy.check_images, policy.max_image_pixels)
    if label_path:
        objects, notes = read_labels(label_path, names, policy)
    else:
        objects, notes = [], [(MISSING_LABEL_FILE, image_path)]
    # The path below the image folder; os.path.relpath would resolve both against the
    # working directory on every call.
    filename = image_path[len(image_root):].lstrip(os.sep)
    record = detection.make_record(
        image, info, objects, classes=classes, layout=layout, on_bad_box=on_bad_box,
        on_unknown_class=on_unknown_class, filename=filename, source_id=filename)
    return dataclasses.replace(record, notes=(*notes, *record.notes))


def files_of(item: Tuple[str, str]) -> List[str]:
    """The source files of an item (its label file only when it has one)."""
    return [path for path in item if path]


def convert_yolo(src: str, output_dir: str, splits: Optional[Sequence[str]] = None, *,
                 data_yaml: Optional[str] = None, names_file: Optional[str] = None,
                 classes: Optional[str] = None, layout: str = 'ssd', on_bad_box: str = 'clip',
                 on_unknown_class: str = 'error', on_non_image: str = 'error',
                 num_shards: Optional[int] = None,
                 processes: int = 1, seed: Optional[int] = 0, overwrite: bool = False,
                 beam_options: Optional[Sequence[str]] = None,
                 **source_options: Any) -> Dict[str, WriteSummary]:
    """Converts a YOLO dataset's splits to detection TFRecords (see the module docstring).

    Args:
      src: the dataset folder (either layout).
      output_dir: where the shards, dataset_info.json and labels.txt go.
      splits: the splits to write (data.yaml's keys, else folder names); None: all.
      data_yaml: the data.yaml to read (default: SRC/data.yaml, or the one YAML in SRC).
      names_file: a names file (one class name a line) instead of a data.yaml.
      classes: the records' classes (`detection.Classes.from_spec`); None: the dataset's
        names in class-id order.
      layout: 'ssd' or 'od-api' (`detection.LAYOUTS`).
      on_bad_box: 'clip', 'skip' or 'error' (`detection.check_box`).
      on_unknown_class: 'error' or 'skip', for a class not among `classes`.
      on_non_image: 'error' or 'skip' (left out, counted) for an image that is not a JPEG
        or PNG.
      num_shards, processes, seed, overwrite, beam_options: as for every converter
        (`slimdata.records.writer`); seed None keeps the sorted file order.
      **source_options: `convert_utils.SourcePolicy`'s options (SRC is the root).

    Returns:
      split -> the writer's summary.

    Raises:
      ValueError: for bad arguments or input, naming the file (and line).
    """
    detection.check_policies(layout, on_bad_box, on_unknown_class)
    if on_non_image not in classification.ON_NON_IMAGE_CHOICES:
        raise ValueError(f'on_non_image={on_non_image!r}; expected one of '
                         f'{classification.ON_NON_IMAGE_CHOICES}')
    policy = convert_utils.SourcePolicy(src, **source_options)
    names = find_class_names(src, policy, data_yaml, names_file)
    folder_layout, folders = find_splits(src)
    named = name_splits(names, src, folders)
    chosen = convert_utils.select_splits(list(named), splits, src)
    dataset_classes = detection.Classes.from_spec(
        classes, default=names.in_id_order(), found=names.in_id_order)
    progress.info(f'yolo: {src} in the {folder_layout} layout; {len(names.by_id)} class names '
                  f'from {names.source}; classes {list(dataset_classes.names)}')
    choices = {'layout': layout, 'on_bad_box': on_bad_box, 'on_unknown_class': on_unknown_class,
               'on_non_image': on_non_image}
    sources = [_split_source(split, named[split], names, dataset_classes, choices, policy,
                             num_shards, seed)
               for split in chosen]
    return detection.write_detection(
        output_dir, sources, dataset_name='yolo', classes=dataset_classes, layout=layout,
        processes=processes, overwrite=overwrite, beam_options=beam_options)


def _split_source(split: str, folders: SplitFolders, names: ClassNames,
                  classes: detection.Classes, choices: Dict[str, str],
                  policy: convert_utils.SourcePolicy, num_shards: Optional[int],
                  seed: Optional[int]) -> SplitSource:
    """The writer's source of one split; `choices` are the layout and the on_* policies."""
    listing = list_split(folders, names.source)
    if not listing.items:
        raise ValueError(f'{folders.images} holds no images (files ending in '
                         f'{", ".join(IMAGE_EXTENSIONS)})')
    missing = sum(1 for _, label in listing.items if not label)
    if missing == len(listing.items):
        # Ultralytics would train on background only; here it is a label folder not found.
        raise ValueError(f'{folders.labels} holds no label file for any of the {missing} images '
                         f'of {folders.images} (expected <image name without extension>.txt)')
    progress.info(f'yolo {split}: {len(listing.items)} images in {folders.images}, '
                  f'{missing} without a label file (background only)')
    for what, paths in (('files without an image extension, and folders', listing.not_images),
                        ('label files without an image', listing.orphan_labels)):
        if paths:
            progress.info(f'yolo {split}: not converted: {len(paths)} {what}, e.g. '
                          f'{", ".join(paths[:3])}')
    encode = functools.partial(
        encode_item, names=dict(names.by_id), classes=classes, image_root=folders.images,
        policy=policy, layout=choices['layout'], on_bad_box=choices['on_bad_box'],
        on_unknown_class=choices['on_unknown_class'], on_non_image=choices['on_non_image'])
    options = {'converter': 'yolo', 'split': split, 'seed': seed, 'names': names.in_id_order(),
               'classes': list(classes.names), **choices, **policy.options()}
    return SplitSource(split, convert_utils.deterministic_shuffle(listing.items, seed), encode,
                       num_shards, options, files_of, desc=f'yolo {split}')
