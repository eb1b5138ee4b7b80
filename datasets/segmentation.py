"""Semantic segmentation in the deeplab layout: converters and descriptors.

Records are those of tensorflow/models research/deeplab (`build_voc2012_data.py`,
`build_cityscapes_data.py`, `build_ade20k_data.py`), so deeplab's input code reads them
unchanged::

    image/encoded                     the image file's bytes, unchanged
    image/filename                    the image id, e.g. b'2007_000032'
    image/format                      b'jpeg' or b'png', from the bytes
    image/height, image/width         int64
    image/channels                    3
    image/segmentation/class/encoded  a one-channel PNG of class indices
    image/segmentation/class/format   b'png'

Converters read three source trees:

  pascal_voc_seg  VOC2012: ImageSets/Segmentation/<split>.txt, JPEGImages/<id>.jpg and
                  SegmentationClassRaw/<id>.png (indices) or SegmentationClass/<id>.png
                  (palette PNGs: the palette index is the class, 255 the boundary). SRC is
                  the VOC2012 folder, the VOCdevkit root or the folder holding VOCdevkit/,
                  as for the detection converter.
  cityscapes      leftImg8bit/<split>/<city>/*_leftImg8bit.png and
                  gtFine/<split>/<city>/*_gtFine_labelTrainIds.png; splits train, val, test
                  are written as train_fine, val_fine, test_fine, as deeplab names them.
  ade20k          ADEChallengeData2016: images/{training,validation}/*.jpg and
                  annotations/{training,validation}/*.png; written as train, val.

Every label map is stored as a freshly encoded 8-bit grayscale PNG of class indices (a palette
PNG's indices are read directly, never through RGB colours). A label value that is neither
below `num_classes` nor `ignore_label` is an error naming the file and the values, or, with
`on_bad_label='ignore'`, becomes `ignore_label` and is counted in the summary. Source files
are read through `convert_utils.SourcePolicy` (nothing outside the root, nothing but regular
files, a size bound), every image is checked (`slimdata.records.images`) and every label map
decoded. Image ids taken from file names are stored as the names' bytes, UTF-8 or not.

Descriptors: `get_split('pascal_voc_seg' | 'cityscapes' | 'ade20k', split, dataset_dir)`
with items `image`, `image_name`, `height`, `width`, `labels_class` and the attributes
`num_classes` and `ignore_label`, as deeplab's `segmentation_dataset.get_dataset` declares.

The converters (and their worker processes, which run the encode functions) never import
TensorFlow: the schema they record is declared without it (`FEATURES`); the descriptors
import it when called.
"""

import dataclasses
import functools
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from slimdata import progress
from slimdata.dataset import Dataset
from slimdata.datasets import convert_utils, pascalvoc
from slimdata.deprecation import renamed_argument
from slimdata.records import dataset_info, fs, images
from slimdata.records.example import serialize_example
from slimdata.records.writer import EncodedExample, SplitSource, WriteSummary, write_dataset

ON_BAD_LABEL_CHOICES = ('error', 'ignore')
BAD_LABEL_NOTE = 'label values mapped to ignore_label'

VOC_LABEL_DIRS = ('SegmentationClassRaw', 'SegmentationClass')

_VOC_NAMES = ('background', 'aeroplane', 'bicycle', 'bird', 'boat', 'bottle', 'bus', 'car',
              'cat', 'chair', 'cow', 'diningtable', 'dog', 'horse', 'motorbike', 'person',
              'pottedplant', 'sheep', 'sofa', 'train', 'tvmonitor')
_CITYSCAPES_NAMES = ('road', 'sidewalk', 'building', 'wall', 'fence', 'pole', 'traffic light',
                     'traffic sign', 'vegetation', 'terrain', 'sky', 'person', 'rider', 'car',
                     'truck', 'bus', 'train', 'motorcycle', 'bicycle')

