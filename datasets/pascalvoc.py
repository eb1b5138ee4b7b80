"""Pascal VOC detection (2007, 2012): the record layout, its converter and its descriptors.

The records use SSD-Tensorflow's layout, so SSD ports (and anything written against
`datasets/pascalvoc_common.py` there) read them unchanged:

    image/encoded                  bytes    the JPEG file's bytes, passed through unchanged
    image/format                   bytes    b'JPEG'
    image/height, width, channels  int64[1] read from the JPEG header
    image/shape                    int64[3] (height, width, channels)
    image/object/bbox/ymin ... xmax float[]  normalised to [0, 1]
    image/object/bbox/label        int64[]  0 'none' (background), 1 'aeroplane' ... 20 'tvmonitor'
    image/object/bbox/label_text   bytes[]  the class names
    image/object/bbox/difficult    int64[]  the XML's <difficult> (0 when absent)
    image/object/bbox/truncated    int64[]  the XML's <truncated> (0 when absent)

Converting (`convert_voc`, or `slimdata convert voc SRC OUT --year 2007 --split trainval`):

  * The image ids come from `ImageSets/Main/<split>.txt`, never from listing `Annotations/`.
  * VOC pixel coordinates are 1-based and inclusive, so every coordinate is normalised as
    `(v - 1) / size`, as TensorFlow Datasets does. `size` is the image's real width or height,
    read from the JPEG header; the XML's `<size>` is only compared with it, and a missing or
    disagreeing `<size>` is counted in the summary.
  * A box that crosses the image edge is clipped to [0, 1] (`on_bad_box='clip'`), or its
    object is dropped ('skip'), or the conversion stops ('error'). A box that lies entirely
    outside the image, or is inverted (xmin > xmax or ymin > ymax), cannot be repaired by
    clipping: 'clip' and 'skip' drop its object, 'error' stops. Every clipped box and every
    dropped object is counted, with its file and object index, in the summary's notes.
  * XML is parsed with defusedxml (entity declarations and external references refused),
    and every file is opened in binary mode, through `convert_utils.SourcePolicy` (no file
    outside the dataset root, nothing but regular files, a size bound) and every JPEG is
    checked to its end (`slimdata.records.images`).
  * A re-run into the same folder reuses the shards only if nothing changed (see
    `slimdata.records.writer`).

Reading back follows models/research/slim::

    dataset = pascalvoc.get_split('trainval', '/data/voc2007', year='2007')
    provider = slimdata.dataset_data_provider.DatasetDataProvider(dataset)
    image, bboxes, labels = provider.get(['image', 'object/bbox', 'object/label'])

The converter never imports TensorFlow, nor do its worker processes, which import this
module to run `encode_image`: importing TensorFlow would add seconds and half a gigabyte to
each process's start (about as long as converting all of VOC2007 trainval takes). So workers
serialize with `slimdata.records.example.serialize_example`, which writes the protobuf wire
format without TensorFlow, the recorded schema is declared without it (`FEATURES`), and the
descriptors import what needs TensorFlow when they are called.
"""

import functools
import math
import os
import re
import xml.etree.ElementTree
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from slimdata import progress
from slimdata.datasets import convert_utils
from slimdata.deprecation import renamed_argument, warn_renamed
from slimdata.records import dataset_info, fs, images
from slimdata.records.example import serialize_example
from slimdata.records.writer import EncodedExample, SplitSource, WriteSummary, write_dataset

#: Class names by SSD-Tensorflow label id; 0 is the background.
CLASS_NAMES = ('none', 'aeroplane', 'bicycle', 'bird', 'boat', 'bottle', 'bus', 'car', 'cat',
               'chair', 'cow', 'diningtable', 'dog', 'horse', 'motorbike', 'person',
               'pottedplant', 'sheep', 'sofa', 'train', 'tvmonitor')
LABELS_TO_NAMES = dict(enumerate(CLASS_NAMES))
NAMES_TO_LABELS = {name: label for label, name in LABELS_TO_NAMES.items()}
#: Including the background class, as the SSD networks count them.
NUM_CLASSES = len(CLASS_NAMES)

