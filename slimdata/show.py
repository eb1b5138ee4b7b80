"""Contact sheets of records: the images with their labels, boxes and class masks drawn.

`contact_sheet('out/voc2007', num_records=16)` (and `slimdata show`) reads the first records
of a dataset folder, files or a glob, recognises their layout by its keys
(`slimdata.records.annotations`), and draws each record in a cell of one picture:

- classification: the image, captioned with its label's name and id;
- detection: every box where the record says, in its class's colour with its name in a tag at
  its top-left corner; boxes the record marks difficult are dashed, and their tag says so;
- segmentation: the image with each class region outlined in its Pascal VOC palette colour
  and a tag naming its class inside it; pixels to ignore in VOC's colour for them.

A legend under the cells names the box classes and the segmentation classes present.
Labels are named from the `dataset_info.json` or `labels.txt` beside the records, else from
the text the record stores, else shown as numbers. No TensorFlow: Pillow decodes and draws.

A record that cannot be drawn is drawn as a marked cell (a crossed square saying why), and
`ContactSheet.problems` names it: `UNREADABLE` (not an Example, no image, annotations that
cannot be read, a damaged image or class map) or `TOO_LARGE` (an image of more pixels than
`max_pixels`, which is not decoded). Memory stays bounded whatever the records say: each
image's size is read from its header before it is decoded, a JPEG is decoded at reduced size
when it is larger than its cell, each image is reduced to its cell before the next is
decoded, and the sheet itself has at most `MAX_SHEET_PIXELS` (`check_sheet_size` refuses
numbers that could exceed it before reading). Texts are shortened to fit in time that does
not grow with their length; a cell draws at most `MAX_BOXES` boxes, the legend at most
`MAX_LEGEND_CLASSES` classes of each kind.

Geometry (what `ContactSheet.cells` reports, so a picture can be checked pixel by pixel):

- An image w x h pixels is drawn at `Cell.scale` s: enlarged by the smallest whole factor
  that makes its longer side at least `MIN_SIDE` (nearest neighbour, so pixels stay sharp),
  or reduced so that its longer side is `max_side` (`MAX_SIDE` by default; Lanczos, the class
  map by nearest neighbour; a JPEG is first decoded at 1/2, 1/4 or 1/8 of its size by
  libjpeg when that still covers the drawn size), else s = 1 (a `max_side` below `MIN_SIDE`
  lowers both). Its
  drawn size `Cell.size` is (W, H) = (round(w s), round(h s)), its top-left pixel is at
  `Cell.origin` in the sheet.
- A normalised coordinate x maps to the drawn column `pixel_of(x, W)` = floor(x W), kept
  within [0, W - 1] (rows likewise, with H). This is the pixel that holds the point, which
  for VOC's `(v - 1) / size` coordinates is the box's first and last pixel.
- A box's outline is `BOX_LINE_WIDTH` pixels wide, inside its edge pixels
  (`DrawnBox.edges`, inclusive, in sheet coordinates). A difficult box's outline is dashed:
  along each side, counted from the box's left column or top row, `DASH` pixels drawn, then
  `GAP` pixels left out.
- Segmentation (`segmentation_outline`): a pixel of class k (in the class map at the drawn
  size) is on its region's outline when a pixel of another class lies within
  `BOX_LINE_WIDTH` pixels of it (rows and columns; the image's border is no edge), so the
  outline is `BOX_LINE_WIDTH` pixels wide inside the region; it is drawn in `palette[k]`,
  `palette = voc_palette()`, the colour of k's legend swatch. Pixels holding ignore_label
  (255 by default, or `extra.ignore_label` of `dataset_info.json`) are drawn in VOC's colour
  for 255, `VOID_COLOUR`, as VOC's own label images show them. Every other pixel is the
  image's, unchanged, but under the tags: one per class (the `MAX_REGION_TAGS` classes of
  the most pixels), filled with `palette[k]`, placed wholly inside the region, off its
  outline if there is room, as near its centroid as can be; a region without room for it
  has it centred on its pixel nearest its centroid (`Cell.regions`).
"""

import dataclasses
import functools
import io
import math
import os
import re
import sys
import warnings
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from slimdata import progress
from slimdata.records import annotations as annotations_lib
from slimdata.records import dataset_info, example_schema, fs, images, tfrecord
from slimdata.records.annotations import AnnotationError, Annotations, Box

RGB = Tuple[int, int, int]
#: What `ImageFont.load_default(size)` gives: a FreeType font, or a bitmap one without FreeType.
Font = Union[ImageFont.FreeTypeFont, ImageFont.ImageFont]
#: Inclusive pixel rectangle: (left column, top row, right column, bottom row).
Rect = Tuple[int, int, int, int]

MIN_SIDE = 128
MAX_SIDE = 256
#: The most pixels decoded for one image (a JPEG's counted at the reduced size it is decoded
#: at): 50 megapixels, 150 MB as RGB. A larger image is not decoded: its cell is marked.
DEFAULT_MAX_PIXELS = 50_000_000
#: The largest sheet drawn, in pixels (192 MB as RGB): it bounds -n, --columns and --size
#: together (`check_sheet_size`).
MAX_SHEET_PIXELS = 64_000_000
#: Boxes drawn in one cell (more would hide the image; each tag costs about a millisecond to
#: fit and draw); a record with more says how many it has.
MAX_BOXES = 100
#: Segmentation classes tagged in one cell, those of the most pixels: placing a tag costs up
#: to 6 ms on a 256x256 class map (1.6 s for a map of 256 classes in noise, against 0.2 s
#: with this limit).
MAX_REGION_TAGS = 32
#: A record's label texts are kept to their first and last this many characters around a
#: '…': a caption or a tag shows fewer than 130 characters; a legend entry 513 at most.
TEXT_END = 256
#: Legend entries of box classes, and of segmentation classes, drawn at most; one more entry
#: says how many others there are.
MAX_LEGEND_CLASSES = 48
#: Caption lines under a cell at most: the class, a note (a problem, boxes left out), the source.
MAX_CAPTION_LINES = 3
BOX_LINE_WIDTH = 2
DASH, GAP = 5, 3
DEFAULT_IGNORE_LABEL = 255
FONT_SIZE = 13
#: No glyph of Pillow's default font at these sizes is narrower (its narrowest, 'i', is 3
#: pixels at FONT_SIZE): a text of more than width // MIN_GLYPH_WIDTH characters cannot fit.
MIN_GLYPH_WIDTH = 2
TAG_FONT_SIZE = 11
MARGIN = 12
GUTTER = 12
SWATCH = 14

BACKGROUND: RGB = (255, 255, 255)
TEXT: RGB = (20, 20, 20)
SECONDARY_TEXT: RGB = (100, 100, 100)
SWATCH_BORDER: RGB = (120, 120, 120)
#: Box colours by label id (label % 12): saturated, told apart on photos and on each other.
BOX_COLOURS: Tuple[RGB, ...] = (
    (0, 200, 140), (255, 140, 0), (0, 220, 255), (170, 255, 0), (255, 0, 170),
    (255, 230, 0), (120, 90, 255), (0, 255, 150), (255, 70, 70), (0, 130, 255),
    (200, 120, 255), (255, 180, 150))