#: Cityscapes source split folder -> the record split name deeplab uses.
CITYSCAPES_SPLITS = {'train': 'train_fine', 'val': 'val_fine', 'test': 'test_fine'}
#: ADE20K record split name -> its source folder.
ADE20K_FOLDERS = {'train': 'training', 'val': 'validation'}

_CITYSCAPES_IMAGE_SUFFIX = '_leftImg8bit.png'
_CITYSCAPES_LABEL_SUFFIX = '_gtFine_labelTrainIds.png'

_ITEMS_TO_DESCRIPTIONS = {
    'image': 'A color image of varying height and width.',
    'image_name': 'The image id (the file name without extension).',
    'height': 'The image height.',
    'width': 'The image width.',
    'labels_class': ('A semantic segmentation label whose size matches the image; each pixel '
                     'is a class index, or ignore_label.'),
}


@dataclasses.dataclass(frozen=True)
class SegmentationDatasetInfo:
    """The published facts of a segmentation dataset (deeplab's DatasetDescriptor).

    Attributes:
      splits_to_sizes: split name -> number of examples.
      num_classes: classes including the background class, if there is one.
      ignore_label: the label value of pixels to ignore.
      labels_to_names: class index -> name, when published.
    """
    splits_to_sizes: Mapping[str, int]
    num_classes: int
    ignore_label: int
    labels_to_names: Optional[Mapping[int, str]] = None


#: Fallbacks for records without `dataset_info.json` (deeplab's data_generator.py).
PUBLISHED_DATASETS = {
    'pascal_voc_seg': SegmentationDatasetInfo(
        splits_to_sizes={'train': 1464, 'train_aug': 10582, 'trainval': 2913, 'val': 1449},
        num_classes=21, ignore_label=255, labels_to_names=dict(enumerate(_VOC_NAMES))),
    'cityscapes': SegmentationDatasetInfo(
        splits_to_sizes={'train_fine': 2975, 'train_coarse': 22973, 'trainval_fine': 3475,
                         'trainval_coarse': 23473, 'val_fine': 500, 'test_fine': 1525},
        num_classes=19, ignore_label=255, labels_to_names=dict(enumerate(_CITYSCAPES_NAMES))),
    'ade20k': SegmentationDatasetInfo(
        splits_to_sizes={'train': 20210, 'val': 2000}, num_classes=151, ignore_label=0),
}


# ----------------------------------------------------------------------------------------
# Record layout and descriptors


#: The feature specs of deeplab's records (defaults as deeplab declares them), as
#: dataset_info.json records them.
FEATURES = {
    'image/encoded': dataset_info.fixed_len([], 'string', ''),
    'image/filename': dataset_info.fixed_len([], 'string', ''),
    'image/format': dataset_info.fixed_len([], 'string', 'jpeg'),
    'image/height': dataset_info.fixed_len([], 'int64', 0),
    'image/width': dataset_info.fixed_len([], 'int64', 0),
    'image/segmentation/class/encoded': dataset_info.fixed_len([], 'string', ''),
    'image/segmentation/class/format': dataset_info.fixed_len([], 'string', 'png'),
}


def keys_to_features() -> Dict[str, Any]:
    """The `tf.io` feature specs of deeplab's records (`FEATURES`)."""
    return dataset_info.keys_to_features_from_json(FEATURES)


def items_to_handlers() -> Dict[str, Any]:
    """The items deeplab's input pipeline asks the DatasetDataProvider for."""
    from slimdata import tfexample_decoder
    return {
        'image': tfexample_decoder.Image(image_key='image/encoded', format_key='image/format',
                                         channels=3),
        'image_name': tfexample_decoder.Tensor('image/filename'),
        'height': tfexample_decoder.Tensor('image/height'),
        'width': tfexample_decoder.Tensor('image/width'),
        'labels_class': tfexample_decoder.Image(
            image_key='image/segmentation/class/encoded',
            format_key='image/segmentation/class/format', channels=1),
    }


