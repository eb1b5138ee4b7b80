"""Synthetic source trees (slimdata.datasets.synthetic).

Each tree is written small, checked file by file (layout, PNG modes, the VOC palette, XML
boxes against the pixels), converted by the real converter with its strictest options, and
read back through dataset_factory.get_dataset and DatasetDataProvider in graph mode; every
value read back is compared with what the test computes from the source files itself.
"""

import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest
from PIL import Image

from conftest import drain
from slimdata.dataset_data_provider import DatasetDataProvider
from slimdata.datasets import classification, dataset_factory, pascalvoc, segmentation, synthetic

TINY_VOC = dict(num_images=6, image_size=(80, 60), max_objects=4)
TINY_SEG = dict(num_images=4, image_size=(64, 48), num_classes=4, max_objects=3,
                splits={'train': 0.5, 'val': 0.5})
TINY_FOLDER = dict(num_classes=3, images_per_class=4, image_size=16)

#: Colours of VOC's devkit colour map, as published (not computed).
VOC_PALETTE_ENTRIES = {0: (0, 0, 0), 1: (128, 0, 0), 2: (0, 128, 0), 3: (128, 128, 0),
                       15: (192, 128, 128), 255: (224, 224, 192)}


def tree_bytes(root):
    """relative path -> bytes of every file under `root`."""
    files = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, 'rb') as f:
                files[os.path.relpath(path, root)] = f.read()
    return files


def read_split(dataset_name, split, dataset_dir, items):
    """Every example of a converted split, in shard order, as dicts (needs the graph fixture)."""
    dataset = dataset_factory.get_dataset(dataset_name, split, dataset_dir)
    provider = DatasetDataProvider(dataset, shuffle=False, num_epochs=1)
    return [dict(zip(items, values)) for values in drain(provider.get(items))]


def read_list(path):
    with open(path) as f:
        return f.read().split()


def parse_annotation(path):
    """(width, height, [(name, truncated, difficult, (xmin, ymin, xmax, ymax))]) of a VOC XML."""
    root = ElementTree.parse(path).getroot()
    size = root.find('size')
    objects = []
    for element in root.findall('object'):
        bndbox = element.find('bndbox')
        objects.append((element.findtext('name'), int(element.findtext('truncated')),
                        int(element.findtext('difficult')),
                        tuple(int(bndbox.findtext(k)) for k in ('xmin', 'ymin', 'xmax', 'ymax'))))
    return int(size.findtext('width')), int(size.findtext('height')), objects


def nearest_style(colour):
    """The ObjectStyle whose colour is nearest to `colour` (RGB)."""
    distances = [np.linalg.norm(np.subtract(style.colour, colour, dtype=float))
                 for style in synthetic.OBJECT_STYLES]
    return synthetic.OBJECT_STYLES[int(np.argmin(distances))]


# --- Generation alone -----------------------------------------------------------------------

def test_importing_synthetic_does_not_import_tensorflow():
    code = ('import sys, slimdata.datasets.synthetic; '
            'assert "tensorflow" not in sys.modules, "tensorflow was imported"')
    subprocess.run([sys.executable, '-c', code], check=True)


@pytest.mark.parametrize('generate, kwargs', [
    (synthetic.make_image_folder, TINY_FOLDER),
    (synthetic.make_voc_tree, TINY_VOC),
    (synthetic.make_voc_seg_tree, TINY_SEG),
])
def test_same_arguments_write_identical_bytes(tmp_path, generate, kwargs):
    def written(name, **seed):
        generate(str(tmp_path / name), **kwargs, **seed)
        return tree_bytes(tmp_path / name)

    first, second, other_seed = written('a'), written('b'), written('c', seed=1)
    assert first and first == second
    assert other_seed.keys() == first.keys()
    image_names = [name for name in first if name.endswith(('.png', '.jpg'))]
    assert all(other_seed[name] != first[name] for name in image_names)


def test_more_images_keep_the_first_ones(tmp_path):
    few = synthetic.make_voc_tree(str(tmp_path / 'few'), num_images=2, image_size=(40, 30),
                                  splits={'trainval': 1.0})
    more = synthetic.make_voc_tree(str(tmp_path / 'more'), num_images=3, image_size=(40, 30),
                                   splits={'trainval': 1.0})
    for name in ('JPEGImages/000002.jpg', 'Annotations/000002.xml'):
        with open(os.path.join(few, name), 'rb') as a, open(os.path.join(more, name), 'rb') as b:
            assert a.read() == b.read()


def test_image_folder_layout(tmp_path):
    names = synthetic.make_image_folder(str(tmp_path), **TINY_FOLDER)
    assert names == sorted(synthetic.IMAGE_FOLDER_PATTERNS[:3])
    assert sorted(os.listdir(tmp_path)) == names
    for name in names:
        files = sorted(os.listdir(tmp_path / name))
        assert files == [f'{name}_{i:04d}.png' for i in range(4)]
        for file_name in files:
            with Image.open(tmp_path / name / file_name) as image:
                assert (image.format, image.mode, image.size) == ('PNG', 'L', (16, 16))
                pixels = np.asarray(image)
            assert pixels.std() > 10  # a pattern on a background, not a flat image


