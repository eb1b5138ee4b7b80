"""`slimdata convert voc` on the user's own data: their classes, folders without ImageSets,
flat folders of images with their XMLs, and the OD API's record layout.

Sources are written here (Pillow JPEGs and PNGs, hand-written XMLs in labelImg's form); every
record is compared with the XML read here by ElementTree (not the converter's parser), the
pixels with Pillow's decoding of the source file.
"""

import io
import json
import os
import re
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest
from PIL import Image

from slimdata import cli, tfexample_decoder
from slimdata._tf import tf
from slimdata.datasets import convert_utils, pascalvoc
from slimdata.records import dataset_info

CLASSES = ('mask', 'no-mask')


def labelimg_xml(filename, size, objects):
    """An annotation as labelImg writes it; objects: (name, (xmin, ymin, xmax, ymax), pose,
    difficult, truncated)."""
    width, height = size
    parts = [f'<annotation><folder>images</folder><filename>{filename}</filename>'
             f'<size><width>{width}</width><height>{height}</height><depth>3</depth></size>']
    for name, (xmin, ymin, xmax, ymax), pose, difficult, truncated in objects:
        parts.append(f'<object><name>{name}</name><pose>{pose}</pose>'
                     f'<truncated>{truncated}</truncated><difficult>{difficult}</difficult>'
                     f'<bndbox><xmin>{xmin}</xmin><ymin>{ymin}</ymin><xmax>{xmax}</xmax>'
                     f'<ymax>{ymax}</ymax></bndbox></object>')
    return ''.join(parts) + '</annotation>'


#: stem -> (image format, (width, height), objects)
IMAGES = {
    'img_a': ('JPEG', (48, 32), [('mask', (5, 4, 20, 30), 'Frontal', 0, 0),
                                 ('no-mask', (22, 2, 48, 32), 'Left', 1, 1)]),
    'img_b': ('PNG', (30, 40), [('no-mask', (1, 1, 30, 40), 'Unspecified', 0, 0)]),
    'img_c': ('JPEG', (40, 40), []),
    'img_d': ('JPEG', (36, 24), [('mask', (3, 3, 12, 20), 'Unspecified', 0, 1),
                                 ('mask', (14, 5, 30, 22), 'Right', 0, 0),
                                 ('no-mask', (2, 2, 9, 9), 'Unspecified', 1, 0)]),
}


def write_image(path, image_format, size, seed):
    width, height = size
    y, x = np.mgrid[0:height, 0:width]
    pixels = np.stack([(x * 5 + seed * 30) % 256, (y * 7) % 256, (x + y) % 256],
                      axis=-1).astype(np.uint8)
    Image.fromarray(pixels).save(path, image_format, **(
        {'quality': 90} if image_format == 'JPEG' else {}))


def build(folder, flat, images=IMAGES):
    """Writes the images and their XMLs: flat (side by side) or in Annotations/ +
    JPEGImages/. Returns stem -> (XML path, image path)."""
    xml_dir = folder if flat else folder / 'Annotations'
    image_dir = folder if flat else folder / 'JPEGImages'
    for path in (xml_dir, image_dir):
        path.mkdir(parents=True, exist_ok=True)
    paths = {}
    for seed, (stem, (image_format, size, objects)) in enumerate(sorted(images.items())):
        image_path = image_dir / (stem + ('.png' if image_format == 'PNG' else '.jpg'))
        write_image(image_path, image_format, size, seed)
        xml_path = xml_dir / f'{stem}.xml'
        xml_path.write_text(labelimg_xml(image_path.name, size, objects))
        paths[stem] = (xml_path, image_path)
    return paths


def expected_objects(xml_path, classes):
    """The objects of an annotation, read here: (label, name, box normalised as VOC's 1-based
    pixels, difficult, truncated, pose)."""
    root = ElementTree.parse(xml_path).getroot()
    width, height = (int(root.find('size').find(k).text) for k in ('width', 'height'))
    objects = []
    for element in root.iter('object'):
        b = {k: float(element.find('bndbox').find(k).text)
             for k in ('xmin', 'ymin', 'xmax', 'ymax')}
        box = [(b['ymin'] - 1) / height, (b['xmin'] - 1) / width,
               (b['ymax'] - 1) / height, (b['xmax'] - 1) / width]
        name = element.find('name').text
        objects.append((classes[name], name, box, int(element.find('difficult').text),
                        int(element.find('truncated').text), element.find('pose').text))
    return objects


