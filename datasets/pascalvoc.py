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
  * Without `year`, `src` is a folder of the user's own (`find_annotations`): Annotations/ +
    JPEGImages/ with ImageSets/Main/ (its lists are the splits), or without it, or a flat
    folder of images with their XMLs beside them (labelImg's, CVAT's exports). Without lists,
    every XML is an image (its image: the .jpg, .jpeg or .png of the same stem), split into
    'train' and 'validation' by `validation_ratio` as image-folder does; images without an
    XML are left out and counted. Such a folder's records are the dataset `detection`.
  * The classes are VOC's 20 unless `classes` names others (`detection.Classes.from_spec`:
    a comma list, a file of names, an OD API label_map.pbtxt, or 'auto'); an object of
    another class is an error naming the file, the object and `--classes`, or with
    `on_unknown_class='skip'` is left out and counted. `layout='od-api'` writes the Object
    Detection API's keys instead (`detection.OD_API_FEATURES`) and a label_map.pbtxt.
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

import dataclasses
import functools
import math
import os
import re
import xml.etree.ElementTree
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

from slimdata import progress
from slimdata.datasets import convert_utils, detection
from slimdata.deprecation import renamed_argument, warn_renamed
from slimdata.records import dataset_info, fs, images
from slimdata.records.writer import EncodedExample, SplitSource, WriteSummary

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

#: The classes of VOC's records when no others are given.
VOC_CLASSES = detection.Classes.from_names(CLASS_NAMES[1:])

_BOX_FIELDS = ('ymin', 'xmin', 'ymax', 'xmax')
_BBOX_PREFIX = 'image/object/bbox/'


# --- Descriptors: records -> slimdata.dataset.Dataset ----------------------------------------

#: The feature specs of the records (SSD-Tensorflow's, plus label_text), as
#: dataset_info.json records them.
FEATURES = detection.SSD_FEATURES


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
      ValueError: for an unknown year or split, or records of the OD API's layout.
    """
    from slimdata.datasets import dataset_utils
    _check_year(year)
    _check_ssd_layout(dataset_dir)
    return dataset_utils.make_dataset(
        name=f'pascalvoc_{year}', split_name=split_name, dataset_dir=dataset_dir,
        keys_to_features=keys_to_features(), items_to_handlers=items_to_handlers(),
        items_to_descriptions=ITEMS_TO_DESCRIPTIONS,
        published_split_sizes=SPLITS_TO_SIZES[year],
        published_labels_to_names=LABELS_TO_NAMES,
        file_pattern=file_pattern, reader=reader, num_classes=NUM_CLASSES)


def _check_ssd_layout(dataset_dir: str) -> None:
    """ValueError if the folder's dataset_info.json records another layout than
    SSD-Tensorflow's (`--layout od-api`: keys these descriptors do not read)."""
    layout = (dataset_info.read_dataset_info(dataset_dir) or {}).get('extra', {}).get(
        'layout', 'ssd')
    if layout != 'ssd':
        raise ValueError(f'{dataset_dir} holds records in the {layout!r} layout (the Object '
                         "Detection API's keys, for its own input pipeline); this descriptor "
                         "reads SSD-Tensorflow's: convert with --layout ssd")


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
        raise convert_utils.UnknownSplitError(
            f'{list_file} does not exist: no split {split!r} in {voc_folder}; '
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
                 policy: Optional[convert_utils.SourcePolicy] = None,
                 classes: Optional[detection.Classes] = None, layout: str = 'ssd',
                 on_unknown_class: str = 'error') -> EncodedExample:
    """Reads, validates and serializes one annotated image of a VOC tree (the writer's
    encode function).

    Args:
      image_id: the id, as listed in the split's list file.
      voc_folder: the VOC<year> folder.
      list_file: the list file the id came from (named in errors).
      on_bad_box: 'clip', 'skip' or 'error' (see the module docstring).
      policy: how source files are read and images checked; by default, files inside
        `voc_folder` with the structure check.
      classes, layout, on_unknown_class: see `detection.make_record`; by default VOC's 20
        classes in SSD-Tensorflow's layout, and an unknown class is an error.

    Returns:
      The serialized tf.train.Example, with a note for every clipped box, dropped object and
      image size taken from the JPEG.

    Raises:
      ValueError: naming the file (and object index and field) of any bad input.
    """
    xml_path, jpeg_path = source_paths(voc_folder, image_id)
    return encode_annotation(
        xml_path, jpeg_path, f'{xml_path} does not exist, but {list_file} lists {image_id!r}',
        policy or convert_utils.SourcePolicy(voc_folder), image_id=image_id,
        classes=classes or VOC_CLASSES, layout=layout, on_bad_box=on_bad_box,
        on_unknown_class=on_unknown_class, jpeg_only=True)