def get_split(dataset_name: str, split_name: str, dataset_dir: str,
              file_pattern: Optional[str] = None, reader: Optional[Any] = None) -> Dataset:
    """The Dataset of one split of a deeplab segmentation dataset.

    Args:
      dataset_name: 'pascal_voc_seg', 'cityscapes' or 'ade20k'.
      split_name: e.g. 'train', 'val', 'train_fine'; any split recorded in the folder's
        `dataset_info.json`, or a published one.
      dataset_dir: the folder of the shards.
      file_pattern: a pattern with one `%s` for the split; defaults to `%s-*.tfrecord`,
        which also matches the shards deeplab's own build_*_data.py scripts write.
      reader: the reader class; defaults to `tf.compat.v1.TFRecordReader`.

    Returns:
      A Dataset with the attributes `num_classes` and `ignore_label` (from the folder's
      `dataset_info.json`, else the published values), as deeplab's
      `segmentation_dataset.get_dataset` sets them.

    Raises:
      ValueError: for an unknown dataset or split name.
    """
    from slimdata.datasets import dataset_utils
    published = _published(dataset_name)
    # make_dataset lets what the converter recorded in dataset_info.json (a custom dataset in
    # a published layout) win over these published values.
    return dataset_utils.make_dataset(
        dataset_name, split_name, dataset_dir, keys_to_features(), items_to_handlers(),
        _ITEMS_TO_DESCRIPTIONS, published.splits_to_sizes, published.labels_to_names,
        file_pattern=file_pattern, reader=reader, num_classes=published.num_classes,
        ignore_label=published.ignore_label)


def _published(dataset_name: str) -> SegmentationDatasetInfo:
    if dataset_name not in PUBLISHED_DATASETS:
        raise ValueError(f'unknown segmentation dataset {dataset_name!r}; known: '
                         f'{sorted(PUBLISHED_DATASETS)}')
    return PUBLISHED_DATASETS[dataset_name]


def _published_labels(dataset_name: str, num_classes: int) -> Optional[Mapping[int, str]]:
    """The published class names, unless `num_classes` says these are other classes."""
    published = _published(dataset_name)
    return published.labels_to_names if num_classes == published.num_classes else None


# ----------------------------------------------------------------------------------------
# Encoding one example


@dataclasses.dataclass(frozen=True)
class SegmentationSource:
    """One source example: an image file, its label map file and the image id."""
    image_path: str
    label_path: str
    image_name: str


def read_class_indices(path: str,
                       policy: Optional[convert_utils.SourcePolicy] = None) -> np.ndarray:
    """Reads a label PNG as a [height, width] uint8 array of class indices.

    A grayscale PNG holds the indices; of a palette PNG the palette indices are the classes
    (VOC's SegmentationClass), read without going through its colours.

    Raises:
      ValueError: naming the file, if it is not a PNG or not a single-channel 8-bit map.
    """
    policy = policy or convert_utils.SourcePolicy(os.path.dirname(path) or '.')
    data = policy.read(path)
    if images.image_format_of(data) != 'png':
        raise ValueError(f'label file {path} is not a PNG; label maps must be lossless '
                         'PNGs of class indices')
    images.check_png(data, path, policy.max_image_pixels)
    label = images.decode_with_pillow(data, path)
    if label.mode not in ('L', 'P'):
        raise ValueError(f'label PNG {path} has mode {label.mode!r} '
                         f'({len(label.getbands())} channel(s)); expected an 8-bit '
                         'single-channel PNG of class indices (mode L) or a palette PNG '
                         '(mode P), not colours')
    return np.asarray(label)


