"""ImageNet (ILSVRC-2012 classification): the record layout, its converter and its descriptor.

The records are those of models/research/slim's `build_imagenet_data.py`, which slim's
`datasets/imagenet.py` reads (one record per image)::

    image/encoded                  the image file's bytes, unchanged
    image/format                   b'JPEG' (b'PNG' for a PNG file)
    image/filename                 the file's name, e.g. b'n01440764_10026.JPEG'
    image/height, image/width      int64, from the image's header
    image/colorspace               b'RGB'  } the image as readers decode it (channels=3),
    image/channels                 3       } as build_imagenet_data.py writes them
    image/class/label              int64, 1..1000 (0 is the background class)
    image/class/synset             b'n01440764'
    image/class/text               b'tench, Tinca tinca'
    image/object/bbox/xmin ... ymax   float[], normalised (x / width), clipped to [0, 1]
    image/object/bbox/label        int64[], the image's label once per box

build_imagenet_data.py re-encoded ImageNet's one PNG and its CMYK JPEGs as RGB JPEGs because
the TensorFlow of 2016 could not decode them; today's `tf.io.decode_jpeg` (and
`decode_image`, and slim's `Image` handler) decode both with channels=3, so this converter
keeps every file's bytes unchanged, as slimdata's other converters do.

Source layout (SRC)::

    train/<synset>/<name>.JPEG      one folder per synset
    validation/<name>.JPEG          flat, as published (`val/` also works), with
    imagenet_2012_validation_synset_labels.txt
                                    the synset of each validation image, one per line, for
                                    the images in sorted order
      or validation/<synset>/...    as slim's preprocess_imagenet_validation_data.py leaves it
    imagenet_lsvrc_2015_synsets.txt (optional) the synsets, one per line: the label is the
                                    line's index + 1; without it, the sorted train/ folders
    imagenet_metadata.txt           (optional) `<synset><TAB><text>` lines; without it, the
                                    text of a class is its synset

The three text files are those of models/research/inception's `data/` folder (and of the
ILSVRC devkit's conversion), and each may be given elsewhere by its option. Bounding boxes
(optional, `bounding_boxes=DIR`) are the ILSVRC XML files (VOC-style, anywhere below DIR),
matched to images by file name: as slim's process_bounding_boxes.py does, each coordinate is
divided by the XML's `<size>` and clipped to [0, 1], and boxes of another synset than the
image's are dropped (each one noted in the summary, as are inverted boxes).

Everything a converter promises holds here too: files read through
`convert_utils.SourcePolicy`, every image checked to its end, errors naming the file (and
line, or object and field), deterministic output for any number of workers, re-runs that
cannot mix data (`slimdata.records.writer`).

Reading::

    dataset = imagenet.get_split('validation', '/data/imagenet')
    provider = slimdata.dataset_data_provider.DatasetDataProvider(dataset)
    image, label = provider.get(['image', 'label'])

The converter (and its worker processes, which run `encode_image`) never imports
TensorFlow: its schema is declared without it (`FEATURES`); the descriptor imports it when
called.
"""

import functools
import hashlib
import logging
import os
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from slimdata import progress
from slimdata.dataset import Dataset
from slimdata.datasets import classification, convert_utils, detection, pascalvoc
from slimdata.deprecation import renamed_argument
from slimdata.records import dataset_info, fs, images
from slimdata.records.example import serialize_example
from slimdata.records.writer import EncodedExample, SplitSource, WriteSummary, write_dataset

LOGGER = logging.getLogger('slimdata')

#: Published split sizes (fallbacks for records without dataset_info.json).
SPLITS_TO_SIZES = {'train': 1281167, 'validation': 50000}
#: 1000 synsets and the background class 0.
NUM_CLASSES = 1001
BACKGROUND = 'background'
#: build_imagenet_data.py names shards `train-00000-of-01024`, without an extension.
SLIM_FILE_PATTERN = '%s-*'

SYNSETS_FILENAME = 'imagenet_lsvrc_2015_synsets.txt'
METADATA_FILENAME = 'imagenet_metadata.txt'
VALIDATION_LABELS_FILENAME = 'imagenet_2012_validation_synset_labels.txt'
TRAIN_FOLDER = 'train'
VALIDATION_FOLDERS = ('validation', 'val')