def encode_annotation(xml_path: str, image_path: str, missing_xml: str,
                      policy: convert_utils.SourcePolicy, *, image_id: str,
                      classes: detection.Classes, layout: str, on_bad_box: str,
                      on_unknown_class: str, jpeg_only: bool) -> EncodedExample:
    """One VOC annotation and its image as a record (`detection.make_record`).

    Args:
      xml_path, image_path: the annotation and the image.
      missing_xml: the message when the annotation does not exist.
      policy: how source files are read and images checked.
      image_id: the image's id (the record's source id).
      classes, layout, on_bad_box, on_unknown_class: see `detection.make_record`.
      jpeg_only: refuse a PNG (VOC trees hold JPEGs; a labelling tool's folder may not).
    """
    annotation = convert_utils.parse_xml(_read_file(policy, xml_path, missing_xml), xml_path)
    image = _read_file(policy, image_path,
                       f'{image_path} does not exist: no image for the annotation {xml_path}')
    info = images.check_image(image, image_path, policy.check_images, policy.max_image_pixels)
    if jpeg_only and info.format != 'jpeg':
        raise images.ImageError(f'{image_path} is a {info.format.upper()} file, but the VOC '
                                'layout (and its records) holds JPEGs')
    notes = _compare_sizes(annotation, (info.width, info.height), xml_path, image_path)
    objects = [_parse_object(element, index, xml_path, info.width, info.height)
               for index, element in enumerate(annotation.findall('object'))]
    record = detection.make_record(
        image, info, objects, classes=classes, layout=layout, on_bad_box=on_bad_box,
        on_unknown_class=on_unknown_class, filename=os.path.basename(image_path),
        source_id=image_id)
    return dataclasses.replace(record, notes=(*notes, *record.notes))


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


def _parse_object(element: xml.etree.ElementTree.Element, index: int, xml_path: str,
                  width: int, height: int) -> detection.DetectionObject:
    """One <object>, its box normalised as `(v - 1) / size` (VOC's pixels are 1-based)."""
    where = f'{xml_path} object {index}'
    name = (element.findtext('name') or '').strip()
    named = f'{where} ({name})'
    difficult = _flag(element, 'difficult', named)
    truncated = _flag(element, 'truncated', named)
    bndbox = element.find('bndbox')
    if bndbox is None:
        raise ValueError(f'{named}: no <bndbox>')
    ymin, xmin, ymax, xmax = [box_coordinate(bndbox, field, named) for field in _BOX_FIELDS]
    box = ((ymin - 1) / height, (xmin - 1) / width, (ymax - 1) / height, (xmax - 1) / width)
    return detection.DetectionObject(name, box, difficult, truncated, where,
                                     (element.findtext('pose') or '').strip())


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


