"""What the converters share: reading source files safely, deterministic order, options.

Converters pass image bytes through unchanged (never re-encoded), so a record holds exactly
the bytes of the source file. Every source file is read through a `SourcePolicy`, which
refuses what must not be read (a symlink leaving the dataset root, anything that is not a
regular file, a file over the size bound) and checks every image
(`slimdata.records.images`: the whole structure by default, a full decode with
`check_images='full'`), naming the file. This module also orders source items
deterministically (a seeded shuffle, a seeded train/validation split) and selects the splits
a conversion writes. (The converters' command-line options are in `slimdata.cli`.)

Converter worker processes import this module, so it does not import TensorFlow: local
paths are read with the standard library, and only a path with a URL scheme (`gs://...`)
goes through `tf.io.gfile`, which imports TensorFlow when first needed.
"""

import dataclasses
import io
import os
import random
import re
import xml.etree.ElementTree
from typing import Any, Dict, List, Optional, Sequence, Tuple, TypeVar, Union

import defusedxml
import defusedxml.ElementTree
import numpy as np
from PIL import Image

from slimdata.records import fs, images, label_map

T = TypeVar('T')


class UnknownSplitError(ValueError):
    """A split asked for that the source does not hold: a usage error (exit status 2 from
    `slimdata convert`, as from `slimdata show`), naming the splits the source holds."""


@dataclasses.dataclass(frozen=True)
class SourcePolicy:
    """How a converter reads its source files; picklable, so workers read the same way.

    Attributes:
      root: the dataset root: files must resolve (through symlinks) inside it.
      other_roots: further folders files may lie in (a label folder given outside the root).
      follow_symlinks: allow symlinks that leave `root`.
      max_file_bytes: larger source files are refused (an idx file: its inflated size).
      check_images: 'structure' or 'full' (see `slimdata.records.images`).
      max_image_pixels: larger images are refused.
    """
    root: str
    other_roots: Tuple[str, ...] = ()
    follow_symlinks: bool = False
    max_file_bytes: int = fs.DEFAULT_MAX_SOURCE_BYTES
    check_images: str = images.DEFAULT_CHECK
    max_image_pixels: int = images.DEFAULT_MAX_PIXELS

    def __post_init__(self):
        if self.check_images not in images.CHECK_MODES:
            raise ValueError(f'check_images must be one of {images.CHECK_MODES}, got '
                             f'{self.check_images!r}')
        for name in ('max_file_bytes', 'max_image_pixels'):
            if getattr(self, name) < 1:
                raise ValueError(f'{name} must be at least 1, got {getattr(self, name)}')

    def read(self, path: str) -> bytes:
        """The bytes of a source file (see `slimdata.records.fs.read_source`).

        Raises:
          FileNotFoundError, fs.SourceError, fs.FileError: naming `path`.
        """
        return fs.read_source(path, self.roots(), self.max_file_bytes)

    def read_image(self, path: str) -> Tuple[bytes, images.ImageInfo]:
        """A JPEG or PNG file's bytes, after the image check, and what its header says.

        Raises:
          images.ImageError: naming the file, if it is not a JPEG or PNG, or is damaged.
          FileNotFoundError, fs.SourceError, fs.FileError: naming `path`.
        """
        data = self.read(path)
        return data, images.check_image(data, path, self.check_images, self.max_image_pixels)

    def roots(self) -> Optional[Tuple[str, ...]]:
        """The folders source files must lie in; None when symlinks may lead anywhere."""
        return None if self.follow_symlinks else (self.root, *self.other_roots)

    def check_regular_file(self, path: str) -> None:
        """Refuses (naming it) a path that is not a regular file or leaves the root, without
        opening it: for listings, before anything is read."""
        roots = self.roots()
        if roots is not None and not fs.is_url(path):
            fs.check_inside_root(path, roots)
        fs.check_regular_file(path)

    def options(self) -> Dict[str, Any]:
        """What the fingerprint records of the policy."""
        return {'source_root': self.root, 'other_roots': list(self.other_roots),
                'follow_symlinks': self.follow_symlinks,
                'max_file_bytes': self.max_file_bytes, 'check_images': self.check_images,
                'max_image_pixels': self.max_image_pixels}


def utf8_name(name: str, path: str, what: str) -> str:
    """`name` (a file or folder name) if it is valid UTF-8; else ValueError naming `path`.

    File names that go into records or `labels.txt` as text (class names, labels) must be
    UTF-8; Python hands other bytes over as surrogates, which no text encoder accepts.
    """
    try:
        name.encode('utf-8')
    except UnicodeEncodeError:
        raise ValueError(f'{os.fsencode(path)!r}: the {what} {os.fsencode(name)!r} is not valid '
                         f'UTF-8, and it would be stored as text; rename it') from None
    return name