ITEMS_TO_DESCRIPTIONS = {
    'image': 'A color image of varying height and width.',
    'label': 'The label id of the image, an integer between 1 and 1000 (0: background).',
    'label_text': 'The text of the label.',
    'synset': 'The WordNet id of the label, e.g. n01440764.',
    'object/bbox': 'A list of bounding boxes (ymin, xmin, ymax, xmax in [0, 1]).',
    'object/label': 'A list of labels, one per box (the image\'s label).',
}

_BOX_FIELDS = ('ymin', 'xmin', 'ymax', 'xmax')
_BBOX_PREFIX = 'image/object/bbox/'
_NO_INTS, _NO_FLOATS = np.zeros(0, np.int64), np.zeros(0, np.float64)


# --- Descriptor -------------------------------------------------------------------------------

#: The feature specs of slim's imagenet.py, plus the synset and build_imagenet_data's
#: `image/object/bbox/label`, as dataset_info.json records them.
FEATURES = {
    'image/encoded': dataset_info.fixed_len([], 'string', ''),
    'image/format': dataset_info.fixed_len([], 'string', 'jpeg'),
    'image/class/label': dataset_info.fixed_len([], 'int64', -1),
    'image/class/text': dataset_info.fixed_len([], 'string', ''),
    'image/class/synset': dataset_info.fixed_len([], 'string', ''),
    **{_BBOX_PREFIX + field: dataset_info.var_len('float32') for field in _BOX_FIELDS},
    'image/object/class/label': dataset_info.var_len('int64'),
    _BBOX_PREFIX + 'label': dataset_info.var_len('int64'),
}


def keys_to_features() -> Dict[str, Any]:
    """The `tf.io` feature specs of the records (`FEATURES`)."""
    return dataset_info.keys_to_features_from_json(FEATURES)


def items_to_handlers() -> Dict[str, Any]:
    """The handlers of ITEMS_TO_DESCRIPTIONS' items.

    slim's imagenet.py reads `object/label` from `image/object/class/label`, a key
    build_imagenet_data.py never writes (its records hold `image/object/bbox/label`), so
    there it is always empty; here the second key backs the first up.
    """
    from slimdata import tfexample_decoder as decoder
    return {
        'image': decoder.Image('image/encoded', 'image/format'),
        'label': decoder.Tensor('image/class/label'),
        'label_text': decoder.Tensor('image/class/text'),
        'synset': decoder.Tensor('image/class/synset'),
        'object/bbox': decoder.BoundingBox(list(_BOX_FIELDS), _BBOX_PREFIX),
        'object/label': decoder.BackupHandler(decoder.Tensor('image/object/class/label'),
                                              decoder.Tensor(_BBOX_PREFIX + 'label')),
    }


def get_split(split_name: str, dataset_dir: str, file_pattern: Optional[str] = None,
              reader: Optional[Any] = None) -> Dataset:
    """The Dataset of one ImageNet split ('train' or 'validation').

    Args:
      split_name: 'train' or 'validation' (or another split recorded in
        `dataset_info.json`).
      dataset_dir: the folder of the shards.
      file_pattern: a pattern with one `%s` for the split; by default `%s-*.tfrecord` when the
        folder has slimdata's `dataset_info.json`, else build_imagenet_data.py's `%s-*`.
      reader: the reader class; defaults to `tf.compat.v1.TFRecordReader`.

    Returns:
      A Dataset with the items of ITEMS_TO_DESCRIPTIONS, `num_classes` (1001) and
      `labels_to_names` (from `dataset_info.json` or `labels.txt`; empty, with a warning,
      when the folder has neither: slim's imagenet.py downloaded the names, which this
      descriptor never does; `write_labels_file` writes them from the synset files).

    Raises:
      ValueError: for an unknown split, or one whose conversion is incomplete.
    """
    from slimdata.datasets import dataset_utils
    converted_here = dataset_info.read_dataset_info(dataset_dir) is not None
    if not converted_here and not dataset_info.has_labels_file(dataset_dir):
        LOGGER.warning('%s has no labels.txt: labels_to_names is empty. Write it with '
                       'slimdata.datasets.imagenet.write_labels_file(%r, SYNSETS_FILE, '
                       'METADATA_FILE)', dataset_dir, dataset_dir)
    return dataset_utils.make_dataset(
        'imagenet', split_name, dataset_dir, keys_to_features(), items_to_handlers(),
        ITEMS_TO_DESCRIPTIONS, SPLITS_TO_SIZES,
        file_pattern=file_pattern or (None if converted_here else SLIM_FILE_PATTERN),
        reader=reader, num_classes=NUM_CLASSES)


