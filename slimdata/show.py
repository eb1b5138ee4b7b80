"""Contact sheets of records: the images with their labels, boxes and class masks drawn.

`contact_sheet('out/voc2007', num_records=16)` (and `slimdata show`) reads the first records
of a dataset folder, files or a glob, recognises their layout by its keys
(`slimdata.records.annotations`), and draws each record in a cell of one picture:

- classification: the image, captioned with its label's name and id;
- detection: every box where the record says, in its class's colour with its name in a tag at
  its top-left corner; boxes the record marks difficult are dashed, and their tag says so;
- segmentation: the image mixed with its class map in the Pascal VOC palette.

A legend under the cells names the box classes and the segmentation classes present.
Labels are named from the `dataset_info.json` or `labels.txt` beside the records, else from
the text the record stores, else shown as numbers. No TensorFlow: Pillow decodes and draws.

Geometry (what `ContactSheet.cells` reports, so a picture can be checked pixel by pixel):

- An image w x h pixels is drawn at `Cell.scale` s: enlarged by the smallest whole factor
  that makes its longer side at least `MIN_SIDE` (nearest neighbour, so pixels stay sharp),
  or reduced so that its longer side is `max_side` (`MAX_SIDE` by default; Lanczos, the class
  map by nearest neighbour), else s = 1 (a `max_side` below `MIN_SIDE` lowers both). Its
  drawn size `Cell.size` is (W, H) = (round(w s), round(h s)), its top-left pixel is at
  `Cell.origin` in the sheet.
- A normalised coordinate x maps to the drawn column `pixel_of(x, W)` = floor(x W), kept
  within [0, W - 1] (rows likewise, with H). This is the pixel that holds the point, which
  for VOC's `(v - 1) / size` coordinates is the box's first and last pixel.
- A box's outline is `BOX_LINE_WIDTH` pixels wide, inside its edge pixels
  (`DrawnBox.edges`, inclusive, in sheet coordinates). A difficult box's outline is dashed:
  along each side, counted from the box's left column or top row, `DASH` pixels drawn, then
  `GAP` pixels left out.
- A segmentation pixel of class k is `(image + palette[k] + 1) // 2` per channel (the two
  mixed half and half, rounded up), where `palette = voc_palette()`; pixels holding
  ignore_label (255 by default, or `extra.ignore_label` of `dataset_info.json`) are drawn
  in VOC's colour for 255, `VOID_COLOUR`, unmixed, as VOC's own label images show them.
"""

import dataclasses
import functools
import io
import math
import os
import re
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from slimdata.records import annotations as annotations_lib
from slimdata.records import dataset_info, example_schema, fs, images, tfrecord
from slimdata.records.annotations import AnnotationError, Annotations, Box

RGB = Tuple[int, int, int]
#: Inclusive pixel rectangle: (left column, top row, right column, bottom row).
Rect = Tuple[int, int, int, int]

MIN_SIDE = 128
MAX_SIDE = 256
BOX_LINE_WIDTH = 2
DASH, GAP = 5, 3
DEFAULT_IGNORE_LABEL = 255
FONT_SIZE = 13
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
        stands for the shards of one split: `split`, or the first split the file lists; a
        folder without one for its record files (those whose name holds `split` between
        `-`, `_` or `.`, when `split` is given).
      split: the split to show, for folders.

    Raises:
      SelectionError: a path matches nothing, `split` is given without a folder, or a
        folder has no such split.
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
        chosen = split if split is not None else next(iter(splits))
        if chosen not in splits:
            raise SelectionError(f'{folder} has no split {chosen!r}: its dataset_info.json '
                                 f'lists {", ".join(splits)}')
        return [os.path.join(folder, shard['file']) for shard in splits[chosen]['shards']], chosen
    files = _expand([folder])
    if split is None:
        return files, None
    named = re.compile(rf'(^|[-_.]){re.escape(split)}([-_.]|$)')
    chosen_files = [file for file in files if named.search(os.path.basename(file))]
    if not chosen_files:
        raise SelectionError(f'{folder} has no dataset_info.json and no record file named for '
                             f'split {split!r}')
    return chosen_files, split


