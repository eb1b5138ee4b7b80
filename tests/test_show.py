"""`slimdata show`: contact sheets checked pixel by pixel against the records' own numbers.

Records are written with TensorFlow's tf.train.Example and TFRecordWriter, images encoded
with tf.io.encode_png; expectations come from the records (normalised coordinates, class
maps) through the geometry `slimdata.show` documents (scale, origin, floor(x * W)), and from
Pascal VOC's published palette colours.
"""

import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from conftest import write_with_tf
from slimdata import cli, show
from slimdata._tf import tf
from slimdata.records import dataset_info

GREY = 120
# Pascal VOC's colours, as its devkit's labelcolormap gives them (not computed here).
VOC_COLOURS = {0: (0, 0, 0), 1: (128, 0, 0), 2: (0, 128, 0), 3: (128, 128, 0), 15: (192, 128, 128),
               255: (224, 224, 192)}


def feature(value):
    values = value if isinstance(value, list) else [value]
    if isinstance(values[0], bytes):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    if isinstance(values[0], float):
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def example(**features):
    """A serialized tf.train.Example; keyword `image__encoded` is the key 'image/encoded'."""
    return tf.train.Example(features=tf.train.Features(feature={
        key.replace('__', '/'): feature(value) for key, value in features.items()
    })).SerializeToString()


def png(pixels):
    pixels = np.asarray(pixels, np.uint8)
    return tf.io.encode_png(pixels if pixels.ndim == 3 else pixels[..., None]).numpy()


def grey_image(width, height, value=GREY):
    return png(np.full((height, width, 3), value, np.uint8))


def detection_record(width, height, boxes, label_keys='slimdata'):
    """A detection record of a flat grey image; `boxes` are (ymin, xmin, ymax, xmax, label,
    difficult). `label_keys` 'slimdata' (SSD-Tensorflow's) or 'od_api'."""
    ymin, xmin, ymax, xmax, labels, difficult = (list(values) for values in zip(*boxes))
    prefix = 'image__object__bbox__' if label_keys == 'slimdata' else 'image__object__'
    label_features = {
        f'{prefix}{"label" if label_keys == "slimdata" else "class__label"}': labels,
        f'{prefix}difficult': difficult,
    }
    return example(image__encoded=grey_image(width, height), image__format=b'png',
                   image__height=height, image__width=width,
                   image__object__bbox__ymin=ymin, image__object__bbox__xmin=xmin,
                   image__object__bbox__ymax=ymax, image__object__bbox__xmax=xmax,
                   **label_features)


def sheet_of(tmp_path, records, name='data.tfrecord', **kwargs):
    path = write_with_tf(tmp_path / name, records)
    return show.contact_sheet([path], **kwargs)


def pixels_of(sheet):
    return np.asarray(sheet.image)


def rect_mask(shape, rect):
    mask = np.zeros(shape, bool)
    left, top, right, bottom = rect
    mask[top:bottom + 1, left:right + 1] = True
    return mask


def expected_scale(width, height):
    """The documented rule: the smallest whole factor that makes the longer side at least
    MIN_SIDE; a reduction to MAX_SIDE; else 1."""
    longest = max(width, height)
    if longest < show.MIN_SIDE:
        return math.ceil(show.MIN_SIDE / longest)
    return show.MAX_SIDE / longest if longest > show.MAX_SIDE else 1


def expected_outline(shape, origin, size, box, dashed=False):
    """The outline pixels of `box` = (ymin, xmin, ymax, xmax) in a sheet of `shape`, from
    the documented mapping: edge pixel floor(x * W), BOX_LINE_WIDTH inside, dashes counted
    from the left column or the top row."""
    (x0, y0), (width, height) = origin, size
    left, right = (x0 + min(math.floor(v * width), width - 1) for v in (box[1], box[3]))
    top, bottom = (y0 + min(math.floor(v * height), height - 1) for v in (box[0], box[2]))
    line = show.BOX_LINE_WIDTH
    rows, columns = np.indices(shape)
    inside = (rows >= top) & (rows <= bottom) & (columns >= left) & (columns <= right)
    horizontal = inside & ((rows < top + line) | (rows > bottom - line))
    vertical = inside & ((columns < left + line) | (columns > right - line))
    if dashed:
        period = show.DASH + show.GAP
        horizontal &= (columns - left) % period < show.DASH
        vertical &= (rows - top) % period < show.DASH
    return horizontal | vertical, (left, top, right, bottom)


def coloured(pixels, colour):
    return np.all(pixels == np.array(colour, np.uint8), axis=-1)


# ----------------------------------------------------------------------------------------------
# detection

# Coordinates exact in float32, so floor(x * W) has one right answer (and round() another).
BOX = (0.2578125, 0.25, 0.75, 0.6875)  # ymin, xmin, ymax, xmax; x * W has fractions


@pytest.mark.parametrize('width, height', [(40, 30), (200, 160), (512, 384)],
                         ids=['enlarged', 'as is', 'reduced'])
def test_box_outline_is_drawn_exactly_where_the_record_says(tmp_path, width, height):
    sheet = sheet_of(tmp_path, [detection_record(width, height, [(*BOX, 3, 0)])])
    pixels = pixels_of(sheet)
    cell, = sheet.cells
    scale = expected_scale(width, height)
    assert cell.scale == pytest.approx(scale)
    assert cell.size == (round(width * scale), round(height * scale))
    drawn_box, = cell.boxes
    outline, edges = expected_outline(pixels.shape[:2], cell.origin, cell.size, BOX)
    assert drawn_box.edges == edges
    box_pixels = coloured(pixels, drawn_box.colour)
    # The tag sits on the box's top-left corner, above it; the legend shows the colour too.
    assert (drawn_box.tag[0], drawn_box.tag[3]) == (edges[0], edges[1] - 1)
    legend_swatch, = [entry.swatch for entry in sheet.legend if entry.style == 'box']
    elsewhere = rect_mask(box_pixels.shape, drawn_box.tag) | rect_mask(box_pixels.shape,
                                                                        legend_swatch)
    assert np.array_equal(box_pixels & ~elsewhere, outline)
    # Everything else of the image is the record's grey, and the image is where the cell says.
    (x0, y0), (w, h) = cell.origin, cell.size
    image_area = rect_mask(box_pixels.shape, (x0, y0, x0 + w - 1, y0 + h - 1))
    grey = coloured(pixels, (GREY,) * 3)
    assert np.array_equal(grey & image_area,
                          image_area & ~outline & ~rect_mask(grey.shape, drawn_box.tag))
    ring = rect_mask(grey.shape, (x0 - 1, y0 - 1, x0 + w, y0 + h)) & ~image_area
    assert np.all(coloured(pixels, show.BACKGROUND)[ring])