# --- Classes: synsets, their texts, labels ------------------------------------------------------

class ImagenetClass(NamedTuple):
    """One class: its synset and its human-readable text (label = index in the list + 1)."""
    synset: str
    text: str


def read_lines(path: str, policy: Optional[convert_utils.SourcePolicy] = None
               ) -> List[Tuple[int, str]]:
    """(line number, stripped line) of the lines of a UTF-8 text file that are not blank."""
    policy = policy or convert_utils.SourcePolicy(os.path.dirname(path) or '.')
    return [(number, line.strip()) for number, line
            in convert_utils.read_text_lines(path, policy, 'a UTF-8 text file')]


def read_synsets(path: str, policy: Optional[convert_utils.SourcePolicy] = None) -> List[str]:
    """The synsets of a synsets file (one per line), in label order.

    Raises:
      ValueError: naming the file and line, for a line with spaces or a synset listed twice.
    """
    synsets: Dict[str, int] = {}
    for number, line in read_lines(path, policy):
        if len(line.split()) != 1:
            raise ValueError(f'{path} line {number}: {line!r} is not one synset')
        if line in synsets:
            raise ValueError(f'{path} line {number}: {line} is listed twice (first on line '
                             f'{synsets[line]})')
        synsets[line] = number
    if not synsets:
        raise ValueError(f'{path} lists no synsets')
    return list(synsets)


def read_metadata(path: str, policy: Optional[convert_utils.SourcePolicy] = None
                  ) -> Dict[str, str]:
    """synset -> text, from `<synset><TAB><text>` lines (imagenet_metadata.txt).

    Raises:
      ValueError: naming the file and line, for a line without a tab.
    """
    texts = {}
    for number, line in read_lines(path, policy):
        synset, tab, text = line.partition('\t')
        if not tab or not synset.strip() or not text.strip():
            raise ValueError(f'{path} line {number}: {line!r} is not '
                             '"<synset><TAB><text>"')
        texts[synset.strip()] = text.strip()
    return texts


def make_classes(synsets: Sequence[str], texts: Optional[Dict[str, str]],
                 metadata_file: Optional[str] = None) -> List[ImagenetClass]:
    """The classes in label order; a synset's text is the synset when `texts` is None.

    Raises:
      ValueError: naming `metadata_file`, if it has no text for a synset.
    """
    if texts is not None:
        missing = [synset for synset in synsets if synset not in texts]
        if missing:
            raise ValueError(f'{metadata_file} has no text for {len(missing)} synset(s), e.g. '
                             f'{", ".join(missing[:3])}')
    return [ImagenetClass(synset, texts[synset] if texts is not None else synset)
            for synset in synsets]


def labels_to_names(classes: Sequence[ImagenetClass]) -> Dict[int, str]:
    """0 -> 'background', then label -> text, as slim's imagenet.py builds it."""
    return {0: BACKGROUND, **{label: c.text for label, c in enumerate(classes, 1)}}


def write_labels_file(dataset_dir: str, synsets_file: str,
                      metadata_file: Optional[str] = None) -> str:
    """Writes slim's `labels.txt` (0:background, 1..: the texts) for records made by
    build_imagenet_data.py, from its synsets and metadata files; returns its path."""
    classes = make_classes(read_synsets(synsets_file),
                           read_metadata(metadata_file) if metadata_file else None,
                           metadata_file)
    return dataset_info.write_labels_file(labels_to_names(classes), dataset_dir)


# --- Listing the source tree ------------------------------------------------------------------

class ImagenetImage(NamedTuple):
    """One source image: its file, its label (1..), and its bounding-box XML (or None)."""
    path: str
    label: int
    boxes_file: Optional[str]


