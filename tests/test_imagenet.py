"""ImageNet: `slimdata convert imagenet` on a small ILSVRC-2012 tree, and the descriptor.

The tree is made here in the published layout (synset folders, a flat validation folder with
its synset labels file, the synsets and metadata files, VOC-style bounding-box XMLs), with a
PNG, a CMYK JPEG and a grey JPEG among the training images as in the real set. Expected
values are computed here from what the tree was made of: labels from the synsets file's line
numbers, boxes divided by the XML's size, image bytes compared with the source files. Records
written by TensorFlow's own writer in build_imagenet_data.py's layout are read through the
factory too.
"""

import io
import json
import logging
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from slimdata._tf import tf
from slimdata.datasets import dataset_factory, imagenet
from slimdata.records import example_schema, tfrecord
from test_classification import read_all
from test_compat import _bytes, _float, _int64

# Listed out of alphabetical order, so a label taken from a sorted listing would be wrong.
SYNSETS = ['n01484850', 'n01440764', 'n01443537']
TEXTS = {'n01440764': 'tench, Tinca tinca', 'n01443537': 'goldfish, Carassius auratus',
         'n01484850': 'great white shark, white shark, man-eater',
         'n09999999': 'a synset of ImageNet-21k, not of ILSVRC'}
ITEMS = ('image', 'label', 'label_text', 'synset', 'object/bbox', 'object/label')


def _pixels(seed, height, width):
    rng = np.random.default_rng(seed)
    gradient = np.linspace(0, 200, width)[None, :, None] + np.linspace(0, 55, height)[:, None,
                                                                                        None]
    return np.clip(gradient + rng.integers(0, 8, (height, width, 3)), 0, 255).astype(np.uint8)


def _encode(pixels, kind):
    buffer = io.BytesIO()
    image = Image.fromarray(pixels)
    if kind == 'png':
        image.save(buffer, 'PNG')
    elif kind == 'cmyk':
        image.convert('CMYK').save(buffer, 'JPEG', quality=95)
    elif kind == 'grey':
        image.convert('L').save(buffer, 'JPEG', quality=95)
    else:
        image.save(buffer, 'JPEG', quality=95)
    return buffer.getvalue()


def _box_xml(size, objects):
    width, height = size
    body = ''.join(
        f'<object><name>{name}</name><bndbox><xmin>{xmin}</xmin><ymin>{ymin}</ymin>'
        f'<xmax>{xmax}</xmax><ymax>{ymax}</ymax></bndbox></object>'
        for name, (xmin, ymin, xmax, ymax) in objects)
    return (f'<annotation><filename>x</filename><size><width>{width}</width><height>{height}'
            f'</height><depth>3</depth></size>{body}</annotation>')


def make_ilsvrc(root, validation_layout='flat'):
    """An ILSVRC-2012 tree under `root`; returns {file name: what its record must hold}."""
    expected = {}
    kinds = {('n01440764', 1): 'png', ('n01443537', 0): 'cmyk', ('n01484850', 1): 'grey'}
    for synset_index, synset in enumerate(sorted(SYNSETS)):
        folder = root / 'train' / synset
        folder.mkdir(parents=True)
        for index in range(2):
            kind = kinds.get((synset, index), 'jpeg')
            name = f'{synset}_{index}.{"PNG" if kind == "png" else "JPEG"}'
            height, width = 40 + 8 * synset_index, 56 + 4 * index
            data = _encode(_pixels(hash(name) % 1000, height, width), kind)
            (folder / name).write_bytes(data)
            expected[name] = {'split': 'train', 'synset': synset, 'data': data,
                              'size': (height, width), 'boxes': [],
                              'format': b'PNG' if kind == 'png' else b'JPEG'}
    for index, synset in enumerate(['n01443537', 'n01484850', 'n01440764', 'n01443537'], 1):
        name = f'ILSVRC2012_val_{index:08d}.JPEG'
        data = _encode(_pixels(100 + index, 48, 64), 'jpeg')
        folder = root / 'validation' / (synset if validation_layout == 'folders' else '')
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
        expected[name] = {'split': 'validation', 'synset': synset, 'data': data,
                          'size': (48, 64), 'boxes': [], 'format': b'JPEG'}
    if validation_layout == 'flat':
        (root / imagenet.VALIDATION_LABELS_FILENAME).write_text(
            ''.join(expected[f'ILSVRC2012_val_{i:08d}.JPEG']['synset'] + '\n'
                    for i in range(1, 5)))
    (root / imagenet.SYNSETS_FILENAME).write_text('\n'.join(SYNSETS) + '\n')
    (root / imagenet.METADATA_FILENAME).write_text(
        ''.join(f'{synset}\t{text}\n' for synset, text in TEXTS.items()))
    return expected