def _labels(folder: str, info: Mapping) -> Dict[int, str]:
    names = dataset_info.labels_to_names(info)
    if not names and dataset_info.has_labels_file(folder):
        names = dataset_info.read_labels_file(folder)
    return names


# ----------------------------------------------------------------------------------------------
# Reading and decoding

@dataclasses.dataclass
class Sample:
    """A record, decoded for drawing.

    Attributes:
      annotations: what the record holds (`slimdata.records.annotations`).
      image: the image, RGB.
      classes: the segmentation class map, [height, width] uint8, or None.
    """
    annotations: Annotations
    image: Image.Image
    classes: Optional[np.ndarray] = None


def read_samples(files: Sequence[str], num_records: int,
                 compression: Optional[str] = tfrecord.AUTO) -> List[Sample]:
    """Reads and decodes the first `num_records` records of `files` (fewer if they hold fewer).

    Raises:
      tfrecord.TFRecordError: a file is not a TFRecord file, or is damaged.
      AnnotationError: a record is not an Example, has no image, or an annotation that
        cannot be read; images.ImageError: an image that does not decode. Each names the
        file and record.
    """
    samples: List[Sample] = []
    # No progress display: decoding the few records of a sheet takes milliseconds each.
    for path in files:
        for index, record in enumerate(tfrecord.iter_records(path, compression=compression)):
            samples.append(decode_record(record, f'{path}: record {index}'))
            if len(samples) == num_records:
                return samples
    return samples


def decode_record(record: bytes, where: str) -> Sample:
    """Parses a serialized Example and decodes its image and class map."""
    try:
        features = example_schema.parse_example(record)
    except example_schema.DecodeError as error:
        raise AnnotationError(f'{where}: not a tf.train.Example ({error})') from error
    found = annotations_lib.read_annotations(features, where)
    image = _decode_image(found)
    classes = None
    if found.segmentation is not None:
        classes = _decode_classes(found.segmentation,
                                  f'{where}, key {annotations_lib.SEGMENTATION_KEY!r}')
        if classes.shape != (image.height, image.width):
            raise AnnotationError(
                f'{where}: the class map ({annotations_lib.SEGMENTATION_KEY!r}) is '
                f'{classes.shape[1]}x{classes.shape[0]} (WxH), the image {image.width}x'
                f'{image.height}')
    return Sample(found, image, classes)


def _decode_image(found: Annotations) -> Image.Image:
    if found.raw_shape is not None:
        height, width, channels = found.raw_shape
        pixels = np.frombuffer(found.image, np.uint8).reshape(height, width, channels)
        return Image.fromarray(pixels[..., 0] if channels == 1 else pixels).convert('RGB')
    image = images.decode_with_pillow(found.image,
                                      f'{found.where}, key {annotations_lib.IMAGE_KEY!r}')
    if image.mode.startswith('I'):  # 16-bit grey (a PNG's, which Pillow may open as 'I')
        image = Image.fromarray(np.clip(np.asarray(image).astype(np.int64) >> 8, 0, 255)
                                .astype(np.uint8))
    return image.convert('RGB')


def _decode_classes(data: bytes, where: str) -> np.ndarray:
    classes = images.decode_with_pillow(data, where)
    if classes.mode not in ('L', 'P'):
        raise AnnotationError(f'{where}: a {classes.mode} image; expected one channel of '
                              'class indices (mode L or P)')
    return np.asarray(classes)


# ----------------------------------------------------------------------------------------------
# Drawing

@dataclasses.dataclass
class DrawnBox:
    """A box as drawn.

    Attributes:
      box: the record's box.
      edges: its edge pixels, in sheet coordinates (the outline lies inside them).
      colour: its outline's colour.
      text: its label, shown in the tag.
      tag: the tag's rectangle in sheet coordinates (filled with `colour`), or None.
    """
    box: Box
    edges: Rect
    colour: RGB
    text: str
    tag: Optional[Rect]