def find_validation_folder(src: str) -> Optional[str]:
    """SRC/validation or SRC/val (None if neither); ValueError if both exist."""
    found = [os.path.join(src, name) for name in VALIDATION_FOLDERS
             if fs.isdir(os.path.join(src, name))]
    if len(found) > 1:
        raise ValueError(f'{src} holds both {" and ".join(found)}; keep one validation folder')
    return found[0] if found else None


def list_synset_folders(folder: str, label_of: Dict[str, int], synsets_source: str,
                        policy: convert_utils.SourcePolicy,
                        skipped: Optional[Dict[str, List[str]]] = None
                        ) -> List[Tuple[str, int]]:
    """(path, label) of `folder/<synset>/<image>`, sorted by path.

    Hidden entries (`.DS_Store`) are left out, and added to `skipped` (reason -> paths).

    Raises:
      ValueError: for a folder that is not a known synset (naming where the synsets came
        from), or anything in the folders that is not a JPEG/PNG image.
    """
    top_files = [name for name in fs.listdir(folder)
                 if not name.startswith('.') and not fs.isdir(os.path.join(folder, name))]
    if top_files:
        raise ValueError(f'{folder} holds synset folders and also files ({top_files[0]}, ...); '
                         'a split folder holds either synset folders or (validation only) '
                         'the images themselves')
    listing = classification.list_class_folders(folder, policy=policy)
    for reason, paths in listing.skipped.items():
        (skipped if skipped is not None else {}).setdefault(reason, []).extend(paths)
    unknown = [name for name in listing.labels_to_names.values() if name not in label_of]
    if unknown:
        raise ValueError(f'{os.path.join(folder, unknown[0])} is not a synset of '
                         f'{synsets_source} ({len(unknown)} such folder(s))')
    return [(path, label_of[listing.labels_to_names[index]]) for path, index in listing.items]


def list_flat_validation(folder: str, labels_file: str, label_of: Dict[str, int],
                         synsets_source: str, policy: convert_utils.SourcePolicy,
                         skipped: Optional[Dict[str, List[str]]] = None
                         ) -> List[Tuple[str, int]]:
    """(path, label) of the flat validation folder, the labels file's lines in the order of
    the sorted file names (hidden files left out, and added to `skipped`).

    Raises:
      ValueError: for a file that is not a JPEG/PNG image, a count that differs from the
        labels file's, or a synset the synsets do not list (naming the line).
    """
    image_filter = classification.ImageFilter('error', policy)
    paths = [path for path in (os.path.join(folder, name)
                               for name in image_filter.visible(folder))
             if image_filter.is_image(path)]
    for reason, hidden in image_filter.skipped.items():
        (skipped if skipped is not None else {}).setdefault(reason, []).extend(hidden)
    if not fs.exists(labels_file):
        raise ValueError(f'{folder} holds the validation images without synset folders, so '
                         f'their labels come from {labels_file}, which does not exist (give '
                         'it with --validation-labels)')
    lines = read_lines(labels_file, policy)
    if len(lines) != len(paths):
        raise ValueError(f'{labels_file} has {len(lines)} labels but {folder} holds '
                         f'{len(paths)} images; it must have one line per image, in the '
                         'order of the sorted file names')
    for number, synset in lines:
        if synset not in label_of:
            raise ValueError(f'{labels_file} line {number}: {synset!r} is not a synset of '
                             f'{synsets_source}')
    return [(path, label_of[synset]) for path, (_, synset) in zip(paths, lines)]


def index_box_files(folder: str, policy: convert_utils.SourcePolicy) -> Dict[str, str]:
    """image name without extension -> its bounding-box XML, for every `.xml` below `folder`.

    Each XML is read later through `policy` (symlinks leaving the roots refused then); a
    folder reached twice through symlinks is walked once, so a link cycle cannot loop.

    Raises:
      ValueError: if two XMLs have the same name (naming both).
    """
    index: Dict[str, str] = {}
    pending, walked = [folder], set()
    while pending:
        current = pending.pop()
        real = current if fs.is_url(current) else os.path.realpath(current)
        if real in walked:
            continue
        walked.add(real)
        for name in fs.listdir(current):
            path = os.path.join(current, name)
            if fs.isdir(path):
                pending.append(path)
            elif name.lower().endswith('.xml'):
                stem = name[:-4]
                if stem in index:
                    raise ValueError(f'{path} and {index[stem]}: two bounding-box files for '
                                     f'the image {stem!r}')
                index[stem] = path
    return index


