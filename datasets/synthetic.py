"""Deterministic synthetic source trees: the raw inputs of slimdata's converters.

Demos, tests and benchmarks need data in the layouts the converters read, without
downloading anything. Each generator here writes such a tree of real files (PNG, JPEG, VOC
XML, list files), so what reads it is the real converter:

  `make_image_folder`  root/<class>/<class>_<i>.png   -> classification.convert_image_folder
  `make_voc_tree`      root/VOC<year>/... (detection)  -> pascalvoc.convert_voc
  `make_voc_seg_tree`  root/VOC2012/... (segmentation) -> segmentation.convert_voc_seg

The data are learnable: a class is a pattern (classification) or a shape with its own colour
(detection, segmentation), varied in place, size, intensity and noise, so small networks learn
it in a few hundred steps, while no two images are the same.

Everything is seeded: the same arguments write byte-identical files. Every image has its own
random stream (derived from the seed, the generator and the image's index), so image i does
not change when more images are asked for. Pixels are computed with vectorised numpy and
encoded with Pillow; this module does not import TensorFlow.
"""

import dataclasses
import math
import os
import types
import xml.etree.ElementTree as ElementTree
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from PIL import Image

from slimdata import show
from slimdata.datasets import pascalvoc

# ----------------------------------------------------------------------------------------
# Patterns: a pattern is a boolean function of coordinates normalised to its extent, u across
# and v down, both in [-1, 1] inside the pattern's box.

#: Half the width of a bar or a ring, in units of the pattern's radius.
_LINE_HALF_WIDTH = 0.22