SSD_SPECS = {
    'image/encoded': tf.io.FixedLenFeature((), tf.string),
    'image/format': tf.io.FixedLenFeature((), tf.string),
    'image/shape': tf.io.FixedLenFeature([3], tf.int64),
    **{f'image/object/bbox/{k}': tf.io.VarLenFeature(tf.float32)
       for k in ('ymin', 'xmin', 'ymax', 'xmax')},
    **{f'image/object/bbox/{k}': tf.io.VarLenFeature(tf.int64)
       for k in ('label', 'difficult', 'truncated')},
    'image/object/bbox/label_text': tf.io.VarLenFeature(tf.string),
}


def read_records(out, split, specs):
    pattern = os.path.join(str(out), f'{split}-*.tfrecord')
    values = []
    for record in tf.data.TFRecordDataset(sorted(tf.io.gfile.glob(pattern))):
        parsed = tf.io.parse_single_example(record, specs)
        values.append({k: (tf.sparse.to_dense(v) if isinstance(v, tf.SparseTensor)
                           else v).numpy() for k, v in parsed.items()})
    return values


def check_ssd_records(records, paths, classes):
    """Each record is the image of one source, bytes for bytes, with its objects."""
    by_bytes = {image_path.read_bytes(): xml_path for xml_path, image_path in paths.values()}
    seen = []
    for values in records:
        xml_path = by_bytes[values['image/encoded']]
        seen.append(xml_path.stem)
        expected = expected_objects(xml_path, classes)
        prefix = 'image/object/bbox/'
        assert values[prefix + 'label'].tolist() == [o[0] for o in expected]
        assert values[prefix + 'label_text'].tolist() == [o[1].encode() for o in expected]
        boxes = np.stack([values[prefix + k] for k in ('ymin', 'xmin', 'ymax', 'xmax')], 1)
        np.testing.assert_allclose(boxes.reshape(-1, 4),
                                   np.array([o[2] for o in expected]).reshape(-1, 4), atol=1e-6)
        assert values[prefix + 'difficult'].tolist() == [o[3] for o in expected]
        assert values[prefix + 'truncated'].tolist() == [o[4] for o in expected]
        pixels = np.asarray(Image.open(io.BytesIO(values['image/encoded'])).convert('RGB'))
        assert values['image/shape'].tolist() == [*pixels.shape[:2], 3]
    return seen


# --- Folders of the user's own --------------------------------------------------------------

@pytest.mark.parametrize('flat', [True, False], ids=['flat', 'without-imagesets'])
def test_a_folder_with_its_own_classes(tmp_path, capsys, flat):
    src = tmp_path / 'src'
    paths = build(src, flat)
    (src / ('' if flat else 'JPEGImages') / 'not_annotated.jpg').write_bytes(
        (paths['img_a'][1]).read_bytes())
    (src / 'classes.txt').write_text('mask\nno-mask\n')  # as labelImg leaves it
    out = tmp_path / 'out'
    assert cli.main(['convert', 'voc', str(src), str(out), '--classes', 'mask,no-mask',
                     '--validation-ratio', '0.25', '--seed', '5']) == 0
    printed = capsys.readouterr()
    assert 'left out 1 images without an XML (not annotated: not_annotated.jpg)' in printed.err
    assert "counted: objects of class 'mask' " in printed.out
    labels = {name: label for label, name in enumerate(CLASSES, 1)}
    train = check_ssd_records(read_records(out, 'train', SSD_SPECS), paths, labels)
    validation = check_ssd_records(read_records(out, 'validation', SSD_SPECS), paths, labels)
    # The split is image-folder's: a seeded shuffle of the sorted annotations.
    expected_train, expected_validation = convert_utils.split_train_validation(
        sorted(paths), 0.25, 5)
    assert (train, validation) == (expected_train, expected_validation)
    info = json.loads((out / 'dataset_info.json').read_text())
    assert info['name'] == 'detection'
    assert info['extra'] == {'num_classes': 3, 'classes': list(CLASSES), 'layout': 'ssd'}
    assert dataset_info.read_labels_file(str(out)) == {0: 'none', 1: 'mask', 2: 'no-mask'}