def _with_boxes(pairs: List[Tuple[str, int]], box_files: Dict[str, str]
                ) -> List[ImagenetImage]:
    return [ImagenetImage(path, label,
                          box_files.get(os.path.splitext(os.path.basename(path))[0]))
            for path, label in pairs]


# --- Encoding one example ---------------------------------------------------------------------

def encode_image(item: ImagenetImage, classes: Sequence[ImagenetClass],
                 on_bad_box: str = 'clip',
                 policy: Optional[convert_utils.SourcePolicy] = None) -> EncodedExample:
    """Reads, checks and serializes one image (the writer's encode function).

    Args:
      item: the image, its label and its bounding-box XML.
      classes: the classes in label order (label 1 is classes[0]).
      on_bad_box: 'clip', 'skip' or 'error' for a box that crosses the image's edge (see
        `detection.check_box`).
      policy: how source files are read and images checked.

    Returns:
      The serialized example, with a note for every dropped or clipped box and every XML
      `<size>` that disagrees with the image.

    Raises:
      ValueError: naming the file (and object index and field) of any bad input.
    """
    policy = policy or convert_utils.SourcePolicy(os.path.dirname(item.path) or '.')
    data, image = policy.read_image(item.path)
    synset, text = classes[item.label - 1]
    boxes: List[detection.Box] = []
    notes: List[Tuple[str, str]] = []
    if item.boxes_file is not None:
        boxes, notes = read_boxes(item.boxes_file, synset, image, item.path, on_bad_box,
                                  policy)
    columns: List[Iterable[float]] = (list(zip(*boxes)) if boxes
                                      else [_NO_FLOATS] * len(_BOX_FIELDS))
    features = {
        'image/height': image.height,
        'image/width': image.width,
        'image/colorspace': b'RGB',
        'image/channels': 3,
        'image/class/label': item.label,
        'image/class/synset': synset.encode('utf-8'),
        'image/class/text': text.encode('utf-8'),
        **{_BBOX_PREFIX + field: [float(v) for v in column] or _NO_FLOATS
           for field, column in zip(_BOX_FIELDS, columns)},
        _BBOX_PREFIX + 'label': [item.label] * len(boxes) or _NO_INTS,
        'image/format': image.format.upper().encode(),
        'image/filename': convert_utils.name_bytes(os.path.basename(item.path)),
        'image/encoded': data,
    }
    return EncodedExample(data=serialize_example(features), notes=tuple(notes))


def read_boxes(xml_path: str, synset: str, image: images.ImageInfo, image_path: str,
               on_bad_box: str, policy: convert_utils.SourcePolicy
               ) -> Tuple[List[detection.Box], List[Tuple[str, str]]]:
    """The normalised (ymin, xmin, ymax, xmax) boxes of `synset` in an ILSVRC XML, and notes.

    Coordinates are divided by the XML's `<size>` (the frame they were drawn in), or by the
    image's size when the XML has none (noted).
    """
    annotation = convert_utils.parse_xml(policy.read(xml_path), xml_path)
    width, height, notes = _annotation_size(annotation, image, xml_path, image_path)
    boxes = []
    for index, element in enumerate(annotation.findall('object')):
        where = f'{xml_path} object {index}'
        name = (element.findtext('name') or '').strip()
        if name != synset:
            notes.append(('box of another synset than the image\'s dropped',
                          f'{where}: {name!r}, the image is {synset}'))
            continue
        bndbox = element.find('bndbox')
        if bndbox is None:
            raise ValueError(f'{where}: no <bndbox>')
        xmin, ymin, xmax, ymax = [pascalvoc.box_coordinate(bndbox, field, where)
                                  for field in ('xmin', 'ymin', 'xmax', 'ymax')]
        box, box_notes = detection.check_box(
            (ymin / height, xmin / width, ymax / height, xmax / width), on_bad_box, where)
        notes.extend(box_notes)
        if box is not None:
            boxes.append(box)
    return boxes, notes