#: Split sizes published by SSD-Tensorflow, used when a folder has no dataset_info.json
#: (records converted by SSD-Tensorflow's own script). Its 2007 'train' is VOC2007's
#: trainval list and its 2012 'train' is every VOC2012 annotation.
SPLITS_TO_SIZES = {
    '2007': {'train': 5011, 'test': 4952},
    '2012': {'train': 17125},
}
YEARS = tuple(SPLITS_TO_SIZES)

ITEMS_TO_DESCRIPTIONS = {
    'image': 'A color image of varying height and width.',
    'shape': 'The shape of the image as stored: height, width, channels.',
    'object/bbox': 'A [num_objects, 4] tensor of boxes, ymin, xmin, ymax, xmax in [0, 1].',
    'object/label': 'A list of labels, one per object (1 aeroplane ... 20 tvmonitor).',
    'object/difficult': 'A list of flags, one per object: 1 if marked difficult.',
    'object/truncated': 'A list of flags, one per object: 1 if marked truncated.',
}

BAD_BOX_POLICIES = ('clip', 'skip', 'error')
#: A box normalised to the image: (ymin, xmin, ymax, xmax), each in [0, 1] once checked.
Box = Tuple[float, float, float, float]

_BOX_FIELDS = ('ymin', 'xmin', 'ymax', 'xmax')
_BBOX_PREFIX = 'image/object/bbox/'


# --- Descriptors: records -> slimdata.dataset.Dataset ----------------------------------------

