"""Image classification in the models/research/slim layout: converters and descriptors.

Records are those of models/research/slim's `download_and_convert_*` scripts::

    image/encoded      the image's bytes (a source JPEG/PNG unchanged; MNIST digits as PNG)
    image/format       b'jpeg', b'png' (or b'raw', in records made by other tools)
    image/class/label  int64
    image/height, image/width  int64

Converters:

  `convert_image_folder(src, ..., layout='class_folders')`: `src/<class>/<image>`; the class
      folders, sorted by name, get labels 0..n-1 (as slim's flowers converter does). Files
      directly in `src` (a LICENSE, a README) are not part of the layout and are not read.
  `convert_image_folder(src, ..., layout='labelled_filenames')`: a flat folder of
      `<name>_<label>.<ext>` files. If every label is a non-negative integer, it is the label
      id (`cat_3.jpg` -> 3); otherwise every label is a class name (`x_cat.jpg`), and the
      names, sorted, get ids 0..n-1.
  `convert_mnist_idx(src, ...)`: the MNIST idx files (`train-images-idx3-ubyte`,
      `train-labels-idx1-ubyte`, `t10k-...`, each optionally `.gz`), parsed here and checked
      (magic numbers, sizes, counts); digits are stored as PNG.

Images are identified by their bytes, not their names: a file that is not a JPEG or PNG is an
error naming it, or with `on_non_image='skip'` is left out and counted in the train split's
summary. Hidden files and folders (names starting with '.': `.DS_Store`, `.ipynb_checkpoints`)
are never images or classes: they are always left out, and counted there too. Every source
file is read through `convert_utils.SourcePolicy` (nothing outside the source folder, nothing
but regular files, a size bound) and every image checked (`slimdata.records.images`), so a
damaged one is an error naming it. Class names and labels
taken from file names must be UTF-8 (they are stored as text); other names may be anything.
The train/validation split is a seeded shuffle of the sorted file list: the same files and
seed give the same split on any machine.

CIFAR-10 and CIFAR-100's pickle batches have their converter in `slimdata.datasets.cifar`.

Descriptors: `get_split(name, split, dataset_dir)` for 'mnist', 'cifar10', 'cifar100',
'flowers' (with slim's published sizes and label names as fallbacks) and 'image_folder'
(anything converted by `convert_image_folder`; sizes and labels only from its
`dataset_info.json`). Items: `image` and `label`. A folder whose `dataset_info.json` names
another dataset is refused (flowers also read an image_folder conversion; image_folder reads
any classification folder).

Converters (and their worker processes) never import TensorFlow: the schema they record is
declared without it (`FEATURES`), and only the descriptors, which build `tf.io` specs and item
handlers, import it when called.
"""

import dataclasses
import functools
import math
import os
import zlib
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from slimdata import progress
from slimdata.dataset import Dataset
from slimdata.datasets import convert_utils
from slimdata.deprecation import renamed_argument
from slimdata.records import dataset_info, fs, images
from slimdata.records.example import serialize_example
from slimdata.records.writer import SplitSource, WriteSummary, write_dataset

ON_NON_IMAGE_CHOICES = ('error', 'skip')
NON_IMAGE_REASON = 'not a JPEG or PNG image'
HIDDEN_REASON = "hidden files and folders (names starting with '.')"

_ITEMS_TO_DESCRIPTIONS = {
    'image': 'A color image of varying size (fixed size for mnist and cifar10).',
    'label': 'A single integer class label.',
}