@renamed_argument('workers', 'processes')
def convert_voc(src: str, output_dir: str, year: Optional[str] = None,
                splits: Optional[Union[str, Sequence[str]]] = None,
                num_shards: Optional[int] = None, processes: int = 1,
                seed: Optional[int] = None, on_bad_box: str = 'clip', overwrite: bool = False,
                beam_options: Optional[Sequence[str]] = None, classes: Optional[str] = None,
                layout: str = 'ssd', on_unknown_class: str = 'error',
                validation_ratio: Optional[float] = None,
                **source_options: Any) -> Dict[str, WriteSummary]:
    """Converts VOC annotations (a VOC tree's splits, or a folder of them) to sharded
    TFRecords and dataset_info.json.

    Args:
      src: a VOC tree: the VOC<year> folder, the VOCdevkit root, or the folder holding
        VOCdevkit/ (see `find_voc_folder`); or, without `year`, a folder holding
        Annotations/ and JPEGImages/ (with or without ImageSets/Main/), or a flat folder of
        images with their XMLs beside them (see `find_annotations`).
      output_dir: where `<split>-NNNNN-of-NNNNN.tfrecord`, dataset_info.json and labels.txt
        are written (created if needed).
      year: '2007' or '2012': finds VOC<year> in a VOCdevkit tree, and names the dataset
        `pascalvoc_<year>`; None for a folder of the user's own (named `detection`).
      splits: with ImageSets/Main, its list files' names, e.g. 'trainval', or
        ['train', 'val'] (required); without, 'train' and 'validation' (default: both).
      num_shards: shards per split; None chooses them by the split's size
        (`slimdata.records.writer.shards_for_size`).
      processes: processes that parse and encode images in parallel (1: this one).
      seed: None keeps the list file's order (the command line's default is 0, as for the
        other converters); an int shuffles the ids reproducibly, as models/research/slim's
        converters do with a fixed seed, so that consecutive records are not consecutive
        ids (in VOC2012 the ids are grouped by the year they were collected). Without
        ImageSets/Main, it also draws the validation split, as image-folder's does.
      on_bad_box: 'clip', 'skip' or 'error': what to do with a box outside the image.
      overwrite: replace a split of other input already in `output_dir` (see
        `slimdata.records.writer`); without it, such a re-run is refused.
      beam_options: write the shards with an Apache Beam pipeline with these pipeline
        options (e.g. ['--runner=DirectRunner']); None writes them with local processes.
      classes: the classes (`detection.Classes.from_spec`: 'a,b', a file of names, a
        label_map.pbtxt, or 'auto'); None keeps VOC's 20.
      layout: 'ssd' (SSD-Tensorflow's) or 'od-api' (the Object Detection API's, with
        label_map.pbtxt beside the shards).
      on_unknown_class: 'error' stops at an object of a class not in `classes`; 'skip'
        leaves it out and counts it.
      validation_ratio: without ImageSets/Main, the share of the annotated images held out
        as the 'validation' split (None: 0.1, as image-folder; 0: none). A VOC tree's
        splits are its lists, so it refuses one.
      **source_options: `check_images`, `follow_symlinks`, `max_file_bytes`,
        `max_image_pixels` (see `convert_utils.SourcePolicy`; `src` is the root).

    Returns:
      split -> the writer's summary (records, bytes, notes on clipped boxes and dropped
      objects, objects per class).

    Raises:
      ValueError: for bad arguments or bad input, naming the file (a `RerunError` when
        `output_dir` holds a split from other input).
      OSError: for an I/O error, naming the file.
    """
    if year is not None:
        _check_year(year)
    detection.check_policies(layout, on_bad_box, on_unknown_class)
    policy = convert_utils.SourcePolicy(src, **source_options)
    found = find_annotations(src, year)
    dataset_name = 'detection' if year is None else f'pascalvoc_{year}'
    if found.list_dir:
        if validation_ratio is not None:
            raise ValueError(f'validation_ratio={validation_ratio}: the splits of {src} are the '
                             f'lists in {found.list_dir}; a validation ratio splits a folder '
                             'without ImageSets/Main')
        listing = _list_tree(found, splits, seed, policy)
    else:
        listing = _list_folder(found, splits, seed, policy,
                               DEFAULT_VALIDATION_RATIO if validation_ratio is None
                               else validation_ratio)
    chosen = detection.Classes.from_spec(
        classes, default=CLASS_NAMES[1:],
        found=lambda: _names_found(policy, [path for items in listing.items.values()
                                            for item in items
                                            for path in listing.paths(item)[:1]]))
    _say_auto(classes, chosen)
    options = {'converter': 'voc', 'year': year, 'seed': seed, 'on_bad_box': on_bad_box,
               **_class_options(chosen, layout, on_unknown_class), **listing.options,
               **policy.options()}
    sources = []
    for split, items in listing.items.items():
        progress.info(f'{dataset_name} {split}: {len(items)} images {listing.described[split]} '
                      f'({src} is {found.found_as})')
        encode = functools.partial(listing.encode[split], policy=policy, classes=chosen,
                                   layout=layout, on_bad_box=on_bad_box,
                                   on_unknown_class=on_unknown_class)
        sources.append(SplitSource(split, items, encode, num_shards,
                                   {**options, 'split': split}, listing.paths,
                                   desc=f'{dataset_name} {split}'))
    return detection.write_detection(
        output_dir, sources, dataset_name=dataset_name, classes=chosen, layout=layout,
        processes=processes, overwrite=overwrite, beam_options=beam_options,
        absent_splits=listing.absent_splits,
        record_classes=chosen != VOC_CLASSES or layout != 'ssd')


#: The share of a folder's images held out as 'validation' by default (image-folder's).
DEFAULT_VALIDATION_RATIO = 0.1
#: The image files a folder of annotations may hold (VOC trees hold JPEGs only).
IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png')


class AnnotationFolder(NamedTuple):
    """Where the annotations of a conversion are (`find_annotations`).

    Attributes:
      folder: the VOC folder (or the flat folder).
      annotation_dir, image_dir: the folders of the XMLs and of the images.
      list_dir: ImageSets/Main when the splits are listed there, else ''.
      found_as: a phrase saying what `src` was, for the progress line.
    """
    folder: str
    annotation_dir: str
    image_dir: str
    list_dir: str
    found_as: str