_Pattern = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _inside_box(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return (np.abs(u) <= 1) & (np.abs(v) <= 1)


def _horizontal_bar(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return (np.abs(v) <= _LINE_HALF_WIDTH) & (np.abs(u) <= 1)


def _vertical_bar(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return (np.abs(u) <= _LINE_HALF_WIDTH) & (np.abs(v) <= 1)


_PATTERNS: Dict[str, _Pattern] = {
    'horizontal_bar': _horizontal_bar,
    'vertical_bar': _vertical_bar,
    'ring': lambda u, v: np.abs(np.hypot(u, v) - (1 - _LINE_HALF_WIDTH)) <= _LINE_HALF_WIDTH,
    'diagonal': lambda u, v: (np.abs(u - v) <= _LINE_HALF_WIDTH * math.sqrt(2))
    & _inside_box(u, v),
    'cross': lambda u, v: _horizontal_bar(u, v) | _vertical_bar(u, v),
    'disc': lambda u, v: np.hypot(u, v) <= 1,
    'triangle': lambda u, v: (np.abs(u) <= (v + 1) / 2) & (v <= 1),
    'box': _inside_box,
    'diamond': lambda u, v: np.abs(u) + np.abs(v) <= 1,
}

#: The classification classes, in the order `make_image_folder` takes them: the first four are
#: the most distinct (LeNet tells them apart after a few dozen steps).
IMAGE_FOLDER_PATTERNS = ('horizontal_bar', 'vertical_bar', 'ring', 'diagonal', 'cross', 'disc',
                         'triangle', 'box', 'diamond')


@dataclasses.dataclass(frozen=True)
class ObjectStyle:
    """How objects of one VOC class look in the detection and segmentation trees.

    Attributes:
      label: the class's VOC label id (pascalvoc.CLASS_NAMES index, also the segmentation index).
      pattern: the shape, a key of the pattern table.
      colour: its RGB colour (each object's is jittered around it).
    """
    label: int
    pattern: str
    colour: Tuple[int, int, int]

    @property
    def name(self) -> str:
        return pascalvoc.CLASS_NAMES[self.label]


#: The classes of the detection and segmentation trees: VOC labels 1..5 (so a segmentation
#: tree with few classes can use the first ones), each its own shape and saturated colour on a
#: muted background.
OBJECT_STYLES = (
    ObjectStyle(1, 'disc', (220, 40, 40)),      # aeroplane: red disc
    ObjectStyle(2, 'box', (40, 190, 60)),       # bicycle: green rectangle
    ObjectStyle(3, 'triangle', (40, 80, 230)),  # bird: blue triangle
    ObjectStyle(4, 'diamond', (235, 205, 30)),  # boat: yellow diamond
    ObjectStyle(5, 'cross', (200, 50, 210)),    # bottle: magenta cross
)

# Random streams: one per generator (and per image), so generators do not share numbers.
_IMAGE_FOLDER_STREAM, _VOC_STREAM, _VOC_SEG_STREAM = 1, 2, 3
_SPLIT_KEY, _IMAGE_KEY = 0, 1

_DEFAULT_SPLITS = types.MappingProxyType({'train': 0.75, 'val': 0.25})
_JPEG_QUALITY = 90
#: Half the width, in pixels, of the 'void' (255) band VOC draws along every object outline.
_VOID_HALF_WIDTH = 2
VOID_LABEL = 255


def _rng(seed: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng((seed, *keys))


@dataclasses.dataclass(frozen=True)
class _Stamp:
    """A pattern rasterised into an image: the pixels it covers inside the image.

    Attributes:
      rows, cols: the window of the image the mask covers.
      mask: True where the pattern is, [rows, cols].
      cut: True if part of the pattern fell outside the image (a truncated object).
    """
    rows: slice
    cols: slice
    mask: np.ndarray
    cut: bool

    def voc_box(self) -> Optional[Tuple[int, int, int, int]]:
        """(xmin, ymin, xmax, ymax) of the covered pixels, 1-based and inclusive as in VOC
        XML; None if the pattern covers no pixel of the image."""
        rows = np.flatnonzero(self.mask.any(axis=1))
        cols = np.flatnonzero(self.mask.any(axis=0))
        if rows.size == 0:
            return None
        return (self.cols.start + int(cols[0]) + 1, self.rows.start + int(rows[0]) + 1,
                self.cols.start + int(cols[-1]) + 1, self.rows.start + int(rows[-1]) + 1)


def _stamp(pattern: str, centre: Tuple[float, float], radii: Tuple[float, float],
           height: int, width: int) -> _Stamp:
    """Rasterises `pattern` centred at (y, x) `centre` with (y, x) `radii`, in pixels.

    A pixel belongs to the pattern if its centre does. Only the pattern's own window is
    computed, so small objects in large images cost little.
    """
    (centre_y, centre_x), (radius_y, radius_x) = centre, radii
    top, bottom = math.floor(centre_y - radius_y), math.ceil(centre_y + radius_y)
    left, right = math.floor(centre_x - radius_x), math.ceil(centre_x + radius_x)
    v = ((np.arange(top, bottom) + 0.5 - centre_y) / radius_y)[:, None]
    u = ((np.arange(left, right) + 0.5 - centre_x) / radius_x)[None, :]
    full = _PATTERNS[pattern](u, v)
    rows = slice(max(top, 0), min(bottom, height))
    cols = slice(max(left, 0), min(right, width))
    mask = full[rows.start - top:rows.stop - top, cols.start - left:cols.stop - left]
    return _Stamp(rows, cols, mask, cut=bool(mask.sum() < full.sum()))


def _add_noise(pixels: np.ndarray, rng: np.random.Generator, sigma: float) -> np.ndarray:
    """`pixels` (float) plus Gaussian noise, rounded and clipped to uint8."""
    noisy = rng.standard_normal(pixels.shape, dtype=np.float32)
    noisy *= sigma
    noisy += pixels
    np.rint(noisy, out=noisy)
    return np.clip(noisy, 0, 255, out=noisy).astype(np.uint8)


def _prepare_folder(folder: str) -> None:
    """Creates `folder`; refuses one that holds files already (a stale tree would mix in)."""
    if os.path.isdir(folder) and os.listdir(folder):
        raise ValueError(f'{folder} already exists and is not empty; the synthetic generators '
                         'write fresh trees only (remove it or choose another root)')
    os.makedirs(folder, exist_ok=True)


def _check_seed(seed: int) -> None:
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f'seed must be a non-negative integer, got {seed!r}')


# ----------------------------------------------------------------------------------------
# Classification: an image folder


def make_image_folder(root: str, num_classes: int = 4, images_per_class: int = 100,
                      image_size: int = 28, seed: int = 0) -> List[str]:
    """Writes a class-folder tree of grayscale pattern images.

    Layout: `root/<class>/<class>_<i>.png` (i = 0000, 0001, ...), 8-bit grayscale PNGs of
    `image_size` x `image_size` pixels. The class names are the pattern names of
    `IMAGE_FOLDER_PATTERNS` (the first `num_classes` of them): 'horizontal_bar',
    'vertical_bar', 'ring', 'diagonal', 'cross', 'disc', 'triangle', 'box', 'diamond'. Each
    image is its class's pattern, shifted up to a tenth of the image size, scaled by 0.55 to
    0.8 of the half-size (each axis), bright on a dark background of random levels, plus
    Gaussian noise: a LeNet learns it far above chance in ~200 steps.

    Convert with `classification.convert_image_folder(root, out)`; labels are the indices of
    the returned names (the converter numbers sorted class folders).

    Args:
      root: the folder to create (it must not exist or be empty).
      num_classes: the number of classes, 2 to 9.
      images_per_class: images in each class folder.
      image_size: the side of the square images, at least 12 pixels.
      seed: the random seed; the same arguments write byte-identical files.

    Returns:
      The class names, sorted (label i is the i-th name).

    Raises:
      ValueError: for arguments out of range or a non-empty `root`.
    """
    if not 2 <= num_classes <= len(IMAGE_FOLDER_PATTERNS):
        raise ValueError(f'num_classes must be 2 to {len(IMAGE_FOLDER_PATTERNS)} (the patterns '
                         f'{IMAGE_FOLDER_PATTERNS}), got {num_classes}')
    if images_per_class < 1 or image_size < 12:
        raise ValueError(f'images_per_class must be >= 1 and image_size >= 12, got '
                         f'{images_per_class} and {image_size}')
    _check_seed(seed)
    _prepare_folder(root)
    class_names = sorted(IMAGE_FOLDER_PATTERNS[:num_classes])
    for class_index, class_name in enumerate(class_names):
        class_dir = os.path.join(root, class_name)
        os.makedirs(class_dir)
        for i in range(images_per_class):
            rng = _rng(seed, _IMAGE_FOLDER_STREAM, class_index, i)
            pixels = _pattern_image(class_name, image_size, rng)
            Image.fromarray(pixels).save(os.path.join(class_dir, f'{class_name}_{i:04d}.png'))
    return class_names


def _pattern_image(pattern: str, size: int, rng: np.random.Generator) -> np.ndarray:
    """One grayscale [size, size] uint8 image of `pattern`, randomly placed and lit."""
    shift = rng.uniform(-size / 10, size / 10, 2)
    radii = rng.uniform(0.55, 0.8, 2) * size / 2
    centre = (size / 2 + shift[0], size / 2 + shift[1])
    stamp = _stamp(pattern, centre, (radii[0], radii[1]), size, size)
    pixels = np.full((size, size), rng.uniform(0, 60), np.float32)
    pixels[stamp.rows, stamp.cols][stamp.mask] = rng.uniform(150, 255)
    return _add_noise(pixels, rng, sigma=18)


# ----------------------------------------------------------------------------------------
# Scenes of objects, shared by the detection and segmentation trees


@dataclasses.dataclass(frozen=True)
class _SceneObject:
    """An object drawn into a scene: its style, its pixels, its VOC box (`_Stamp.voc_box`)
    and its VOC flags."""
    style: ObjectStyle
    stamp: _Stamp
    box: Tuple[int, int, int, int]
    difficult: bool


@dataclasses.dataclass(frozen=True)
class _SceneSettings:
    """How a generator fills its scenes.

    Attributes:
      styles: the classes to draw (one chosen uniformly per object).
      size_range: an object's width (height) as a share of the image's, drawn per axis.
      truncated_share: the share of objects placed across an image edge.
      difficult_share: the share of objects drawn small (size_range / 4) and marked
        difficult.
      max_overlap: the largest share of the smaller of two objects' boxes that the other may
        cover; a placement overlapping more is drawn again, so no object hides another.
    """
    styles: Sequence[ObjectStyle]
    size_range: Tuple[float, float]
    truncated_share: float
    difficult_share: float
    max_overlap: float = 0.25


_PLACEMENT_ATTEMPTS = 20


def _draw_scene(rng: np.random.Generator, width: int, height: int, max_objects: int,
                settings: _SceneSettings) -> Tuple[np.ndarray, np.ndarray, List[_SceneObject]]:
    """Draws 1..max_objects objects on a textured background.

    Returns:
      (RGB pixels uint8 [height, width, 3], instance map int32 [height, width] holding k + 1
      where object k is visible and 0 elsewhere, the objects in drawing order).
    """
    pixels = _background(rng, width, height)
    instances = np.zeros((height, width), np.int32)
    objects: List[_SceneObject] = []
    for _ in range(int(rng.integers(1, max_objects + 1))):
        placed = _place_object(rng, width, height, settings, [o.box for o in objects])
        if placed is None:
            continue
        objects.append(placed)
        colour = np.array(placed.style.colour, np.float32) + rng.uniform(-20, 20, 3)
        pixels[placed.stamp.rows, placed.stamp.cols][placed.stamp.mask] = colour
        instances[placed.stamp.rows, placed.stamp.cols][placed.stamp.mask] = len(objects)
    return _add_noise(pixels, rng, sigma=8), instances, objects


def _background(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """Muted colour blobs (a coarse random grid, upsampled smoothly) as float32 RGB."""
    grey = rng.uniform(70, 170, (4, 5, 1))
    tint = rng.uniform(-25, 25, (4, 5, 3))
    coarse = np.clip(grey + tint, 0, 255).astype(np.uint8)
    smooth = Image.fromarray(coarse).resize((width, height), Image.Resampling.BILINEAR)
    return np.asarray(smooth, np.float32).copy()


def _place_object(rng: np.random.Generator, width: int, height: int,
                  settings: _SceneSettings,
                  placed: List[Tuple[int, int, int, int]]) -> Optional[_SceneObject]:
    """An object whose box overlaps the `placed` boxes little, or None if none fits."""
    for _ in range(_PLACEMENT_ATTEMPTS):
        style = settings.styles[int(rng.integers(len(settings.styles)))]
        difficult = bool(rng.random() < settings.difficult_share)
        low, high = settings.size_range
        shares = rng.uniform(low, high, 2) / (4 if difficult else 1)
        radii = (max(shares[0] * height / 2, 2.0), max(shares[1] * width / 2, 2.0))
        truncated = bool(rng.random() < settings.truncated_share)
        centre = _centre(rng, width, height, radii, truncated)
        stamp = _stamp(style.pattern, centre, radii, height, width)
        box = stamp.voc_box()
        if box is not None and all(_overlap(box, other) <= settings.max_overlap
                                   for other in placed):
            return _SceneObject(style, stamp, box, difficult and not stamp.cut)
    return None


def _centre(rng: np.random.Generator, width: int, height: int, radii: Tuple[float, float],
            across_edge: bool) -> Tuple[float, float]:
    """A (y, x) centre keeping the object inside the image, or (`across_edge`) crossing one
    random edge by a quarter to a half of its radius, its centre staying inside."""
    centre = [size / 2 if radius >= size / 2 else rng.uniform(radius, size - radius)
              for size, radius in ((height, radii[0]), (width, radii[1]))]
    if across_edge:
        axis = int(rng.integers(2))
        size, radius = (height, radii[0]) if axis == 0 else (width, radii[1])
        inset = min(radius * rng.uniform(0.5, 0.75), size / 2)
        centre[axis] = inset if rng.random() < 0.5 else size - inset
    return centre[0], centre[1]


def _overlap(a: Tuple[int, int, int, int], b: Tuple[int, int, int, int]) -> float:
    """The share of the smaller of two inclusive pixel boxes (xmin, ymin, xmax, ymax) that
    their intersection covers."""
    inter_w = min(a[2], b[2]) - max(a[0], b[0]) + 1
    inter_h = min(a[3], b[3]) - max(a[1], b[1]) + 1
    if inter_w <= 0 or inter_h <= 0:
        return 0.0
    intersection = inter_w * inter_h
    return intersection / min(_area(a), _area(b))


def _area(box: Tuple[int, int, int, int]) -> int:
    return (box[2] - box[0] + 1) * (box[3] - box[1] + 1)


def _save_jpeg(pixels: np.ndarray, path: str) -> None:
    Image.fromarray(pixels).save(path, 'JPEG', quality=_JPEG_QUALITY)


def _check_scene_arguments(num_images: int, image_size: Tuple[int, int],
                           max_objects: int, seed: int) -> Tuple[int, int]:
    width, height = (int(v) for v in image_size)
    if num_images < 1 or max_objects < 1 or width < 16 or height < 16:
        raise ValueError(f'num_images and max_objects must be >= 1 and image_size (width, '
                         f'height) at least 16 x 16, got {num_images}, {max_objects}, '
                         f'{image_size}')
    _check_seed(seed)
    return width, height


# ----------------------------------------------------------------------------------------
# Splits and list files


def _assign_splits(image_ids: Sequence[str], splits: Mapping[str, float],
                   rng: np.random.Generator) -> Dict[str, List[str]]:
    """Shuffles the ids into the splits by their shares; each split's ids sorted, as VOC's
    lists are.

    Raises:
      ValueError: for shares that are not positive or do not add up to 1, a name that is not
        a plain file name, or a split left empty.
    """
    shares = dict(splits)
    if not shares or min(shares.values()) <= 0 or not math.isclose(sum(shares.values()), 1):
        raise ValueError(f'splits must map split names to positive shares adding up to 1, '
                         f'got {shares}')
    for name in shares:
        if not name or os.path.basename(name) != name or name in ('.', '..'):
            raise ValueError(f'split name {name!r} is not a plain file name')
    order = [image_ids[i] for i in rng.permutation(len(image_ids))]
    cumulative = np.cumsum(list(shares.values()))
    ends = [round(share * len(order)) for share in cumulative[:-1]] + [len(order)]
    assigned, start = {}, 0
    for name, end in zip(shares, ends):
        if end <= start:
            raise ValueError(f'split {name!r} gets no image of {len(order)}; ask for more '
                             'images or a larger share')
        assigned[name] = sorted(order[start:end])
        start = end
    return assigned


def _write_lists(list_dir: str, assigned: Dict[str, List[str]]) -> None:
    """Writes `<split>.txt` per split, and `trainval.txt` (every split but 'test') unless a
    'trainval' split was asked for."""
    os.makedirs(list_dir, exist_ok=True)
    lists = dict(assigned)
    if 'trainval' not in lists:
        lists['trainval'] = sorted(image_id for name, ids in assigned.items()
                                   if name != 'test' for image_id in ids)
    for name, ids in lists.items():
        with open(os.path.join(list_dir, f'{name}.txt'), 'w', encoding='utf-8',
                  newline='\n') as f:
            f.write(''.join(f'{image_id}\n' for image_id in ids))


# ----------------------------------------------------------------------------------------
# Detection: a Pascal VOC tree

_DETECTION_SETTINGS = _SceneSettings(styles=OBJECT_STYLES, size_range=(0.15, 0.4),
                                     truncated_share=0.15, difficult_share=0.08)
_POSES = ('Frontal', 'Left', 'Rear', 'Right', 'Unspecified')


def make_voc_tree(root: str, year: str = '2007', num_images: int = 64,
                  image_size: Tuple[int, int] = (500, 375), max_objects: int = 6,
                  splits: Mapping[str, float] = _DEFAULT_SPLITS, seed: int = 0) -> str:
    """Writes a Pascal VOC detection tree of shapes on textured backgrounds.

    Layout, under `root/VOC<year>`::

      JPEGImages/<id>.jpg         RGB JPEGs (quality 90) of `image_size`, ids 000001, 000002...
      Annotations/<id>.xml        VOC XML: <folder>, <filename>, <source>, <size>,
                                  <segmented>, and per object <name>, <pose>, <truncated>,
                                  <difficult>, <bndbox> (1-based inclusive pixel coordinates)
      ImageSets/Main/<split>.txt  the ids of each split, sorted; trainval.txt lists every
                                  split but 'test' (unless a 'trainval' split is asked for)

    Each image holds 1..max_objects objects (fewer when they would overlap much). An object's
    class fixes its shape and colour (`OBJECT_STYLES`: aeroplane red disc, bicycle green
    rectangle, bird blue triangle, boat yellow diamond, bottle magenta cross), so a small SSD
    learns them. Its box is the tight box of its pixels. About 15% of objects cross an image
    edge (cut there, box ending at the edge, truncated=1) and about 8% are drawn at a quarter
    of the size and marked difficult=1. Every box lies inside the image, so
    `pascalvoc.convert_voc(folder, out, year, split)` converts the tree with no clipped or dropped
    box and no note.

    Args:
      root: where the VOC<year> folder is created (it must not exist or be empty); pass
        `.../VOCdevkit` for the usual tree.
      year: the year in the folder's name and the XML, '2007' or '2012'.
      num_images: the number of images.
      image_size: (width, height) of every image, at least 16 x 16.
      max_objects: the most objects in one image.
      splits: split name -> share of the images; the shares add up to 1.
      seed: the random seed; the same arguments write byte-identical files.

    Returns:
      The VOC<year> folder.

    Raises:
      ValueError: for arguments out of range, or a non-empty VOC<year> folder.
    """
    if year not in pascalvoc.YEARS:
        raise ValueError(f'year must be one of {pascalvoc.YEARS}, got {year!r}')
    width, height = _check_scene_arguments(num_images, image_size, max_objects, seed)
    voc_folder = os.path.join(root, f'VOC{year}')
    _prepare_folder(voc_folder)
    image_ids = [f'{i:06d}' for i in range(1, num_images + 1)]
    assigned = _assign_splits(image_ids, splits, _rng(seed, _VOC_STREAM, _SPLIT_KEY))
    for folder in ('JPEGImages', 'Annotations'):
        os.makedirs(os.path.join(voc_folder, folder))
    for index, image_id in enumerate(image_ids):
        rng = _rng(seed, _VOC_STREAM, _IMAGE_KEY, index)
        pixels, _, objects = _draw_scene(rng, width, height, max_objects, _DETECTION_SETTINGS)
        _save_jpeg(pixels, os.path.join(voc_folder, 'JPEGImages', f'{image_id}.jpg'))
        xml = _annotation_xml(year, image_id, width, height, objects, rng)
        with open(os.path.join(voc_folder, 'Annotations', f'{image_id}.xml'), 'wb') as f:
            f.write(xml)
    _write_lists(os.path.join(voc_folder, 'ImageSets', 'Main'), assigned)
    return voc_folder


def _annotation_xml(year: str, image_id: str, width: int, height: int,
                    objects: List[_SceneObject], rng: np.random.Generator) -> bytes:
    """The image's annotation in VOC's XML format (tab-indented, no XML declaration)."""
    annotation = ElementTree.Element('annotation')
    _sub(annotation, 'folder', f'VOC{year}')
    _sub(annotation, 'filename', f'{image_id}.jpg')
    source = _sub(annotation, 'source')
    _sub(source, 'database', 'slimdata synthetic')
    _sub(source, 'annotation', f'PASCAL VOC{year}')
    _sub(source, 'image', 'synthetic')
    size = _sub(annotation, 'size')
    for field, value in (('width', width), ('height', height), ('depth', 3)):
        _sub(size, field, str(value))
    _sub(annotation, 'segmented', '0')
    for scene_object in objects:
        element = _sub(annotation, 'object')
        _sub(element, 'name', scene_object.style.name)
        _sub(element, 'pose', _POSES[int(rng.integers(len(_POSES)))])
        _sub(element, 'truncated', str(int(scene_object.stamp.cut)))
        _sub(element, 'difficult', str(int(scene_object.difficult)))
        bndbox = _sub(element, 'bndbox')
        for field, value in zip(('xmin', 'ymin', 'xmax', 'ymax'), scene_object.box):
            _sub(bndbox, field, str(value))
    ElementTree.indent(annotation, space='\t')
    return ElementTree.tostring(annotation, encoding='utf-8', xml_declaration=False) + b'\n'


def _sub(parent: ElementTree.Element, tag: str, text: Optional[str] = None
         ) -> ElementTree.Element:
    element = ElementTree.SubElement(parent, tag)
    element.text = text
    return element


# ----------------------------------------------------------------------------------------
# Segmentation: a VOC2012 segmentation tree

_SEGMENTATION_SIZE_RANGE = (0.2, 0.5)


#: The Pascal VOC colour map, [256, 3] uint8 (the one `slimdata show` draws class maps with).
voc_colormap = show.voc_palette


def make_voc_seg_tree(root: str, num_images: int = 32,
                      image_size: Tuple[int, int] = (500, 375), num_classes: int = 21,
                      max_objects: int = 4, splits: Mapping[str, float] = _DEFAULT_SPLITS,
                      seed: int = 0) -> str:
    """Writes a VOC2012 semantic segmentation tree of shapes on textured backgrounds.

    Layout, under `root/VOC2012`::

      JPEGImages/<id>.jpg                RGB JPEGs (quality 90), ids 2012_000001, ...
      SegmentationClass/<id>.png         palette PNGs with VOC's colour map: index = class,
                                         0 background, 255 'void' (a band about 5 pixels
                                         wide along every object outline, as in VOC)
      ImageSets/Segmentation/<split>.txt the ids of each split, sorted; trainval.txt lists
                                         every split but 'test' (unless asked for)

    Objects (1..max_objects per image) are the classes of `OBJECT_STYLES` with labels below
    `num_classes` (VOC labels 1..5: aeroplane, bicycle, bird, boat, bottle), each class its own
    shape and colour in the JPEG, so a small FCN learns them. Objects may cross the image edge
    and occlude each other a little; the label map holds what is visible. Convert with
    `segmentation.convert_voc_seg(folder, out, split)` (pass `num_classes` too if it is not
    21).

    Args:
      root: where the VOC2012 folder is created (it must not exist or be empty).
      num_images: the number of images.
      image_size: (width, height) of every image, at least 16 x 16.
      num_classes: classes including the background, 2 to 21.
      max_objects: the most objects in one image.
      splits: split name -> share of the images; the shares add up to 1.
      seed: the random seed; the same arguments write byte-identical files.

    Returns:
      The VOC2012 folder.

    Raises:
      ValueError: for arguments out of range, or a non-empty VOC2012 folder.
    """
    if not 2 <= num_classes <= len(pascalvoc.CLASS_NAMES):
        raise ValueError(f'num_classes must be 2 to {len(pascalvoc.CLASS_NAMES)}, '
                         f'got {num_classes}')
    width, height = _check_scene_arguments(num_images, image_size, max_objects, seed)
    settings = _SceneSettings(styles=[s for s in OBJECT_STYLES if s.label < num_classes],
                              size_range=_SEGMENTATION_SIZE_RANGE, truncated_share=0.2,
                              difficult_share=0.0)
    voc_folder = os.path.join(root, 'VOC2012')
    _prepare_folder(voc_folder)
    image_ids = [f'2012_{i:06d}' for i in range(1, num_images + 1)]
    assigned = _assign_splits(image_ids, splits, _rng(seed, _VOC_SEG_STREAM, _SPLIT_KEY))
    for folder in ('JPEGImages', 'SegmentationClass'):
        os.makedirs(os.path.join(voc_folder, folder))
    palette = voc_colormap().tobytes()
    for index, image_id in enumerate(image_ids):
        rng = _rng(seed, _VOC_SEG_STREAM, _IMAGE_KEY, index)
        pixels, instances, objects = _draw_scene(rng, width, height, max_objects, settings)
        _save_jpeg(pixels, os.path.join(voc_folder, 'JPEGImages', f'{image_id}.jpg'))
        label_png = Image.fromarray(_class_map(instances, objects))
        label_png.putpalette(palette)
        label_png.save(os.path.join(voc_folder, 'SegmentationClass', f'{image_id}.png'))
    _write_lists(os.path.join(voc_folder, 'ImageSets', 'Segmentation'), assigned)
    return voc_folder


def _class_map(instances: np.ndarray, objects: List[_SceneObject]) -> np.ndarray:
    """Class indices [height, width] uint8 from the instance map, with VOC's void band: every
    pixel within `_VOID_HALF_WIDTH` (in both axes) of a pixel of another instance, or of the
    background, is 255."""
    classes_of_instances = np.array([0] + [o.style.label for o in objects], np.uint8)
    classes = classes_of_instances[instances]
    border = _window_extreme(instances, np.maximum) != _window_extreme(instances, np.minimum)
    classes[border] = VOID_LABEL
    return classes


def _window_extreme(values: np.ndarray, extreme: Callable[..., np.ndarray]) -> np.ndarray:
    """`extreme` (np.maximum or np.minimum) over the square window of half-width
    `_VOID_HALF_WIDTH` around each pixel: separable, down the columns and then (transposed)
    along the rows, each a few element-wise passes over shifted slices."""
    radius = _VOID_HALF_WIDTH
    for _ in range(2):
        padded = np.pad(values, ((radius, radius), (0, 0)), mode='edge')
        rows = values.shape[0]
        result = padded[:rows]
        for offset in range(1, 2 * radius + 1):
            result = extreme(result, padded[offset:offset + rows])
        values = result.T
    return values