#: MNIST record split -> the prefix of its idx files.
MNIST_FILE_PREFIXES = {'train': 'train', 'test': 't10k'}
_IDX_IMAGES_MAGIC = 2051  # 0x00000803: unsigned bytes, 3 dimensions
_IDX_LABELS_MAGIC = 2049  # 0x00000801: unsigned bytes, 1 dimension
_CIFAR100_NAMES = (
    'apple', 'aquarium_fish', 'baby', 'bear', 'beaver', 'bed', 'bee', 'beetle', 'bicycle',
    'bottle', 'bowl', 'boy', 'bridge', 'bus', 'butterfly', 'camel', 'can', 'castle',
    'caterpillar', 'cattle', 'chair', 'chimpanzee', 'clock', 'cloud', 'cockroach', 'couch',
    'crab', 'crocodile', 'cup', 'dinosaur', 'dolphin', 'elephant', 'flatfish', 'forest', 'fox',
    'girl', 'hamster', 'house', 'kangaroo', 'keyboard', 'lamp', 'lawn_mower', 'leopard', 'lion',
    'lizard', 'lobster', 'man', 'maple_tree', 'motorcycle', 'mountain', 'mouse', 'mushroom',
    'oak_tree', 'orange', 'orchid', 'otter', 'palm_tree', 'pear', 'pickup_truck', 'pine_tree',
    'plain', 'plate', 'poppy', 'porcupine', 'possum', 'rabbit', 'raccoon', 'ray', 'road',
    'rocket', 'rose', 'sea', 'seal', 'shark', 'shrew', 'skunk', 'skyscraper', 'snail', 'snake',
    'spider', 'squirrel', 'streetcar', 'sunflower', 'sweet_pepper', 'table', 'tank',
    'telephone', 'television', 'tiger', 'tractor', 'train', 'trout', 'tulip', 'turtle',
    'wardrobe', 'whale', 'willow_tree', 'wolf', 'woman', 'worm')
_MNIST_NAMES = ('zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight',
                'nine')


@dataclasses.dataclass(frozen=True)
class ClassificationDatasetInfo:
    """The published facts of a classification dataset (models/research/slim/datasets).

    Attributes:
      splits_to_sizes: split name -> number of examples.
      labels_to_names: label id -> class name.
      image_shape: [height, width, channels] when every image has it, else None.
    """
    splits_to_sizes: Mapping[str, int]
    labels_to_names: Mapping[int, str]
    image_shape: Optional[Tuple[int, int, int]] = None


#: Fallbacks for records without `dataset_info.json`.
PUBLISHED_DATASETS = {
    'mnist': ClassificationDatasetInfo(
        splits_to_sizes={'train': 60000, 'test': 10000},
        labels_to_names=dict(enumerate(_MNIST_NAMES)), image_shape=(28, 28, 1)),
    'cifar10': ClassificationDatasetInfo(
        splits_to_sizes={'train': 50000, 'test': 10000},
        labels_to_names=dict(enumerate(('airplane', 'automobile', 'bird', 'cat', 'deer', 'dog',
                                        'frog', 'horse', 'ship', 'truck'))),
        image_shape=(32, 32, 3)),
    # The 100 fine labels; records of the 20 coarse ones have them in dataset_info.json.
    'cifar100': ClassificationDatasetInfo(
        splits_to_sizes={'train': 50000, 'test': 10000},
        labels_to_names=dict(enumerate(_CIFAR100_NAMES)), image_shape=(32, 32, 3)),
    'flowers': ClassificationDatasetInfo(
        splits_to_sizes={'train': 3320, 'validation': 350},
        labels_to_names=dict(enumerate(('daisy', 'dandelion', 'roses', 'sunflowers',
                                        'tulips')))),
}
#: The descriptor of folders converted by `convert_image_folder` (no published facts).
IMAGE_FOLDER = 'image_folder'
#: The names classification converters record; the image_folder descriptor reads them all.
CLASSIFICATION_DATASETS = (*PUBLISHED_DATASETS, IMAGE_FOLDER)
#: Descriptors that read folders recorded under another name: flowers are converted by
#: `convert_image_folder` (`slimdata convert image-folder flower_photos/ ...`).
_READS = {'flowers': ('flowers', IMAGE_FOLDER)}


# ----------------------------------------------------------------------------------------
# Record layout and descriptors


#: The feature specs of slim's classification records, as dataset_info.json records them.
FEATURES = {
    'image/encoded': dataset_info.fixed_len([], 'string', ''),
    'image/format': dataset_info.fixed_len([], 'string', 'png'),
    'image/class/label': dataset_info.fixed_len([1], 'int64', [0]),
    'image/height': dataset_info.fixed_len([], 'int64', 0),
    'image/width': dataset_info.fixed_len([], 'int64', 0),
}


def keys_to_features() -> Dict[str, Any]:
    """The `tf.io` feature specs of slim's classification records (`FEATURES`)."""
    return dataset_info.keys_to_features_from_json(FEATURES)