#: The kinds of `Problem` that keep a record from being drawn.
UNREADABLE, TOO_LARGE = 'unreadable', 'too large'
#: Marked cells (records that cannot be drawn): a square crossed in the colour of the
#: problem's kind, on a light shade of it: red for unreadable, amber for too large.
PROBLEM_COLOURS: Dict[str, RGB] = {UNREADABLE: (210, 0, 0), TOO_LARGE: (190, 110, 0)}
MARKED_BACKGROUNDS: Dict[str, RGB] = {UNREADABLE: (250, 232, 232), TOO_LARGE: (252, 242, 225)}
#: VOC's colour for 255 ('void', the band along object outlines in its label images).
VOID_COLOUR: RGB = (224, 224, 192)


def voc_palette() -> np.ndarray:
    """The Pascal VOC colour map: [256, 3] uint8, index -> RGB (0 black, 1 (128, 0, 0), ...,
    255 (224, 224, 192)), as VOC's devkit builds it: the bits of the index, three at a time,
    fill red, green and blue from their most significant bit down."""
    indices = np.arange(256)
    colours = np.zeros((256, 3), np.int64)
    for bit in range(8):
        for channel in range(3):
            colours[:, channel] |= ((indices >> (3 * bit + channel)) & 1) << (7 - bit)
    return colours.astype(np.uint8)


_PALETTE = voc_palette()
# The most entries a legend can have: each class list, its 'more' entry, 'no label',
# 'difficult' and 'ignore'.
_MAX_LEGEND_ENTRIES = 2 * (MAX_LEGEND_CLASSES + 1) + 3


def pixel_of(fraction: float, extent: int) -> int:
    """The drawn pixel (column or row) of a normalised coordinate, over `extent` pixels."""
    return min(max(math.floor(fraction * extent), 0), extent - 1)


def box_edges(box: Box, size: Tuple[int, int]) -> Rect:
    """A box's edge pixels in an image drawn `size` = (width, height) pixels (see the module
    docstring); min and max are taken as they come, so an inverted box is drawn too."""
    width, height = size
    return (pixel_of(min(box.xmin, box.xmax), width), pixel_of(min(box.ymin, box.ymax), height),
            pixel_of(max(box.xmin, box.xmax), width), pixel_of(max(box.ymin, box.ymax), height))


# ----------------------------------------------------------------------------------------------
# Which records: folders, files, globs and a split

#: The split a dataset folder stands for when none is named (if it has one by that name).
DEFAULT_SPLIT = 'train'


class SelectionError(ValueError):
    """The paths or the split name nothing that can be shown (a usage error)."""


@dataclasses.dataclass
class Selection:
    """The record files to show, and what the dataset beside them says.

    Attributes:
      files: the record files, in order.
      title: what they are (paths and split), for the sheet's title.
      labels_to_names: label id -> name (empty when nothing names them).
      ignore_label: the segmentation label of pixels to ignore.
    """
    files: List[str]
    title: str
    labels_to_names: Dict[int, str]
    ignore_label: int = DEFAULT_IGNORE_LABEL


def select_records(paths: Sequence[str], split: Optional[str] = None) -> Selection:
    """The record files that paths name, and their labels.

    Args:
      paths: dataset folders, record files or globs. A folder with a `dataset_info.json`
        stands for the shards of one split: `split`; by default the training split (see
        `default_split`), and the title names the others. A folder without one stands
        for its record files whose name holds the split (`split`, by default 'train')
        between `-`, `_` or `.`; by default, for all its record files if none is named so.
      split: the split to show, for folders.

    Raises:
      SelectionError: a path matches nothing, `split` is given without a folder, or a
        folder has no such split (the message lists those it has).
      ValueError: a folder's `dataset_info.json` or `labels.txt` cannot be read.
    """
    if split is not None and not any(fs.isdir(path) for path in paths):
        raise SelectionError(f'--split {split} picks the shards of a dataset folder, and none '
                             f'of {", ".join(paths)} is a folder')
    files: List[str] = []
    splits: List[str] = []
    for path in paths:
        if fs.isdir(path):
            found, chosen = _split_files(path, split)
            splits += [chosen] if chosen else []
        else:
            found = _expand([path])
        files += [file for file in found if file not in files]
    title = ', '.join(paths) + (f' (split {", ".join(dict.fromkeys(splits))})' if splits else '')
    if not files:
        raise ValueError(f'{title}: no record files (the split lists no shards)')
    folder = os.path.dirname(files[0])
    info = dataset_info.read_dataset_info(folder) or {}
    extra = info.get('extra') or {}
    return Selection(files=files, title=title, labels_to_names=_labels(folder, info),
                     ignore_label=extra.get('ignore_label', DEFAULT_IGNORE_LABEL))


def _expand(paths: Sequence[str]) -> List[str]:
    try:
        return tfrecord.expand_paths(paths)
    except ValueError as error:
        raise SelectionError(str(error)) from error


def _split_files(folder: str, split: Optional[str]) -> Tuple[List[str], Optional[str]]:
    """(the shards of the split to show, its name) of a dataset folder."""
    info = dataset_info.read_dataset_info(folder)
    splits = (info or {}).get('splits', {})
    if splits:
        chosen = split if split is not None else default_split(list(splits))
        if chosen not in splits:
            raise SelectionError(f'{folder} has no split {chosen!r}: its dataset_info.json '
                                 f'lists {", ".join(splits)}')
        files = [os.path.join(folder, shard['file']) for shard in splits[chosen]['shards']]
        others = [name for name in splits if name != chosen]
        if split is None and others:  # chosen for the user: say so, and what else there is
            return files, f'{chosen}; also {", ".join(others)}: --split picks one'
        return files, chosen
    files = _expand([folder])
    named = re.compile(rf'(^|[-_.]){re.escape(split or DEFAULT_SPLIT)}([-_.]|$)')
    chosen_files = [file for file in files if named.search(os.path.basename(file))]
    if split is None:
        return (chosen_files, DEFAULT_SPLIT) if chosen_files else (files, None)
    if not chosen_files:
        raise SelectionError(f'{folder} has no dataset_info.json and no record file named for '
                             f'split {split!r}')
    return chosen_files, split


def default_split(splits: Sequence[str]) -> str:
    """The split a dataset folder stands for when none is named: 'train'; else the first
    whose name starts with it (trainval, train_fine, train_aug: what was converted to train
    on); else the first listed.

    dataset_info.json keeps its splits by name, not in the order they were converted, so
    "the first converted" is told by name: `convert voc --split trainval test` shows trainval.
    """
    if DEFAULT_SPLIT in splits:
        return DEFAULT_SPLIT
    return next((name for name in splits if name.startswith(DEFAULT_SPLIT)), splits[0])


def _labels(folder: str, info: Mapping) -> Dict[int, str]:
    names = dataset_info.labels_to_names(info)
    if not names and dataset_info.has_labels_file(folder):
        names = dataset_info.read_labels_file(folder)
    return names