def test_auto_classes_are_sorted_and_printed(tmp_path, capsys):
    paths = build(tmp_path / 'src', flat=True)
    out = tmp_path / 'out'
    assert cli.main(['convert', 'voc', str(tmp_path / 'src'), str(out), '--classes', 'auto',
                     '--validation-ratio', '0']) == 0
    assert 'label 1 first: mask, no-mask' in capsys.readouterr().err
    records = read_records(out, 'train', SSD_SPECS)
    assert len(check_ssd_records(records, paths, {'mask': 1, 'no-mask': 2})) == len(IMAGES)
    assert not (out / 'validation-00000-of-00001.tfrecord').exists()


def test_a_label_map_keeps_its_ids(tmp_path):
    paths = build(tmp_path / 'src', flat=True)
    label_map = tmp_path / 'label_map.pbtxt'
    label_map.write_text("item { id: 7 name: 'no-mask' }\nitem { id: 3 name: 'mask' }\n")
    pascalvoc.convert_voc(str(tmp_path / 'src'), str(tmp_path / 'out'), classes=str(label_map),
                          validation_ratio=0)
    records = read_records(tmp_path / 'out', 'train', SSD_SPECS)
    check_ssd_records(records, paths, {'mask': 3, 'no-mask': 7})
    info = json.loads((tmp_path / 'out' / 'dataset_info.json').read_text())
    assert info['labels_to_names'] == {'0': 'none', '3': 'mask', '7': 'no-mask'}
    assert info['extra']['num_classes'] == 8
    # slimdata show names the boxes by the folder's classes.
    from slimdata import show
    sheet = show.contact_sheet([str(tmp_path / 'out')])
    drawn = [box.text.replace(' (difficult)', '') for cell in sheet.cells for box in cell.boxes]
    assert sorted(drawn) == sorted(obj[0] for _, _, objects in IMAGES.values()
                                   for obj in objects)


# --- A VOC tree with its own classes --------------------------------------------------------

def build_tree(tmp_path):
    voc = tmp_path / 'VOCdevkit' / 'VOC2007'
    jpegs = {stem: spec for stem, spec in IMAGES.items() if spec[0] == 'JPEG'}
    paths = build(voc, flat=False, images=jpegs)
    (voc / 'ImageSets' / 'Main').mkdir(parents=True)
    (voc / 'ImageSets' / 'Main' / 'trainval.txt').write_text('img_a\nimg_d\n')
    (voc / 'ImageSets' / 'Main' / 'test.txt').write_text('img_c\n')
    return voc, paths


def test_unknown_class_names_file_object_and_the_fix(tmp_path, capsys):
    voc, _ = build_tree(tmp_path)
    out = tmp_path / 'out'
    assert cli.main(['convert', 'voc', str(tmp_path), str(out), '--year', '2007', '--split',
                     'trainval', '--shards', '2']) == 1
    error, left = capsys.readouterr().err.strip().splitlines()[-2:]
    xml = voc / 'Annotations' / 'img_a.xml'
    assert error.startswith('slimdata convert voc: error: ')
    assert f"{xml} object 0: unknown class name 'mask'" in error
    assert '--classes' in error and "'aeroplane'" in error
    assert 'fix what the error names, then run the command again' in left
    assert 'same command' not in left
    # With the classes named (other options: --overwrite), the tree converts.
    assert cli.main(['convert', 'voc', str(tmp_path), str(out), '--year', '2007', '--split',
                     'trainval', '--classes', 'no-mask,mask', '--overwrite']) == 0
    [values] = [v for v in read_records(out, 'trainval', SSD_SPECS)
                if v['image/encoded'] == (voc / 'JPEGImages' / 'img_a.jpg').read_bytes()]
    assert values['image/object/bbox/label'].tolist() == [2, 1]
    # The pascalvoc descriptor reads such a folder with its classes.
    dataset = pascalvoc.get_split('trainval', str(out), year='2007')
    assert dataset.labels_to_names == {0: 'none', 1: 'no-mask', 2: 'mask'}
    assert (dataset.num_samples, dataset.num_classes) == (2, 3)