def items_to_handlers(image_shape: Optional[Sequence[int]] = None) -> Dict[str, Any]:
    """`image` (reshaped to `image_shape` when given; 3 channels otherwise) and `label`."""
    from slimdata import tfexample_decoder
    channels = image_shape[2] if image_shape else 3
    return {
        'image': tfexample_decoder.Image(shape=list(image_shape) if image_shape else None,
                                         channels=channels),
        'label': tfexample_decoder.Tensor('image/class/label', shape=[]),
    }


def get_split(dataset_name: str, split_name: str, dataset_dir: str,
              file_pattern: Optional[str] = None, reader: Optional[Any] = None) -> Dataset:
    """The Dataset of one split of a classification dataset.

    Args:
      dataset_name: 'mnist', 'cifar10', 'cifar100', 'flowers' or 'image_folder'.
      split_name: e.g. 'train', 'validation', 'test'.
      dataset_dir: the folder of the shards.
      file_pattern: a pattern with one `%s` for the split; defaults to `%s-*.tfrecord`. For
        records made by models/research/slim's scripts pass theirs, e.g.
        'mnist_%s.tfrecord', 'cifar10_%s.tfrecord', 'flowers_%s_*.tfrecord'.
      reader: the reader class; defaults to `tf.compat.v1.TFRecordReader`.

    Returns:
      A Dataset with items `image` and `label` and the attributes `num_classes` and
      `labels_to_names`.

    Raises:
      ValueError: for an unknown dataset or split, or an 'image_folder' folder that has not
        been converted (no `dataset_info.json`).
    """
    from slimdata.datasets import dataset_utils
    if dataset_name == IMAGE_FOLDER:
        if dataset_info.read_dataset_info(dataset_dir) is None:
            raise ValueError(
                f'{dataset_dir} has no {dataset_info.DATASET_INFO_FILENAME}'
                f'{"" if dataset_info.has_labels_file(dataset_dir) else " and no labels.txt"}'
                '; an image_folder dataset has no published sizes or labels. Convert the '
                'images first with `slimdata convert image-folder SRC '
                f'{dataset_dir}` (slimdata.datasets.classification.convert_image_folder).')
        return dataset_utils.make_dataset(
            IMAGE_FOLDER, split_name, dataset_dir, keys_to_features(), items_to_handlers(),
            _ITEMS_TO_DESCRIPTIONS, published_split_sizes={}, file_pattern=file_pattern,
            reader=reader, reads=CLASSIFICATION_DATASETS)
    if dataset_name not in PUBLISHED_DATASETS:
        raise ValueError(f'unknown classification dataset {dataset_name!r}; known: '
                         f'{sorted(PUBLISHED_DATASETS) + [IMAGE_FOLDER]}')
    published = PUBLISHED_DATASETS[dataset_name]
    return dataset_utils.make_dataset(
        dataset_name, split_name, dataset_dir, keys_to_features(),
        items_to_handlers(published.image_shape), _ITEMS_TO_DESCRIPTIONS,
        published.splits_to_sizes, published.labels_to_names, file_pattern=file_pattern,
        reader=reader, reads=_READS.get(dataset_name, (dataset_name,)),
        num_classes=len(published.labels_to_names))


# ----------------------------------------------------------------------------------------
# Encoding one example


def encode_image_file(item: Tuple[str, int],
                      policy: Optional[convert_utils.SourcePolicy] = None) -> bytes:
    """Serializes one (path, label): the file's bytes unchanged, its size from its header.

    Args:
      item: (the image file, its label id).
      policy: how the file is read and checked; by default, any local file with the
        structure check.

    Raises:
      ValueError: naming the file, if it is not a JPEG/PNG or is damaged.
    """
    path, label = item
    policy = policy or convert_utils.SourcePolicy(os.path.dirname(path) or '.')
    data, image = policy.read_image(path)
    return _serialize(data, image.format, label, image.height, image.width)


def encode_pixels(item: Tuple[np.ndarray, int]) -> bytes:
    """Serializes one (uint8 [height, width] pixels, label) as a PNG example."""
    pixels, label = item
    return _serialize(convert_utils.encode_png(pixels), 'png', label, *pixels.shape[:2])


def _serialize(encoded: bytes, image_format: str, label: int, height: int,
               width: int) -> bytes:
    return serialize_example({'image/encoded': encoded, 'image/format': image_format,
                              'image/class/label': int(label), 'image/height': int(height),
                              'image/width': int(width)})


