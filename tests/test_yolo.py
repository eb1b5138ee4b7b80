"""YOLO text labels -> detection TFRecords (`slimdata convert yolo`).

Small YOLO trees are built in tmp_path: Pillow-written images, and label lines the test writes
from pixel rectangles it chose. Records are read back with TensorFlow's own parser and every
box is compared with the rectangle it came from (pixels / image size), every label with the
class's position in the names the test wrote.
"""

import glob
import json
import os

import numpy as np
import pytest
from PIL import Image

from slimdata import cli
from slimdata._tf import tf
from slimdata.datasets import yolo

NAMES = ('mask', 'no-mask', 'hat')
SIZE = (64, 48)  # width, height


# --- Building YOLO trees ------------------------------------------------------------------------

def write_image(path, size=SIZE, fmt='JPEG', seed=0):
    """A deterministic gradient image of `size` (width, height)."""
    width, height = size
    y, x = np.mgrid[0:height, 0:width]
    base = ((x * 5 + y * 3 + seed * 40) % 256).astype(np.uint8)
    Image.fromarray(np.stack([base, 255 - base, base // 2], axis=-1)).save(path, fmt)


def label_line(class_id, rect, size=SIZE):
    """The YOLO line of a pixel rectangle (x0, y0, x1, y1) in an image of `size`."""
    (x0, y0, x1, y1), (width, height) = rect, size
    return (f'{class_id} {(x0 + x1) / 2 / width:.6f} {(y0 + y1) / 2 / height:.6f} '
            f'{(x1 - x0) / width:.6f} {(y1 - y0) / height:.6f}')


#: stem -> [(class id, pixel rectangle)]; None: no label file at all; []: an empty one.
SCENE = {
    'a': [(0, (4, 6, 20, 30)), (1, (30, 10, 60, 40))],
    'b': [(2, (0, 0, 64, 48))],
    'c': [],
    'd': None,
}


def build_tree(root, layout='roboflow', scene=None, splits=('train', 'valid'), yaml_text=None,
               fmt='JPEG'):
    """A YOLO dataset of `scene` in every split of `layout`; returns {split folder: scene}."""
    scene = SCENE if scene is None else scene
    for split in splits:
        images, labels = ((root / split / 'images', root / split / 'labels')
                          if layout == 'roboflow'
                          else (root / 'images' / split, root / 'labels' / split))
        images.mkdir(parents=True)
        labels.mkdir(parents=True)
        for index, (stem, objects) in enumerate(sorted(scene.items())):
            write_image(images / f'{stem}.{"jpg" if fmt == "JPEG" else "png"}', fmt=fmt,
                        seed=index)
            if objects is not None:
                (labels / f'{stem}.txt').write_text(
                    ''.join(label_line(class_id, rect) + '\n' for class_id, rect in objects))
    if yaml_text is None:
        yaml_text = ('train: ../train/images\nval: ../valid/images\n\nnc: 3\n'
                     f'names: {list(NAMES)!r}\n')
    (root / 'data.yaml').write_text(yaml_text)
    return root


def read_records(out, split):
    """The records of a split, parsed by TensorFlow: filename -> (boxes, labels, texts)."""
    spec = {f'image/object/bbox/{field}': tf.io.VarLenFeature(tf.float32)
            for field in ('ymin', 'xmin', 'ymax', 'xmax')}
    spec['image/object/bbox/label'] = tf.io.VarLenFeature(tf.int64)
    spec['image/object/bbox/label_text'] = tf.io.VarLenFeature(tf.string)
    spec['image/encoded'] = tf.io.FixedLenFeature([], tf.string)
    records = {}
    for serialized in tf.data.TFRecordDataset(sorted(glob.glob(f'{out}/{split}-*.tfrecord'))):
        parsed = tf.io.parse_single_example(serialized, spec)
        dense = {key: tf.sparse.to_dense(value).numpy() for key, value in parsed.items()
                 if isinstance(value, tf.sparse.SparseTensor)}
        boxes = np.stack([dense[f'image/object/bbox/{field}']
                          for field in ('ymin', 'xmin', 'ymax', 'xmax')], axis=-1)
        encoded = parsed['image/encoded'].numpy()
        records[encoded] = (boxes, list(dense['image/object/bbox/label']),
                            [text.decode() for text in dense['image/object/bbox/label_text']])
    return records


def expected_records(root, images_folder, scene, names=NAMES):
    """image bytes -> (boxes, labels, texts), computed from the scene's pixel rectangles."""
    expected = {}
    for stem, objects in scene.items():
        (path,) = glob.glob(str(root / images_folder / f'{stem}.*'))
        with open(path, 'rb') as f:
            data = f.read()
        width, height = Image.open(path).size
        boxes = np.array([(y0 / height, x0 / width, y1 / height, x1 / width)
                          for _, (x0, y0, x1, y1) in objects or []]).reshape(-1, 4)
        expected[data] = (boxes, [class_id + 1 for class_id, _ in objects or []],
                          [names[class_id] for class_id, _ in objects or []])
    return expected


def assert_records_equal(records, expected):
    assert set(records) == set(expected)
    for data, (boxes, labels, texts) in expected.items():
        got_boxes, got_labels, got_texts = records[data]
        np.testing.assert_allclose(got_boxes, boxes, atol=2e-6)
        assert (got_labels, got_texts) == (labels, texts)


# --- Layouts and names ---------------------------------------------------------------------------

def test_roboflow_export_round_trips_through_tensorflows_parser(tmp_path):
    src = build_tree(tmp_path / 'src')
    summaries = yolo.convert_yolo(str(src), str(tmp_path / 'out'))
    assert list(summaries) == ['train', 'val']  # data.yaml's keys; `val` is the valid/ folder
    for split, folder in (('train', 'train/images'), ('val', 'valid/images')):
        assert_records_equal(read_records(tmp_path / 'out', split),
                             expected_records(src, folder, SCENE))
        assert summaries[split].notes[yolo.MISSING_LABEL_FILE] == [
            str(src / folder / 'd.jpg')]
    # Per split: 'a' holds mask and no-mask, 'b' a hat, 'c' and 'd' no object.
    assert summaries['train'].counts == {"objects of class 'mask'": 1,
                                         "objects of class 'no-mask'": 1,
                                         "objects of class 'hat'": 1,
                                         'images without objects': 2}
    info = json.loads((tmp_path / 'out' / 'dataset_info.json').read_text())
    assert info['labels_to_names'] == {'0': 'none', '1': 'mask', '2': 'no-mask', '3': 'hat'}
    assert (tmp_path / 'out' / 'labels.txt').read_text().split() == [
        '0:none', '1:mask', '2:no-mask', '3:hat']


def test_ultralytics_layout_with_a_path_key_and_names_by_id(tmp_path):
    yaml_text = ('path: .\ntrain: images/train\nval: images/val\n'
                 'names:\n  0: mask\n  1: no-mask\n  2: hat\n')
    src = build_tree(tmp_path / 'src', 'ultralytics', splits=('train', 'val'),
                     yaml_text=yaml_text)
    summaries = yolo.convert_yolo(str(src), str(tmp_path / 'out'), ['val'])
    assert list(summaries) == ['val']
    assert_records_equal(read_records(tmp_path / 'out', 'val'),
                         expected_records(src, 'images/val', SCENE))


def test_a_data_yaml_from_elsewhere_with_another_machines_path(tmp_path):
    yaml_text = ('path: /home/someone/datasets/masks\ntrain: images/train\n'
                 f'names: {list(NAMES)!r}\n')
    src = build_tree(tmp_path / 'src', 'ultralytics', splits=('train',), yaml_text='')
    (tmp_path / 'masks.yaml').write_text(yaml_text)
    summaries = yolo.convert_yolo(str(src), str(tmp_path / 'out'),
                                  data_yaml=str(tmp_path / 'masks.yaml'))
    assert list(summaries) == ['train']
    assert_records_equal(read_records(tmp_path / 'out', 'train'),
                         expected_records(src, 'images/train', SCENE))


def test_a_names_file_and_no_split_keys_use_the_folder_names(tmp_path):
    src = build_tree(tmp_path / 'src', splits=('train', 'test'), yaml_text='')
    (src / 'data.yaml').unlink()
    (src / 'train' / 'labels' / 'classes.txt').write_text('\n'.join(NAMES) + '\n')
    summaries = yolo.convert_yolo(str(src), str(tmp_path / 'out'),
                                  names_file=str(src / 'train' / 'labels' / 'classes.txt'))
    assert list(summaries) == ['test', 'train']
    assert_records_equal(read_records(tmp_path / 'out', 'test'),
                         expected_records(src, 'test/images', SCENE))


def test_png_images_and_classes_named_by_the_user(tmp_path):
    src = build_tree(tmp_path / 'src', fmt='PNG', splits=('train',),
                     yaml_text=f'names: {list(NAMES)!r}\n')
    yolo.convert_yolo(str(src), str(tmp_path / 'out'), classes='hat,mask',
                      on_unknown_class='skip')
    records = read_records(tmp_path / 'out', 'train')
    expected = expected_records(src, 'train/images', SCENE)
    # 'no-mask' is not among the classes: its object is left out; the others get the
    # labels of their place in 'hat,mask'.
    a_image = [data for data, value in expected.items() if len(value[1]) == 2][0]
    boxes, labels, texts = records[a_image]
    assert (labels, texts) == ([2], ['mask'])
    np.testing.assert_allclose(boxes, expected[a_image][0][:1], atol=2e-6)


def test_polygon_lines_become_their_extent_and_are_counted(tmp_path):
    src = build_tree(tmp_path / 'src', scene={'a': []}, splits=('train',))
    label = src / 'train' / 'labels' / 'a.txt'
    label.write_text('1 0.25 0.5 0.5 0.25 0.75 0.5 0.5 0.75\n')  # a diamond
    summaries = yolo.convert_yolo(str(src), str(tmp_path / 'out'), ['train'])
    (boxes, labels, _), = read_records(tmp_path / 'out', 'train').values()
    np.testing.assert_allclose(boxes, [[0.25, 0.25, 0.75, 0.75]])
    assert labels == [2]
    assert summaries['train'].notes[yolo.POLYGON_TO_BOX] == [f'{label}:1 (4 points)']


def test_a_box_over_the_edge_is_clipped_and_counted(tmp_path):
    src = build_tree(tmp_path / 'src', scene={'a': []}, splits=('train',))
    (src / 'train' / 'labels' / 'a.txt').write_text('0 0.9 0.5 0.4 0.2\n')
    summaries = yolo.convert_yolo(str(src), str(tmp_path / 'out'), ['train'])
    (boxes, _, _), = read_records(tmp_path / 'out', 'train').values()
    np.testing.assert_allclose(boxes, [[0.4, 0.7, 0.6, 1.0]], atol=2e-6)
    assert sum(len(details) for reason, details in summaries['train'].notes.items()
               if 'clipped' in reason) == 1


def test_a_rerun_reuses_the_shards_byte_for_byte(tmp_path):
    src = build_tree(tmp_path / 'src')
    yolo.convert_yolo(str(src), str(tmp_path / 'out'))
    before = {path: open(path, 'rb').read()
              for path in glob.glob(str(tmp_path / 'out' / '*.tfrecord'))}
    again = yolo.convert_yolo(str(src), str(tmp_path / 'out'))
    assert all(summary.shards_reused == len(summary.shards) for summary in again.values())
    yolo.convert_yolo(str(src), str(tmp_path / 'fresh'))
    for path, data in before.items():
        assert open(tmp_path / 'fresh' / os.path.basename(path), 'rb').read() == data


# --- Errors --------------------------------------------------------------------------------------

@pytest.mark.parametrize('line, message', [
    ('0 0.5 0.5 0.2', '4 fields'),
    ('0 0.5 0.5 0.2 0.2 0.1', '6 fields'),
    ('3 0.5 0.5 0.2 0.2', 'class id 3 has no name; the class ids are 0..2'),
    ('-1 0.5 0.5 0.2 0.2', "class id '-1' is not a non-negative integer"),
    ('1.0 0.5 0.5 0.2 0.2', "class id '1.0' is not a non-negative integer"),
    ('0 0.5 -0.1 0.2 0.2', "'-0.1' is not a finite non-negative number"),
    ('0 0.5 nan 0.2 0.2', "'nan' is not a finite non-negative number"),
    ('0 0.5 0.5 inf 0.2', "'inf' is not a finite non-negative number"),
    ('0 0.5 0.5 0.2 x', "'x' is not a finite non-negative number"),
])
def test_a_bad_label_line_names_the_file_and_line(tmp_path, capsys, line, message):
    src = build_tree(tmp_path / 'src', scene={'a': [(0, (1, 1, 9, 9))]}, splits=('train',),
                     yaml_text=f'names: {list(NAMES)!r}\n')
    label = src / 'train' / 'labels' / 'a.txt'
    label.write_text(label.read_text() + '\n' + line + '\n')
    status = cli.main(['convert', 'yolo', str(src), str(tmp_path / 'out'), '--quiet'])
    errors = [text for text in capsys.readouterr().err.splitlines()
              if text.startswith('slimdata convert yolo: error: ')]
    assert status == 1 and len(errors) == 1, errors
    assert f'{label}:3: ' in errors[0] and message in errors[0], errors[0]
    assert not glob.glob(str(tmp_path / 'out' / '*.tfrecord'))


BILLION_LAUGHS = ('a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
                  + ''.join(f'{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},'
                            f'*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n'
                            for i in range(8))
                  + 'names: *i\n')


@pytest.mark.parametrize('text, message', [
    ('names: !!python/object/apply:os.system ["touch pwned"]\n', "has the tag"),
    ('names: !!str mask\n', 'has the tag'),
    (BILLION_LAUGHS, 'anchors or aliases'),
    ('names: ' + '[' * 100 + ']' * 100 + '\n', 'nests deeper than 32 levels'),
    ('names: [a, b]\nnc: 3\n', 'nc is 3 but names lists 2 classes'),
    ('names: [a, b, a]\n', "classes 0 and 2 are both named 'a'"),
    ('names: {0: a, x: b}\n', "`names` has the key 'x'"),
    ('nc: 2\n', 'has no `names` key'),
    ('names: [a\n', 'is not YAML'),
    ('train: ../nowhere/images\nnames: [a]\n', 'names no split folder that exists'),
    ('train: ../train\nnames: [a]\n', "train: '../train' is "),
    ('train: train.txt\nnames: [a]\n', 'a .txt list of image paths'),
])
def test_a_data_yaml_is_refused_in_one_line_naming_it(tmp_path, capsys, text, message):
    src = build_tree(tmp_path / 'src', scene={'a': []}, splits=('train',), yaml_text=text)
    status = cli.main(['convert', 'yolo', str(src), str(tmp_path / 'out'), '--quiet'])
    errors = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert status == 1 and len(errors) == 1, errors
    assert str(src / 'data.yaml') in errors[0] and message in errors[0], errors[0]
    assert not (tmp_path / 'pwned').exists() and not os.path.exists('pwned')


def test_a_label_file_over_the_bound_or_not_text_is_refused_naming_it(tmp_path, monkeypatch):
    src = build_tree(tmp_path / 'src', scene={'a': [(0, (1, 1, 9, 9))]}, splits=('train',))
    label = src / 'train' / 'labels' / 'a.txt'
    monkeypatch.setattr(yolo, 'MAX_LABEL_BYTES', 10)
    with pytest.raises(ValueError, match=f'{label}.*over the limit of 10 bytes'):
        yolo.convert_yolo(str(src), str(tmp_path / 'out'))
    monkeypatch.undo()
    label.write_bytes(b'0 0.5 0.5 0.1 0.1\n\xff\xfe\n')
    with pytest.raises(ValueError, match=f'{label} is not a YOLO label file.*not UTF-8'):
        yolo.convert_yolo(str(src), str(tmp_path / 'out2'))


def test_a_huge_data_yaml_is_refused_before_it_is_parsed(tmp_path):
    src = build_tree(tmp_path / 'src', scene={'a': []}, splits=('train',),
                     yaml_text='names: [a]\n' + '#' * yolo.MAX_YAML_BYTES)
    with pytest.raises(ValueError, match=f'{src / "data.yaml"}.*refused'):
        yolo.convert_yolo(str(src), str(tmp_path / 'out'))


def test_no_class_names_says_how_to_give_them(tmp_path):
    src = build_tree(tmp_path / 'src', scene={'a': []}, splits=('train',))
    (src / 'data.yaml').unlink()
    with pytest.raises(ValueError, match='--data FILE.*--names FILE'):
        yolo.convert_yolo(str(src), str(tmp_path / 'out'))


def test_a_folder_of_neither_layout_names_both(tmp_path):
    (tmp_path / 'src').mkdir()
    (tmp_path / 'src' / 'data.yaml').write_text('names: [a]\n')
    with pytest.raises(ValueError, match='<split>/images/.*images/<split>/'):
        yolo.convert_yolo(str(tmp_path / 'src'), str(tmp_path / 'out'))


def test_a_split_without_any_label_file_is_an_error_naming_the_folder(tmp_path):
    src = build_tree(tmp_path / 'src', scene={'a': None, 'b': None}, splits=('train',))
    with pytest.raises(ValueError, match=f"{src / 'train' / 'labels'} holds no label file for "
                                         'any of the 2 images'):
        yolo.convert_yolo(str(src), str(tmp_path / 'out'))


def test_an_image_of_another_format_is_an_error_naming_it(tmp_path):
    src = build_tree(tmp_path / 'src', scene={'a': []}, splits=('train',))
    write_image(src / 'train' / 'images' / 'b.bmp', fmt='BMP')
    with pytest.raises(ValueError, match=str(src / 'train' / 'images' / 'b.bmp')):
        yolo.convert_yolo(str(src), str(tmp_path / 'out'), ['train'])


def test_skip_non_images_leaves_them_out_and_counts_them(tmp_path):
    src = build_tree(tmp_path / 'src', scene={'a': [(0, (1, 2, 30, 40))]}, splits=('train',))
    bmp = src / 'train' / 'images' / 'b.bmp'
    write_image(bmp, fmt='BMP')
    summaries = yolo.convert_yolo(str(src), str(tmp_path / 'out'), ['train'],
                                  on_non_image='skip')
    assert summaries['train'].num_records == 1
    assert summaries['train'].skipped == {'not a JPEG or PNG image': [str(bmp)]}


def test_the_command_line_converts_and_reports(tmp_path, capsys):
    src = build_tree(tmp_path / 'src')
    (src / 'valid' / 'labels' / 'orphan.txt').write_text('0 0.5 0.5 0.1 0.1\n')
    (src / 'valid' / 'images' / 'more').mkdir()
    (src / 'valid' / 'images' / 'notes.md').write_text('not an image')
    status = cli.main(['convert', 'yolo', str(src), str(tmp_path / 'out'), '--split', 'val',
                       '--layout', 'od-api'])
    err = capsys.readouterr().err
    assert status == 0, err
    assert 'roboflow layout' in err and "3 class names from" in err
    assert '1 without a label file' in err
    assert ('not converted: 2 files without an image extension, and folders, e.g. '
            f"{src / 'valid' / 'images' / 'more'}, {src / 'valid' / 'images' / 'notes.md'}"
            in err)
    assert ('not converted: 1 label files without an image, e.g. '
            f"{src / 'valid' / 'labels' / 'orphan.txt'}" in err)
    assert (tmp_path / 'out' / 'label_map.pbtxt').exists()
    spec = {'image/object/class/text': tf.io.VarLenFeature(tf.string),
            'image/object/class/label': tf.io.VarLenFeature(tf.int64)}
    texts = sorted(
        text.decode()
        for serialized in tf.data.TFRecordDataset(glob.glob(str(tmp_path / 'out' / '*.tfrecord')))
        for text in tf.sparse.to_dense(
            tf.io.parse_single_example(serialized, spec)['image/object/class/text']).numpy())
    assert texts == ['hat', 'mask', 'no-mask']