def test_difficult_box_is_dashed_and_the_legend_says_so(tmp_path):
    sheet = sheet_of(tmp_path, [detection_record(40, 30, [(*BOX, 3, 1)])])
    pixels = pixels_of(sheet)
    cell, = sheet.cells
    drawn_box, = cell.boxes
    dashed, _ = expected_outline(pixels.shape[:2], cell.origin, cell.size, BOX, dashed=True)
    solid, _ = expected_outline(pixels.shape[:2], cell.origin, cell.size, BOX)
    elsewhere = rect_mask(dashed.shape, drawn_box.tag)
    for entry in sheet.legend:
        elsewhere |= rect_mask(dashed.shape, entry.swatch)
    box_pixels = coloured(pixels, drawn_box.colour) & ~elsewhere
    assert np.array_equal(box_pixels, dashed)
    assert solid.sum() > dashed.sum() > solid.sum() / 2  # gaps, where grey shows
    assert np.all(coloured(pixels, (GREY,) * 3)[solid & ~dashed])
    assert [(entry.text, entry.style) for entry in sheet.legend] == [('3', 'box'),
                                                                    ('difficult', 'difficult')]


def test_tag_of_a_box_at_the_top_goes_under_it(tmp_path):
    sheet = sheet_of(tmp_path, [detection_record(40, 30, [(0.0, 0.25, 0.5, 0.6875, 3, 0)])])
    drawn_box, = sheet.cells[0].boxes
    left, top, _, bottom = drawn_box.edges
    assert top == sheet.cells[0].origin[1]
    assert (drawn_box.tag[0], drawn_box.tag[1]) == (left, bottom + 1)


def test_two_boxes_of_two_classes_each_in_its_colour(tmp_path):
    other = (0.5, 0.75, 0.875, 0.875)
    sheet = sheet_of(tmp_path, [detection_record(64, 64, [(*BOX, 1, 0), (*other, 2, 0)])])
    pixels = pixels_of(sheet)
    cell, = sheet.cells
    first, second = cell.boxes
    assert first.colour != second.colour
    for drawn, box in ((first, BOX), (second, other)):
        outline, _ = expected_outline(pixels.shape[:2], cell.origin, cell.size, box)
        assert np.all(coloured(pixels, drawn.colour)[outline & ~rect_mask(outline.shape,
                                                                           first.tag)
                                                     & ~rect_mask(outline.shape, second.tag)])


def test_box_labels_from_labels_txt_else_the_record_text_else_numbers(tmp_path):
    od_api = example(image__encoded=grey_image(40, 30), image__format=b'png',
                     image__object__bbox__ymin=[0.25], image__object__bbox__xmin=[0.25],
                     image__object__bbox__ymax=[0.75], image__object__bbox__xmax=[0.625],
                     image__object__class__label=[1], image__object__class__text=[b'cat'],
                     image__object__difficult=[1])
    no_text = detection_record(40, 30, [(*BOX, 7, 0)])
    folder = tmp_path / 'records'
    folder.mkdir()
    write_with_tf(folder / 'a.tfrecord', [od_api, no_text])
    sheet = show.contact_sheet([str(folder)])
    assert [[box.text for box in cell.boxes] for cell in sheet.cells] == [
        ['cat (difficult)'], ['7']]
    assert sheet.cells[0].boxes[0].box.difficult  # the OD API's difficult key
    assert [entry.text for entry in sheet.legend] == ['cat (1)', '7', 'difficult']
    (folder / 'labels.txt').write_text('1:dog\n7:horse\n')
    sheet = show.contact_sheet([str(folder)])
    assert [[box.text for box in cell.boxes] for cell in sheet.cells] == [
        ['dog (difficult)'], ['horse']]


# ----------------------------------------------------------------------------------------------
# segmentation

def segmentation_record(image, classes):
    return example(image__encoded=png(image), image__format=b'png',
                   image__height=classes.shape[0], image__width=classes.shape[1],
                   image__segmentation__class__encoded=png(classes),
                   image__segmentation__class__format=b'png')


def class_map():
    classes = np.zeros((30, 40), np.uint8)
    classes[5:15, 8:20] = 3
    classes[20:22, :] = 255
    classes[24:28, 30:36] = 15
    return classes


def voc_colours():
    colours = np.zeros((256, 3), np.int64)
    for label, colour in VOC_COLOURS.items():
        colours[label] = colour
    return colours


def expected_class_outline(classes, width=show.BOX_LINE_WIDTH):
    """The documented outline, found by comparing each pixel with each of its neighbours
    within `width` rows and columns that lies in the image (not as show.py finds it)."""
    height, columns = classes.shape
    outline = np.zeros(classes.shape, bool)
    for dy in range(-width, width + 1):
        for dx in range(-width, width + 1):
            here = (slice(max(-dy, 0), height + min(-dy, 0)),
                    slice(max(-dx, 0), columns + min(-dx, 0)))
            there = classes[max(dy, 0):height + min(dy, 0), max(dx, 0):columns + min(dx, 0)]
            outline[here] |= classes[here] != there
    return outline