# ----------------------------------------------------------------------------------------
# Listing image folders


@dataclasses.dataclass
class ImageListing:
    """The labelled images of a source folder.

    Attributes:
      items: (path, label id) pairs, sorted by path.
      labels_to_names: label id -> class name.
      skipped: reason -> paths left out (only with on_non_image='skip').
    """
    items: List[Tuple[str, int]]
    labels_to_names: Dict[int, str]
    skipped: Dict[str, List[str]]


class ImageFilter:
    """Decides which files are images, refusing or counting the others; leaves hidden
    entries out (counted)."""

    def __init__(self, on_non_image: str, policy: convert_utils.SourcePolicy):
        if on_non_image not in ON_NON_IMAGE_CHOICES:
            raise ValueError(f'on_non_image must be one of {ON_NON_IMAGE_CHOICES}, '
                             f'got {on_non_image!r}')
        self._skip = on_non_image == 'skip'
        self._policy = policy
        self.skipped: Dict[str, List[str]] = {}

    def visible(self, folder: str) -> List[str]:
        """The sorted names in `folder` but hidden ones (`.DS_Store`, `.ipynb_checkpoints`),
        which are counted as skipped: they are never images or classes.

        Raises:
          ValueError: if `folder` does not exist or is not a folder.
        """
        names = []
        for name in _listdir(folder):
            if name.startswith('.'):
                self.skipped.setdefault(HIDDEN_REASON, []).append(os.path.join(folder, name))
            else:
                names.append(name)
        return names

    def is_image(self, path: str) -> bool:
        """True for a JPEG/PNG file; False (counted) or ValueError for anything else.

        A file that leaves the source folder through a symlink, or is not a regular file
        (a FIFO, a device), is refused whatever `on_non_image` says: it is not a
        non-image to leave out but a tree to fix.
        """
        is_folder = fs.isdir(path)
        if not is_folder:
            self._policy.check_regular_file(path)
            head = fs.read_source(path, self._policy.roots(), self._policy.max_file_bytes,
                                  head=images.SIGNATURE_LENGTH)
            if images.image_format_of(head):
                return True
        if not self._skip:
            raise ValueError(f'{path} is {"a folder" if is_folder else NON_IMAGE_REASON}; '
                             'remove it, or pass on_non_image=\'skip\' (--skip-non-images) '
                             'to leave such entries out')
        self.skipped.setdefault(NON_IMAGE_REASON, []).append(path)
        return False


def list_class_folders(src: str, on_non_image: str = 'error',
                       policy: Optional[convert_utils.SourcePolicy] = None) -> ImageListing:
    """Lists `src/<class>/<image>`: class folders sorted by name get labels 0..n-1.

    Raises:
      ValueError: for a folder without class folders, a class folder name that is not UTF-8,
        or (with on_non_image='error') a file or folder in a class folder that is not a
        JPEG/PNG image.
    """
    policy = policy or convert_utils.SourcePolicy(src)
    image_filter = ImageFilter(on_non_image, policy)
    class_names = [name for name in image_filter.visible(src)
                   if fs.isdir(os.path.join(src, name))]
    if not class_names:
        raise ValueError(f'{src} has no class folders; the class_folders layout is '
                         'SRC/<class name>/<image files>')
    items = []
    for label, class_name in enumerate(class_names):
        class_dir = os.path.join(src, class_name)
        convert_utils.label_name(class_name, class_dir, 'class folder name')
        items += [(path, label) for path in
                  (os.path.join(class_dir, name) for name in image_filter.visible(class_dir))
                  if image_filter.is_image(path)]
    return ImageListing(items, dict(enumerate(class_names)), image_filter.skipped)


def _listdir(folder: str) -> List[str]:
    if not fs.isdir(folder):
        raise ValueError(f'{folder} does not exist or is not a folder')
    return fs.listdir(folder)


def label_of_filename(name: str) -> Optional[str]:
    """The `<label>` of `<name>_<label>.<ext>` (None if the name has no such part)."""
    stem = name.rsplit('.', 1)[0] if '.' in name else name
    _, underscore, label = stem.rpartition('_')
    return label if underscore and label else None