def test_skipped_unknown_classes_are_counted(tmp_path):
    build_tree(tmp_path)
    summary = pascalvoc.convert_voc(str(tmp_path), str(tmp_path / 'out'), '2007', 'trainval',
                                    classes='mask', on_unknown_class='skip')['trainval']
    assert [len(d) for r, d in summary.notes.items()
            if r == "object of an unknown class left out: 'no-mask'"] == [2]
    assert summary.counts == {"objects of class 'mask'": 3}


def test_a_tree_needs_its_splits_named_and_refuses_a_ratio(tmp_path):
    voc, _ = build_tree(tmp_path)
    with pytest.raises(ValueError, match=r"\['test', 'trainval'\]"):
        pascalvoc.convert_voc(str(voc), str(tmp_path / 'out'))
    with pytest.raises(ValueError, match='validation ratio splits a folder without'):
        pascalvoc.convert_voc(str(voc), str(tmp_path / 'out'), splits='trainval',
                              validation_ratio=0.2)


@pytest.mark.parametrize('alter, message', [
    (lambda src: (src / 'img_b.png').unlink(), r'img_b.xml: no image img_b.jpg, .jpeg or .png'),
    (lambda src: write_image(src / 'img_a.png', 'PNG', (4, 4), 0),
     r"img_a.xml: several images of that name in .*\['img_a.jpg', 'img_a.png'\]"),
    (lambda src: [os.remove(p) for p in src.glob('*.xml')], 'holds no VOC annotations'),
])
def test_folder_errors_name_the_file(tmp_path, alter, message):
    build(tmp_path / 'src', flat=True)
    alter(tmp_path / 'src')
    with pytest.raises(ValueError, match=message):
        pascalvoc.convert_voc(str(tmp_path / 'src'), str(tmp_path / 'out'), classes='auto')


# --- The OD API layout ----------------------------------------------------------------------

def od_api_decoder():
    """The OD API's TfExampleDecoder, as far as these records go: its keys_to_features and
    item handlers written out from tensorflow/models
    research/object_detection/data_decoders/tf_example_decoder.py (commit 015ec401bc54),
    on slimdata's tf_slim decoder (the OD API's own module needs its compiled protos).
    Its label handler maps image/object/class/text through the label map, as
    _ClassTensorHandler does; the label map is read by `read_label_map` here."""
    features = {
        'image/encoded': tf.io.FixedLenFeature((), tf.string, default_value=''),
        'image/format': tf.io.FixedLenFeature((), tf.string, default_value='jpeg'),
        'image/filename': tf.io.FixedLenFeature((), tf.string, default_value=''),
        'image/key/sha256': tf.io.FixedLenFeature((), tf.string, default_value=''),
        'image/source_id': tf.io.FixedLenFeature((), tf.string, default_value=''),
        'image/height': tf.io.FixedLenFeature((), tf.int64, default_value=1),
        'image/width': tf.io.FixedLenFeature((), tf.int64, default_value=1),
        'image/object/bbox/xmin': tf.io.VarLenFeature(tf.float32),
        'image/object/bbox/xmax': tf.io.VarLenFeature(tf.float32),
        'image/object/bbox/ymin': tf.io.VarLenFeature(tf.float32),
        'image/object/bbox/ymax': tf.io.VarLenFeature(tf.float32),
        'image/object/class/label': tf.io.VarLenFeature(tf.int64),
        'image/object/class/text': tf.io.VarLenFeature(tf.string),
        'image/object/difficult': tf.io.VarLenFeature(tf.int64),
        'image/object/truncated': tf.io.VarLenFeature(tf.int64),  # create_pascal_tf_record's
        'image/object/view': tf.io.VarLenFeature(tf.string),       # keys the decoder skips
    }
    handlers = {
        'image': tfexample_decoder.Image(image_key='image/encoded', format_key='image/format',
                                         channels=3),
        'source_id': tfexample_decoder.Tensor('image/source_id'),
        'key': tfexample_decoder.Tensor('image/key/sha256'),
        'filename': tfexample_decoder.Tensor('image/filename'),
        'groundtruth_boxes': tfexample_decoder.BoundingBox(['ymin', 'xmin', 'ymax', 'xmax'],
                                                           'image/object/bbox/'),
        'groundtruth_difficult': tfexample_decoder.Tensor('image/object/difficult'),
        'class_text': tfexample_decoder.Tensor('image/object/class/text', default_value=''),
        'class_label': tfexample_decoder.Tensor('image/object/class/label'),
        'truncated': tfexample_decoder.Tensor('image/object/truncated'),
        'view': tfexample_decoder.Tensor('image/object/view', default_value=''),
    }
    return tfexample_decoder.TFExampleDecoder(features, handlers)