def encode_segmentation_example(source: SegmentationSource, num_classes: int,
                                ignore_label: int, on_bad_label: str,
                                policy: Optional[convert_utils.SourcePolicy] = None
                                ) -> EncodedExample:
    """Reads, validates and serializes one image and its label map (the writer's `encode`).

    Args:
      source: the files and the image id.
      num_classes: label values below this are classes.
      ignore_label: the one other value a label may hold.
      on_bad_label: 'error' to refuse any other value, 'ignore' to store it as
        `ignore_label` (noted in the summary).
      policy: how source files are read and images checked; by default, files inside the
        image's folder with the structure check.

    Raises:
      ValueError: naming the file(s), for a corrupt or non-JPEG/PNG image, a bad label PNG,
        an image/label size mismatch, or (with 'error') label values out of range.
    """
    policy = policy or convert_utils.SourcePolicy(
        os.path.commonpath([source.image_path, source.label_path]))
    image_data, image = policy.read_image(source.image_path)
    labels = read_class_indices(source.label_path, policy)
    if labels.shape != (image.height, image.width):
        raise ValueError(f'size mismatch: image {source.image_path} is '
                         f'{image.width}x{image.height} (WxH) but label {source.label_path} '
                         f'is {labels.shape[1]}x{labels.shape[0]}')
    notes: Tuple[Tuple[str, str], ...] = ()
    bad = (labels >= num_classes) & (labels != ignore_label)
    if bad.any():
        values = np.unique(labels[bad]).tolist()
        if on_bad_label == 'error':
            raise ValueError(f'label {source.label_path} holds values {values}, which are '
                             f'neither < num_classes ({num_classes}) nor ignore_label '
                             f'({ignore_label}); pass on_bad_label=\'ignore\' '
                             '(--on-bad-label ignore) to store them as ignore_label')
        labels = np.where(bad, np.uint8(ignore_label), labels)
        notes = ((BAD_LABEL_NOTE, f'{source.label_path}: {int(bad.sum())} pixels, '
                                  f'values {values}'),)
    data = serialize_example(record_features(image_data, image.format,
                                             convert_utils.name_bytes(source.image_name),
                                             labels))
    return EncodedExample(data, notes)


def record_features(image: bytes, image_format: str, image_name: Any,
                    labels: np.ndarray) -> Dict[str, Any]:
    """The features of one record in deeplab's layout (see `keys_to_features`), for
    `slimdata.records.example.serialize_example`.

    Args:
      image: the encoded 3-channel image.
      image_format: 'jpeg' or 'png'.
      image_name: the image id (str, or bytes for a name that is not UTF-8).
      labels: [height, width] uint8 class indices (or ignore_label), stored as a PNG.
    """
    height, width = labels.shape
    return {
        'image/encoded': image,
        'image/filename': image_name,
        'image/format': image_format,
        'image/height': height,
        'image/width': width,
        'image/channels': 3,
        'image/segmentation/class/encoded': convert_utils.encode_png(labels),
        'image/segmentation/class/format': 'png',
    }


# ----------------------------------------------------------------------------------------
# Listing the source trees


def resolve_voc_label_dir(voc_folder: str, label_dir: Optional[str] = None) -> str:
    """The folder of VOC label PNGs: `label_dir` (relative to `voc_folder`, or absolute), else
    SegmentationClassRaw if present, else SegmentationClass.

    Raises:
      ValueError: if the folder does not exist.
    """
    candidates = [label_dir] if label_dir else list(VOC_LABEL_DIRS)
    for candidate in candidates:
        path = os.path.join(voc_folder, candidate)
        if fs.isdir(path):
            return path
    raise ValueError(f'no label folder in {voc_folder}: looked for '
                     f'{", ".join(os.path.join(voc_folder, c) for c in candidates)}')