@dataclasses.dataclass
class Cell:
    """One record's place in the sheet.

    Attributes:
      where: the record (`<file>: record <i>`).
      origin: (x, y) of the drawn image's top-left pixel in the sheet.
      size: (width, height) of the drawn image.
      scale: drawn size / stored size.
      boxes: the boxes as drawn.
      captions: each caption line and the (x, y) where its text is drawn.
    """
    where: str
    origin: Tuple[int, int]
    size: Tuple[int, int]
    scale: float
    boxes: List[DrawnBox]
    captions: List[Tuple[str, Tuple[int, int]]]


@dataclasses.dataclass
class LegendEntry:
    """One entry of the legend.

    Attributes:
      text: what it says ('bird (3)', 'difficult', 'ignore (255)').
      style: 'box' (an outlined swatch in a box colour), 'difficult' (a dashed outline),
        'class' (a swatch filled with a class's palette colour), 'ignore' (filled with
        `VOID_COLOUR`).
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

    def png_bytes(self) -> bytes:
        buffer = io.BytesIO()
        # zlib's default level: `optimize=True` (level 9) took 2.5 times as long on a 16-record
        # VOC segmentation sheet (0.99 s against 0.40 s) to make it 1.2% smaller.
        self.image.save(buffer, format='PNG')
        return buffer.getvalue()


@functools.lru_cache(maxsize=None)
def _font(size: int) -> ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _line_height(font: ImageFont.ImageFont) -> int:
    left, top, right, bottom = font.getbbox('Ag|')
    return bottom + 3


def _fit(text: str, width: int, font: ImageFont.ImageFont) -> str:
    """`text`, shortened in the middle with '…' until it fits `width` pixels."""
    if font.getlength(text) <= width:
        return text
    keep = len(text)
    while keep > 1:
        keep -= 1
        shortened = text[:(keep + 1) // 2] + '…' + text[len(text) - keep // 2:]
        if font.getlength(shortened) <= width:
            return shortened
    return '…'


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


def render(samples: Sequence[Sample], labels_to_names: Optional[Mapping[int, str]] = None,
           ignore_label: int = DEFAULT_IGNORE_LABEL, title: str = '',
           columns: Optional[int] = None, max_side: int = MAX_SIDE) -> ContactSheet:
    """Draws decoded records into a contact sheet (see the module docstring).

    Args:
      samples: the records, from `read_samples`.
      labels_to_names: label id -> name.
      ignore_label: the segmentation label drawn as `VOID_COLOUR`.
      title: the line above the cells.
      columns: cells per row; by default about the square root of their number.
      max_side: the longest side of a drawn image (larger images are reduced to it).
    """
    if not samples:
        raise ValueError('no records to draw')
    namer = _Namer(labels_to_names or {})
    columns = columns or math.ceil(math.sqrt(len(samples)))
    font = _font(FONT_SIZE)
    line = _line_height(font)
    drawn = [_draw_record(sample, namer, ignore_label, max_side) for sample in samples]
    captions = [_captions(sample, namer) for sample in samples]
    cell_width = max(image.width for image, _, _ in drawn)
    image_height = max(image.height for image, _, _ in drawn)
    cell_height = image_height + 4 + line * max(len(lines) for lines in captions)
    rows = math.ceil(len(samples) / columns)
    width = 2 * MARGIN + columns * cell_width + (columns - 1) * GUTTER
    cells_top = MARGIN + line + GUTTER // 2
    legend_top = cells_top + rows * cell_height + (rows - 1) * GUTTER + GUTTER
    legend = _legend_entries(samples, drawn, namer, ignore_label)
    legend_lines = _place_legend(legend, width, legend_top, line)
    height = legend_top + legend_lines * line + MARGIN - (0 if legend_lines else GUTTER)
    sheet = Image.new('RGB', (width, height), BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    draw.text((MARGIN, MARGIN), _fit(title, width - 2 * MARGIN, font), fill=TEXT, font=font)
    cells = []
    for number, (sample, (image, boxes, scale), lines) in enumerate(zip(samples, drawn,
                                                                        captions)):
        row, column = divmod(number, columns)
        cell_x = MARGIN + column * (cell_width + GUTTER)
        cell_y = cells_top + row * (cell_height + GUTTER)
        origin = (cell_x + (cell_width - image.width) // 2, cell_y)
        sheet.paste(image, origin)
        placed = _draw_captions(draw, lines, cell_x, cell_y + image_height + 4, cell_width)
        cells.append(Cell(where=sample.annotations.where, origin=origin, size=image.size,
                          scale=scale, boxes=[_shifted(box, origin) for box in boxes],
                          captions=placed))
    _draw_legend(draw, legend, font)
    return ContactSheet(sheet, title, cells, legend)


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


def _scaled(sample: Sample, max_side: int) -> Tuple[Image.Image, Optional[np.ndarray], float]:
    """The image (and class map) at the size drawn, and the scale."""
    image = sample.image
    longest = max(image.size)
    min_side = min(MIN_SIDE, max_side)
    if longest < min_side:
        scale = float(math.ceil(min_side / longest))
        resample = Image.Resampling.NEAREST
    elif longest > max_side:
        scale = max_side / longest
        resample = Image.Resampling.LANCZOS
    else:
        return image, sample.classes, 1.0
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    classes = sample.classes
    if classes is not None:
        classes = np.asarray(Image.fromarray(classes).resize(size, Image.Resampling.NEAREST))
    return image.resize(size, resample), classes, scale


def _draw_record(sample: Sample, namer: _Namer, ignore_label: int, max_side: int
                 ) -> Tuple[Image.Image, List[DrawnBox], float]:
    """The record's image as drawn in its cell, its boxes (in image coordinates), the scale."""
    image, classes, scale = _scaled(sample, max_side)
    if classes is not None:
        image = _blend_classes(image, classes, ignore_label)
    draw = ImageDraw.Draw(image)
    boxes = []
    for box in sample.annotations.boxes:
        edges = box_edges(box, image.size)
        colour = box_colour(box.label)
        _draw_outline(draw, edges, colour, dashed=box.difficult)
        text = namer.name(box.label, box.text)
        if box.difficult:  # said in words too: a small box's dashes do not show
            text = f'{text} (difficult)' if text else 'difficult'
        boxes.append(DrawnBox(box, edges, colour, text, None))
    placed: List[Rect] = []
    for drawn in boxes:  # tags after every outline, so that no outline crosses a tag's text
        drawn.tag = _draw_tag(draw, drawn, image.size, placed)
        placed += [drawn.tag] if drawn.tag else []
    return image, boxes, scale