def assert_segmentation_drawn(sheet, cell, photo, classes):
    """The cell is `photo` with `classes` (both at the drawn size) drawn as documented:
    outlines in the VOC colours, 255 in VOC's void colour, a tag per class inside its
    region; every other pixel the photo's."""
    drawn = cell_pixels(sheet, cell)
    (x0, y0) = cell.origin
    tags = np.zeros(classes.shape, bool)
    for region in cell.regions:
        left, top, right, bottom = region.tag
        tags[top - y0:bottom - y0 + 1, left - x0:right - x0 + 1] = True
    outline = expected_class_outline(classes) & (classes != 255) & ~tags
    ignored = (classes == 255) & ~tags
    assert outline.sum() > 0 and ignored.sum() > 0
    assert np.array_equal(drawn[outline], voc_colours()[classes[outline]])
    assert (drawn[ignored] == VOC_COLOURS[255]).all()
    untouched = ~outline & ~ignored & ~tags
    assert np.array_equal(drawn[untouched], photo[untouched])


def test_segmentation_outlines_regions_in_their_legend_colours_and_tags_them(tmp_path):
    rng = np.random.default_rng(0)
    photo = rng.integers(0, 256, (60, 80, 3), dtype=np.uint8)
    classes = np.zeros((60, 80), np.uint8)
    classes[8:36, 6:38] = 1
    classes[10:40, 44:74] = 2
    classes[46:50, :] = 255
    folder = tmp_path / 'seg'
    folder.mkdir()
    write_with_tf(folder / 'seg.tfrecord', [segmentation_record(photo, classes)])
    (folder / 'labels.txt').write_text('0:background\n1:aeroplane\n2:bicycle\n')
    sheet = show.contact_sheet([str(folder)])
    cell, = sheet.cells
    scale = expected_scale(80, 60)
    assert scale == 2
    enlarged = np.repeat(np.repeat(classes, scale, axis=0), scale, axis=1)
    assert_segmentation_drawn(sheet, cell, np.repeat(np.repeat(photo, 2, axis=0), 2, axis=1),
                              enlarged)
    assert [(region.label, region.colour, region.text) for region in cell.regions] == [
        (0, VOC_COLOURS[0], 'background'), (1, VOC_COLOURS[1], 'aeroplane'),
        (2, VOC_COLOURS[2], 'bicycle')]
    x0, y0 = cell.origin
    for region in cell.regions[1:]:  # tags wholly inside their region
        left, top, right, bottom = region.tag
        assert (enlarged[top - y0:bottom - y0 + 1, left - x0:right - x0 + 1]
                == region.label).all()
        tag = pixels_of(sheet)[top:bottom + 1, left:right + 1]
        fill = (tag == region.colour).all(axis=-1)
        assert fill.mean() > 0.5 and (~fill).sum() > 20  # the fill colour, and the text on it
        assert (tag[~fill] >= region.colour).all()  # light text (blended into) a dark tag
    assert [(entry.text, entry.style) for entry in sheet.legend] == [
        ('background (0)', 'class'), ('aeroplane (1)', 'class'), ('bicycle (2)', 'class'),
        ('ignore (255)', 'ignore')]
    for entry, label in zip(sheet.legend, [0, 1, 2, 255]):
        left, top, right, bottom = entry.swatch  # inside its grey border: the outline's colour
        assert (pixels_of(sheet)[top + 1:bottom, left + 1:right] == VOC_COLOURS[label]).all()


def test_segmentation_tag_of_a_region_too_small_for_it_is_centred_on_it(tmp_path):
    photo = np.full((30, 40, 3), 90, np.uint8)
    classes = class_map()
    sheet = sheet_of(tmp_path, [segmentation_record(photo, classes)])
    cell, = sheet.cells
    scale = expected_scale(40, 30)
    enlarged = np.repeat(np.repeat(classes, scale, axis=0), scale, axis=1)
    assert_segmentation_drawn(sheet, cell, np.full(enlarged.shape + (3,), 90, np.uint8),
                              enlarged)
    person = next(region for region in cell.regions if region.label == 15)
    rows, columns = np.nonzero(enlarged == 15)  # 16x24 pixels: no room off its outline
    left, top, right, bottom = person.tag
    x0, y0 = cell.origin
    assert abs((left + right) / 2 - x0 - columns.mean()) <= 1.5
    assert abs((top + bottom) / 2 - y0 - rows.mean()) <= 1.5


def test_segmentation_legend_names_and_ignore_label_come_from_dataset_info(tmp_path):
    classes = class_map()
    classes[classes == 255] = 0  # ADE20K: 0 is the label to ignore
    folder = tmp_path / 'ade'
    folder.mkdir()
    write_with_tf(folder / 'val-00000-of-00001.tfrecord',
                  [segmentation_record(np.full((30, 40, 3), 90, np.uint8), classes)])
    dataset_info.write_dataset_info(
        str(folder), 'ade20k', {'val': [{'file': 'val-00000-of-00001.tfrecord',
                                         'num_records': 1}]},
        labels_to_names={3: 'bird', 15: 'person'}, extra={'ignore_label': 0})
    sheet = show.contact_sheet([str(folder)])
    assert [entry.text for entry in sheet.legend] == ['bird (3)', 'person (15)', 'ignore (0)']
    cell, = sheet.cells
    x0, y0 = cell.origin
    assert tuple(pixels_of(sheet)[y0, x0]) == VOC_COLOURS[255]  # class 0, ignored: VOC's void


# ----------------------------------------------------------------------------------------------
# classification