def add_boxes(root, expected):
    """Bounding-box XMLs in the ILSVRC layout (a folder per synset; validation flat), in a
    frame twice the image's size; records the boxes each record must hold."""
    boxes_dir = root / 'bboxes'
    plans = {
        # file name: [(object name, pixel box xmin, ymin, xmax, ymax)], in the XML's frame
        'n01440764_0.JPEG': [('n01440764', (10, 20, 90, 60)),
                             ('n01443537', (0, 0, 5, 5)),        # another synset: dropped
                             ('n01440764', (100, 30, 130, 95))], # crosses the right edge
        'n01443537_1.JPEG': [('n01443537', (0, 0, 120, 80))],
        'ILSVRC2012_val_00000002.JPEG': [('n01484850', (32, 16, 96, 64))],
    }
    for name, objects in plans.items():
        record = expected[name]
        height, width = record['size']
        frame = (2 * width, 2 * height)
        folder = boxes_dir / (record['synset'] if record['split'] == 'train' else 'val')
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name.replace('.JPEG', '.xml')).write_text(_box_xml(frame, objects))
        for object_name, (xmin, ymin, xmax, ymax) in objects:
            if object_name == record['synset']:
                box = [ymin / frame[1], xmin / frame[0], ymax / frame[1], xmax / frame[0]]
                record['boxes'].append([min(max(v, 0.0), 1.0) for v in box])
    return boxes_dir


def parse_records(out, split):
    """file name -> its features, read without TensorFlow."""
    records = {}
    for shard in sorted(out.glob(f'{split}-*.tfrecord')):
        for record in tfrecord.iter_records(str(shard)):
            features = {key: values for key, (_, values)
                        in example_schema.parse_example(record).items()}
            records[features['image/filename'][0].decode()] = features
    return records


def _label(synset):
    return SYNSETS.index(synset) + 1


@pytest.fixture(scope='module')
def converted(tmp_path_factory):
    root = tmp_path_factory.mktemp('imagenet')
    expected = make_ilsvrc(root / 'src')
    boxes_dir = add_boxes(root / 'src', expected)
    summaries = imagenet.convert_imagenet(str(root / 'src'), str(root / 'out'),
                                          bounding_boxes=str(boxes_dir), num_shards=2)
    return root / 'out', expected, summaries


def test_records_hold_the_source_files_labels_texts_and_boxes(converted):
    out, expected, summaries = converted
    assert {split: s.num_records for split, s in summaries.items()} == {'train': 6,
                                                                       'validation': 4}
    records = {**parse_records(out, 'train'), **parse_records(out, 'validation')}
    assert sorted(records) == sorted(expected)
    for name, want in expected.items():
        got = records[name]
        assert got['image/encoded'] == [want['data']], name  # the file's bytes, unchanged
        assert got['image/format'] == [want['format']]
        assert (got['image/height'][0], got['image/width'][0]) == want['size']
        assert got['image/class/label'] == [_label(want['synset'])]
        assert got['image/class/synset'] == [want['synset'].encode()]
        assert got['image/class/text'] == [TEXTS[want['synset']].encode()]
        assert got['image/colorspace'] == [b'RGB'] and got['image/channels'] == [3]
        boxes = np.stack([got[f'image/object/bbox/{f}'] for f in ('ymin', 'xmin', 'ymax',
                                                                   'xmax')], axis=-1)
        np.testing.assert_allclose(boxes.reshape(-1, 4), np.reshape(want['boxes'], (-1, 4)),
                                   atol=1e-6, err_msg=name)
        assert got['image/object/bbox/label'] == [_label(want['synset'])] * len(want['boxes'])
    notes = summaries['train'].notes
    assert ['n01443537' in detail for detail in
            notes["box of another synset than the image's dropped"]] == [True]
    assert len(notes['box clipped to the image']) == 1
    assert "XML <size> differs from the image (boxes normalised by the XML's)" in notes