def _blend_classes(image: Image.Image, classes: np.ndarray, ignore_label: int) -> Image.Image:
    pixels = np.asarray(image, np.uint16)
    mixed = (pixels + _PALETTE[classes] + 1) // 2
    mixed[classes == ignore_label] = VOID_COLOUR
    return Image.fromarray(mixed.astype(np.uint8))


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


def _shifted(drawn: DrawnBox, origin: Tuple[int, int]) -> DrawnBox:
    x, y = origin

    def shift(rect: Optional[Rect]) -> Optional[Rect]:
        return None if rect is None else (rect[0] + x, rect[1] + y, rect[2] + x, rect[3] + y)

    return dataclasses.replace(drawn, edges=shift(drawn.edges), tag=shift(drawn.tag))


def _captions(sample: Sample, namer: _Namer) -> List[Tuple[str, RGB]]:
    """The caption lines under a record: its class (if any), then where it is."""
    found = sample.annotations
    lines = []
    if found.class_label is not None:
        lines.append((namer.with_id(found.class_label, found.class_text), TEXT))
    path, _, record = found.where.rpartition(': record ')
    lines.append((f'{_short_file_name(path)} #{record}', SECONDARY_TEXT))
    return lines


def _short_file_name(path: str) -> str:
    """'train-00003' for '.../train-00003-of-00008.tfrecord': short enough for a caption."""
    return re.sub(r'(-of-\d+)?(\.tfrecords?)?$', '', os.path.basename(path), count=1)