def test_image_folder_classes_differ_in_their_pattern(tmp_path):
    # The mean image of a class is its pattern (offsets and noise average out): the classes'
    # mean images must be far apart, which is what makes them learnable.
    names = synthetic.make_image_folder(str(tmp_path), num_classes=4, images_per_class=20,
                                        image_size=28)
    means = {name: np.mean([np.asarray(Image.open(tmp_path / name / file), np.float64)
                            for file in os.listdir(tmp_path / name)], axis=0)
             for name in names}
    for a in names:
        for b in names:
            if a < b:
                assert np.abs(means[a] - means[b]).mean() > 15, (a, b)


def test_voc_tree_layout_and_annotations(tmp_path):
    voc = synthetic.make_voc_tree(str(tmp_path), year='2012', num_images=40,
                                  image_size=(64, 48), max_objects=4)
    assert voc == str(tmp_path / 'VOC2012')
    ids = [f'{i:06d}' for i in range(1, 41)]
    lists = os.path.join(voc, 'ImageSets', 'Main')
    train, val = read_list(os.path.join(lists, 'train.txt')), read_list(
        os.path.join(lists, 'val.txt'))
    assert (len(train), len(val)) == (30, 10)
    assert train == sorted(train) and val == sorted(val) and not set(train) & set(val)
    assert read_list(os.path.join(lists, 'trainval.txt')) == ids
    flags = {'truncated': 0, 'difficult': 0}
    style_of = {style.name: style for style in synthetic.OBJECT_STYLES}
    for image_id in ids:
        with Image.open(os.path.join(voc, 'JPEGImages', f'{image_id}.jpg')) as image:
            assert (image.format, image.mode) == ('JPEG', 'RGB')
            pixels = np.asarray(image, np.float64)
        width, height, objects = parse_annotation(os.path.join(voc, 'Annotations',
                                                               f'{image_id}.xml'))
        assert (width, height) == (64, 48) == (pixels.shape[1], pixels.shape[0])
        assert 1 <= len(objects) <= 4
        for name, truncated, difficult, (xmin, ymin, xmax, ymax) in objects:
            assert name in style_of
            assert 1 <= xmin <= xmax <= width and 1 <= ymin <= ymax <= height
            if truncated:
                assert xmin == 1 or ymin == 1 or xmax == width or ymax == height
            flags['truncated'] += truncated
            flags['difficult'] += difficult
        for index, (name, _, difficult, (xmin, ymin, xmax, ymax)) in enumerate(objects):
            centre_x, centre_y = (xmin + xmax) // 2 - 1, (ymin + ymax) // 2 - 1
            covered = any(o[3][0] - 1 <= centre_x <= o[3][2] - 1 and
                          o[3][1] - 1 <= centre_y <= o[3][3] - 1
                          for k, o in enumerate(objects) if k != index)
            if difficult or covered or min(xmax - xmin, ymax - ymin) < 6:
                continue  # tiny, or maybe hidden: JPEG colour of a few pixels is unreliable
            colour = pixels[centre_y - 1:centre_y + 2, centre_x - 1:centre_x + 2].mean((0, 1))
            assert nearest_style(colour) is style_of[name], (image_id, name, colour)
    assert flags['truncated'] > 0 and flags['difficult'] > 0


def test_voc_seg_tree_layout_and_labels(tmp_path):
    voc = synthetic.make_voc_seg_tree(str(tmp_path), **TINY_SEG)
    assert voc == str(tmp_path / 'VOC2012')
    lists = os.path.join(voc, 'ImageSets', 'Segmentation')
    ids = read_list(os.path.join(lists, 'trainval.txt'))
    assert len(ids) == 4
    assert sorted(read_list(os.path.join(lists, 'train.txt')) +
                  read_list(os.path.join(lists, 'val.txt'))) == ids
    for image_id in ids:
        with Image.open(os.path.join(voc, 'SegmentationClass', f'{image_id}.png')) as label:
            assert label.mode == 'P' and label.size == (64, 48)
            palette = np.array(label.getpalette()).reshape(-1, 3)
            indices = np.asarray(label)
        for index, colour in VOC_PALETTE_ENTRIES.items():
            assert tuple(palette[index]) == colour
        assert set(np.unique(indices)) <= {0, 1, 2, 3, 255}
        assert (indices == 255).any() and (indices == 0).any()
        # As in VOC, a void band separates every two different classes: no two 4-neighbours
        # hold different non-void labels.
        for a, b in ((indices[1:], indices[:-1]), (indices[:, 1:], indices[:, :-1])):
            assert not ((a != b) & (a != 255) & (b != 255)).any()
        with Image.open(os.path.join(voc, 'JPEGImages', f'{image_id}.jpg')) as image:
            pixels = np.asarray(image, np.float64)
        for label_value in set(np.unique(indices)) - {0, 255}:
            colour = pixels[indices == label_value].mean(axis=0)
            assert nearest_style(colour).label == label_value


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match='shares adding up to 1'):
        synthetic.make_voc_tree(str(tmp_path / 'a'), splits={'train': 0.5, 'val': 0.2})
    with pytest.raises(ValueError, match="split 'val' gets no image"):
        synthetic.make_voc_tree(str(tmp_path / 'b'), num_images=2, image_size=(32, 32),
                                splits={'train': 0.9, 'val': 0.1})
    with pytest.raises(ValueError, match='num_classes must be 2 to 9'):
        synthetic.make_image_folder(str(tmp_path / 'c'), num_classes=10)
    with pytest.raises(ValueError, match='num_classes must be 2 to 21'):
        synthetic.make_voc_seg_tree(str(tmp_path / 'd'), num_classes=1)
    with pytest.raises(ValueError, match="year must be one of"):
        synthetic.make_voc_tree(str(tmp_path / 'e'), year='2010')
    (tmp_path / 'f' / 'VOC2007').mkdir(parents=True)
    (tmp_path / 'f' / 'VOC2007' / 'old.txt').write_text('stale')
    with pytest.raises(ValueError, match='not empty'):
        synthetic.make_voc_tree(str(tmp_path / 'f'))