# ----------------------------------------------------------------------------------------------
# Reading and decoding, in bounded memory


@dataclasses.dataclass(frozen=True)
class Problem:
    """Why a record is drawn as a marked cell instead of its image.

    Attributes:
      kind: `UNREADABLE` (the record or an image in it is damaged, or not what `show`
        reads) or `TOO_LARGE` (an image with more pixels than the limit: not decoded).
      text: a few words for the cell ('corrupt image', '13000x13000 pixels').
      message: the whole reason, naming the file, the record and the key.
    """
    kind: str
    text: str
    message: str


class _Undrawable(Exception):
    """A record that cannot be drawn; carries its `Problem`."""

    def __init__(self, kind: str, text: str, message: str):
        super().__init__(message)
        self.problem = Problem(kind, text, message)


@dataclasses.dataclass
class Sample:
    """A record, decoded for drawing.

    Attributes:
      annotations: what the record holds, as much as is drawn (`_kept`): without its encoded
        images, the first `MAX_BOXES` boxes, texts of at most 2 * `TEXT_END` characters.
      image: the image, RGB, reduced to the `max_side` it was decoded for (never enlarged);
        None when the record cannot be drawn.
      stored_size: (width, height) of the image the record stores.
      classes: the segmentation class map, [height, width] uint8 at the size of `image`
        (reduced by nearest neighbour), or None.
      class_ids: the class ids present in the whole stored class map.
      problem: why the record cannot be drawn, or None.
      num_boxes: how many boxes the record has (it may have more than it keeps).
    """
    annotations: Annotations
    image: Optional[Image.Image]
    stored_size: Tuple[int, int] = (0, 0)
    classes: Optional[np.ndarray] = None
    class_ids: Tuple[int, ...] = ()
    problem: Optional[Problem] = None
    num_boxes: int = 0


def read_samples(files: Sequence[str], num_records: int,
                 compression: Optional[str] = tfrecord.AUTO, max_side: int = MAX_SIDE,
                 max_pixels: int = DEFAULT_MAX_PIXELS) -> List[Sample]:
    """Reads and decodes the first `num_records` records of `files` (fewer if they hold fewer).

    A record that cannot be drawn (not an Example, no image, an annotation that cannot be
    read, a corrupt image or class map, an image over `max_pixels`) becomes a sample with a
    `problem`: the sheet marks its cell. Memory holds one decoded image at a time, each
    reduced to `max_side` at once (see `decode_record`).

    Raises:
      tfrecord.TFRecordError: a file is not a TFRecord file, or is damaged (its records
        cannot be told apart any more).
    """
    samples: List[Sample] = []
    with progress.Progress(num_records, 'reading records', unit='records',
                           delay=2.0) as shown:
        for path in files:
            records = tfrecord.iter_records(path, compression=compression)
            for index, record in enumerate(records):
                samples.append(decode_record(record, f'{path}: record {index}', max_side,
                                             max_pixels))
                shown.update()
                if len(samples) == num_records:
                    return samples
    return samples


def decode_record(record: bytes, where: str, max_side: int = MAX_SIDE,
                  max_pixels: int = DEFAULT_MAX_PIXELS) -> Sample:
    """Parses a serialized Example and decodes its image and class map for drawing.

    Each image's size is read from its header before any pixel is decoded. A JPEG or PNG
    must pass `slimdata.records.images`' structure check (a JPEG's header claiming more
    pixels than its data can hold is damaged, not large). An image is decoded only if it
    has at most `max_pixels` pixels; a JPEG larger than `max_side` is decoded at 1/2, 1/4
    or 1/8 of its size (libjpeg's DCT scaling) when that still covers `max_side`, and
    counts at that size. The decoded image is reduced to `max_side` (Lanczos) before the
    next is decoded.

    Args:
      record: the serialized Example.
      where: the record, as messages name it (`<file>: record <i>`).
      max_side: the longest side of the drawn image.
      max_pixels: the most pixels decoded for one image (or class map).

    Returns:
      The sample; its `problem` says why the record cannot be drawn, if it cannot.
    """
    found = Annotations(where=where, image=b'')
    try:
        found = _annotations(record, where)
        stored_size, image = _decode_image(found, max_side, max_pixels)
        classes: Optional[np.ndarray] = None
        class_ids: Tuple[int, ...] = ()
        if found.segmentation is not None:
            classes, class_ids = _decode_classes(found.segmentation, found.where, stored_size,
                                                 image.size, max_pixels)
    except _Undrawable as undrawable:
        return Sample(_kept(found), None, problem=undrawable.problem,
                      num_boxes=found.num_boxes)
    return Sample(_kept(found), image, stored_size, classes, class_ids,
                  num_boxes=found.num_boxes)


def _kept(found: Annotations) -> Annotations:
    """What a sample keeps of a record's annotations, so that the samples of a sheet hold
    no more than it draws however large the records: no encoded images, the first
    `MAX_BOXES` boxes, and texts cut to their first and last `TEXT_END` characters around
    a '…'."""
    return dataclasses.replace(
        found, image=b'', segmentation=None, class_text=_cut(found.class_text),
        boxes=tuple(dataclasses.replace(box, text=_cut(box.text))
                    for box in found.boxes[:MAX_BOXES]))


def _cut(text: Optional[str]) -> Optional[str]:
    if text is None or len(text) <= 2 * TEXT_END:
        return text
    return text[:TEXT_END] + '…' + text[-TEXT_END:]


def _annotations(record: bytes, where: str) -> Annotations:
    try:
        features = example_schema.parse_example(record)
    except example_schema.DecodeError as error:
        raise _Undrawable(UNREADABLE, 'not an Example',
                          f'{where}: not a tf.train.Example ({error})') from error
    try:
        return annotations_lib.read_annotations(features, where, MAX_BOXES)
    except AnnotationError as error:
        raise _Undrawable(UNREADABLE, 'unreadable record', str(error)) from error


def _decode_image(found: Annotations, max_side: int, max_pixels: int
                  ) -> Tuple[Tuple[int, int], Image.Image]:
    """(the stored size, the image as RGB reduced to `max_side`)."""
    where = f'{found.where}, key {annotations_lib.IMAGE_KEY!r}'
    if found.raw_shape is not None:
        height, width, channels = found.raw_shape
        _check_pixels((width, height), (width, height), where, max_pixels)
        pixels = np.frombuffer(found.image, np.uint8).reshape(height, width, channels)
        image = Image.fromarray(pixels[..., 0] if channels == 1 else pixels)
        return (width, height), _rgb_at(image, reduced_size((width, height), max_side))
    image = _open(found.image, where, 'corrupt image')
    stored_size = image.size
    size = reduced_size(stored_size, max_side)
    if image.format in ('JPEG', 'MPO') and size != stored_size:  # MPO: a camera's JPEG
        image.draft('RGB', size)  # libjpeg decodes at the smallest 1/s that covers `size`
    _check_pixels(stored_size, image.size, where, max_pixels)
    _load(image, found.image, where, 'corrupt image')
    return stored_size, _rgb_at(image, size)