def check_printable_id(image_id: str, where: str) -> str:
    """`image_id` (from a list file) if it holds no control character; else ValueError naming
    `where` (the list file and line): a NUL byte cannot be in a file name, and the others
    are a damaged or binary list file, not image ids."""
    for char in image_id:
        if ord(char) < 32 or ord(char) == 127:
            raise ValueError(f'{where}: the image id {image_id!r} holds the control character '
                             f'{char!r}; a list file holds one image id (a file name without '
                             'extension) per line')
    return image_id


def read_text_lines(path: str, policy: SourcePolicy, what: str) -> List[Tuple[int, str]]:
    """(line number, line) of every line of a UTF-8 text file that is not blank (list files,
    label files), read through `policy`.

    Raises:
      ValueError: naming the file as not `what` (e.g. 'a text file of image ids') if it is
        not UTF-8.
    """
    try:
        text = policy.read(path).decode('utf-8')
    except UnicodeDecodeError as error:
        raise ValueError(f'{path} is not {what}: {error}') from error
    return [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]


#: The largest classes file read (a list of names or a label map; real ones are kilobytes).
MAX_CLASSES_FILE_BYTES = 16 << 20
_LABELS_TXT_LINE = re.compile(r'(\d+):(.*)')


def read_class_spec(spec: str) -> Tuple[Tuple[str, ...], Optional[Tuple[int, ...]]]:
    """The class names of a converter's `--classes SPEC`, and their ids where it gives them.

    SPEC is the path of a file: an OD API label map (`*.pbtxt`, or any file holding
    `item {`; read by `slimdata.records.label_map`, its background item left out), a
    `labels.txt` as converters write it (every line `id:name`), or names one a line; or
    anything else, a comma-separated list of names. The caller checks the names and ids.

    Returns:
      (names, ids), ids None when SPEC gives only names (in label order).

    Raises:
      ValueError: naming SPEC, for a path that does not exist (one with a `/` or a
        .txt/.pbtxt name), a file that is not UTF-8 or holds no name, a bad label map.
    """
    if fs.exists(spec) and not fs.isdir(spec):
        return _class_file(spec)
    if os.sep in spec or spec.endswith(('.txt', '.pbtxt')):
        raise ValueError(f'--classes {spec}: no such file (a file of class names or a '
                         'label_map.pbtxt was expected)')
    return tuple(name.strip() for name in spec.split(',')), None


def _class_file(path: str) -> Tuple[Tuple[str, ...], Optional[Tuple[int, ...]]]:
    data = fs.read_source(path, max_bytes=MAX_CLASSES_FILE_BYTES)
    try:
        text = data.decode('utf-8-sig')
    except UnicodeDecodeError as error:
        raise ValueError(f'--classes {path}: not UTF-8 text ({error})') from error
    if path.endswith('.pbtxt') or re.search(r'^\s*item\s*\{', text, re.MULTILINE):
        items = label_map.parse_label_map(text, path)
        return tuple(name for _, name in items), tuple(label for label, _ in items)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise ValueError(f'--classes {path}: the file names no class')
    matches = [_LABELS_TXT_LINE.fullmatch(line) for line in lines]
    if all(matches):  # a labels.txt of a converted folder
        return (tuple(m.group(2).strip() for m in matches if m),
                tuple(int(m.group(1)) for m in matches if m))
    return tuple(lines), None


def annotation_size(annotation: xml.etree.ElementTree.Element
                    ) -> Tuple[Optional[Tuple[int, int]], Tuple[Optional[str], Optional[str]]]:
    """The (width, height) of a VOC-style annotation's `<size>`, or None when it is missing or
    not two integers, and the texts found there (for messages)."""
    size = annotation.find('size')
    fields: Tuple[Optional[str], Optional[str]] = (
        (None, None) if size is None else (size.findtext('width'), size.findtext('height')))
    width, height = fields
    if width is None or height is None:
        return None, fields
    try:
        return (int(width), int(height)), fields
    except ValueError:
        return None, fields


def name_bytes(name: str) -> bytes:
    """A file name's bytes as on disk (undecodable bytes kept), for a bytes feature."""
    return os.fsencode(name)