def test_labels_and_dataset_info(converted):
    out, _, _ = converted
    labels = (out / 'labels.txt').read_text().splitlines()
    assert labels == ['0:background'] + [f'{i}:{TEXTS[s]}' for i, s in enumerate(SYNSETS, 1)]
    info = json.loads((out / 'dataset_info.json').read_text())
    assert info['extra']['num_classes'] == len(SYNSETS) + 1
    assert {split: entry['num_examples'] for split, entry in info['splits'].items()} == {
        'train': 6, 'validation': 4}


def test_the_descriptor_decodes_every_item(converted):
    out, expected, _ = converted
    for split in ('train', 'validation'):
        dataset = dataset_factory.get_dataset('imagenet', split, str(out))
        assert dataset.num_classes == len(SYNSETS) + 1
        assert dataset.labels_to_names[0] == 'background'
        examples = read_all(dataset, ITEMS)
        assert len(examples) == dataset.num_samples
        for example in examples:
            # The record whose source pixels are nearest (two validation images share a
            # synset and a size).
            name = min((name for name, want in expected.items() if want['split'] == split),
                       key=lambda name: _distance(example['image'], expected[name]['data']))
            want = expected[name]
            source = _decoded(want['data'])
            # TensorFlow's and Pillow's JPEG decoders round differently; the PNG is exact.
            tolerance = 0 if want['format'] == b'PNG' else 12
            assert np.abs(example['image'].astype(int) - source).max() <= tolerance, name
            assert example['synset'] == want['synset'].encode()
            assert example['label'] == _label(want['synset'])
            assert example['label_text'] == TEXTS[want['synset']].encode()
            np.testing.assert_allclose(example['object/bbox'],
                                       np.reshape(want['boxes'], (-1, 4)), atol=1e-6)
            # slim's key image/object/class/label is absent: the backup key gives the labels.
            assert list(example['object/label']) == [_label(want['synset'])] * len(
                want['boxes'])


def _decoded(data):
    return np.asarray(Image.open(io.BytesIO(data)).convert('RGB')).astype(int)


def _distance(pixels, data):
    source = _decoded(data)
    return np.abs(pixels - source).mean() if pixels.shape == source.shape else np.inf


def test_records_of_build_imagenet_data_are_read_through_the_factory(tmp_path, caplog):
    """Shards named and laid out as build_imagenet_data.py writes them (no extension, no
    dataset_info.json), written by TensorFlow's own writer."""
    jpeg = _encode(_pixels(7, 30, 20), 'jpeg')
    for shard, labels in enumerate([[5, 9], [1000]]):
        with tf.io.TFRecordWriter(str(tmp_path / f'validation-{shard:05d}-of-00002')) as writer:
            for label in labels:
                writer.write(_build_imagenet_data_example(jpeg, label).SerializeToString())
    with caplog.at_level(logging.WARNING, logger='slimdata'):
        dataset = dataset_factory.get_dataset('imagenet', 'validation', str(tmp_path))
    assert 'no labels.txt' in caplog.text and 'write_labels_file' in caplog.text
    assert dataset.num_samples == 50000 and dataset.num_classes == 1001
    assert dataset.labels_to_names == {}
    dataset.num_samples = 3  # the provider checks an epoch's count against it
    examples = read_all(dataset, ('image', 'label', 'object/bbox', 'object/label'))
    assert sorted(int(e['label']) for e in examples) == [5, 9, 1000]
    for example in examples:
        assert example['image'].shape == (30, 20, 3)
        np.testing.assert_allclose(example['object/bbox'], [[0.1, 0.2, 0.5, 0.6]], atol=1e-6)
        assert list(example['object/label']) == [example['label']]

    synsets, metadata = tmp_path / 'synsets.txt', tmp_path / 'metadata.txt'
    synsets.write_text('\n'.join(SYNSETS) + '\n')
    metadata.write_text(''.join(f'{s}\t{t}\n' for s, t in TEXTS.items()))
    imagenet.write_labels_file(str(tmp_path), str(synsets), str(metadata))
    dataset = dataset_factory.get_dataset('imagenet', 'validation', str(tmp_path))
    assert dataset.labels_to_names == {0: 'background', 1: TEXTS['n01484850'],
                                       2: TEXTS['n01440764'], 3: TEXTS['n01443537']}