def test_classification_image_enlarged_pixel_for_pixel_with_its_label_name(tmp_path):
    digit = np.random.default_rng(1).integers(0, 256, (28, 28), dtype=np.uint8)
    folder = tmp_path / 'mnist'
    folder.mkdir()
    write_with_tf(folder / 'mnist_train.tfrecord',
                  [example(image__encoded=png(digit), image__format=b'png',
                           image__class__label=2, image__height=28, image__width=28)])
    (folder / 'labels.txt').write_text('0:zero\n1:one\n2:two\n')
    sheet = show.contact_sheet([str(folder)])
    cell, = sheet.cells
    assert cell.scale == 5 and cell.size == (140, 140)  # 28 * 5 >= MIN_SIDE = 128
    (x0, y0), (w, h) = cell.origin, cell.size
    drawn = pixels_of(sheet)[y0:y0 + h, x0:x0 + w]
    assert np.array_equal(drawn, np.repeat(np.repeat(digit, 5, 0), 5, 1)[..., None]
                          .repeat(3, axis=2))
    (text, (x, y)), (source, _) = cell.captions
    assert (text, source) == ('two (2)', 'mnist_train #0')
    # The caption is that text in Pillow's default font, black on white, nothing else there.
    font = ImageFont.load_default(size=show.FONT_SIZE)
    _, _, right, bottom = font.getbbox(text)
    reference = Image.new('RGB', (right + 4, bottom + 4), show.BACKGROUND)
    ImageDraw.Draw(reference).text((2, 2), text, fill=show.TEXT, font=font)
    drawn_text = pixels_of(sheet)[y - 2:y + bottom + 2, x - 2:x + right + 2]
    assert np.array_equal(drawn_text, np.asarray(reference))
    assert not np.all(drawn_text == 255)


def test_raw_pixel_records(tmp_path):
    pixels = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3) * 2
    sheet = sheet_of(tmp_path, [example(image__encoded=pixels.tobytes(), image__format=b'raw',
                                        image__height=4, image__width=6, image__channels=3,
                                        image__class__label=0)])
    cell, = sheet.cells
    scale = expected_scale(6, 4)
    (x0, y0), (w, h) = cell.origin, cell.size
    assert np.array_equal(pixels_of(sheet)[y0:y0 + h, x0:x0 + w],
                          np.repeat(np.repeat(pixels, scale, 0), scale, 1))


def test_16_bit_grey_images_show_their_top_8_bits(tmp_path):
    depth = np.arange(0, 65536, 1024, dtype=np.uint16).reshape(8, 8)
    encoded = tf.io.encode_png(depth[..., None]).numpy()
    sheet = sheet_of(tmp_path, [example(image__encoded=encoded, image__class__label=0)])
    cell, = sheet.cells
    (x0, y0), scale = cell.origin, int(cell.scale)
    drawn = pixels_of(sheet)[y0:y0 + 8 * scale:scale, x0:x0 + 8 * scale:scale, 0]
    assert np.array_equal(drawn, depth >> 8)


# ----------------------------------------------------------------------------------------------
# large images, records that cannot be drawn, long texts, many boxes