def _legend_entries(samples: Sequence[Sample], drawn: Sequence[Tuple[Image.Image,
                                                                      List[DrawnBox], float]],
                    namer: _Namer, ignore_label: int) -> List[LegendEntry]:
    """Box classes, the difficult style, segmentation classes and ignore, as present."""
    boxes = [box for _, cell_boxes, _ in drawn for box in cell_boxes]
    entries = []
    labels = sorted({box.box.label for box in boxes if box.box.label is not None})
    stored_texts = {box.box.label: box.box.text for box in boxes}
    entries += [LegendEntry(namer.with_id(label, stored_texts[label]), 'box', box_colour(label))
                for label in labels]
    if any(box.box.label is None for box in boxes):
        entries.append(LegendEntry('no label', 'box', box_colour(None)))
    if any(box.box.difficult for box in boxes):
        entries.append(LegendEntry('difficult', 'difficult', SECONDARY_TEXT))
    present = sorted(set().union(*(np.unique(sample.classes).tolist() for sample in samples
                                   if sample.classes is not None)))
    entries += [LegendEntry(namer.with_id(label), 'class', tuple(_PALETTE[label].tolist()))
                for label in present if label != ignore_label]
    if ignore_label in present:
        entries.append(LegendEntry(f'ignore ({ignore_label})', 'ignore', VOID_COLOUR))
    return entries


def _entry_width(entry: LegendEntry, font: ImageFont.ImageFont) -> int:
    return _swatch_width(entry) + 6 + round(font.getlength(entry.text)) + 18


def _swatch_width(entry: LegendEntry) -> int:
    return 2 * SWATCH if entry.style == 'difficult' else SWATCH


def _place_legend(entries: Sequence[LegendEntry], width: int, top: int, line: int) -> int:
    """Sets each entry's swatch rectangle, from row `top` of the sheet on; returns the number
    of lines the legend takes."""
    font = _font(FONT_SIZE)
    x, row = MARGIN, 0
    for entry in entries:
        entry_width = _entry_width(entry, font)
        if x > MARGIN and x + entry_width > width - MARGIN:
            x, row = MARGIN, row + 1
        swatch_top = top + row * line + (line - SWATCH) // 2
        entry.swatch = (x, swatch_top, x + _swatch_width(entry) - 1, swatch_top + SWATCH - 1)
        x += entry_width
    return row + 1 if entries else 0


def _draw_legend(draw: ImageDraw.ImageDraw, entries: Sequence[LegendEntry],
                 font: ImageFont.ImageFont) -> None:
    for entry in entries:
        if entry.style in ('box', 'difficult'):
            _draw_outline(draw, entry.swatch, entry.colour, dashed=entry.style == 'difficult')
        else:
            draw.rectangle(entry.swatch, fill=entry.colour, outline=SWATCH_BORDER)
        text_top = entry.swatch[1] - (_line_height(font) - SWATCH) // 2
        draw.text((entry.swatch[2] + 6, text_top), entry.text, fill=TEXT, font=font)


# ----------------------------------------------------------------------------------------------
# All together

def contact_sheet(paths: Sequence[str], num_records: int = 16, split: Optional[str] = None,
                  columns: Optional[int] = None, max_side: int = MAX_SIDE,
                  compression: Optional[str] = tfrecord.AUTO) -> ContactSheet:
    """The contact sheet of the first `num_records` records that `paths` name.

    Args:
      paths: dataset folders, record files or globs (see `select_records`).
      num_records: how many records to draw (fewer if there are fewer).
      split: the split of a dataset folder to show (default: the first one).
      columns: cells per row.
      max_side: the longest side of a drawn image.
      compression: as for `tfrecord.iter_records`.

    In a notebook, `contact_sheet(['out/voc2007']).image` displays the picture.
    """
    selection = select_records(paths, split)
    samples = read_samples(selection.files, num_records, compression)
    if not samples:
        raise ValueError(f'no records in {", ".join(selection.files)}')
    return render(samples, selection.labels_to_names, selection.ignore_label,
                  selection.title, columns, max_side)