def _annotation_size(annotation: Any, image: images.ImageInfo, xml_path: str,
                     image_path: str) -> Tuple[int, int, List[Tuple[str, str]]]:
    size, fields = convert_utils.annotation_size(annotation)
    if size is None or min(size) <= 0:
        return image.width, image.height, [(
            'boxes normalised by the image size: XML <size> missing or unreadable',
            f'{xml_path}: <size> gives width={fields[0]!r} height={fields[1]!r}')]
    if size != (image.width, image.height):
        return size[0], size[1], [(
            'XML <size> differs from the image (boxes normalised by the XML\'s)',
            f'{xml_path} says {size[0]}x{size[1]}, {image_path} is '
            f'{image.width}x{image.height}')]
    return size[0], size[1], []


def _files_of(item: ImagenetImage) -> List[str]:
    return [item.path] + ([item.boxes_file] if item.boxes_file else [])


# --- Converter --------------------------------------------------------------------------------

@renamed_argument('workers', 'processes')
def convert_imagenet(src: str, output_dir: str, bounding_boxes: Optional[str] = None,
                     synsets_file: Optional[str] = None, metadata_file: Optional[str] = None,
                     validation_labels_file: Optional[str] = None, seed: Optional[int] = 0,
                     splits: Optional[Union[str, Sequence[str]]] = None,
                     num_shards: Optional[int] = None, processes: int = 1,
                     on_bad_box: str = 'clip', overwrite: bool = False,
                     beam_options: Optional[Sequence[str]] = None,
                     **source_options: Any) -> Dict[str, WriteSummary]:
    """Converts an ILSVRC-2012 tree (see the module docstring) to 'train' and 'validation'.

    Args:
      src: the folder of train/ and validation/ (either may be absent, not both).
      output_dir: the folder of the shards, `dataset_info.json` and `labels.txt`.
      bounding_boxes: a folder of ILSVRC bounding-box XMLs, or None.
      synsets_file, metadata_file, validation_labels_file: the text files; None looks for
        SYNSETS_FILENAME, METADATA_FILENAME, VALIDATION_LABELS_FILENAME in `src`.
      seed: the seed of the order in the shards; None keeps the sorted order.
      splits: 'train', 'validation' or both (None: those `src` holds).
      num_shards, processes, overwrite, beam_options: see
        `classification.convert_image_folder` (by size, ImageNet's train split gets 1024
        shards and its validation split 64, as build_imagenet_data.py's 1024 and 128).
      on_bad_box: 'clip' (the default, as process_bounding_boxes.py), 'skip' or 'error'.
      **source_options: `check_images`, `follow_symlinks`, `max_file_bytes`,
        `max_image_pixels` (see `convert_utils.SourcePolicy`; `src` is the root, and the
        given files and bounding-box folder may lie outside it).

    Returns:
      split -> its WriteSummary.
    """
    if on_bad_box not in detection.BAD_BOX_POLICIES:
        raise ValueError(f'on_bad_box={on_bad_box!r}; expected one of '
                         f'{detection.BAD_BOX_POLICIES}')
    given = [path for path in (bounding_boxes, synsets_file, metadata_file,
                               validation_labels_file) if path]
    policy = convert_utils.SourcePolicy(
        src, other_roots=tuple(path if fs.isdir(path) else os.path.dirname(path) or '.'
                               for path in given), **source_options)
    train_path = os.path.join(src, TRAIN_FOLDER)
    train_dir = train_path if fs.isdir(train_path) else None
    validation_dir = find_validation_folder(src)
    if train_dir is None and validation_dir is None:
        raise ValueError(f'{src} holds neither {TRAIN_FOLDER}/ nor {VALIDATION_FOLDERS[0]}/; '
                         'expected the ILSVRC-2012 layout (see --help)')
    selected = convert_utils.select_splits(
        [split for split, folder in (('train', train_dir), ('validation', validation_dir))
         if folder], splits, src)
    classes, synsets_source = _read_classes(src, train_dir, synsets_file, metadata_file, policy)
    label_of = {c.synset: label for label, c in enumerate(classes, 1)}
    box_files = index_box_files(bounding_boxes, policy) if bounding_boxes else {}
    listed: Dict[str, List[ImagenetImage]] = {}
    skipped: Dict[str, List[str]] = {}
    if train_dir is not None and 'train' in selected:
        listed['train'] = _with_boxes(
            list_synset_folders(train_dir, label_of, synsets_source, policy, skipped),
            box_files)
    if validation_dir is not None and 'validation' in selected:
        listed['validation'] = _with_boxes(_list_validation(
            src, validation_dir, validation_labels_file, label_of, synsets_source, policy,
            skipped), box_files)
    _report_listing(src, listed, classes, synsets_source, bounding_boxes, box_files)
    options = {'converter': 'imagenet', 'seed': seed, 'on_bad_box': on_bad_box,
               'classes_sha256': hashlib.sha256(repr(classes).encode()).hexdigest(),
               **policy.options()}
    encode = functools.partial(encode_image, classes=tuple(classes), on_bad_box=on_bad_box,
                               policy=policy)
    sources = [SplitSource(split, convert_utils.deterministic_shuffle(items, seed), encode,
                           num_shards, options, _files_of, desc=f'imagenet {split}')
               for split, items in listed.items()]
    summaries = write_dataset(
        output_dir, sources, dataset_name='imagenet', labels_to_names=labels_to_names(classes),
        keys_to_features=FEATURES, extra={'num_classes': len(classes) + 1},
        processes=processes, overwrite=overwrite, beam_options=beam_options)
    for reason, paths in skipped.items():
        next(iter(summaries.values())).skipped.setdefault(reason, []).extend(paths)
    return summaries