def _decode_classes(data: bytes, record: str, stored_size: Tuple[int, int],
                    size: Tuple[int, int], max_pixels: int
                    ) -> Tuple[np.ndarray, Tuple[int, ...]]:
    """(the class map at `size`, reduced by nearest neighbour; the class ids present)."""
    where = f'{record}, key {annotations_lib.SEGMENTATION_KEY!r}'
    image = _open(data, where, 'corrupt class map')
    if image.size != stored_size:
        raise _Undrawable(UNREADABLE, 'class map size',
                          f'{record}: the class map ({annotations_lib.SEGMENTATION_KEY!r}) '
                          f'is {image.width}x{image.height} (WxH), the image '
                          f'{stored_size[0]}x{stored_size[1]}')
    if image.mode not in ('L', 'P'):
        raise _Undrawable(UNREADABLE, 'class map not 1 channel',
                          f'{where}: a {image.mode} image; expected one channel of class '
                          'indices (mode L or P)')
    _check_pixels(stored_size, stored_size, where, max_pixels)
    _load(image, data, where, 'corrupt class map')
    classes = np.asarray(image)
    class_ids = tuple(np.flatnonzero(np.bincount(classes.ravel(), minlength=256)).tolist())
    if size != stored_size:
        classes = np.asarray(image.resize(size, Image.Resampling.NEAREST))
    return classes, class_ids


def reduced_size(size: Tuple[int, int], max_side: int) -> Tuple[int, int]:
    """The size an image of `size` is decoded to: its drawn size (`drawn_size`) when that is
    smaller, else its own (enlarging is left to drawing)."""
    scale, drawn = drawn_size(size, max_side)
    return drawn if scale < 1 else size


def drawn_size(size: Tuple[int, int], max_side: int) -> Tuple[float, Tuple[int, int]]:
    """(scale, (W, H)) of an image of `size` drawn with `max_side` (see the module docstring)."""
    width, height = size
    longest = max(size)
    min_side = min(MIN_SIDE, max_side)
    if longest < min_side:
        scale = float(math.ceil(min_side / longest))
    elif longest > max_side:
        scale = max_side / longest
    else:
        scale = 1.0
    return scale, (max(1, round(width * scale)), max(1, round(height * scale)))


def _open(data: bytes, where: str, damaged: str) -> Image.Image:
    """The image's header, read by Pillow (nothing decoded yet); `damaged` is the cell's text
    when it is not readable.

    A JPEG's structure is checked first: in tens of microseconds, it tells a header that
    claims more pixels than the data holds (damaged) from a large image.
    """
    if images.image_format_of(data) == 'jpeg':
        info = _check_structure(data, where, damaged)
        if info.width * info.height > images.DEFAULT_MAX_PIXELS:
            raise _too_large((info.width, info.height), where,
                             f"more than Pillow opens ({images.DEFAULT_MAX_PIXELS:,} pixels)")
    try:
        with warnings.catch_warnings():
            # Pillow warns of images over half its limit; the pixel limit here is the check.
            warnings.simplefilter('ignore', Image.DecompressionBombWarning)
            return Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as error:
        raise _Undrawable(TOO_LARGE, 'too many pixels', f'{where}: {error}') from error
    except images.PILLOW_ERRORS as error:
        raise _Undrawable(UNREADABLE, damaged, f'{where}: corrupt or unreadable image '
                          f'({type(error).__name__}: {error})') from error


def _check_pixels(stored_size: Tuple[int, int], decoded_size: Tuple[int, int], where: str,
                  max_pixels: int) -> None:
    """Refuses to decode more than `max_pixels` pixels."""
    if decoded_size[0] * decoded_size[1] > max_pixels:
        at = '' if decoded_size == stored_size else \
            f' (decoded at {decoded_size[0]}x{decoded_size[1]})'
        raise _too_large(stored_size, where, f'over the limit of {max_pixels:,} pixels '
                         f'decoded per image{at}')


def _too_large(size: Tuple[int, int], where: str, reason: str) -> _Undrawable:
    return _Undrawable(TOO_LARGE, f'{size[0]}x{size[1]} pixels',
                       f'{where}: {size[0]}x{size[1]} pixels, {reason}')


def _check_structure(data: bytes, where: str, damaged: str) -> images.ImageInfo:
    """`images.check_image`'s structure check of a JPEG or PNG (its size is checked apart)."""
    try:
        return images.check_image(data, where, 'structure', max_pixels=sys.maxsize)
    except images.ImageError as error:
        raise _Undrawable(UNREADABLE, damaged, str(error)) from error


def _load(image: Image.Image, data: bytes, where: str, damaged: str) -> None:
    """Decodes the image, once a PNG's structure is checked (its data inflated, without
    keeping it: only for images small enough to decode)."""
    if images.image_format_of(data) == 'png':
        _check_structure(data, where, damaged)
    try:
        image.load()
    except images.PILLOW_ERRORS as error:
        raise _Undrawable(UNREADABLE, damaged, f'{where}: corrupt or unreadable image '
                          f'({type(error).__name__}: {error})') from error


def _rgb_at(image: Image.Image, size: Tuple[int, int]) -> Image.Image:
    """The image as RGB at `size` (Lanczos), converted after reducing where that gives the same
    pixels (grey), so that no full-size RGB copy of a large grey image is made."""
    if image.mode.startswith('I'):  # 16-bit grey (a PNG's, which Pillow may open as 'I')
        image = Image.fromarray(np.clip(np.asarray(image) >> 8, 0, 255).astype(np.uint8))
    if image.mode not in ('L', 'RGB'):
        image = image.convert('RGB')
    if image.size != size:
        image = image.resize(size, Image.Resampling.LANCZOS)
    return image.convert('RGB')


# ----------------------------------------------------------------------------------------------
# Drawing

@dataclasses.dataclass
class DrawnBox:
    """A box as drawn.

    Attributes:
      box: the record's box.
      edges: its edge pixels, in sheet coordinates (the outline lies inside them).
      colour: its outline's colour.
      text: its label as the tag shows it (shortened in the middle when the image is narrower).
      tag: the tag's rectangle in sheet coordinates (filled with `colour`), or None.
    """
    box: Box
    edges: Rect
    colour: RGB
    text: str
    tag: Optional[Rect]


@dataclasses.dataclass
class DrawnRegion:
    """The pixels of one segmentation class in a record, as drawn.

    Attributes:
      label: the class id.
      colour: its outline's and its tag's colour (`voc_palette()[label]`).
      text: its name as the tag shows it.
      tag: the tag's rectangle in sheet coordinates (filled with `colour`).
    """
    label: int
    colour: RGB
    text: str
    tag: Rect


#: A record as drawn by `_draw_record`: its image, boxes, scale and segmentation regions.
_Drawn = Tuple[Image.Image, List[DrawnBox], float, List[DrawnRegion]]