def find_annotations(src: str, year: Optional[str]) -> AnnotationFolder:
    """Finds the annotations under `src`: with `year`, in a VOC tree (`find_voc_folder`);
    without, `src` itself holds Annotations/ and JPEGImages/ (with or without
    ImageSets/Main/: a labelling tool's export), or its XMLs lie beside their images.

    Raises:
      ValueError: naming `src` and the layouts looked for.
    """
    if year is not None:
        folder, found_as = find_voc_folder(src, year)
    elif fs.isdir(os.path.join(src, 'Annotations')):
        folder, found_as = src, 'a VOC-style folder'
    elif any(name.lower().endswith('.xml') for name in fs.listdir(src)):
        return AnnotationFolder(src, src, src, '', 'a folder of images with their XMLs')
    else:
        raise ValueError(f'{src} holds no VOC annotations: expected Annotations/ and '
                         'JPEGImages/ in it (ImageSets/Main/ optional), or XML files beside '
                         'their images; for a VOCdevkit tree (VOC2007/, VOC2012/) pass --year')
    list_dir = os.path.join(folder, 'ImageSets', 'Main')
    return AnnotationFolder(folder, os.path.join(folder, 'Annotations'),
                            os.path.join(folder, 'JPEGImages'),
                            list_dir if fs.isdir(list_dir) else '',
                            found_as + ('' if fs.isdir(list_dir) else ' without ImageSets/Main'))


@dataclasses.dataclass
class _Listing:
    """A conversion's splits: items in record order, their encode functions (to be given the
    classes and policies), what their files are, and how they were found."""
    items: Dict[str, List[Any]]
    encode: Dict[str, Callable[..., EncodedExample]]
    paths: Callable[[Any], Tuple[str, str]]
    described: Dict[str, str]
    options: Dict[str, Any]
    absent_splits: List[str]


def _list_tree(found: AnnotationFolder, splits: Optional[Union[str, Sequence[str]]],
               seed: Optional[int], policy: convert_utils.SourcePolicy) -> _Listing:
    """The splits of a VOC tree: the ids of ImageSets/Main/<split>.txt, shuffled by `seed`."""
    if splits is None:
        known = sorted(name[:-4] for name in fs.listdir(found.list_dir)
                       if name.endswith('.txt') and '_' not in name)
        raise ValueError(f'name the splits to convert: the lists of {found.list_dir} are '
                         f'{known} (e.g. --split trainval test)')
    listing = _Listing({}, {}, functools.partial(source_paths, found.folder), {}, {}, [])
    for split in [splits] if isinstance(splits, str) else list(dict.fromkeys(splits)):
        list_file, image_ids = read_image_ids(found.folder, split, policy)
        listing.items[split] = convert_utils.deterministic_shuffle(image_ids, seed)
        listing.encode[split] = functools.partial(encode_image, voc_folder=found.folder,
                                                  list_file=list_file)
        listing.described[split] = f'listed in {list_file}'
    return listing


def _list_folder(found: AnnotationFolder, splits: Optional[Union[str, Sequence[str]]],
                 seed: Optional[int], policy: convert_utils.SourcePolicy,
                 validation_ratio: float) -> _Listing:
    """The splits of a folder without lists: its annotated images, split into 'train' and
    'validation' by `validation_ratio` (`convert_utils.split_train_validation`)."""
    pairs = list_annotated_images(found.annotation_dir, found.image_dir, policy)
    train, validation = convert_utils.split_train_validation(pairs, validation_ratio, seed)
    held = {'train': train, **({'validation': validation} if validation_ratio > 0 else {})}
    selected = convert_utils.select_splits(
        list(held), splits, found.folder if validation_ratio > 0
        else f'{found.folder} with a validation ratio of 0')
    encode = functools.partial(encode_pair, annotation_dir=found.annotation_dir,
                               image_dir=found.image_dir)
    return _Listing(
        {split: held[split] for split in selected}, {split: encode for split in selected},
        functools.partial(pair_paths, found.annotation_dir, found.image_dir),
        {split: f'of the {len(pairs)} annotated in {found.annotation_dir}'
         for split in selected},
        {'validation_ratio': validation_ratio},
        [] if validation_ratio > 0 else ['validation'])