def _read_classes(src: str, train_dir: Optional[str], synsets_file: Optional[str],
                  metadata_file: Optional[str], policy: convert_utils.SourcePolicy
                  ) -> Tuple[List[ImagenetClass], str]:
    """The classes and where their synsets came from (for messages)."""
    synsets_file = synsets_file or _existing(os.path.join(src, SYNSETS_FILENAME))
    if synsets_file:
        synsets, source = read_synsets(synsets_file, policy), synsets_file
    elif train_dir:
        synsets = [name for name in fs.listdir(train_dir)
                   if not name.startswith('.') and fs.isdir(os.path.join(train_dir, name))]
        source = f'the folders of {train_dir}'
    else:
        raise ValueError(f'{src} has no {TRAIN_FOLDER}/ folder to take the synsets from and no '
                         f'{SYNSETS_FILENAME}; give the synsets file with --synsets')
    metadata_file = metadata_file or _existing(os.path.join(src, METADATA_FILENAME))
    texts = read_metadata(metadata_file, policy) if metadata_file else None
    if texts is None:
        progress.info(f'imagenet: no {METADATA_FILENAME}: each class\'s text is its synset')
    return make_classes(synsets, texts, metadata_file), source


def _existing(path: str) -> Optional[str]:
    return path if fs.exists(path) else None


def _list_validation(src: str, folder: str, labels_file: Optional[str],
                     label_of: Dict[str, int], synsets_source: str,
                     policy: convert_utils.SourcePolicy, skipped: Dict[str, List[str]]
                     ) -> List[Tuple[str, int]]:
    if any(fs.isdir(os.path.join(folder, name)) for name in fs.listdir(folder)
           if not name.startswith('.')):
        return list_synset_folders(folder, label_of, synsets_source, policy, skipped)
    return list_flat_validation(
        folder, labels_file or os.path.join(src, VALIDATION_LABELS_FILENAME), label_of,
        synsets_source, policy, skipped)


def _report_listing(src: str, splits: Dict[str, List[ImagenetImage]],
                    classes: Sequence[ImagenetClass], synsets_source: str,
                    bounding_boxes: Optional[str], box_files: Dict[str, str]) -> None:
    counts = ', '.join(f'{len(items)} {split}' for split, items in splits.items())
    progress.info(f'imagenet: {counts} images of {src}, {len(classes)} classes from '
                  f'{synsets_source}')
    if bounding_boxes:
        matched = sum(item.boxes_file is not None for items in splits.values()
                      for item in items)
        progress.info(f'imagenet: {len(box_files)} bounding-box files in {bounding_boxes}, '
                      f'{matched} of them for these images')