def list_labelled_filenames(src: str, on_non_image: str = 'error',
                            policy: Optional[convert_utils.SourcePolicy] = None
                            ) -> ImageListing:
    """Lists a flat folder of `<name>_<label>.<ext>` images (see the module docstring).

    Raises:
      ValueError: for an image whose name carries no label, a label that is not UTF-8, or
        (with on_non_image='error') a file that is not a JPEG/PNG image.
    """
    image_filter = ImageFilter(on_non_image, policy or convert_utils.SourcePolicy(src))
    labelled = []
    for name in image_filter.visible(src):
        path = os.path.join(src, name)
        if image_filter.is_image(path):
            label = label_of_filename(name)
            if label is None:
                raise ValueError(f'{path}: the labelled_filenames layout needs file names '
                                 '<name>_<label>.<ext>, e.g. cat_3.jpg or img7_cat.png')
            labelled.append((path, convert_utils.label_name(label, path, 'label')))
    if all(label.isascii() and label.isdigit() for _, label in labelled):
        numbers = sorted({int(label) for _, label in labelled})
        return ImageListing([(path, int(label)) for path, label in labelled],
                            {i: str(i) for i in numbers}, image_filter.skipped)
    names = sorted({label for _, label in labelled})
    ids = {name: i for i, name in enumerate(names)}
    return ImageListing([(path, ids[label]) for path, label in labelled],
                        dict(enumerate(names)), image_filter.skipped)


_LISTERS: Dict[str, Callable[..., ImageListing]] = {
    'class_folders': list_class_folders,
    'labelled_filenames': list_labelled_filenames,
}
LAYOUTS = tuple(_LISTERS)


# ----------------------------------------------------------------------------------------
# MNIST idx files


def read_idx(path: str, magic: int,
             policy: Optional[convert_utils.SourcePolicy] = None) -> np.ndarray:
    """Parses an idx file of unsigned bytes (optionally gzipped) into a uint8 array.

    The idx format: a big-endian uint32 magic (0x08 = unsigned byte in its third byte, the
    number of dimensions in its fourth), one big-endian uint32 per dimension, then the data.

    A gzipped file is inflated as a stream, never beyond the size its header declares (and
    that size must be within `policy.max_file_bytes`), so a small file that inflates to
    gigabytes is refused after reading what its header promised.

    Raises:
      ValueError: naming the file, for a bad magic number, a short header, a size over the
        bound, a damaged gzip stream, or data shorter or longer than the dimensions say.
    """
    policy = policy or convert_utils.SourcePolicy(os.path.dirname(path) or '.')
    with fs.open_source(path, policy.roots(), policy.max_file_bytes) as file:
        reader = _IdxStream(file, path, compressed=path.endswith('.gz'))
        head = reader.read(4)
        if len(head) < 4 or int.from_bytes(head, 'big') != magic:
            found = int.from_bytes(head, 'big') if len(head) == 4 else head
            raise ValueError(f'{path}: bad magic number {found!r}, expected {magic} '
                             '(is it an MNIST idx file of the right kind?)')
        num_dims = magic & 0xFF
        header_size = 4 + 4 * num_dims
        dims_data = reader.read(4 * num_dims)
        if len(dims_data) < 4 * num_dims:
            raise ValueError(f'{path}: truncated header ({4 + len(dims_data)} bytes, expected '
                             f'{header_size})')
        dims = [int.from_bytes(dims_data[4 * i:4 * i + 4], 'big') for i in range(num_dims)]
        # Python integers: a product of four-byte dimensions overflows int64.
        expected = header_size + math.prod(dims)
        if expected > policy.max_file_bytes:
            raise fs.SourceError(f'{path}: its header declares dimensions {dims}, '
                                 f'{expected:,} bytes, over the limit of '
                                 f'{policy.max_file_bytes:,} bytes for one source file '
                                 '(--max-file-size raises it)')
        data = reader.read(expected - header_size)
        if len(data) < expected - header_size:
            raise ValueError(f'{path}: truncated: dimensions {dims} need {expected} bytes, the '
                             f'file has {header_size + len(data)}')
        if reader.read(1):  # for gzip: also inflates to the stream's end, checking its CRC
            raise ValueError(f'{path}: trailing data: dimensions {dims} need {expected} bytes, '
                             'the file has more')
    return np.frombuffer(data, dtype=np.uint8).reshape(dims)