def encode_png(pixels: np.ndarray) -> bytes:
    """Encodes a uint8 array as a PNG: [height, width] or [height, width, 1] grayscale,
    [height, width, 3] RGB.

    Pillow's PNG encoder with fixed settings is deterministic, so the same pixels always give
    the same bytes (converters are byte-reproducible).
    """
    if pixels.dtype != np.uint8:
        raise ValueError(f'encode_png expects uint8 pixels, got {pixels.dtype}')
    buffer = io.BytesIO()
    rgb = pixels.ndim == 3 and pixels.shape[2] == 3
    Image.fromarray(pixels if rgb else pixels.reshape(pixels.shape[:2])).save(buffer,
                                                                               format='PNG')
    return buffer.getvalue()


def deterministic_shuffle(items: Sequence[T], seed: Optional[int]) -> List[T]:
    """Returns `items` shuffled by `seed` (the same order for the same items and seed).

    The caller passes items in a canonical order (sorted paths, the order of a list file),
    never the file system's listing order, so the result does not depend on the disk.
    `seed=None` keeps that order.
    """
    shuffled = list(items)
    if seed is not None:
        random.Random(seed).shuffle(shuffled)
    return shuffled


def split_train_validation(items: Sequence[T], validation_ratio: float,
                           seed: Optional[int]) -> Tuple[List[T], List[T]]:
    """Splits items into (train, validation), reproducibly.

    Items are shuffled by `seed` (see `deterministic_shuffle`) and the first
    `round(len(items) * validation_ratio)` (Python's round: ties to even) become the
    validation split.

    Raises:
      ValueError: if the ratio is outside [0, 1), or leaves a split it asks for empty.
    """
    if not 0 <= validation_ratio < 1:
        raise ValueError(f'validation_ratio must be in [0, 1), got {validation_ratio}')
    shuffled = deterministic_shuffle(items, seed)
    num_validation = round(len(shuffled) * validation_ratio)
    if validation_ratio > 0 and not 0 < num_validation < len(shuffled):
        raise ValueError(f'validation_ratio {validation_ratio} of {len(shuffled)} items leaves '
                         f'{"the validation" if num_validation == 0 else "the train"} split '
                         'empty; use more items or another ratio')
    return shuffled[num_validation:], shuffled[:num_validation]


def select_splits(available: Sequence[str], splits: Optional[Union[str, Sequence[str]]],
                  source: str) -> List[str]:
    """The splits a conversion writes: `splits` (one name or several), or all `available`.

    Args:
      available: the splits the source holds, in the order they are written.
      splits: the splits asked for; None for all of them.
      source: the source folder or list, named when a split is not in it.

    Raises:
      UnknownSplitError: naming the split asked for and the splits `source` holds.
    """
    if splits is None:
        return list(available)
    asked = [splits] if isinstance(splits, str) else list(dict.fromkeys(splits))
    if not asked:
        raise ValueError(f'no split asked for; {source} holds {list(available)}')
    unknown = [split for split in asked if split not in available]
    if unknown:
        raise UnknownSplitError(f'split {unknown[0]!r} is not in {source}; it holds '
                         f'{list(available)}')
    return [split for split in available if split in asked]


def parse_xml(data: bytes, xml_path: str) -> xml.etree.ElementTree.Element:
    """The root element of a VOC-style annotation (VOC, ILSVRC's bounding boxes), parsed by
    defusedxml's expat parser.

    `DefusedXMLParser` is the pure-Python `XMLParser` with defusedxml's handlers on its expat
    parser (`.parser`), which refuse entity declarations and external references. Its element
    callbacks, Python functions that only rewrite namespaced names, are more than half the
    parse time of a VOC annotation, so expat's element events go straight to the (C)
    TreeBuilder instead; defusedxml's handlers stay as they are. Names then stay as expat
    reports them, which for the namespace-free VOC format is the same.
    """
    builder = xml.etree.ElementTree.TreeBuilder()
    parser = defusedxml.ElementTree.DefusedXMLParser(target=builder)
    expat_parser = parser.parser
    expat_parser.ordered_attributes = False  # attributes as the dict TreeBuilder.start takes
    expat_parser.StartElementHandler = builder.start
    expat_parser.EndElementHandler = builder.end
    try:
        parser.feed(data)
        return parser.close()
    except defusedxml.DefusedXmlException as error:
        raise ValueError(f'{xml_path}: refused, the XML declares entities or references '
                         f'external resources ({error})') from error
    except xml.etree.ElementTree.ParseError as error:
        raise ValueError(f'{xml_path} is not well-formed XML: {error}') from error