def list_voc_seg(voc_folder: str, split: str, label_dir: str,
                 policy: Optional[convert_utils.SourcePolicy] = None
                 ) -> List[SegmentationSource]:
    """The examples of `ImageSets/Segmentation/<split>.txt`, in list order.

    Raises:
      ValueError: for a missing list, a bad line, an entry that escapes `voc_folder`, or a
        missing image or label file (naming both).
    """
    policy = policy or convert_utils.SourcePolicy(voc_folder)
    list_dir = os.path.join(voc_folder, 'ImageSets', 'Segmentation')
    list_file = os.path.join(list_dir, f'{split}.txt')
    if not fs.exists(list_file):
        available = [name[:-4] for name in _listdir(list_dir) if name.endswith('.txt')]
        raise convert_utils.UnknownSplitError(f'no list file {list_file} for split {split!r}; '
                                              f'lists in {list_dir}: {available}')
    sources = []
    for line_number, line in convert_utils.read_text_lines(list_file, policy,
                                                           'a text file of image ids'):
        tokens = line.split()
        if len(tokens) != 1:
            raise ValueError(f'{list_file}:{line_number}: expected one image id per line, '
                             f'got {line.strip()!r}')
        image_id = convert_utils.check_printable_id(tokens[0], f'{list_file}:{line_number}')
        _check_inside_root(image_id, list_file, line_number)
        sources.append(_existing_pair(os.path.join(voc_folder, 'JPEGImages', f'{image_id}.jpg'),
                                      os.path.join(label_dir, f'{image_id}.png'), image_id))
    return sources


def _listdir(folder: str) -> List[str]:
    """The names in `folder`, sorted; none when it does not exist."""
    return fs.listdir(folder) if fs.isdir(folder) else []


def list_cityscapes(src: str, split: str) -> List[SegmentationSource]:
    """The fine-annotated examples of a Cityscapes split folder ('train', 'val', 'test'),
    sorted by city and file name.

    Raises:
      ValueError: for a missing split folder, no images, or a missing label file.
    """
    image_root = os.path.join(src, 'leftImg8bit', split)
    if not fs.isdir(image_root):
        image_splits = os.path.join(src, 'leftImg8bit')
        raise ValueError(f'no Cityscapes image folder {image_root}; splits in {image_splits}: '
                         f'{_listdir(image_splits)}')
    sources = []
    for city in _listdir(image_root):
        for name in _listdir(os.path.join(image_root, city)):
            if name.endswith(_CITYSCAPES_IMAGE_SUFFIX):
                image_id = name[:-len(_CITYSCAPES_IMAGE_SUFFIX)]
                sources.append(_existing_pair(
                    os.path.join(image_root, city, name),
                    os.path.join(src, 'gtFine', split, city,
                                 image_id + _CITYSCAPES_LABEL_SUFFIX),
                    image_id))
    if not sources:
        raise ValueError(f'no *{_CITYSCAPES_IMAGE_SUFFIX} images in {image_root}/<city>/')
    return sources


def list_ade20k(src: str, split: str) -> List[SegmentationSource]:
    """The examples of an ADE20K split ('train' or 'val'), sorted by file name.

    Raises:
      ValueError: for an unknown split, a missing folder, no images, or a missing label.
    """
    if split not in ADE20K_FOLDERS:
        raise convert_utils.UnknownSplitError(f'unknown ADE20K split {split!r}; expected one '
                                              f'of {sorted(ADE20K_FOLDERS)}')
    folder = ADE20K_FOLDERS[split]
    image_root = os.path.join(src, 'images', folder)
    if not fs.isdir(image_root):
        raise ValueError(f'no ADE20K image folder {image_root} (expected the '
                         'ADEChallengeData2016 folder as SRC)')
    sources = [_existing_pair(os.path.join(image_root, name),
                              os.path.join(src, 'annotations', folder, name[:-4] + '.png'),
                              name[:-4])
               for name in _listdir(image_root) if name.endswith('.jpg')]
    if not sources:
        raise ValueError(f'no .jpg images in {image_root}')
    return sources


def _check_inside_root(entry: str, list_file: str, line_number: int) -> None:
    parts = entry.replace('\\', '/').split('/')
    if os.path.isabs(entry) or entry.startswith(('/', '\\')) or '..' in parts:
        raise ValueError(f'{list_file}:{line_number}: entry {entry!r} points outside the '
                         'dataset root; list entries must be image ids relative to it')