class _IdxStream:
    """The bytes of an idx file, inflated on the fly when gzipped, never more than asked.

    A gzip file may hold several members one after the other, as `gzip.decompress` reads.
    """

    _CHUNK = 1 << 20

    def __init__(self, file: Any, path: str, compressed: bool):
        self._file = file
        self._path = path
        self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS) if compressed else None
        self._pending = b''  # compressed bytes read and not yet inflated

    def read(self, size: int) -> bytes:
        """Up to `size` bytes (fewer only at the end of the data)."""
        if self._inflater is None:  # not compressed
            return self._file.read(size) if size else b''
        pieces, wanted = [], size
        try:
            while wanted:
                if self._inflater.eof:
                    if not self._next_member():
                        break
                if not self._pending:
                    self._pending = self._file.read(self._CHUNK)
                    if not self._pending:
                        raise ValueError(f'{self._path}: the gzip stream ends early (the file '
                                         'is truncated)')
                piece = self._inflater.decompress(self._pending, wanted)
                self._pending = self._inflater.unconsumed_tail or self._inflater.unused_data
                pieces.append(piece)
                wanted -= len(piece)
        except zlib.error as error:
            raise ValueError(f'{self._path}: not a valid gzip file ({error})') from None
        return b''.join(pieces)

    def _next_member(self) -> bool:
        """After a gzip member: starts the next one, if any bytes follow; False at the end."""
        if not self._pending:
            self._pending = self._file.read(self._CHUNK)
        if not self._pending:
            return False
        self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        return True


def find_idx_file(src: str, name: str) -> str:
    """The path of `name` or `name.gz` in `src` (the plain file if both exist).

    Raises:
      ValueError: if neither exists.
    """
    for candidate in (name, name + '.gz'):
        path = os.path.join(src, candidate)
        if fs.exists(path):
            return path
    raise ValueError(f'no {name} or {name}.gz in {src}')


def read_mnist_split(src: str, prefix: str,
                     policy: Optional[convert_utils.SourcePolicy] = None
                     ) -> Tuple[List[Tuple[np.ndarray, int]], List[str]]:
    """The (pixels, label) pairs of `<prefix>-images-idx3-ubyte` and its labels file.

    Returns:
      (the pairs, the two files read).

    Raises:
      ValueError: naming the file(s), for a bad file, differing image and label counts, or a
        label that is not a digit 0-9.
    """
    images_path = find_idx_file(src, f'{prefix}-images-idx3-ubyte')
    labels_path = find_idx_file(src, f'{prefix}-labels-idx1-ubyte')
    digits = read_idx(images_path, _IDX_IMAGES_MAGIC, policy)
    labels = read_idx(labels_path, _IDX_LABELS_MAGIC, policy)
    if len(digits) != len(labels):
        raise ValueError(f'{images_path} holds {len(digits)} images but {labels_path} holds '
                         f'{len(labels)} labels')
    bad = np.flatnonzero(labels >= len(_MNIST_NAMES))
    if bad.size:
        raise ValueError(f'{labels_path}: label {labels[bad[0]]} at index {bad[0]} is not a '
                         'digit 0-9')
    return ([(image, int(label)) for image, label in zip(digits, labels)],
            [images_path, labels_path])


# ----------------------------------------------------------------------------------------
# Converters


def _check_output_outside(src: str, output_dir: str) -> None:
    """Refuses an output folder inside the source folder: the next run would read its shards
    and files as images (or, with on_non_image='skip', the folder as a class)."""
    if fs.is_url(src) or fs.is_url(output_dir):
        return
    real_src, real_out = os.path.realpath(src), os.path.realpath(output_dir)
    if real_out == real_src or real_out.startswith(real_src.rstrip(os.sep) + os.sep):
        raise ValueError(f'{output_dir}: the output folder is inside the source folder {src}, '
                         'where the next run would read it as images (or as a class): write '
                         'the records outside SRC')


def _warn_of_empty_classes(src: str, listing: ImageListing) -> None:
    """A class folder without images is a class with no examples: said, not silent (a VOC
    tree given as SRC makes classes of Annotations and ImageSets)."""
    held = {label for _, label in listing.items}
    empty = [name for label, name in sorted(listing.labels_to_names.items())
             if label not in held]
    if empty:
        progress.info(f'image_folder: warning: {len(empty)} of the '
                      f'{len(listing.labels_to_names)} classes of {src} hold no images '
                      f'({", ".join(map(repr, empty[:10]))}{", ..." if len(empty) > 10 else ""}'
                      '); they are classes without examples, counted in num_classes')