@dataclasses.dataclass
class Cell:
    """One record's place in the sheet.

    Attributes:
      where: the record (`<file>: record <i>`).
      origin: (x, y) of the drawn image's top-left pixel in the sheet.
      size: (width, height) of the drawn image.
      scale: drawn size / stored size (0 for a marked cell).
      boxes: the boxes as drawn (the first `MAX_BOXES`).
      captions: each caption line and the (x, y) where its text is drawn.
      problem: why the record is drawn as a marked cell (a crossed square of
        min(MIN_SIDE, max_side) pixels saying `problem.kind`), or None.
      regions: the segmentation classes tagged: one per class present but ignore_label, of
        those the `MAX_REGION_TAGS` of the most pixels (every class is outlined).
    """
    where: str
    origin: Tuple[int, int]
    size: Tuple[int, int]
    scale: float
    boxes: List[DrawnBox]
    captions: List[Tuple[str, Tuple[int, int]]]
    problem: Optional[Problem] = None
    regions: List[DrawnRegion] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class LegendEntry:
    """One entry of the legend.

    Attributes:
      text: what it says ('bird (3)', 'difficult', 'ignore (255)').
      style: 'box' (an outlined swatch in a box colour), 'difficult' (a dashed outline),
        'class' (a swatch filled with a class's palette colour), 'ignore' (filled with
        `VOID_COLOUR`), 'more' (no swatch: how many classes are not listed).
      colour: the swatch's colour.
      swatch: the swatch's rectangle in sheet coordinates.
    """
    text: str
    style: str
    colour: RGB
    swatch: Rect = (0, 0, 0, 0)


@dataclasses.dataclass
class ContactSheet:
    """The picture and where everything in it is."""
    image: Image.Image
    title: str
    cells: List[Cell]
    legend: List[LegendEntry]

    @property
    def problems(self) -> List[Problem]:
        """Why each marked cell is not drawn, in cell order."""
        return [cell.problem for cell in self.cells if cell.problem is not None]

    def png_bytes(self) -> bytes:
        buffer = io.BytesIO()
        # zlib's default level: `optimize=True` (level 9) took 2.5 times as long on a 16-record
        # VOC segmentation sheet (0.99 s against 0.40 s) to make it 1.2% smaller.
        self.image.save(buffer, format='PNG')
        return buffer.getvalue()


@functools.lru_cache(maxsize=None)
def _font(size: int) -> Font:
    return ImageFont.load_default(size=size)


def _line_height(font: Font) -> int:
    left, top, right, bottom = font.getbbox('Ag|')
    return int(bottom) + 3