def _existing_pair(image_path: str, label_path: str, image_name: str) -> SegmentationSource:
    missing = [path for path in (image_path, label_path) if not fs.exists(path)]
    if missing:
        raise ValueError(f'missing {" and ".join(missing)} (image {image_path}, '
                         f'label {label_path})')
    return SegmentationSource(image_path, label_path, image_name)


# ----------------------------------------------------------------------------------------
# Converters


@renamed_argument('workers', 'processes')
def convert_voc_seg(src: str, output_dir: str,
                    splits: Union[str, Sequence[str]] = ('train', 'val'),
                    label_dir: Optional[str] = None, num_classes: Optional[int] = None,
                    ignore_label: Optional[int] = None, on_bad_label: str = 'error',
                    num_shards: Optional[int] = None, processes: int = 1,
                    seed: Optional[int] = 0, overwrite: bool = False,
                    beam_options: Optional[Sequence[str]] = None, year: str = '2012',
                    classes: Optional[str] = None,
                    **source_options: Any) -> Dict[str, WriteSummary]:
    """Converts splits of a VOC segmentation tree to deeplab records.

    Args:
      src: the VOC<year> folder (VOCdevkit/VOC2012), the VOCdevkit root, or the folder
        holding VOCdevkit/ (as `pascalvoc.convert_voc` takes); the VOC folder holds
        ImageSets/Segmentation/<split>.txt, JPEGImages/ and SegmentationClassRaw/ or
        SegmentationClass/.
      output_dir: the folder of the shards and `dataset_info.json`.
      splits: list file names, e.g. 'train', ['train', 'val'], 'trainval', 'train_aug'.
      label_dir: the folder of label PNGs, relative to the VOC folder or absolute; default
        SegmentationClassRaw if present, else SegmentationClass (palette PNGs).
      num_classes, ignore_label: for a custom dataset in the VOC layout; default VOC's
        21 and 255. Recorded in `dataset_info.json`.
      on_bad_label: 'error' or 'ignore' (see `encode_segmentation_example`).
      num_shards: shards per split; None chooses them by the split's size
        (`slimdata.records.writer.shards_for_size`).
      processes: processes that read, check and encode the examples (1: this one).
      seed: shuffles the examples into the shards; None keeps the list's order.
      overwrite: replace splits of other input already in `output_dir` (see
        `slimdata.records.writer`); without it, such a re-run is refused.
      beam_options: write the shards with an Apache Beam pipeline with these pipeline
        options (e.g. ['--runner=DirectRunner']); None writes them with local processes.
      year: the VOC edition whose folder `src` holds (deeplab's is 2012).
      classes: the names of a custom dataset's classes, class index 0 first
        (`class_names`): into labels.txt and dataset_info.json, and `slimdata show`'s
        legend; `num_classes` defaults to their number.
      **source_options: `check_images`, `follow_symlinks`, `max_file_bytes`,
        `max_image_pixels` (see `convert_utils.SourcePolicy`; `src` is the root).

    Returns:
      split -> its WriteSummary.
    """
    names = None if classes is None else class_names(classes, num_classes)
    voc_folder, found_as = pascalvoc.find_voc_folder(
        src, year, marker=os.path.join('ImageSets', 'Segmentation'))
    resolved_label_dir = resolve_voc_label_dir(voc_folder, label_dir)
    policy = convert_utils.SourcePolicy(src, other_roots=(resolved_label_dir,),
                                        **source_options)
    progress.info(f'pascal_voc_seg: {voc_folder} ({src} is {found_as}), labels from '
                  f'{resolved_label_dir}')
    published = PUBLISHED_DATASETS['pascal_voc_seg']
    return _convert('pascal_voc_seg',
                    {split: list_voc_seg(voc_folder, split, resolved_label_dir, policy)
                     for split in _as_list(splits)},
                    output_dir, len(names) if names else _or(num_classes, published.num_classes),
                    _or(ignore_label, published.ignore_label), on_bad_label, num_shards,
                    processes, seed, overwrite, beam_options, policy,
                    extra={'label_dir': os.path.basename(resolved_label_dir)},
                    labels_to_names=dict(enumerate(names)) if names else None)