@renamed_argument('workers', 'processes')
def convert_image_folder(src: str, output_dir: str, layout: str = 'class_folders',
                         validation_ratio: float = 0.1, seed: Optional[int] = 0,
                         splits: Optional[Union[str, Sequence[str]]] = None,
                         num_shards: Optional[int] = None, processes: int = 1,
                         on_non_image: str = 'error', overwrite: bool = False,
                         beam_options: Optional[Sequence[str]] = None,
                         **source_options: Any) -> Dict[str, WriteSummary]:
    """Converts a folder of labelled images to 'train' and 'validation' record splits.

    Args:
      src: the source folder, in `layout`.
      output_dir: the folder of the shards, `dataset_info.json` and `labels.txt`.
      layout: 'class_folders' or 'labelled_filenames' (see the module docstring).
      validation_ratio: the share of images in the 'validation' split, in [0, 1); 0 writes
        only 'train'.
      seed: the seed of the split and of the order in the shards; None keeps the sorted
        order (and takes the validation images from its start).
      splits: which of 'train' and 'validation' to write (one name or several); None for
        both. The split of the images between them is the same whichever are written.
      num_shards: shards per split; None chooses them by the split's size
        (`slimdata.records.writer.shards_for_size`).
      processes: processes that read, check and encode the images (1: this one).
      on_non_image: 'error', or 'skip' to leave out files that are not JPEG/PNG images
        (counted in the 'train' summary's `skipped`, as are hidden files).
      overwrite: replace splits of other input already in `output_dir` (see
        `slimdata.records.writer`); without it, such a re-run is refused.
      beam_options: write the shards with an Apache Beam pipeline with these pipeline
        options (e.g. ['--runner=DirectRunner']); None writes them with local processes.
      **source_options: `check_images`, `follow_symlinks`, `max_file_bytes`,
        `max_image_pixels` (see `convert_utils.SourcePolicy`; `src` is the root).

    Returns:
      split -> its WriteSummary.
    """
    if layout not in _LISTERS:
        raise ValueError(f'unknown layout {layout!r}; expected one of {LAYOUTS}')
    _check_output_outside(src, output_dir)
    policy = convert_utils.SourcePolicy(src, **source_options)
    selected = convert_utils.select_splits(_held_splits(validation_ratio), splits,
                                           _held_by(src, validation_ratio))
    listing = _LISTERS[layout](src, on_non_image, policy)
    if not listing.items:
        skipped = sum(len(paths) for paths in listing.skipped.values())
        raise ValueError(f'{src} holds no JPEG or PNG images in the {layout} layout'
                         f'{f" ({skipped} other files skipped)" if skipped else ""}')
    _warn_of_empty_classes(src, listing)
    train, validation = convert_utils.split_train_validation(listing.items, validation_ratio,
                                                             seed)
    # The class names are input too: an empty class folder added changes num_classes (and
    # labels.txt) without changing a single item.
    options = {'converter': 'image-folder', 'layout': layout,
               'validation_ratio': validation_ratio, 'seed': seed,
               'on_non_image': on_non_image,
               'class_names': [listing.labels_to_names[label]
                               for label in sorted(listing.labels_to_names)],
               **policy.options()}
    summaries = write_splits(
        IMAGE_FOLDER, {'train': train, 'validation': validation}, selected,
        functools.partial(encode_image_file, policy=policy), output_dir, num_shards,
        processes, listing.labels_to_names, options, _image_path, overwrite, beam_options,
        extra={'layout': layout})
    for reason, paths in listing.skipped.items():
        # Skipped while listing, before any split existed: reported once, with the first.
        next(iter(summaries.values())).skipped.setdefault(reason, []).extend(paths)
    return summaries