def read_label_map(path):
    """{name: id} of a label map, read with a regular expression (not the converter's parser)."""
    text = path.read_text()
    return {name: int(label) for label, name in re.findall(
        r"item\s*\{\s*id:\s*(\d+)\s*name:\s*[\"']([^\"']*)[\"']\s*\}", text)}


def test_od_api_layout_read_by_the_od_api_decoder(tmp_path):
    import hashlib
    paths = build(tmp_path / 'src', flat=True)
    out = tmp_path / 'out'
    assert cli.main(['convert', 'voc', str(tmp_path / 'src'), str(out), '--classes',
                     'no-mask,mask', '--layout', 'od-api', '--validation-ratio', '0']) == 0
    name_to_id = read_label_map(out / 'label_map.pbtxt')
    assert name_to_id == {'no-mask': 1, 'mask': 2}
    decoder = od_api_decoder()
    items = decoder.list_items()
    dataset = tf.data.TFRecordDataset(sorted(tf.io.gfile.glob(str(out / 'train-*.tfrecord'))))
    decoded = dataset.map(lambda record: dict(zip(items, decoder.decode(record, items))))
    sources = {image_path.name: (xml_path, image_path)
               for xml_path, image_path in paths.values()}
    seen = set()
    for values in decoded.as_numpy_iterator():
        xml_path, image_path = sources[values['filename'].decode()]
        seen.add(xml_path.stem)
        data = image_path.read_bytes()
        assert values['source_id'] == xml_path.stem.encode()
        assert values['key'] == hashlib.sha256(data).hexdigest().encode()
        # PNGs decode alike everywhere; JPEG decoders differ by a few levels, so a JPEG is
        # compared with TensorFlow's decoding of the source file.
        source_pixels = (np.asarray(Image.open(image_path).convert('RGB'))
                         if image_path.suffix == '.png'
                         else tf.io.decode_jpeg(data, channels=3).numpy())
        np.testing.assert_array_equal(values['image'], source_pixels)
        expected = expected_objects(xml_path, name_to_id)
        np.testing.assert_allclose(values['groundtruth_boxes'].reshape(-1, 4),
                                   np.array([o[2] for o in expected]).reshape(-1, 4),
                                   atol=1e-6)
        # The class ids the OD API trains on: the label map's id of each class text.
        assert [name_to_id[t.decode()] for t in values['class_text']] == [
            o[0] for o in expected]
        assert values['class_label'].tolist() == [o[0] for o in expected]
        assert values['groundtruth_difficult'].tolist() == [o[3] for o in expected]
        assert values['truncated'].tolist() == [o[4] for o in expected]
        assert [v.decode() for v in values['view']] == [o[5] for o in expected]
    assert seen == set(IMAGES)
    info = json.loads((out / 'dataset_info.json').read_text())
    assert info['extra']['layout'] == 'od-api'
    # The SSD descriptors refuse the OD API's keys when the dataset is built, saying why.
    with pytest.raises(ValueError, match="holds records in the 'od-api' layout"):
        pascalvoc.get_split('train', str(out))


# --- Segmentation classes -------------------------------------------------------------------

SEG_CLASSES = ['sky', 'plane', 'bike', 'bird']