def class_names(spec: str, num_classes: Optional[int]) -> Tuple[str, ...]:
    """The class names of `--classes SPEC` for segmentation, class index 0 first: a comma
    list, a file of names one a line, or a `labels.txt` (`id:name`, ids 0..n-1).

    Raises:
      ValueError: naming SPEC, if a name is empty, has a control character or is given
        twice, a labels.txt's ids are not 0..n-1, or the names are not `num_classes`.
    """
    names, ids = convert_utils.read_class_spec(spec)
    if ids is not None and list(ids) != list(range(len(ids))):
        raise ValueError(f'--classes {spec}: the class ids are {list(ids)}; a segmentation '
                         'map\'s classes are its pixel values 0..n-1, each named once')
    for index, name in enumerate(names):
        if not name or any(ord(char) < 32 or ord(char) == 127 for char in name):
            raise ValueError(f'--classes {spec}: class {index} has the name {name!r}; expected '
                             'a non-empty name without control characters')
        if name in names[:index]:
            raise ValueError(f'--classes {spec}: class name {name!r} is given twice')
    if num_classes is not None and len(names) != num_classes:
        raise ValueError(f'--classes {spec} names {len(names)} classes, but num_classes is '
                         f'{num_classes}')
    return names


@renamed_argument('workers', 'processes')
def convert_cityscapes(src: str, output_dir: str,
                       splits: Union[str, Sequence[str]] = ('train', 'val'),
                       on_bad_label: str = 'error', num_shards: Optional[int] = None,
                       processes: int = 1, seed: Optional[int] = 0, overwrite: bool = False,
                       beam_options: Optional[Sequence[str]] = None,
                       **source_options: Any) -> Dict[str, WriteSummary]:
    """Converts splits of a Cityscapes tree (fine annotations, train ids) to records.

    Args:
      src: the Cityscapes folder holding leftImg8bit/ and gtFine/ (the train-id PNGs made by
        cityscapesscripts' createTrainIdLabelImgs).
      output_dir: the folder of the shards and `dataset_info.json`.
      splits: 'train', 'val', 'test' or a list of them (or deeplab's names 'train_fine',
        'val_fine', 'test_fine'); written as train_fine, val_fine, test_fine.
      on_bad_label: 'error' or 'ignore' (see `encode_segmentation_example`).
      num_shards, processes, overwrite, beam_options, **source_options: as for
        `convert_voc_seg`.
      seed: shuffles the examples into the shards; None keeps the sorted order.

    Returns:
      record split name (train_fine, ...) -> its WriteSummary.
    """
    policy = convert_utils.SourcePolicy(src, **source_options)
    by_record_split = {}
    for split in _as_list(splits):
        source_split = {record: source for source, record in CITYSCAPES_SPLITS.items()}.get(
            split, split)
        if source_split not in CITYSCAPES_SPLITS:
            raise convert_utils.UnknownSplitError(
                f'unknown Cityscapes split {split!r}; expected one of '
                f'{sorted(CITYSCAPES_SPLITS)} (or {sorted(CITYSCAPES_SPLITS.values())})')
        by_record_split[CITYSCAPES_SPLITS[source_split]] = list_cityscapes(src, source_split)
    published = PUBLISHED_DATASETS['cityscapes']
    return _convert('cityscapes', by_record_split, output_dir, published.num_classes,
                    published.ignore_label, on_bad_label, num_shards, processes, seed,
                    overwrite, beam_options, policy)