def _fit(text: str, width: int, font: Font) -> str:
    """`text`, shortened in the middle with '…' to the most characters that fit `width` pixels.

    However long the text (a record may hold 200 kB of label text), at most `width //
    MIN_GLYPH_WIDTH` characters are measured, about log2 of that many times: measuring costs
    about 10 microseconds a character.
    """
    most = max(width, 0) // MIN_GLYPH_WIDTH + 1  # more characters cannot fit
    if len(text) <= most and font.getlength(text) <= width:
        return text

    def shortened(keep: int) -> str:
        return text[:(keep + 1) // 2] + '…' + text[len(text) - keep // 2:]

    fits, too_many = 0, min(len(text), most + 1)  # shortened(0) is '…' alone
    while too_many - fits > 1:
        keep = (fits + too_many) // 2
        if font.getlength(shortened(keep)) <= width:
            fits = keep
        else:
            too_many = keep
    return shortened(fits)


class _Namer:
    """Label ids to the text shown: the dataset's names, else the record's text, else ids."""

    def __init__(self, labels_to_names: Mapping[int, str]):
        self.names = labels_to_names

    def name(self, label: Optional[int], stored_text: Optional[str]) -> str:
        if label is not None and label in self.names:
            return self.names[label]
        if stored_text:
            return stored_text
        return '' if label is None else str(label)

    def with_id(self, label: int, stored_text: Optional[str] = None) -> str:
        name = self.name(label, stored_text)
        return f'{name} ({label})' if name != str(label) else str(label)


def box_colour(label: Optional[int]) -> RGB:
    """The outline colour of boxes of `label` (`BOX_COLOURS[label % 12]`; label 0 for None)."""
    return BOX_COLOURS[(label or 0) % len(BOX_COLOURS)]


class SheetTooLarge(ValueError):
    """A sheet of more than `MAX_SHEET_PIXELS` pixels: too many records, columns or too large
    cells asked (a usage error)."""


def check_sheet_size(num_records: int, columns: Optional[int] = None,
                     max_side: int = MAX_SIDE) -> None:
    """Refuses, before any record is read, numbers that could make a sheet of more than
    `MAX_SHEET_PIXELS`: `num_records` cells in `columns` columns (at most one per record),
    each as large as an image drawn with `max_side` can be, with the most caption lines and
    the longest legend.

    Raises:
      SheetTooLarge: naming the numbers and the size they could reach.
    """
    columns = _columns(num_records, columns)
    side = max(max_side, 2 * min(MIN_SIDE, max_side) - 1)  # enlarged: under 2 * MIN_SIDE
    line = _line_height(_font(FONT_SIZE))
    width = _sheet_width(columns, side)
    height = _legend_top(num_records, columns, side + 4 + MAX_CAPTION_LINES * line, line) \
        + _MAX_LEGEND_ENTRIES * line + MARGIN
    if width * height > MAX_SHEET_PIXELS:
        raise SheetTooLarge(
            f'{num_records:,} records in {columns:,} columns of cells up to {side} pixels '
            f'could make a sheet of {width:,}x{height:,} pixels, more than the '
            f'{MAX_SHEET_PIXELS:,} drawn at most: ask for fewer records, fewer columns or '
            'smaller cells')


def render(samples: Sequence[Sample], labels_to_names: Optional[Mapping[int, str]] = None,
           ignore_label: int = DEFAULT_IGNORE_LABEL, title: str = '',
           columns: Optional[int] = None, max_side: int = MAX_SIDE) -> ContactSheet:
    """Draws decoded records into a contact sheet (see the module docstring).

    Args:
      samples: the records, from `read_samples` (with the same `max_side`).
      labels_to_names: label id -> name.
      ignore_label: the segmentation label drawn as `VOID_COLOUR`.
      title: the line above the cells.
      columns: cells per row (at most one per record); by default about the square root
        of their number.
      max_side: the longest side of a drawn image (larger images are reduced to it).

    Raises:
      SheetTooLarge: the sheet would have more than `MAX_SHEET_PIXELS` pixels.
    """
    if not samples:
        raise ValueError('no records to draw')
    namer = _Namer(labels_to_names or {})
    columns = _columns(len(samples), columns)
    font = _font(FONT_SIZE)
    line = _line_height(font)
    drawn = [_draw_record(sample, namer, ignore_label, max_side) for sample in samples]
    captions = [_captions(sample, namer) for sample in samples]
    cell_width = max(image.width for image, *_ in drawn)
    image_height = max(image.height for image, *_ in drawn)
    cell_height = image_height + 4 + line * max(len(lines) for lines in captions)
    width = _sheet_width(columns, cell_width)
    cells_top = MARGIN + line + GUTTER // 2
    legend_top = _legend_top(len(samples), columns, cell_height, line)
    legend = _legend_entries(samples, drawn, namer, ignore_label)
    legend_lines = _place_legend(legend, width, legend_top, line)
    height = legend_top + legend_lines * line + MARGIN - (0 if legend_lines else GUTTER)
    if width * height > MAX_SHEET_PIXELS:
        raise SheetTooLarge(f'the sheet would be {width:,}x{height:,} pixels, more than the '
                            f'{MAX_SHEET_PIXELS:,} drawn at most')
    sheet = Image.new('RGB', (width, height), BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    draw.text((MARGIN, MARGIN), _fit(title, width - 2 * MARGIN, font), fill=TEXT, font=font)
    cells = []
    for number, (sample, (image, boxes, scale, regions), lines) in enumerate(
            zip(samples, drawn, captions)):
        row, column = divmod(number, columns)
        cell_x = MARGIN + column * (cell_width + GUTTER)
        cell_y = cells_top + row * (cell_height + GUTTER)
        origin = (cell_x + (cell_width - image.width) // 2, cell_y)
        sheet.paste(image, origin)
        placed = _draw_captions(draw, lines, cell_x, cell_y + image_height + 4, cell_width)
        cells.append(Cell(where=sample.annotations.where, origin=origin, size=image.size,
                          scale=scale, boxes=[_shifted(box, origin) for box in boxes],
                          captions=placed, problem=sample.problem,
                          regions=[_shifted_region(region, origin) for region in regions]))
    _draw_legend(draw, legend, font)
    return ContactSheet(sheet, title, cells, legend)


def _columns(num_cells: int, columns: Optional[int]) -> int:
    return min(columns or math.ceil(math.sqrt(num_cells)), num_cells)


def _sheet_width(columns: int, cell_width: int) -> int:
    return 2 * MARGIN + columns * cell_width + (columns - 1) * GUTTER


def _legend_top(num_cells: int, columns: int, cell_height: int, line: int) -> int:
    rows = math.ceil(num_cells / columns)
    cells_top = MARGIN + line + GUTTER // 2
    return cells_top + rows * cell_height + (rows - 1) * GUTTER + GUTTER


def _draw_captions(draw: ImageDraw.ImageDraw, lines: Sequence[Tuple[str, RGB]], left: int,
                   top: int, width: int) -> List[Tuple[str, Tuple[int, int]]]:
    """Draws caption lines centred in a column `width` pixels wide; returns where each is."""
    font = _font(FONT_SIZE)
    placed = []
    for number, (text, colour) in enumerate(lines):
        text = _fit(text, width, font)
        position = (left + (width - round(font.getlength(text))) // 2,
                    top + number * _line_height(font))
        draw.text(position, text, fill=colour, font=font)
        placed.append((text, position))
    return placed


def _scaled(image: Image.Image, sample: Sample, max_side: int
            ) -> Tuple[Image.Image, Optional[np.ndarray], float]:
    """The sample's image (and class map) at the size drawn, and the scale."""
    scale, size = drawn_size(sample.stored_size, max_side)
    classes = sample.classes
    if image.size == size:  # reduced when decoded, or drawn as stored
        return image, classes, scale
    resample = Image.Resampling.NEAREST if scale > 1 else Image.Resampling.LANCZOS
    if classes is not None:
        classes = np.asarray(Image.fromarray(classes).resize(size, Image.Resampling.NEAREST))
    return image.resize(size, resample), classes, scale


def _draw_record(sample: Sample, namer: _Namer, ignore_label: int, max_side: int) -> _Drawn:
    """The record's image as drawn in its cell, its boxes (in image coordinates), the scale,
    its segmentation regions (in image coordinates); a marked square for a record that cannot
    be drawn."""
    if sample.problem is not None:
        return _marked(sample.problem, min(MIN_SIDE, max_side)), [], 0.0, []
    assert sample.image is not None, 'a sample without a problem has its image'
    image, classes, scale = _scaled(sample.image, sample, max_side)
    draw = ImageDraw.Draw(image)
    regions = [] if classes is None else _draw_classes(image, draw, classes, namer,
                                                       ignore_label)
    tag_font = _font(TAG_FONT_SIZE)
    fitted: Dict[str, str] = {}  # the tags as shown: boxes of one class share theirs
    boxes = []
    for box in sample.annotations.boxes:
        edges = box_edges(box, image.size)
        colour = box_colour(box.label)
        _draw_outline(draw, edges, colour, dashed=box.difficult)
        text = namer.name(box.label, box.text)
        if box.difficult:  # said in words too: a small box's dashes do not show
            text = f'{text} (difficult)' if text else 'difficult'
        if text not in fitted:
            fitted[text] = _fit(text, image.width - 5, tag_font)
        boxes.append(DrawnBox(box, edges, colour, fitted[text], None))
    placed: List[Rect] = []
    for drawn in boxes:  # tags after every outline, so that no outline crosses a tag's text
        drawn.tag = _draw_tag(draw, drawn, image.size, placed)
        placed += [drawn.tag] if drawn.tag else []
    return image, boxes, scale, regions


def _marked(problem: Problem, side: int) -> Image.Image:
    """A square crossed in the colour of the problem's kind, saying the kind."""
    colour = PROBLEM_COLOURS[problem.kind]
    image = Image.new('RGB', (side, side), MARKED_BACKGROUNDS[problem.kind])
    draw = ImageDraw.Draw(image)
    last = side - 1
    draw.line((0, 0, last, last), fill=colour, width=BOX_LINE_WIDTH)
    draw.line((0, last, last, 0), fill=colour, width=BOX_LINE_WIDTH)
    draw.rectangle((0, 0, last, last), outline=colour, width=BOX_LINE_WIDTH)
    font = _font(FONT_SIZE)
    band_top = (side - _line_height(font)) // 2
    if band_top > BOX_LINE_WIDTH:  # else too small for words (a --size of a few pixels)
        text = _fit(problem.kind, side - 2 * BOX_LINE_WIDTH - 4, font)
        draw.rectangle((BOX_LINE_WIDTH, band_top, last - BOX_LINE_WIDTH,
                        band_top + _line_height(font)), fill=BACKGROUND)
        draw.text(((side - round(font.getlength(text))) // 2, band_top + 1), text,
                  fill=colour, font=font)
    return image


def segmentation_outline(classes: np.ndarray, width: int = BOX_LINE_WIDTH) -> np.ndarray:
    """[height, width] bool: the pixels of a class map with a pixel of another class within
    `width` rows and columns of them (the inner `width` pixels of each region's edge)."""
    return _in_window(np.maximum, classes, width) != _in_window(np.minimum, classes, width)


def _in_window(extreme: np.ufunc, array: np.ndarray, width: int) -> np.ndarray:
    """`extreme` (np.maximum or np.minimum) of the pixels within `width` rows and columns of
    each pixel; along rows, then columns, over shifted views (0.3 ms for a 256x192 class map,
    against 16 ms reducing numpy's sliding window view of its 5x5 windows)."""
    height, columns = array.shape
    padded = np.pad(array, width, mode='edge')  # the image's border is no region's edge
    span = range(2 * width + 1)
    rows = functools.reduce(extreme, (padded[shift:shift + height] for shift in span))
    return functools.reduce(extreme, (rows[:, shift:shift + columns] for shift in span))


def _draw_classes(image: Image.Image, draw: ImageDraw.ImageDraw, classes: np.ndarray,
                  namer: _Namer, ignore_label: int) -> List[DrawnRegion]:
    """Draws the class map on the image (see the module docstring): outlines, ignore_label
    pixels, then a tag per class; returns the regions as drawn."""
    outline = segmentation_outline(classes)
    ignored = classes == ignore_label
    pixels = np.array(image)
    pixels[outline] = _PALETTE[classes[outline]]
    pixels[ignored] = VOID_COLOUR
    image.paste(Image.fromarray(pixels))
    font = _font(TAG_FONT_SIZE)
    regions = []
    for label in _tagged_classes(classes[~ignored]):
        colour: RGB = tuple(_PALETTE[label].tolist())
        text = _fit(namer.name(label, None), image.width - 5, font)
        tag = _region_tag(classes == label, outline, round(font.getlength(text)) + 5,
                          _line_height(font))
        draw.rectangle(tag, fill=colour)
        draw.text((tag[0] + 2, tag[1]), text, fill=_text_colour_on(colour), font=font)
        regions.append(DrawnRegion(label, colour, text, tag))
    return regions


def _tagged_classes(labels: np.ndarray) -> List[int]:
    """The classes of the `MAX_REGION_TAGS` most pixels of `labels`, in label order."""
    counts = np.bincount(labels.ravel(), minlength=256)
    present = np.flatnonzero(counts)
    largest = present[np.argsort(-counts[present], kind='stable')[:MAX_REGION_TAGS]]
    return sorted(largest.tolist())


def _region_tag(region: np.ndarray, outline: np.ndarray, tag_width: int,
                tag_height: int) -> Rect:
    """The tag's rectangle: of the places where it lies wholly inside the region and off its
    outline (else wholly inside the region), the one whose centre is nearest the region's
    centroid; when there is none, centred on the region's pixel nearest its centroid (off its
    outline, if any), kept within the image."""
    height, width = region.shape
    tag_width, tag_height = min(tag_width, width), min(tag_height, height)
    rows, columns = np.nonzero(region)
    centre = rows.mean() - (tag_height - 1) / 2, columns.mean() - (tag_width - 1) / 2
    inner = region & ~outline
    first_row, first_column = rows.min(), columns.min()  # the tag's places, in its bounds
    bounds = slice(first_row, rows.max() + 1), slice(first_column, columns.max() + 1)
    tops, lefts = np.nonzero(_fits(inner[bounds], tag_width, tag_height))
    if not len(tops):  # over the outline, if that makes room
        tops, lefts = np.nonzero(_fits(region[bounds], tag_width, tag_height))
    tops, lefts = tops + first_row, lefts + first_column
    if not len(tops):  # no room inside: centred on the region's most central pixel
        if inner.any():
            rows, columns = np.nonzero(inner)
        tops = np.clip(rows - tag_height // 2, 0, height - tag_height)
        lefts = np.clip(columns - tag_width // 2, 0, width - tag_width)
    nearest = np.argmin((tops - centre[0]) ** 2 + (lefts - centre[1]) ** 2)
    left, top = int(lefts[nearest]), int(tops[nearest])
    return left, top, left + tag_width - 1, top + tag_height - 1


def _fits(mask: np.ndarray, tag_width: int, tag_height: int) -> np.ndarray:
    """[height - tag_height + 1, width - tag_width + 1] bool: where a tag's top-left pixel can
    be for the tag to cover only pixels of `mask` (counted on its summed-area table); empty
    when the tag is larger than the mask."""
    if tag_height > mask.shape[0] or tag_width > mask.shape[1]:
        return np.zeros((0, 0), bool)
    table = np.pad(mask.astype(np.int32).cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    counts = (table[tag_height:, tag_width:] - table[:-tag_height, tag_width:]
              - table[tag_height:, :-tag_width] + table[:-tag_height, :-tag_width])
    return counts == tag_width * tag_height


def _draw_outline(draw: ImageDraw.ImageDraw, edges: Rect, colour: RGB, dashed: bool) -> None:
    """The outline inside `edges`: solid, or dashed from the top-left corner."""
    left, top, right, bottom = edges
    inner_right = max(right - BOX_LINE_WIDTH + 1, left)
    inner_bottom = max(bottom - BOX_LINE_WIDTH + 1, top)
    horizontal = [(top, min(top + BOX_LINE_WIDTH - 1, bottom)), (inner_bottom, bottom)]
    vertical = [(left, min(left + BOX_LINE_WIDTH - 1, right)), (inner_right, right)]
    step = DASH + GAP if dashed else None
    for first_row, last_row in horizontal:
        for start, end in _runs(left, right, step):
            draw.rectangle((start, first_row, end, last_row), fill=colour)
    for first_column, last_column in vertical:
        for start, end in _runs(top, bottom, step):
            draw.rectangle((first_column, start, last_column, end), fill=colour)


def _runs(first: int, last: int, step: Optional[int]) -> Iterable[Tuple[int, int]]:
    """The drawn runs (inclusive) of a side from `first` to `last`: one, or the dashes."""
    if step is None:
        return [(first, last)]
    return [(start, min(start + DASH - 1, last)) for start in range(first, last + 1, step)]


def _draw_tag(draw: ImageDraw.ImageDraw, drawn: DrawnBox, size: Tuple[int, int],
              placed: Sequence[Rect]) -> Optional[Rect]:
    """The label tag at the box's left edge: above the box, else below it, else inside it
    (the first of these that fits in the image and covers no tag `placed` before)."""
    if not drawn.text:
        return None
    font = _font(TAG_FONT_SIZE)
    width, height = size
    tag_width = min(round(font.getlength(drawn.text)) + 5, width)
    tag_height = _line_height(font)
    left, top, _, bottom = drawn.edges
    left = min(left, width - tag_width)
    tops = [tag_top for tag_top in (top - tag_height, bottom + 1, top + BOX_LINE_WIDTH)
            if 0 <= tag_top <= height - tag_height] or [0]
    candidates = [(left, tag_top, left + tag_width - 1, min(tag_top + tag_height, height) - 1)
                  for tag_top in tops]
    rect = next((rect for rect in candidates if not any(_overlap(rect, other)
                                                        for other in placed)), candidates[0])
    draw.rectangle(rect, fill=drawn.colour)
    draw.text((rect[0] + 2, rect[1]), drawn.text, fill=_text_colour_on(drawn.colour),
              font=font)
    return rect


def _overlap(a: Rect, b: Rect) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def _text_colour_on(colour: RGB) -> RGB:
    luminance = 0.299 * colour[0] + 0.587 * colour[1] + 0.114 * colour[2]
    return (0, 0, 0) if luminance > 110 else (255, 255, 255)


def _shifted_region(region: DrawnRegion, origin: Tuple[int, int]) -> DrawnRegion:
    x, y = origin
    left, top, right, bottom = region.tag
    return dataclasses.replace(region, tag=(left + x, top + y, right + x, bottom + y))


def _shifted(drawn: DrawnBox, origin: Tuple[int, int]) -> DrawnBox:
    x, y = origin

    def shift(rect: Rect) -> Rect:
        return rect[0] + x, rect[1] + y, rect[2] + x, rect[3] + y

    return dataclasses.replace(drawn, edges=shift(drawn.edges),
                               tag=None if drawn.tag is None else shift(drawn.tag))


def _captions(sample: Sample, namer: _Namer) -> List[Tuple[str, RGB]]:
    """The caption lines under a record (at most `MAX_CAPTION_LINES`): its class (if any),
    why it is not drawn or how many boxes are not (if so), then where it is."""
    found = sample.annotations
    lines = []
    if found.class_label is not None:
        lines.append((namer.with_id(found.class_label, found.class_text), TEXT))
    if sample.problem is not None:
        lines.append((sample.problem.text, PROBLEM_COLOURS[sample.problem.kind]))
    elif sample.num_boxes > MAX_BOXES:
        lines.append((f'{MAX_BOXES}/{sample.num_boxes:,} boxes', SECONDARY_TEXT))
    path, _, record = found.where.rpartition(': record ')
    lines.append((f'{_short_file_name(path)} #{record}', SECONDARY_TEXT))
    return lines


def _short_file_name(path: str) -> str:
    """'train-00003' for '.../train-00003-of-00008.tfrecord': short enough for a caption."""
    return re.sub(r'(-of-\d+)?(\.tfrecords?)?$', '', os.path.basename(path), count=1)


def _legend_entries(samples: Sequence[Sample], drawn: Sequence[_Drawn], namer: _Namer,
                    ignore_label: int) -> List[LegendEntry]:
    """Box classes, the difficult style, segmentation classes and ignore, as present (at most
    `MAX_LEGEND_CLASSES` of each kind of class, then how many more there are)."""
    boxes = [box for _, cell_boxes, *_ in drawn for box in cell_boxes]
    entries = []
    labels = sorted({box.box.label for box in boxes if box.box.label is not None})
    stored_texts = {box.box.label: box.box.text for box in boxes}
    entries += _at_most([LegendEntry(namer.with_id(label, stored_texts[label]), 'box',
                                     box_colour(label)) for label in labels])
    if any(box.box.label is None for box in boxes):
        entries.append(LegendEntry('no label', 'box', box_colour(None)))
    if any(box.box.difficult for box in boxes):
        entries.append(LegendEntry('difficult', 'difficult', SECONDARY_TEXT))
    present = sorted(set().union(*(sample.class_ids for sample in samples)))
    entries += _at_most([LegendEntry(namer.with_id(label), 'class',
                                     tuple(_PALETTE[label].tolist()))
                         for label in present if label != ignore_label])
    if ignore_label in present:
        entries.append(LegendEntry(f'ignore ({ignore_label})', 'ignore', VOID_COLOUR))
    return entries


def _at_most(entries: List[LegendEntry]) -> List[LegendEntry]:
    if len(entries) <= MAX_LEGEND_CLASSES:
        return entries
    more = len(entries) - MAX_LEGEND_CLASSES
    return entries[:MAX_LEGEND_CLASSES] + [LegendEntry(f'and {more:,} more', 'more',
                                                       SECONDARY_TEXT)]


def _entry_width(entry: LegendEntry, font: Font) -> int:
    return _swatch_width(entry) + 6 + round(font.getlength(entry.text)) + 18


def _swatch_width(entry: LegendEntry) -> int:
    return {'difficult': 2 * SWATCH, 'more': 0}.get(entry.style, SWATCH)


def _place_legend(entries: Sequence[LegendEntry], width: int, top: int, line: int) -> int:
    """Sets each entry's swatch rectangle, from row `top` of the sheet on; returns the number
    of lines the legend takes."""
    font = _font(FONT_SIZE)
    x, row = MARGIN, 0
    for entry in entries:
        entry.text = _fit(entry.text, width - 2 * MARGIN - _swatch_width(entry) - 24, font)
        entry_width = _entry_width(entry, font)
        if x > MARGIN and x + entry_width > width - MARGIN:
            x, row = MARGIN, row + 1
        swatch_top = top + row * line + (line - SWATCH) // 2
        entry.swatch = (x, swatch_top, x + _swatch_width(entry) - 1, swatch_top + SWATCH - 1)
        x += entry_width
    return row + 1 if entries else 0


def _draw_legend(draw: ImageDraw.ImageDraw, entries: Sequence[LegendEntry],
                 font: Font) -> None:
    for entry in entries:
        if entry.style in ('box', 'difficult'):
            _draw_outline(draw, entry.swatch, entry.colour, dashed=entry.style == 'difficult')
        elif entry.style != 'more':
            draw.rectangle(entry.swatch, fill=entry.colour, outline=SWATCH_BORDER)
        text_top = entry.swatch[1] - (_line_height(font) - SWATCH) // 2
        draw.text((entry.swatch[2] + 6, text_top), entry.text,
                  fill=SECONDARY_TEXT if entry.style == 'more' else TEXT, font=font)


# ----------------------------------------------------------------------------------------------
# All together

def contact_sheet(paths: Sequence[str], num_records: int = 16, split: Optional[str] = None,
                  columns: Optional[int] = None, max_side: int = MAX_SIDE,
                  compression: Optional[str] = tfrecord.AUTO,
                  max_pixels: int = DEFAULT_MAX_PIXELS) -> ContactSheet:
    """The contact sheet of the first `num_records` records that `paths` name.

    Args:
      paths: dataset folders, record files or globs (see `select_records`).
      num_records: how many records to draw (fewer if there are fewer).
      split: the split of a dataset folder to show (default: see `select_records`).
      columns: cells per row (at most `num_records`).
      max_side: the longest side of a drawn image.
      compression: as for `tfrecord.iter_records`.
      max_pixels: the most pixels decoded for one image; a larger one is drawn as a
        marked cell (`ContactSheet.problems` says why).

    Memory holds the sheet (at most `MAX_SHEET_PIXELS`), one decoded image (at most
    `max_pixels`) and the record being read. In a notebook, `contact_sheet(['out/voc2007'])
    .image` displays the picture.

    Raises:
      SelectionError: the paths or split name nothing to show.
      SheetTooLarge: `num_records`, `columns` and `max_side` could make a sheet larger than
        `MAX_SHEET_PIXELS` (refused before reading).
      tfrecord.TFRecordError: a file is not a TFRecord file, or is damaged.
      ValueError: `max_pixels` is not positive, or the files hold no records.
    """
    if max_pixels < 1:
        raise ValueError(f'max_pixels must be at least 1, got {max_pixels}')
    check_sheet_size(num_records, columns, max_side)
    selection = select_records(paths, split)
    samples = read_samples(selection.files, num_records, compression, max_side, max_pixels)
    if not samples:
        raise ValueError(f'no records in {", ".join(selection.files)}')
    return render(samples, selection.labels_to_names, selection.ignore_label,
                  selection.title, columns, max_side)