def _build_imagenet_data_example(jpeg, label):
    return tf.train.Example(features=tf.train.Features(feature={
        'image/height': _int64([30]), 'image/width': _int64([20]),
        'image/colorspace': _bytes([b'RGB']), 'image/channels': _int64([3]),
        'image/class/label': _int64([label]), 'image/class/synset': _bytes([b'n00000001']),
        'image/class/text': _bytes([b'some text']),
        'image/object/bbox/xmin': _float([0.2]), 'image/object/bbox/xmax': _float([0.6]),
        'image/object/bbox/ymin': _float([0.1]), 'image/object/bbox/ymax': _float([0.5]),
        'image/object/bbox/label': _int64([label]), 'image/format': _bytes([b'JPEG']),
        'image/filename': _bytes([b'x.JPEG']), 'image/encoded': _bytes([jpeg])}))


def test_validation_in_synset_folders_and_the_same_bytes_with_two_processes(tmp_path):
    """The layout preprocess_imagenet_validation_data.py leaves; no synsets file (the sorted
    train folders give the labels) and no metadata (the text is the synset)."""
    expected = make_ilsvrc(tmp_path / 'src', validation_layout='folders')
    (tmp_path / 'src' / imagenet.SYNSETS_FILENAME).unlink()
    (tmp_path / 'src' / imagenet.METADATA_FILENAME).unlink()
    for processes in (1, 2):
        imagenet.convert_imagenet(str(tmp_path / 'src'), str(tmp_path / f'out{processes}'),
                                  num_shards=3, processes=processes)
    records = parse_records(tmp_path / 'out1', 'validation')
    assert sorted(records) == sorted(n for n, w in expected.items() if w['split'] == 'validation')
    for name, features in records.items():
        synset = expected[name]['synset']
        assert features['image/class/label'] == [sorted(SYNSETS).index(synset) + 1]
        assert features['image/class/text'] == [synset.encode()]
    shards = sorted(path.name for path in (tmp_path / 'out1').glob('*.tfrecord'))
    assert len(shards) == 6
    for name in shards:
        assert (tmp_path / 'out1' / name).read_bytes() == (tmp_path / 'out2' / name).read_bytes()