@renamed_argument('workers', 'processes')
def convert_ade20k(src: str, output_dir: str,
                   splits: Union[str, Sequence[str]] = ('train', 'val'),
                   on_bad_label: str = 'error', num_shards: Optional[int] = None,
                   processes: int = 1, seed: Optional[int] = 0, overwrite: bool = False,
                   beam_options: Optional[Sequence[str]] = None,
                   **source_options: Any) -> Dict[str, WriteSummary]:
    """Converts splits of the ADE20K scene-parsing tree (ADEChallengeData2016) to records.

    Args:
      src: the ADEChallengeData2016 folder, holding images/{training,validation}/*.jpg and
        annotations/{training,validation}/*.png.
      output_dir: the folder of the shards and `dataset_info.json`.
      splits: 'train' (images/training), 'val' (images/validation), or both.
      on_bad_label: 'error' or 'ignore' (see `encode_segmentation_example`).
      num_shards, processes, overwrite, beam_options, **source_options: as for
        `convert_voc_seg`.
      seed: shuffles the examples into the shards; None keeps the sorted order.

    Returns:
      split -> its WriteSummary.
    """
    policy = convert_utils.SourcePolicy(src, **source_options)
    published = PUBLISHED_DATASETS['ade20k']
    return _convert('ade20k', {split: list_ade20k(src, split) for split in _as_list(splits)},
                    output_dir, published.num_classes, published.ignore_label, on_bad_label,
                    num_shards, processes, seed, overwrite, beam_options, policy)


def _as_list(splits: Union[str, Sequence[str]]) -> List[str]:
    return [splits] if isinstance(splits, str) else list(dict.fromkeys(splits))


def _convert(dataset_name: str, splits: Mapping[str, List[SegmentationSource]],
             output_dir: str, num_classes: int, ignore_label: int, on_bad_label: str,
             num_shards: Optional[int], processes: int, seed: Optional[int], overwrite: bool,
             beam_options: Optional[Sequence[str]], policy: convert_utils.SourcePolicy,
             extra: Optional[Mapping[str, Any]] = None,
             labels_to_names: Optional[Mapping[int, str]] = None) -> Dict[str, WriteSummary]:
    """Writes the splits' sources and records them in `dataset_info.json` (with
    `labels_to_names`, or the published names of a dataset of its published classes)."""
    if on_bad_label not in ON_BAD_LABEL_CHOICES:
        raise ValueError(f'on_bad_label must be one of {ON_BAD_LABEL_CHOICES}, '
                         f'got {on_bad_label!r}')
    if not 0 <= ignore_label <= 255 or not 0 < num_classes <= 256:
        raise ValueError(f'num_classes ({num_classes}) and ignore_label ({ignore_label}) must '
                         'fit 8-bit label PNGs')
    encode = functools.partial(encode_segmentation_example, num_classes=num_classes,
                               ignore_label=ignore_label, on_bad_label=on_bad_label,
                               policy=policy)
    labels_to_names = labels_to_names or _published_labels(dataset_name, num_classes)
    options = {'converter': dataset_name, 'num_classes': num_classes,
               'ignore_label': ignore_label, 'on_bad_label': on_bad_label, 'seed': seed,
               **dict(extra or {}), **policy.options()}
    sources = [SplitSource(split, convert_utils.deterministic_shuffle(examples, seed), encode,
                           num_shards, options, _files_of, desc=f'{dataset_name} {split}')
               for split, examples in splits.items()]
    return write_dataset(
        output_dir, sources, dataset_name=dataset_name,
        labels_to_names=labels_to_names, keys_to_features=FEATURES,
        extra={'num_classes': num_classes, 'ignore_label': ignore_label, **(extra or {})},
        processes=processes, overwrite=overwrite, beam_options=beam_options)


def _files_of(source: SegmentationSource) -> List[str]:
    return [source.image_path, source.label_path]


def _or(value: Optional[int], default: int) -> int:
    return default if value is None else value