def list_annotated_images(annotation_dir: str, image_dir: str,
                          policy: convert_utils.SourcePolicy) -> List[Tuple[str, str]]:
    """(XML name, image name) of every annotation in `annotation_dir`, sorted, each with the
    image of the same stem in `image_dir` (.jpg, .jpeg or .png, any case).

    Images without an XML (not annotated) and hidden files are left out, and counted in a
    progress line.

    Raises:
      ValueError: naming the XML, if it has no image or several (a.jpg and a.png).
    """
    if not fs.isdir(image_dir):
        raise ValueError(f'{image_dir} does not exist: the images of {annotation_dir} are '
                         'expected there')
    image_names: Dict[str, List[str]] = {}
    for name in sorted(fs.listdir(image_dir)):
        stem, extension = os.path.splitext(name)
        if extension.lower() in IMAGE_EXTENSIONS and not name.startswith('.'):
            image_names.setdefault(stem, []).append(name)
    listed = sorted(fs.listdir(annotation_dir))
    xml_names = [name for name in listed
                 if name.lower().endswith('.xml') and not name.startswith('.')]
    if not xml_names:
        raise ValueError(f'{annotation_dir} holds no annotation (.xml) file')
    pairs = []
    for xml_name in xml_names:
        xml_path = os.path.join(annotation_dir, xml_name)
        policy.check_regular_file(xml_path)
        candidates = image_names.pop(xml_name[:-4], [])
        if len(candidates) != 1:
            raise ValueError(
                f'{xml_path}: ' + (f'no image {xml_name[:-4]}.jpg, .jpeg or .png in {image_dir}'
                                   if not candidates else
                                   f'several images of that name in {image_dir}: {candidates}'))
        pairs.append((xml_name, candidates[0]))
    hidden = sum(name.startswith('.') for name in listed)
    unannotated = sorted(name for names in image_names.values() for name in names)
    if hidden or unannotated:
        progress.info(f'{annotation_dir}: left out {len(unannotated)} images without an XML '
                      f'(not annotated{": " + ", ".join(unannotated[:3]) if unannotated else ""}'
                      f'{", ..." if len(unannotated) > 3 else ""}) and {hidden} hidden files')
    return pairs


def pair_paths(annotation_dir: str, image_dir: str, item: Tuple[str, str]) -> Tuple[str, str]:
    """(the annotation XML, the image) of a folder's item (XML name, image name)."""
    return os.path.join(annotation_dir, item[0]), os.path.join(image_dir, item[1])


def encode_pair(item: Tuple[str, str], annotation_dir: str, image_dir: str,
                policy: convert_utils.SourcePolicy, classes: detection.Classes, layout: str,
                on_bad_box: str, on_unknown_class: str) -> EncodedExample:
    """The record of a folder's item (XML name, image name): the writer's encode function
    for folders without ImageSets/Main (JPEG or PNG images)."""
    xml_path, image_path = pair_paths(annotation_dir, image_dir, item)
    return encode_annotation(
        xml_path, image_path, f'{xml_path} does not exist (it was listed)', policy,
        image_id=item[0][:-4], classes=classes, layout=layout, on_bad_box=on_bad_box,
        on_unknown_class=on_unknown_class, jpeg_only=False)


def _class_options(classes: detection.Classes, layout: str,
                   on_unknown_class: str) -> Dict[str, Any]:
    """What the fingerprint records of the classes and the layout."""
    return {'classes': [[label, name] for label, name in zip(classes.ids, classes.names)],
            'layout': layout, 'on_unknown_class': on_unknown_class}


def _names_found(policy: convert_utils.SourcePolicy, xml_paths: Iterable[str]) -> List[str]:
    """The class names of every object of these annotations (for `--classes auto`)."""
    names = []
    for xml_path in xml_paths:
        annotation = convert_utils.parse_xml(
            _read_file(policy, xml_path, f'{xml_path} does not exist'), xml_path)
        for index, element in enumerate(annotation.findall('object')):
            name = (element.findtext('name') or '').strip()
            if not name:
                raise ValueError(f'{xml_path} object {index}: no <name>, so no class')
            names.append(name)
    return names


def _say_auto(spec: Optional[str], classes: detection.Classes) -> None:
    """With `--classes auto`, says which classes were found (they become the labels)."""
    if spec == 'auto':
        progress.info(f'classes found in the annotations (--classes auto), label 1 first: '
                      f'{", ".join(classes.names)}')


def convert(dataset_root: str, output_dir: str, year: str, split: str,
            **options: Any) -> WriteSummary:
    """Deprecated: `convert_voc(src, output_dir, year, split, ...)[split]`."""
    warn_renamed('pascalvoc.convert(...)', 'pascalvoc.convert_voc(...), which returns a '
                 'summary per split')
    return convert_voc(dataset_root, output_dir, year, split, **options)[split]