# --- Converting and reading back ------------------------------------------------------------

def test_image_folder_converts_and_reads_back(tmp_path, graph):
    src, out = tmp_path / 'src', str(tmp_path / 'out')
    names = synthetic.make_image_folder(str(src), **TINY_FOLDER)
    class_of_pixels = {}
    for name in names:
        for file_name in os.listdir(src / name):
            class_of_pixels[np.asarray(Image.open(src / name / file_name)).tobytes()] = name
    summaries = classification.convert_image_folder(str(src), out, validation_ratio=0.25,
                                                    num_shards=1)
    assert all(not s.skipped and not s.notes for s in summaries.values())
    seen = []
    for split in ('train', 'validation'):
        for record in read_split('image_folder', split, out, ['image', 'label']):
            pixels = record['image'][..., 0].tobytes()  # grayscale, decoded to 3 channels
            assert names[record['label']] == class_of_pixels[pixels]
            seen.append(pixels)
    assert sorted(seen) == sorted(class_of_pixels)


def test_voc_tree_converts_and_reads_back(tmp_path, graph):
    voc = synthetic.make_voc_tree(str(tmp_path / 'VOCdevkit'), **TINY_VOC)
    out = str(tmp_path / 'out')
    summaries = pascalvoc.convert_voc(str(tmp_path / 'VOCdevkit'), out, '2007', ['train', 'val'],
                                      num_shards=1, seed=None, on_bad_box='error')
    assert sorted(summaries) == ['train', 'val']
    for summary in summaries.values():
        assert not summary.notes and not summary.skipped
    ids = read_list(os.path.join(voc, 'ImageSets', 'Main', 'train.txt'))
    items = ['shape', 'object/bbox', 'object/label', 'object/difficult', 'object/truncated']
    records = read_split('pascalvoc_2007', 'train', out, items)
    assert len(records) == len(ids)
    for image_id, record in zip(ids, records):  # seed=None, one shard: the list's order
        with Image.open(os.path.join(voc, 'JPEGImages', f'{image_id}.jpg')) as image:
            width, height = image.size
        _, _, objects = parse_annotation(os.path.join(voc, 'Annotations', f'{image_id}.xml'))
        expected_boxes = [((ymin - 1) / height, (xmin - 1) / width, (ymax - 1) / height,
                           (xmax - 1) / width) for _, _, _, (xmin, ymin, xmax, ymax) in objects]
        assert record['shape'].tolist() == [height, width, 3]
        np.testing.assert_allclose(record['object/bbox'], expected_boxes, atol=1e-6)
        assert record['object/label'].tolist() == [pascalvoc.CLASS_NAMES.index(o[0])
                                                   for o in objects]
        assert record['object/truncated'].tolist() == [o[1] for o in objects]
        assert record['object/difficult'].tolist() == [o[2] for o in objects]


def test_voc_seg_tree_converts_and_reads_back(tmp_path, graph):
    voc = synthetic.make_voc_seg_tree(str(tmp_path), **TINY_SEG)
    out = str(tmp_path / 'out')
    summary = segmentation.convert_voc_seg(voc, out, 'train', num_classes=4,
                                           num_shards=1)['train']
    assert not summary.notes and not summary.skipped
    ids = read_list(os.path.join(voc, 'ImageSets', 'Segmentation', 'train.txt'))
    records = read_split('pascal_voc_seg', 'train', out, ['image_name', 'labels_class'])
    assert sorted(r['image_name'].decode() for r in records) == ids
    for record in records:
        path = os.path.join(voc, 'SegmentationClass', f'{record["image_name"].decode()}.png')
        np.testing.assert_array_equal(record['labels_class'][..., 0],
                                      np.asarray(Image.open(path)))