def test_segmentation_classes_into_labels_txt_and_the_legend(tmp_path, capsys):
    from slimdata import show
    from slimdata.datasets import synthetic
    synthetic.make_voc_seg_tree(str(tmp_path / 'src'), num_images=5, image_size=(40, 32),
                                num_classes=4, seed=2, splits={'train': 1.0})
    names_file = tmp_path / 'classes.txt'
    names_file.write_text('\n'.join(SEG_CLASSES) + '\n')
    out = tmp_path / 'out'
    assert cli.main(['convert', 'voc-seg', str(tmp_path / 'src' / 'VOC2012'), str(out),
                     '--split', 'train', '--classes', str(names_file)]) == 0
    assert dataset_info.read_labels_file(str(out)) == dict(enumerate(SEG_CLASSES))
    info = json.loads((out / 'dataset_info.json').read_text())
    assert info['extra']['num_classes'] == 4
    assert info['labels_to_names'] == {str(i): name for i, name in enumerate(SEG_CLASSES)}
    # The legend names the classes the drawn maps hold (read here from the label PNGs).
    present = set()
    for values in read_records(out, 'train', {
            'image/segmentation/class/encoded': tf.io.FixedLenFeature((), tf.string)}):
        present |= set(np.unique(np.asarray(Image.open(io.BytesIO(
            values['image/segmentation/class/encoded'])))).tolist())
    sheet = show.contact_sheet([str(out)])
    expected = [f'{SEG_CLASSES[i]} ({i})' for i in sorted(present - {255})]
    assert [entry.text for entry in sheet.legend] == expected + (
        ['ignore (255)'] if 255 in present else [])
    assert len(expected) >= 2


@pytest.mark.parametrize('spec, extra, message', [
    ('sky,plane', ['--num-classes', '4'], 'names 2 classes, but num_classes is 4'),
    ('sky,plane,sky', [], "'sky' is given twice"),
    ('sky,,plane', [], 'class 1 has the name'),
])
def test_bad_segmentation_classes(tmp_path, capsys, spec, extra, message):
    from slimdata.datasets import synthetic
    synthetic.make_voc_seg_tree(str(tmp_path / 'src'), num_images=2, image_size=(16, 16),
                                num_classes=3, splits={'train': 1.0})
    assert cli.main(['convert', 'voc-seg', str(tmp_path / 'src' / 'VOC2012'),
                     str(tmp_path / 'out'), '--split', 'train', '--classes', spec,
                     *extra]) == 1
    assert message in capsys.readouterr().err


# --- The converters' guarantees on a folder of the user's own -------------------------------

def shard_bytes(out):
    return {path.name: path.read_bytes() for path in sorted(out.glob('*.tfrecord'))}


def test_a_folder_converts_alike_in_processes_and_reruns_reuse_it(tmp_path):
    build(tmp_path / 'src', flat=True)
    convert = lambda out, **kw: pascalvoc.convert_voc(  # noqa: E731
        str(tmp_path / 'src'), str(tmp_path / out), classes='mask,no-mask',
        validation_ratio=0.25, seed=1, num_shards=2, **kw)
    convert('one')
    convert('two', processes=2)
    assert shard_bytes(tmp_path / 'one') == shard_bytes(tmp_path / 'two')
    again = convert('one')
    assert all(summary.shards_reused == len(summary.shards) for summary in again.values())
    assert shard_bytes(tmp_path / 'one') == shard_bytes(tmp_path / 'two')


def test_hostile_and_outside_files_in_a_folder_are_refused(tmp_path):
    paths = build(tmp_path / 'src', flat=True)
    xml_path = paths['img_a'][0]
    xml_path.write_text('<!DOCTYPE a [<!ENTITY e "x">]><annotation>&e;</annotation>')
    with pytest.raises(ValueError, match=re.escape(str(xml_path)) + '.*declares entities'):
        pascalvoc.convert_voc(str(tmp_path / 'src'), str(tmp_path / 'out'), classes='auto',
                              validation_ratio=0)
    outside = tmp_path / 'outside.xml'
    outside.write_text(labelimg_xml('img_a.jpg', (48, 32), []))
    xml_path.unlink()
    xml_path.symlink_to(outside)
    with pytest.raises(ValueError, match=re.escape(str(xml_path)) + '.*outside the dataset root'):
        pascalvoc.convert_voc(str(tmp_path / 'src'), str(tmp_path / 'out'), classes='mask',
                              validation_ratio=0)