def blocks_image(width, height, block):
    """Squares of `block` pixels in random colours: shifted by one drawn pixel, the reduced
    picture differs by 7.7 levels on average; decoded at 1/8 by libjpeg, by 1."""
    colours = np.random.default_rng(5).integers(0, 256, (height // block + 1,
                                                         width // block + 1, 3), np.uint8)
    rows, columns = np.mgrid[0:height, 0:width]
    return colours[rows // block, columns // block]


def cell_pixels(sheet, cell):
    (x0, y0), (w, h) = cell.origin, cell.size
    return pixels_of(sheet)[y0:y0 + h, x0:x0 + w]


def test_large_png_is_reduced_exactly_as_pillow_reduces_it(tmp_path):
    pixels = np.random.default_rng(2).integers(0, 256, (400, 600, 3), dtype=np.uint8)
    sheet = sheet_of(tmp_path, [example(image__encoded=png(pixels), image__class__label=0)])
    cell, = sheet.cells
    assert cell.size == (256, 171) and cell.scale == pytest.approx(256 / 600)
    expected = Image.fromarray(pixels).resize(cell.size, Image.Resampling.LANCZOS)
    assert np.array_equal(cell_pixels(sheet, cell), np.asarray(expected))


def test_large_jpeg_is_decoded_at_reduced_size_and_drawn_as_its_full_decode_reduced(tmp_path):
    pixels = blocks_image(2400, 1800, block=120)
    encoded = tf.io.encode_jpeg(pixels, quality=95).numpy()
    path = write_with_tf(tmp_path / 'j.tfrecord', [example(image__encoded=encoded,
                                                           image__format=b'jpeg')])
    # 1,000,000 pixels: less than the image's 4,320,000, more than the 300x225 that libjpeg
    # decodes at 1/8 for a 256x192 cell.
    sheet = show.contact_sheet([path], max_pixels=1_000_000)
    cell, = sheet.cells
    assert cell.problem is None and cell.size == (256, 192)
    # TensorFlow's full decode, reduced by Pillow: the same picture, within JPEG's rounding.
    full = tf.io.decode_jpeg(encoded).numpy()
    expected = np.asarray(Image.fromarray(full).resize(cell.size, Image.Resampling.LANCZOS))
    difference = np.abs(cell_pixels(sheet, cell).astype(int) - expected)
    assert difference.mean() < 2 and np.percentile(difference, 99) <= 12, (
        difference.mean(), np.percentile(difference, 99))
    # Under 67,500 pixels even the reduced decode is too many: the cell is marked.
    sheet = show.contact_sheet([path], max_pixels=60_000)
    problem, = sheet.problems
    assert problem.kind == show.TOO_LARGE and problem.text == '2400x1800 pixels'
    assert problem.message == (f"{path}: record 0, key 'image/encoded': 2400x1800 pixels, "
                               'over the limit of 60,000 pixels decoded per image (decoded '
                               'at 300x225)')


def test_segmentation_tags_the_classes_of_the_most_pixels_and_outlines_all(tmp_path):
    # 40 stripes of classes 1..40, stripe k 2 + k % 5 columns wide: ties broken by label
    widths = [2 + label % 5 for label in range(1, 41)]
    classes = np.repeat(np.arange(1, 41, dtype=np.uint8), widths)[None, :].repeat(60, axis=0)
    photo = np.full(classes.shape + (3,), 90, np.uint8)
    sheet = sheet_of(tmp_path, [segmentation_record(photo, classes)])
    cell, = sheet.cells
    by_size = sorted(range(1, 41), key=lambda label: (-widths[label - 1], label))
    assert show.MAX_REGION_TAGS == 32
    assert [region.label for region in cell.regions] == sorted(by_size[:32])
    assert len(sheet.legend) == 40  # every class is named in the legend
    scale = expected_scale(*classes.shape[::-1])
    enlarged = np.repeat(np.repeat(classes, scale, axis=0), scale, axis=1)
    drawn = cell_pixels(sheet, cell)
    (x0, y0) = cell.origin
    tags = np.zeros(enlarged.shape, bool)
    for region in cell.regions:  # small regions' tags overflow onto their neighbours
        left, top, right, bottom = region.tag
        tags[top - y0:bottom - y0 + 1, left - x0:right - x0 + 1] = True
    untagged = np.isin(enlarged, by_size[32:]) & expected_class_outline(enlarged) & ~tags
    assert untagged.sum() > 100
    assert np.array_equal(drawn[untagged], show.voc_palette()[enlarged[untagged]])


def test_segmentation_reduced_outlines_the_nearest_class_on_the_reduced_image(tmp_path):
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (384, 512, 3), dtype=np.uint8)
    classes = np.zeros((384, 512), np.uint8)
    classes[40:200, 100:300] = 1
    classes[250:380, 7:90] = 15
    classes[::7, :] = 255
    sheet = sheet_of(tmp_path, [segmentation_record(image, classes)])
    cell, = sheet.cells
    assert cell.size == (256, 192)
    reduced = np.asarray(Image.fromarray(image).resize(cell.size, Image.Resampling.LANCZOS))
    nearest = np.asarray(Image.fromarray(classes).resize(cell.size, Image.Resampling.NEAREST))
    assert_segmentation_drawn(sheet, cell, reduced, nearest)
    assert [entry.text for entry in sheet.legend] == ['0', '1', '15', 'ignore (255)']


def marked_cell_check(sheet, cell, kind):
    """The cell is a square of min(MIN_SIDE, MAX_SIDE) crossed in its kind's colour."""
    side = min(show.MIN_SIDE, show.MAX_SIDE)
    assert cell.size == (side, side) and cell.boxes == []
    drawn = cell_pixels(sheet, cell)
    colour, background = show.PROBLEM_COLOURS[kind], show.MARKED_BACKGROUNDS[kind]
    for i in (5, 30, side - 10):  # on both diagonals, away from the middle band
        assert tuple(drawn[i, i]) == colour and tuple(drawn[i, side - 1 - i]) == colour
    for x, y in ((40, 10), (10, 40), (side - 40, side - 10)):
        assert tuple(drawn[y, x]) == background
    assert tuple(drawn[0, side // 2]) == colour  # the frame
    problem_line, = [text for text, _ in cell.captions if text == cell.problem.text]
    assert problem_line


def test_records_that_cannot_be_drawn_are_marked_cells(tmp_path):
    big = png(np.zeros((300, 400, 3), np.uint8))
    records = [example(image__encoded=b'\xff\xd8\xff not a JPEG', image__class__label=4),
               example(image__encoded=big), example(image__encoded=grey_image(8, 8))]
    path = write_with_tf(tmp_path / 'mixed.tfrecord', records)
    sheet = show.contact_sheet([path], max_pixels=100_000)
    unreadable, too_large, good = sheet.cells
    assert [problem.kind for problem in sheet.problems] == [show.UNREADABLE, show.TOO_LARGE]
    marked_cell_check(sheet, unreadable, show.UNREADABLE)
    assert [text for text, _ in unreadable.captions] == ['4', 'corrupt image', 'mixed #0']
    assert unreadable.problem.message.startswith(
        f"{path}: record 0, key 'image/encoded' is not a readable JPEG")
    marked_cell_check(sheet, too_large, show.TOO_LARGE)
    assert too_large.problem.message == (f"{path}: record 1, key 'image/encoded': 400x300 "
                                         'pixels, over the limit of 100,000 pixels decoded '
                                         'per image')
    assert good.problem is None and np.all(cell_pixels(sheet, good) == GREY)


@pytest.mark.parametrize('max_side', [1, 2, 20])
def test_a_marked_cell_at_a_size_of_a_few_pixels_is_a_crossed_square(tmp_path, max_side):
    records = [example(image__encoded=b'not an image'), detection_record(40, 30, [(*BOX, 3, 1)])]
    sheet = sheet_of(tmp_path, records, max_side=max_side)
    marked, boxes = sheet.cells
    assert marked.size == (max_side, max_side) and marked.problem.kind == show.UNREADABLE
    assert tuple(pixels_of(sheet)[marked.origin[1], marked.origin[0]]) == \
        show.PROBLEM_COLOURS[show.UNREADABLE]
    assert boxes.size == (max_side, round(30 * max_side / 40) or 1)


def test_class_map_over_the_pixel_limit_is_not_decoded(tmp_path):
    sheet = sheet_of(tmp_path, [segmentation_record(np.zeros((300, 200, 3)),
                                                    np.zeros((300, 200)))], max_pixels=50_000)
    problem, = sheet.problems
    assert problem.kind == show.TOO_LARGE  # the image itself, 60,000 pixels, first
    sheet = sheet_of(tmp_path, [segmentation_record(np.zeros((30, 20, 3)), np.zeros((30, 20)))],
                     name='small.tfrecord', max_pixels=599)
    problem, = sheet.problems
    assert "key 'image/encoded': 20x30 pixels, over the limit of 599" in problem.message


def reference_fit(text, width, font):
    """The shortening `show` documents, by trying every length from the longest down."""
    if font.getlength(text) <= width:
        return text
    for keep in range(len(text) - 1, 0, -1):
        shortened = text[:(keep + 1) // 2] + '…' + text[len(text) - keep // 2:]
        if font.getlength(shortened) <= width:
            return shortened
    return '…'


@pytest.mark.parametrize('text', ['short', 'voc_2007_trainval_000.tfrecord #12',
                                  'WiiiiiiiiiiiiiiiiiiWWWWWWWWWWWiiiiiiiiiiiiiii.,;:!' * 3])
@pytest.mark.parametrize('width', [0, 7, 40, 128, 256])
def test_text_is_shortened_to_the_longest_middle_cut_that_fits(text, width):
    font = ImageFont.load_default(size=show.FONT_SIZE)
    assert show._fit(text, width, font) == reference_fit(text, width, font)


def test_200_kb_of_label_text_is_shortened_to_fit(tmp_path):
    text = 'a' * 100_000 + 'b' * 100_000
    record = example(image__encoded=grey_image(64, 48), image__class__label=1,
                     image__class__text=text.encode(), image__object__bbox__ymin=[0.1],
                     image__object__bbox__xmin=[0.1], image__object__bbox__ymax=[0.9],
                     image__object__bbox__xmax=[0.9], image__object__bbox__label=[2],
                     image__object__bbox__label_text=[text.encode()])
    sheet = sheet_of(tmp_path, [record])
    cell, = sheet.cells
    font = ImageFont.load_default(size=show.FONT_SIZE)
    caption = cell.captions[0][0]
    assert re.fullmatch(r'a+…b+ \(1\)', caption) and font.getlength(caption) <= cell.size[0]
    tag = cell.boxes[0].text
    assert re.fullmatch(r'a+…b+', tag)
    legend_text = sheet.legend[0].text
    assert re.fullmatch(r'a+…b+ \(2\)', legend_text)
    assert font.getlength(legend_text) <= sheet.image.width


def test_boxes_beyond_the_most_drawn_are_counted_and_the_legend_is_capped(tmp_path):
    num_boxes = show.MAX_BOXES + 50
    fractions = np.linspace(0, 0.5, num_boxes).tolist()
    record = example(image__encoded=grey_image(64, 48),
                     image__object__bbox__ymin=fractions, image__object__bbox__xmin=fractions,
                     image__object__bbox__ymax=[0.9] * num_boxes,
                     image__object__bbox__xmax=[0.9] * num_boxes,
                     image__object__bbox__label=list(range(num_boxes)))
    sheet = sheet_of(tmp_path, [record])
    cell, = sheet.cells
    assert [drawn.box.label for drawn in cell.boxes] == list(range(show.MAX_BOXES))
    assert cell.captions[0][0] == f'{show.MAX_BOXES}/{num_boxes} boxes'
    box_entries = [entry for entry in sheet.legend if entry.style == 'box']
    assert [entry.text for entry in box_entries] == [
        str(label) for label in range(show.MAX_LEGEND_CLASSES)]
    assert sheet.legend[-1].text == f'and {show.MAX_BOXES - show.MAX_LEGEND_CLASSES} more'


def test_a_sample_keeps_no_more_of_a_record_than_is_drawn():
    # However large a record's texts and box lists, the samples of a sheet stay small.
    num_boxes = 1000
    long_text = 'é' * 100_000
    record = example(image__encoded=grey_image(8, 8), image__class__label=1,
                     image__class__text=long_text.encode(),
                     image__object__bbox__ymin=[0.1] * num_boxes,
                     image__object__bbox__xmin=[0.1] * num_boxes,
                     image__object__bbox__ymax=[0.9] * num_boxes,
                     image__object__bbox__xmax=[0.9] * num_boxes,
                     image__object__bbox__label_text=[long_text.encode()] * num_boxes)
    sample = show.decode_record(record, 'r: record 0')
    kept = sample.annotations
    assert (kept.image, sample.num_boxes, len(kept.boxes)) == (b'', num_boxes, show.MAX_BOXES)
    end = 'é' * show.TEXT_END
    assert kept.class_text == end + '…' + end
    assert {box.text for box in kept.boxes} == {end + '…' + end}


def test_columns_are_at_most_one_per_record(tmp_path):
    path = write_with_tf(tmp_path / 'two.tfrecord',
                         [example(image__encoded=grey_image(8, 8))] * 2)
    wide = show.contact_sheet([path], columns=100_000)
    assert np.array_equal(pixels_of(wide), pixels_of(show.contact_sheet([path], columns=2)))


def test_sheet_size_is_checked_before_reading_against_a_bound_of_the_real_size(tmp_path,
                                                                           monkeypatch):
    show.check_sheet_size(16)
    with pytest.raises(show.SheetTooLarge, match='100,000 records in 317 columns of cells up '
                                                 'to 256 pixels could make a sheet of'):
        show.check_sheet_size(100_000)
    with pytest.raises(show.SheetTooLarge, match='1 records in 1 columns of cells up to '
                                                 '100000 pixels'):
        show.check_sheet_size(1, max_side=100_000)
    # The bound covers a real sheet: tall images (enlarged to just under 2 * MIN_SIDE), three
    # caption lines and the longest legend.
    num_boxes = show.MAX_BOXES + 1
    tall = example(image__encoded=grey_image(1, show.MIN_SIDE - 1), image__class__label=1,
                   image__object__bbox__ymin=[0.0] * num_boxes,
                   image__object__bbox__xmin=[0.0] * num_boxes,
                   image__object__bbox__ymax=[1.0] * num_boxes,
                   image__object__bbox__xmax=[1.0] * num_boxes,
                   image__object__bbox__label=list(range(num_boxes)))
    sheet = sheet_of(tmp_path, [tall] * 3, columns=2, max_side=64)
    monkeypatch.setattr(show, 'MAX_SHEET_PIXELS', sheet.image.width * sheet.image.height - 1)
    with pytest.raises(show.SheetTooLarge):
        show.check_sheet_size(3, 2, max_side=64)


# ----------------------------------------------------------------------------------------------
# which records

def test_first_n_records_in_file_order(tmp_path):
    records = [example(image__encoded=grey_image(8, 8, value), image__class__label=value)
               for value in range(7)]
    write_with_tf(tmp_path / 'a.tfrecord', records[:3])
    write_with_tf(tmp_path / 'b.tfrecord', records[3:], 'GZIP')
    sheet = show.contact_sheet([str(tmp_path / '*.tfrecord')], num_records=5, columns=2)
    assert [cell.where for cell in sheet.cells] == (
        [f'{tmp_path / "a.tfrecord"}: record {i}' for i in range(3)]
        + [f'{tmp_path / "b.tfrecord"}: record {i}' for i in range(2)])
    origins = [cell.origin for cell in sheet.cells]
    assert origins[0][1] == origins[1][1] < origins[2][1] == origins[3][1] < origins[4][1]
    assert origins[0][0] == origins[2][0] == origins[4][0] < origins[1][0] == origins[3][0]


@pytest.fixture
def two_splits(tmp_path):
    """A dataset folder with train (label 0) and val (label 1) shards and dataset_info.json."""
    folder = tmp_path / 'ds'
    folder.mkdir()
    shards = {}
    for label, split in enumerate(['train', 'val']):
        name = f'{split}-00000-of-00001.tfrecord'
        write_with_tf(folder / name, [example(image__encoded=grey_image(8, 8),
                                              image__class__label=label)] * 2)
        shards[split] = [{'file': name, 'num_records': 2}]
    dataset_info.write_dataset_info(str(folder), 'toy', shards,
                                    labels_to_names={0: 'zero', 1: 'one'})
    return folder


def test_split_of_a_dataset_folder(two_splits):
    default = show.contact_sheet([str(two_splits)])
    assert [cell.captions[0][0] for cell in default.cells] == ['zero (0)'] * 2
    assert default.title == f'{two_splits} (split train; also val: --split picks one)'
    val = show.contact_sheet([str(two_splits)], split='val')
    assert [cell.captions[0][0] for cell in val.cells] == ['one (1)'] * 2
    with pytest.raises(show.SelectionError, match="no split 'test'.*lists train, val"):
        show.select_records([str(two_splits)], 'test')


def test_split_of_a_folder_of_the_original_scripts_files(tmp_path):
    for split in ('train', 'trainval', 'test'):
        write_with_tf(tmp_path / f'voc_2007_{split}_000.tfrecord',
                      [example(image__encoded=grey_image(8, 8))])
    train = [str(tmp_path / 'voc_2007_train_000.tfrecord')]
    assert show.select_records([str(tmp_path)], 'train').files == train
    assert show.select_records([str(tmp_path)], 'test').files == [
        str(tmp_path / 'voc_2007_test_000.tfrecord')]
    default = show.select_records([str(tmp_path)])  # 'test' sorts first: train is the default
    assert (default.files, default.title) == (train, f'{tmp_path} (split train)')
    (tmp_path / 'voc_2007_train_000.tfrecord').unlink()
    assert len(show.select_records([str(tmp_path)]).files) == 2  # no train files: all of them


def write_splits(folder, splits):
    """A dataset folder whose dataset_info.json lists `splits` in that order; the records of
    split number i have label i."""
    folder.mkdir()
    shards = {}
    for label, split in enumerate(splits):
        name = f'{split}-00000-of-00001.tfrecord'
        write_with_tf(folder / name, [example(image__encoded=grey_image(8, 8),
                                              image__class__label=label)])
        shards[split] = [{'file': name, 'num_records': 1}]
    dataset_info.write_dataset_info(str(folder), 'toy', shards)
    return folder


@pytest.mark.parametrize('splits, shown', [
    (['test', 'train', 'validation'], 'train'),  # train, wherever it is listed
    (['test', 'trainval'], 'trainval'),  # else what was converted to train on
    (['test', 'train_fine', 'val_fine'], 'train_fine'),
    (['test', 'val'], 'test'),  # else the first listed
    (['trainval'], 'trainval'),  # the only split
], ids=['train', 'trainval', 'train_fine', 'first', 'only'])
def test_default_split_is_the_training_split_and_the_title_names_the_others(
        tmp_path, splits, shown):
    folder = write_splits(tmp_path / 'ds', splits)
    sheet = show.contact_sheet([str(folder)])
    others = [split for split in splits if split != shown]
    also = f'; also {", ".join(others)}: --split picks one' if others else ''
    assert sheet.title == f'{folder} (split {shown}{also})'
    assert [cell.captions[0][0] for cell in sheet.cells] == [str(splits.index(shown))]


def test_show_without_split_draws_the_first_converted_and_says_which(tmp_path, capsys):
    """README: `convert voc ... --split trainval test` then `show out/voc2007`."""
    folder = write_splits(tmp_path / 'voc', ['test', 'trainval'])
    status, out, _ = run(capsys, 'show', str(folder), '-o', str(tmp_path / 'x.png'))
    assert status == 0
    assert f'of {folder} (split trainval; also test: --split picks one)' in out
    status, out, _ = run(capsys, 'show', str(folder), '--split', 'test', '-o',
                         str(tmp_path / 'x.png'))
    assert status == 0
    assert f'of {folder} (split test),' in out


# ----------------------------------------------------------------------------------------------
# the command line

def run(capsys, *argv):
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_command_writes_the_sheet_and_says_where(tmp_path, capsys, two_splits):
    output = tmp_path / 'grid.png'
    status, out, _ = run(capsys, 'show', str(two_splits), '--split', 'val', '-n', '16', '-o',
                         str(output))
    assert status == 0
    assert (f'wrote {output}: 2 records (of 16 asked: all there are) of {two_splits} '
            '(split val)') in out
    written = np.asarray(Image.open(output))
    expected = show.contact_sheet([str(two_splits)], split='val').image
    assert np.array_equal(written, np.asarray(expected))


def test_command_of_converted_synthetic_trees(tmp_path, capsys):
    from slimdata.datasets import classification, pascalvoc, segmentation, synthetic
    names = synthetic.make_image_folder(str(tmp_path / 'shapes'), images_per_class=2)
    classification.convert_image_folder(str(tmp_path / 'shapes'), str(tmp_path / 'out_shapes'),
                                        num_shards=1, workers=1)
    synthetic.make_voc_tree(str(tmp_path / 'VOCdevkit'), num_images=4, image_size=(64, 48))
    pascalvoc.convert(str(tmp_path / 'VOCdevkit'), str(tmp_path / 'out_voc'), '2007',
                      'trainval', num_shards=1, workers=1)
    synthetic.make_voc_seg_tree(str(tmp_path / 'VOCdevkit'), num_images=4, image_size=(64, 48))
    segmentation.convert_voc_seg(str(tmp_path / 'VOCdevkit' / 'VOC2012'),
                                 str(tmp_path / 'out_seg'), ['train'], num_shards=1, workers=1)
    capsys.readouterr()
    for name in ('shapes', 'voc', 'seg'):
        status, _, err = run(capsys, 'show', str(tmp_path / f'out_{name}'), '-o',
                             str(tmp_path / f'{name}.png'))
        assert status == 0, err
    shapes = show.contact_sheet([str(tmp_path / 'out_shapes')])
    assert {cell.captions[0][0].split(' (')[0] for cell in shapes.cells} <= set(names)
    voc = show.contact_sheet([str(tmp_path / 'out_voc')])
    boxes = [drawn for cell in voc.cells for drawn in cell.boxes]
    assert boxes and all(
        drawn.text == pascalvoc.CLASS_NAMES[drawn.box.label]
        + (' (difficult)' if drawn.box.difficult else '') for drawn in boxes)
    seg = show.contact_sheet([str(tmp_path / 'out_seg')])
    assert seg.legend[0].text == 'background (0)'


def test_command_imports_no_tensorflow(tmp_path):
    path = write_with_tf(tmp_path / 'd.tfrecord', [detection_record(40, 30, [(*BOX, 3, 1)])])
    code = ('import sys\n'
            'from slimdata import cli\n'
            f'status = cli.main(["show", {path!r}, "-o", {str(tmp_path / "s.png")!r}])\n'
            'assert status == 0, status\n'
            'assert "tensorflow" not in sys.modules, "slimdata show imported tensorflow"\n')
    subprocess.run([sys.executable, '-c', code], check=True, capture_output=True)
    assert (tmp_path / 's.png').stat().st_size > 0


def test_a_file_that_is_not_a_tfrecord(tmp_path, capsys):
    path = tmp_path / 'notes.tfrecord'
    path.write_text('these are not records, just some text that goes on for a while\n')
    status, _, err = run(capsys, 'show', str(path), '-o', str(tmp_path / 'x.png'))
    assert status == 1
    assert f'{path}: record 0' in err and 'not a TFRecord file' in err
    assert not (tmp_path / 'x.png').exists()


@pytest.mark.parametrize('record, message', [
    (b'\x0a\xff not an example', 'record 1: not a tf.train.Example'),
    (example(image__class__label=3), "record 1: no image feature: expected 'image/encoded'"),
    (example(image__encoded=b'not an image'), "record 1, key 'image/encoded': corrupt"),
    (example(image__encoded=grey_image(8, 8), image__object__bbox__ymin=[0.1, 0.2],
             image__object__bbox__xmin=[0.1, 0.2], image__object__bbox__ymax=[0.5],
             image__object__bbox__xmax=[0.5, 0.6]),
     "record 1: key 'image/object/bbox/ymax' holds 1 values, but the record has 2 boxes"),
    (segmentation_record(np.zeros((8, 8, 3)), np.zeros((8, 9))),
     'record 1: the class map .* is 9x8 .*, the image 8x8'),
    (example(image__encoded=grey_image(8, 8), image__segmentation__class__encoded=grey_image(8, 8)),
     "record 1, key 'image/segmentation/class/encoded': a RGB image; expected one channel"),
], ids=['not an Example', 'no image', 'bad image', 'box lists', 'map size', 'RGB map'])
def test_records_that_cannot_be_shown_are_named_and_marked(tmp_path, capsys, record, message):
    path = write_with_tf(tmp_path / 'bad.tfrecord', [example(image__encoded=grey_image(8, 8)),
                                                    record])
    status, out, err = run(capsys, 'show', path, '-o', str(tmp_path / 'x.png'))
    assert status == 1
    error_lines = [line for line in err.splitlines() if line.startswith('error:')]
    assert len(error_lines) == 1 and error_lines[0].startswith(f'error: {path}: ')
    assert re.search(message, error_lines[0]), err
    assert error_lines[0].endswith('; its cell is marked')
    assert out.endswith('pixels; 1 not drawn, marked (1 unreadable)\n')
    # The sheet is written: the good record drawn, the bad one marked.
    sheet = show.contact_sheet([path])
    good, bad = sheet.cells
    assert good.problem is None and good.size == (128, 128)
    assert bad.problem.kind == show.UNREADABLE and re.search(message, bad.problem.message)
    assert np.array_equal(np.asarray(Image.open(tmp_path / 'x.png')), pixels_of(sheet))


@pytest.mark.parametrize('argv, message', [
    (['{tmp}/missing'], '{tmp}/missing does not exist'),
    (['{tmp}/*.nothing'], "No files match '{tmp}/*.nothing'"),
    (['{tmp}/ds', '-o', '{tmp}/x.jpg'], 'the contact sheet is a PNG'),
    (['{tmp}/ds', '--split', 'test'], "has no split 'test'"),
    (['{tmp}/ds/train-00000-of-00001.tfrecord', '--split', 'val'], 'picks the shards of a'),
])
def test_usage_errors_exit_2(tmp_path, capsys, two_splits, argv, message):
    argv = [arg.format(tmp=tmp_path) for arg in argv]
    status, _, err = run(capsys, 'show', *argv)
    assert status == 2
    assert message.format(tmp=tmp_path) in err


def test_unreadable_dataset_info_and_empty_split_exit_1(capsys, two_splits):
    info_path = two_splits / 'dataset_info.json'
    info = json.loads(info_path.read_text())
    info_path.write_text('{"splits": {')
    status, _, err = run(capsys, 'show', str(two_splits))
    assert status == 1 and f'{info_path} is not valid JSON' in err
    info['splits']['train']['shards'] = []
    info_path.write_text(json.dumps(info))
    status, _, err = run(capsys, 'show', str(two_splits))
    assert status == 1 and 'no record files (the split lists no shards)' in err


def test_help_has_a_description_and_an_example(capsys):
    with pytest.raises(SystemExit):
        cli.main(['show', '--help'])
    out = capsys.readouterr().out
    assert 'contact sheet' in out and 'examples:\n  slimdata show' in out