#: The feature specs of the records (SSD-Tensorflow's, plus label_text), as
#: dataset_info.json records them.
FEATURES = {
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


def keys_to_features() -> Dict[str, Any]:
    """The `tf.io` feature specs of the records (`FEATURES`)."""
    return dataset_info.keys_to_features_from_json(FEATURES)


def items_to_handlers() -> Dict[str, Any]:
    """The item handlers of the descriptor's items (see ITEMS_TO_DESCRIPTIONS)."""
    from slimdata import tfexample_decoder
    return {
        'image': tfexample_decoder.Image('image/encoded', 'image/format'),
        'shape': tfexample_decoder.Tensor('image/shape'),
        'object/bbox': tfexample_decoder.BoundingBox(list(_BOX_FIELDS), _BBOX_PREFIX),
        'object/label': tfexample_decoder.Tensor(_BBOX_PREFIX + 'label'),
        'object/difficult': tfexample_decoder.Tensor(_BBOX_PREFIX + 'difficult'),
        'object/truncated': tfexample_decoder.Tensor(_BBOX_PREFIX + 'truncated'),
    }


def get_split(split_name: str, dataset_dir: str, file_pattern: Optional[str] = None,
              reader: Optional[Any] = None, year: str = '2007'):
    """Returns the `slimdata.dataset.Dataset` of one split of Pascal VOC `year`.

    Args:
      split_name: the split, as converted (e.g. 'trainval', 'test'), or SSD-Tensorflow's
        'train' / 'test' for records converted by its script.
      dataset_dir: the folder that holds the shards (and dataset_info.json).
      file_pattern: a pattern with one `%s` for the split name; defaults to slimdata's
        `<split>-*.tfrecord`. For SSD-Tensorflow's files use e.g. 'voc_2007_%s_*.tfrecord'.
      reader: the reader class; defaults to `tf.compat.v1.TFRecordReader`.
      year: '2007' or '2012'.

    Raises:
      ValueError: for an unknown year or split.
    """
    from slimdata.datasets import dataset_utils
    _check_year(year)
    return dataset_utils.make_dataset(
        name=f'pascalvoc_{year}', split_name=split_name, dataset_dir=dataset_dir,
        keys_to_features=keys_to_features(), items_to_handlers=items_to_handlers(),
        items_to_descriptions=ITEMS_TO_DESCRIPTIONS,
        published_split_sizes=SPLITS_TO_SIZES[year],
        published_labels_to_names=LABELS_TO_NAMES,
        file_pattern=file_pattern, reader=reader, num_classes=NUM_CLASSES)


def _check_year(year: str) -> None:
    if year not in SPLITS_TO_SIZES:
        raise ValueError(f'Pascal VOC year {year!r} is not supported; known years: {YEARS}')


# --- Converter: a VOCdevkit tree -> sharded TFRecords ----------------------------------------

def find_voc_folder(src: str, year: str, marker: str = 'Annotations') -> Tuple[str, str]:
    """Finds the `VOC<year>` folder (the one holding `marker`) under `src`.

    Accepts the `VOC<year>` folder itself, the VOCdevkit root, or the folder the VOC tar
    was extracted into (which holds VOCdevkit/), for detection and segmentation alike.

    Args:
      src: the folder given.
      year: '2007' or '2012'.
      marker: what the VOC folder holds: Annotations/ for detection,
        ImageSets/Segmentation/ for segmentation.

    Returns:
      (the VOC<year> folder, a phrase saying which of the three `src` was).

    Raises:
      ValueError: if none of them holds `marker`, or the folder is another year's.
    """
    candidates = [(src, 'the VOC folder itself'),
                  (os.path.join(src, f'VOC{year}'), 'a VOCdevkit root'),
                  (os.path.join(src, 'VOCdevkit', f'VOC{year}'),
                   'the folder holding VOCdevkit/')]
    for folder, found_as in candidates:
        if fs.isdir(os.path.join(folder, marker)):
            named_year = re.fullmatch(r'VOC(\d{4})', os.path.basename(os.path.normpath(folder)))
            if named_year and named_year.group(1) != year:
                raise ValueError(f'{folder} is the VOC{named_year.group(1)} folder, but year '
                                 f'{year} was asked for')
            return folder, found_as
    raise ValueError(
        f'{src} is not a Pascal VOC {year} tree: expected {marker}/ in it, in '
        f'{os.path.join(src, "VOC" + year)}, or in '
        f'{os.path.join(src, "VOCdevkit", "VOC" + year)}')


def read_image_ids(voc_folder: str, split: str,
                   policy: Optional[convert_utils.SourcePolicy] = None) -> Tuple[str, List[str]]:
    """Reads the image ids of `split` from `ImageSets/Main/<split>.txt`.

    Args:
      voc_folder: the VOC<year> folder.
      split: the list file's name.
      policy: how to read it; by default, as a file inside `voc_folder`.

    Returns:
      (the list file's path, the ids in file order).

    Raises:
      ValueError: if the list file is missing or empty, or a line is not a single id that
        stays inside the dataset folder, or an id is listed twice.
    """
    main_dir = os.path.join(voc_folder, 'ImageSets', 'Main')
    if os.path.basename(split) != split or split in ('', '.', '..'):
        raise ValueError(f'split {split!r} is not a plain name; it names the list file '
                         f'{main_dir}/<split>.txt')
    list_file = os.path.join(main_dir, f'{split}.txt')
    policy = policy or convert_utils.SourcePolicy(voc_folder)
    if not fs.exists(list_file):
        known = sorted(name[:-4] for name in (fs.listdir(main_dir) if fs.isdir(main_dir) else [])
                       if name.endswith('.txt') and '_' not in name)
        raise ValueError(f'{list_file} does not exist: no split {split!r} in {voc_folder}; '
                         f'the splits there are {known}')
    image_ids: List[str] = []
    line_of_id: Dict[str, int] = {}
    for line_number, line in convert_utils.read_text_lines(list_file, policy,
                                                           'a text file of image ids'):
        fields = line.split()
        where = f'{list_file}:{line_number}'
        if len(fields) != 1:
            raise ValueError(f'{where}: expected one image id per line, got {line!r} (is this '
                             'a per-class list such as aeroplane_train.txt?)')
        image_id = fields[0]
        convert_utils.check_printable_id(image_id, where)
        if os.path.isabs(image_id) or os.path.normpath(image_id).split(os.sep)[0] == '..':
            raise ValueError(f'{where}: entry {image_id!r} points outside the dataset folder '
                             f'{voc_folder}')
        if image_id in line_of_id:
            raise ValueError(f'{where}: image id {image_id!r} is listed twice (first on line '
                             f'{line_of_id[image_id]})')
        line_of_id[image_id] = line_number
        image_ids.append(image_id)
    if not image_ids:
        raise ValueError(f'{list_file} lists no image ids')
    return list_file, image_ids


def encode_image(image_id: str, voc_folder: str, list_file: str,
                 on_bad_box: str = 'clip',
                 policy: Optional[convert_utils.SourcePolicy] = None) -> EncodedExample:
    """Reads, validates and serializes one annotated image (the writer's encode function).

    Args:
      image_id: the id, as listed in the split's list file.
      voc_folder: the VOC<year> folder.
      list_file: the list file the id came from (named in errors).
      on_bad_box: 'clip', 'skip' or 'error' (see the module docstring).
      policy: how source files are read and images checked; by default, files inside
        `voc_folder` with the structure check.

    Returns:
      The serialized tf.train.Example, with a note for every clipped box, dropped object and
      image size taken from the JPEG.

    Raises:
      ValueError: naming the file (and object index and field) of any bad input.
    """
    policy = policy or convert_utils.SourcePolicy(voc_folder)
    xml_path, jpeg_path = source_paths(voc_folder, image_id)
    annotation = convert_utils.parse_xml(
        _read_file(policy, xml_path,
                   f'{xml_path} does not exist, but {list_file} lists {image_id!r}'), xml_path)
    jpeg = _read_file(policy, jpeg_path,
                      f'{jpeg_path} does not exist: no image for the annotation {xml_path}')
    image = images.check_image(jpeg, jpeg_path, policy.check_images, policy.max_image_pixels)
    if image.format != 'jpeg':
        raise images.ImageError(f'{jpeg_path} is a {image.format.upper()} file, but the VOC '
                                'layout (and its records) holds JPEGs')
    width, height, channels = image.width, image.height, image.channels
    notes = _compare_sizes(annotation, (width, height), xml_path, jpeg_path)
    objects, boxes = [], []
    for index, element in enumerate(annotation.findall('object')):
        parsed = _parse_object(element, index, xml_path, width, height, on_bad_box)
        notes.extend(parsed.notes)
        if parsed.box is not None:
            objects.append(parsed)
            boxes.append(parsed.box)
    features = record_features(
        jpeg, width, height, channels, labels=[o.label for o in objects],
        boxes=boxes, difficult=[o.difficult for o in objects],
        truncated=[o.truncated for o in objects])
    return EncodedExample(data=serialize_example(features), notes=tuple(notes))


def record_features(jpeg: bytes, width: int, height: int, channels: int,
                    labels: Sequence[int], boxes: Sequence[Sequence[float]],
                    difficult: Sequence[int], truncated: Sequence[int]) -> Dict[str, Any]:
    """The features of one record in SSD-Tensorflow's layout (see `keys_to_features`), for
    `slimdata.records.example.serialize_example`.

    Args:
      jpeg: the encoded image.
      width, height, channels: its size.
      labels: the objects' label ids (indices of CLASS_NAMES).
      boxes: normalised (ymin, xmin, ymax, xmax), one per object (or an [n, 4] array).
      difficult, truncated: the objects' 0/1 flags.
    """
    # Plain lists of ints, floats and bytes take serialize_example's fast path; an image
    # without objects stores typed empty lists (an empty Python list has no type).
    columns: List[Iterable[float]] = (list(zip(*boxes)) if len(boxes)
                                      else [_NO_FLOATS] * len(_BOX_FIELDS))
    features = {
        'image/encoded': jpeg,
        'image/format': b'JPEG',
        'image/height': height,
        'image/width': width,
        'image/channels': channels,
        'image/shape': [height, width, channels],
        _BBOX_PREFIX + 'label': [int(label) for label in labels] or _NO_INTS,
        _BBOX_PREFIX + 'label_text': [_CLASS_NAME_BYTES[label] for label in labels] or
                                     _NO_BYTES,
        _BBOX_PREFIX + 'difficult': [int(flag) for flag in difficult] or _NO_INTS,
        _BBOX_PREFIX + 'truncated': [int(flag) for flag in truncated] or _NO_INTS,
    }
    for field, column in zip(_BOX_FIELDS, columns):
        features[_BBOX_PREFIX + field] = [float(value) for value in column] or _NO_FLOATS
    return features


_CLASS_NAME_BYTES = tuple(name.encode() for name in CLASS_NAMES)
_NO_INTS, _NO_FLOATS, _NO_BYTES = (np.zeros(0, np.int64), np.zeros(0, np.float64),
                                   np.zeros(0, np.bytes_))


def source_paths(voc_folder: str, image_id: str) -> Tuple[str, str]:
    """(the annotation XML, the JPEG) of an image id."""
    return (os.path.join(voc_folder, 'Annotations', image_id + '.xml'),
            os.path.join(voc_folder, 'JPEGImages', image_id + '.jpg'))


def _read_file(policy: convert_utils.SourcePolicy, path: str, missing: str) -> bytes:
    """The bytes of the source file `path`; ValueError(`missing`) if there is no such file."""
    try:
        return policy.read(path)
    except (FileNotFoundError, NotADirectoryError) as error:
        raise ValueError(missing) from error


def _compare_sizes(annotation: xml.etree.ElementTree.Element, jpeg_size: Tuple[int, int],
                   xml_path: str, jpeg_path: str) -> List[Tuple[str, str]]:
    """Notes when the XML's <size> is missing or disagrees with the JPEG (which wins)."""
    xml_size, fields = convert_utils.annotation_size(annotation)
    if xml_size is None:
        return [('image size from JPEG: XML <size> missing or unreadable',
                 f'{xml_path}: <size> gives width={fields[0]!r} height={fields[1]!r}; '
                 f'{jpeg_path} is {jpeg_size[0]}x{jpeg_size[1]}')]
    if xml_size != jpeg_size:
        return [('image size from JPEG: XML <size> disagrees',
                 f'{xml_path} says {xml_size[0]}x{xml_size[1]}, {jpeg_path} is '
                 f'{jpeg_size[0]}x{jpeg_size[1]} (width x height)')]
    return []


class _Object(NamedTuple):
    """One parsed <object>: its class, flags, normalised box (None if dropped), and notes."""
    name: str
    label: int
    difficult: int
    truncated: int
    box: Optional[Box]
    notes: List[Tuple[str, str]]


def _parse_object(element: xml.etree.ElementTree.Element, index: int, xml_path: str,
                  width: int, height: int, on_bad_box: str) -> _Object:
    where = f'{xml_path} object {index}'
    name = (element.findtext('name') or '').strip()
    if name not in NAMES_TO_LABELS or name == CLASS_NAMES[0]:
        raise ValueError(f'{where}: unknown class name {name!r}; expected one of '
                         f'{list(CLASS_NAMES[1:])}')
    where = f'{where} ({name})'
    difficult = _flag(element, 'difficult', where)
    truncated = _flag(element, 'truncated', where)
    bndbox = element.find('bndbox')
    if bndbox is None:
        raise ValueError(f'{where}: no <bndbox>')
    ymin, xmin, ymax, xmax = [box_coordinate(bndbox, field, where) for field in _BOX_FIELDS]
    box = ((ymin - 1) / height, (xmin - 1) / width, (ymax - 1) / height, (xmax - 1) / width)
    kept, notes = check_box(box, on_bad_box, where)
    return _Object(name, NAMES_TO_LABELS[name], difficult, truncated, kept, notes)


def _flag(element: xml.etree.ElementTree.Element, field: str, where: str) -> int:
    text = element.findtext(field)
    if text is None:
        return 0
    if text.strip() not in ('0', '1'):
        raise ValueError(f'{where}: <{field}> is {text!r}; expected 0 or 1')
    return int(text)


def box_coordinate(bndbox: xml.etree.ElementTree.Element, field: str, where: str) -> float:
    """The number in `<bndbox><field>` (VOC and ILSVRC annotations); ValueError naming
    `where` and the field if it is missing or not a finite number."""
    text = bndbox.findtext(field)
    if text is None:
        raise ValueError(f'{where}: <bndbox> has no <{field}>')
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ValueError(f'{where}: <bndbox><{field}> is {text!r}; expected a pixel coordinate')
    return value


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


@renamed_argument('workers', 'processes')
def convert_voc(src: str, output_dir: str, year: str, splits: Union[str, Sequence[str]],
                num_shards: Optional[int] = None, processes: int = 1,
                seed: Optional[int] = 0, on_bad_box: str = 'clip', overwrite: bool = False,
                beam_options: Optional[Sequence[str]] = None,
                **source_options: Any) -> Dict[str, WriteSummary]:
    """Converts splits of a Pascal VOC tree to sharded TFRecords and dataset_info.json.

    Args:
      src: the VOC<year> folder, the VOCdevkit root, or the folder holding VOCdevkit/ (see
        `find_voc_folder`).
      output_dir: where `<split>-NNNNN-of-NNNNN.tfrecord`, dataset_info.json and labels.txt
        are written (created if needed).
      year: '2007' or '2012'.
      splits: list files' names in ImageSets/Main, e.g. 'trainval', or ['train', 'val'].
      num_shards: shards per split; None chooses them by the split's size
        (`slimdata.records.writer.shards_for_size`).
      processes: processes that parse and encode images in parallel (1: this one).
      seed: 0 by default, as on the command line and for the other converters; None keeps
        the list file's order; an int shuffles the ids reproducibly, as models/research/slim's
        converters do with a fixed seed, so that consecutive records are not consecutive
        ids (in VOC2012 the ids are grouped by the year they were collected).
      on_bad_box: 'clip', 'skip' or 'error': what to do with a box outside the image.
      overwrite: replace a split of other input already in `output_dir` (see
        `slimdata.records.writer`); without it, such a re-run is refused.
      beam_options: write the shards with an Apache Beam pipeline with these pipeline
        options (e.g. ['--runner=DirectRunner']); None writes them with local processes.
      **source_options: `check_images`, `follow_symlinks`, `max_file_bytes`,
        `max_image_pixels` (see `convert_utils.SourcePolicy`; `src` is the root).

    Returns:
      split -> the writer's summary (records, bytes, notes on clipped boxes and dropped
      objects).

    Raises:
      ValueError: for bad arguments or bad input, naming the file (a `RerunError` when
        `output_dir` holds a split from other input).
      OSError: for an I/O error, naming the file.
    """
    _check_year(year)
    if on_bad_box not in BAD_BOX_POLICIES:
        raise ValueError(f'on_bad_box={on_bad_box!r}; expected one of {BAD_BOX_POLICIES}')
    policy = convert_utils.SourcePolicy(src, **source_options)
    voc_folder, found_as = find_voc_folder(src, year)
    sources = []
    for split in [splits] if isinstance(splits, str) else list(dict.fromkeys(splits)):
        list_file, image_ids = read_image_ids(voc_folder, split, policy)
        progress.info(f'pascalvoc_{year} {split}: {len(image_ids)} images listed in '
                      f'{list_file} ({src} is {found_as})')
        encode = functools.partial(encode_image, voc_folder=voc_folder, list_file=list_file,
                                   on_bad_box=on_bad_box, policy=policy)
        options = {'converter': 'voc', 'year': year, 'split': split, 'seed': seed,
                   'on_bad_box': on_bad_box, **policy.options()}
        sources.append(SplitSource(split, convert_utils.deterministic_shuffle(image_ids, seed),
                                   encode, num_shards, options,
                                   functools.partial(source_paths, voc_folder),
                                   desc=f'pascalvoc_{year} {split}'))
    return write_dataset(
        output_dir, sources, dataset_name=f'pascalvoc_{year}', labels_to_names=LABELS_TO_NAMES,
        keys_to_features=FEATURES, extra={'num_classes': NUM_CLASSES},
        processes=processes, overwrite=overwrite, beam_options=beam_options)


def convert(dataset_root: str, output_dir: str, year: str, split: str,
            **options: Any) -> WriteSummary:
    """Deprecated: `convert_voc(src, output_dir, year, split, ...)[split]`."""
    warn_renamed('pascalvoc.convert(...)', 'pascalvoc.convert_voc(...), which returns a '
                 'summary per split')
    return convert_voc(dataset_root, output_dir, year, split, **options)[split]