@renamed_argument('workers', 'processes')
def convert_mnist_idx(src: str, output_dir: str, validation_ratio: float = 0.0,
                      seed: Optional[int] = 0,
                      splits: Optional[Union[str, Sequence[str]]] = None,
                      num_shards: Optional[int] = None, processes: int = 1,
                      overwrite: bool = False, beam_options: Optional[Sequence[str]] = None,
                      **source_options: Any) -> Dict[str, WriteSummary]:
    """Converts the MNIST idx files of `src` to 'train', 'test' (and 'validation').

    Works for any dataset in MNIST's files and label range (e.g. Fashion-MNIST).

    Args:
      src: the folder of train-images-idx3-ubyte, train-labels-idx1-ubyte,
        t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte (each optionally .gz).
      output_dir: the folder of the shards, `dataset_info.json` and `labels.txt`.
      validation_ratio: the share of the training images held out as 'validation'; 0 (the
        default) keeps MNIST's published splits.
      seed: the seed of the split and of the order in the shards; None keeps the files'
        order.
      splits, num_shards, processes, overwrite, beam_options: see `convert_image_folder`
        (the splits are 'train', 'validation' with a validation ratio, and 'test').
      **source_options: `follow_symlinks`, `max_file_bytes` (the bound on an idx file's
        inflated size) (see `convert_utils.SourcePolicy`; `src` is the root).

    Returns:
      split -> its WriteSummary.
    """
    policy = convert_utils.SourcePolicy(src, **source_options)
    selected = convert_utils.select_splits([*_held_splits(validation_ratio), 'test'], splits,
                                           _held_by(src, validation_ratio))
    pairs, files = {}, {}
    for split in ('train', 'test'):
        if split in selected or (split == 'train' and 'validation' in selected):
            pairs[split], files[split] = read_mnist_split(src, MNIST_FILE_PREFIXES[split],
                                                          policy)
    train, validation = convert_utils.split_train_validation(pairs.get('train', []),
                                                             validation_ratio, seed)
    options = {'converter': 'mnist-idx', 'validation_ratio': validation_ratio, 'seed': seed,
               **policy.options()}
    idx_files = [path for split in ('train', 'test') for path in files.get(split, [])]
    return write_splits('mnist', {'train': train, 'validation': validation,
                                   'test': convert_utils.deterministic_shuffle(
                                       pairs.get('test', []), seed)},
                        selected, encode_pixels, output_dir, num_shards, processes,
                        PUBLISHED_DATASETS['mnist'].labels_to_names, options,
                        lambda pair: idx_files, overwrite, beam_options, size_of=pixel_bytes)


def _held_splits(validation_ratio: float) -> List[str]:
    """The splits of a source with train images and this validation ratio."""
    return ['train', 'validation'] if validation_ratio > 0 else ['train']


def _held_by(src: str, validation_ratio: float) -> str:
    """Names the source in an unknown-split error (and why it has no 'validation')."""
    return src if validation_ratio > 0 else f'{src} with a validation ratio of 0'


def _image_path(item: Tuple[str, int]) -> List[str]:
    return [item[0]]


def pixel_bytes(item: Tuple[np.ndarray, int]) -> int:
    """The size of a (pixels, label) item's pixels: its record's size, about (see
    `SplitSource.size_of`)."""
    return item[0].nbytes


def write_splits(dataset_name: str, splits: Mapping[str, List[Any]], selected: Sequence[str],
                 encode: Callable[[Any], bytes], output_dir: str, num_shards: Optional[int],
                 processes: int, labels_to_names: Mapping[int, str],
                 options: Mapping[str, Any], files_of: Callable[[Any], Sequence[str]],
                 overwrite: bool, beam_options: Optional[Sequence[str]],
                 extra: Optional[Mapping[str, Any]] = None,
                 size_of: Optional[Callable[[Any], int]] = None) -> Dict[str, WriteSummary]:
    """Writes the `selected` splits. With no validation ratio the conversion makes no
    'validation' split, so an earlier run's is refused or (overwrite) removed; a split not
    selected is left as it is."""
    sources = [SplitSource(split, splits[split], encode, num_shards, options, files_of,
                           desc=f'{dataset_name} {split}', size_of=size_of)
               for split in selected]
    return write_dataset(
        output_dir, sources, dataset_name=dataset_name, labels_to_names=labels_to_names,
        keys_to_features=FEATURES,
        extra={'num_classes': max(labels_to_names) + 1, **(extra or {})},
        processes=processes, overwrite=overwrite, beam_options=beam_options,
        # Every classification converter records its validation_ratio among its options.
        absent_splits=[] if options['validation_ratio'] > 0 else ['validation'])