def test_the_command_line_converts_and_verify_decodes_every_image(tmp_path):
    expected = make_ilsvrc(tmp_path / 'src')
    boxes_dir = add_boxes(tmp_path / 'src', expected)
    out = tmp_path / 'out'
    run = subprocess.run([sys.executable, '-m', 'slimdata', 'convert', 'imagenet',
                          str(tmp_path / 'src'), str(out), '--bounding-boxes', str(boxes_dir),
                          '--shards', '2'],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert 'train: 6 records in 2 shards' in run.stdout
    assert 'box clipped to the image: 1' in run.stdout
    assert f'next: slimdata verify {out}' in run.stdout
    verify = subprocess.run([sys.executable, '-m', 'slimdata', 'verify', '--decode', str(out)],
                            capture_output=True, text=True, timeout=300)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert '10 images decoded' in verify.stdout  # the PNG, CMYK and grey JPEGs too


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize('damage, message', [
    (lambda src: (src / 'train' / 'n02000000').mkdir(),
     r'train/n02000000 is not a synset of .*imagenet_lsvrc_2015_synsets.txt'),
    (lambda src: _write(src / 'train' / 'README', 'hi'),
     r'train holds synset folders and also files \(README'),
    (lambda src: _write(src / 'train' / 'n01440764' / 'notes.txt', 'hi'),
     r'n01440764/notes.txt is not a JPEG or PNG image'),
    (lambda src: _write(src / imagenet.VALIDATION_LABELS_FILENAME, 'n01440764\n' * 3),
     r'imagenet_2012_validation_synset_labels.txt has 3 labels but .*validation holds 4 '
     r'images'),
    (lambda src: _write(src / imagenet.VALIDATION_LABELS_FILENAME,
                        'n01440764\nn01440764\nn09999999\nn01440764\n'),
     r"synset_labels.txt line 3: 'n09999999' is not a synset of"),
    (lambda src: (src / imagenet.VALIDATION_LABELS_FILENAME).unlink(),
     r'their labels come from .*synset_labels.txt, which does not exist'),
    (lambda src: _write(src / imagenet.SYNSETS_FILENAME, 'n01440764\nn01443537\nn01440764\n'),
     r'synsets.txt line 3: n01440764 is listed twice \(first on line 1\)'),
    (lambda src: _write(src / imagenet.SYNSETS_FILENAME,
                        'n01440764\n\nn01443537\nn01440764\n'),  # blank lines count
     r'synsets.txt line 4: n01440764 is listed twice \(first on line 1\)'),
    (lambda src: _write(src / imagenet.METADATA_FILENAME, 'n01440764\ttench\n'),
     r'imagenet_metadata.txt has no text for 2 synset\(s\), e.g. n01484850, n01443537'),
    (lambda src: _write(src / imagenet.METADATA_FILENAME, 'n01440764 tench\n'),
     r'imagenet_metadata.txt line 1: .* is not "<synset><TAB><text>"'),
    (lambda src: (src / 'val').mkdir(), r'holds both .*validation and .*val; keep one'),
])
def test_a_bad_tree_is_an_error_naming_the_file(tmp_path, damage, message):
    make_ilsvrc(tmp_path / 'src')
    damage(tmp_path / 'src')
    with pytest.raises(ValueError, match=message):
        imagenet.convert_imagenet(str(tmp_path / 'src'), str(tmp_path / 'out'))
    assert not (tmp_path / 'out').exists()  # refused before anything is written


def test_a_damaged_image_or_box_file_is_named_with_its_object_and_field(tmp_path):
    expected = make_ilsvrc(tmp_path / 'src')
    boxes_dir = add_boxes(tmp_path / 'src', expected)
    xml = boxes_dir / 'n01443537' / 'n01443537_1.xml'
    xml.write_text(xml.read_text().replace('<xmax>120</xmax>', '<xmax>12O</xmax>'))
    with pytest.raises(ValueError, match=r"n01443537_1.xml object 0: <bndbox><xmax> is '12O'"):
        imagenet.convert_imagenet(str(tmp_path / 'src'), str(tmp_path / 'out'),
                                  bounding_boxes=str(boxes_dir))
    (boxes_dir / 'val' / 'n01443537_1.xml').write_text('<annotation/>')
    with pytest.raises(ValueError, match="two bounding-box files for the image 'n01443537_1'"
                       ) as error:
        imagenet.convert_imagenet(str(tmp_path / 'src'), str(tmp_path / 'out'),
                                  bounding_boxes=str(boxes_dir))
    assert str(boxes_dir / 'val' / 'n01443537_1.xml') in str(error.value)
    assert str(xml) in str(error.value)
    jpeg = tmp_path / 'src' / 'validation' / 'ILSVRC2012_val_00000003.JPEG'
    jpeg.write_bytes(jpeg.read_bytes()[:-200])
    with pytest.raises(ValueError, match=r'ILSVRC2012_val_00000003.JPEG'):
        imagenet.convert_imagenet(str(tmp_path / 'src'), str(tmp_path / 'out2'))


def test_a_tree_without_split_folders_is_refused(tmp_path):
    (tmp_path / 'src').mkdir()
    run = subprocess.run([sys.executable, '-m', 'slimdata', 'convert', 'imagenet',
                          str(tmp_path / 'src'), str(tmp_path / 'out')],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1
    assert 'holds neither train/ nor validation/' in run.stderr
