"""COCO detection JSON -> detection records (`slimdata convert coco`).

Small COCO sources are built in tmp_path: Pillow-written JPEGs and PNGs of sizes the JSON
does not always state right, and a JSON written with `json.dump`. The expectations come from
pycocotools reading the same JSON (its `COCO` index: images, annotations by image, categories)
and Pillow reading each image's size; records are read back with TensorFlow's own parser.
"""

import glob
import hashlib
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image
from pycocotools.coco import COCO

from slimdata import cli
from slimdata._tf import tf
from slimdata.datasets import coco, detection, json_stream
from slimdata.records import dataset_info
from test_pascalvoc import write_jpeg

#: Category ids neither contiguous nor from 1, listed out of order.
CATEGORIES = [{'id': 90, 'name': 'person', 'supercategory': 'animal'},
              {'id': 3, 'name': 'cat', 'supercategory': 'animal'},
              {'id': 7, 'name': 'dog', 'supercategory': 'animal'}]

#: file name -> (real width, real height, the JSON's width and height, image id).
IMAGES = {
    'a.jpg': (40, 30, (40, 30), 101),
    'b.jpg': (64, 48, (64, 48), 7),
    'c.png': (50, 20, (50, 20), 55),
    'd.jpg': (36, 28, (50, 40), 3),     # the JSON's size is wrong: the image's wins
    'e.jpg': (30, 30, (30, 30), 12),    # listed without annotations
}

#: (annotation id, image id, category id, [x, y, w, h], iscrowd); boxes inside their images.
ANNOTATIONS = [
    (1, 101, 3, [1.5, 2, 10, 20.25], 0),
    (2, 101, 90, [20, 0, 20, 30], 0),
    (9, 7, 7, [0, 0, 64, 48], 0),
    (4, 7, 3, [10, 10, 5, 5], 1),        # a crowd region
    (5, 55, 90, [3, 4, 40, 12], 0),
    (6, 3, 7, [2, 2, 30, 20], 0),
    (3, 7, 90, [30, 5, 12.5, 7.5], 0),
]


def coco_json(images=IMAGES, annotations=ANNOTATIONS, categories=CATEGORIES, **extra):
    """A COCO instances document of the test's images and annotations."""
    return {
        'info': {'description': 'test'}, 'licenses': [],
        'images': [{'id': image_id, 'file_name': name, 'width': size[0], 'height': size[1]}
                   for name, (_, _, size, image_id) in images.items()],
        'annotations': [{'id': ann_id, 'image_id': image_id, 'category_id': category,
                         'bbox': bbox, 'iscrowd': crowd, 'area': bbox[2] * bbox[3],
                         'segmentation': [[bbox[0], bbox[1], bbox[0] + bbox[2], bbox[1]]]}
                        for ann_id, image_id, category, bbox, crowd in annotations],
        'categories': [dict(category) for category in categories], **extra}


def write_images(folder, images=IMAGES):
    """Writes the images into `folder`; returns file name -> bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for seed, (name, (width, height, _, _)) in enumerate(sorted(images.items())):
        path = folder / name
        if name.endswith('.png'):
            pixels = np.random.default_rng(seed).integers(0, 255, (height, width, 3), np.uint8)
            Image.fromarray(pixels).save(path)
            written[name] = path.read_bytes()
        else:
            written[name] = write_jpeg(path, width, height, seed=seed)
    return written


def build_coco2017(root, split='val2017', document=None, images_folder=None):
    """COCO 2017's layout: annotations/instances_<split>.json and <split>/ (or
    images/<split>/). Returns the JSON's path."""
    write_images(images_folder or root / split)
    (root / 'annotations').mkdir(parents=True, exist_ok=True)
    path = root / 'annotations' / f'instances_{split}.json'
    path.write_text(json.dumps(document or coco_json()))
    return path


def records_of(out, split, layout='ssd'):
    """Every record of `split`, parsed by TensorFlow with the layout's feature specs."""
    specs = dataset_info.keys_to_features_from_json(detection.FEATURES_OF_LAYOUT[layout])
    files = sorted(glob.glob(os.path.join(str(out), f'{split}-*.tfrecord')))
    parsed = []
    for record in tf.data.TFRecordDataset(files):
        example = tf.io.parse_single_example(record, specs)
        parsed.append({key: (tf.sparse.to_dense(value) if isinstance(value, tf.SparseTensor)
                             else value).numpy() for key, value in example.items()})
    return parsed


def expected_by_pycocotools(json_path, image_dir, layout='ssd', crowd=False):
    """image bytes -> (boxes, labels, names, image id, file name), from pycocotools' index
    of the JSON and each image's size as Pillow reads it."""
    index = COCO(str(json_path))
    category_ids = sorted(index.getCatIds())
    expected = {}
    for image_id in index.getImgIds():
        entry = index.loadImgs(image_id)[0]
        path = os.path.join(str(image_dir), entry['file_name'])
        width, height = Image.open(path).size
        annotations = index.loadAnns(index.getAnnIds(imgIds=[image_id],
                                                     iscrowd=None if crowd else False))
        boxes = [[y / height, x / width, (y + h) / height, (x + w) / width]
                 for x, y, w, h in (a['bbox'] for a in annotations)]
        labels = [a['category_id'] if layout == 'od-api'
                  else category_ids.index(a['category_id']) + 1 for a in annotations]
        names = [index.loadCats(a['category_id'])[0]['name'].encode() for a in annotations]
        with open(path, 'rb') as f:
            expected[f.read()] = (np.array(boxes, np.float32).reshape(-1, 4), labels, names,
                                  image_id, entry['file_name'])
    return expected


def check_records(records, expected, layout='ssd'):
    """Each record is one image of `expected` (by its bytes), with its boxes and labels."""
    seen = []
    for record in records:
        boxes, labels, names, image_id, file_name = expected[record['image/encoded']]
        seen.append(image_id)
        got = np.stack([record['image/object/bbox/' + k]
                        for k in ('ymin', 'xmin', 'ymax', 'xmax')], axis=-1)
        np.testing.assert_allclose(got, boxes, atol=1e-6)
        if layout == 'ssd':
            assert record['image/object/bbox/label'].tolist() == labels
            assert record['image/object/bbox/label_text'].tolist() == names
        else:
            assert record['image/object/class/label'].tolist() == labels
            assert record['image/object/class/text'].tolist() == names
            assert record['image/source_id'] == str(image_id).encode()
            assert record['image/filename'] == file_name.encode()
            assert record['image/key/sha256'] == hashlib.sha256(
                record['image/encoded']).hexdigest().encode()
    assert sorted(seen) == sorted(info[3] for info in expected.values())


def convert(src, out, **options):
    options.setdefault('num_shards', 2)
    return coco.convert_coco(str(src), str(out), **options)


# --- Round trips, checked against pycocotools ------------------------------------------------

@pytest.mark.parametrize('layout', detection.LAYOUTS)
def test_records_equal_what_pycocotools_reads(tmp_path, layout):
    json_path = build_coco2017(tmp_path / 'src')
    summaries = convert(tmp_path / 'src', tmp_path / 'out', layout=layout)
    assert list(summaries) == ['val2017'] and summaries['val2017'].num_records == len(IMAGES)
    check_records(records_of(tmp_path / 'out', 'val2017', layout),
                  expected_by_pycocotools(json_path, tmp_path / 'src' / 'val2017', layout),
                  layout)
    info = json.loads((tmp_path / 'out' / 'dataset_info.json').read_text())
    if layout == 'ssd':
        assert info['labels_to_names'] == {'0': 'none', '1': 'cat', '2': 'dog', '3': 'person'}
        assert info['extra']['num_classes'] == 4
    else:  # COCO's ids kept, as create_coco_tf_record.py writes them
        assert info['labels_to_names'] == {'0': 'none', '3': 'cat', '7': 'dog',
                                           '90': 'person'}
        label_map = (tmp_path / 'out' / detection.LABEL_MAP_FILENAME).read_text()
        items = [(re.search(r'name: "(\w+)"', block).group(1),
                  re.search(r'id: (\d+)', block).group(1))
                 for block in re.findall(r'item \{([^}]*)\}', label_map)]
        assert items == [('cat', '3'), ('dog', '7'), ('person', '90')]


def test_summary_counts_crowd_sizes_and_images_without_objects(tmp_path):
    build_coco2017(tmp_path / 'src')
    summary = convert(tmp_path / 'src', tmp_path / 'out')['val2017']
    assert summary.notes['crowd region dropped (iscrowd: 1)'] == [
        f'{tmp_path}/src/annotations/instances_val2017.json annotation id 4']
    [size_note] = summary.notes['image size from the image: the JSON disagrees']
    assert 'image id 3 says 50x40' in size_note and 'd.jpg is 36x28' in size_note
    assert summary.counts['images without objects'] == 1
    assert summary.counts["objects of class 'person'"] == 3


def test_crowd_regions_kept_as_objects_on_request(tmp_path):
    json_path = build_coco2017(tmp_path / 'src')
    summary = convert(tmp_path / 'src', tmp_path / 'out', on_crowd='keep')['val2017']
    assert len(summary.notes['crowd region kept as an object (iscrowd: 1)']) == 1
    check_records(records_of(tmp_path / 'out', 'val2017'),
                  expected_by_pycocotools(json_path, tmp_path / 'src' / 'val2017', crowd=True))


def test_images_under_an_images_folder_and_several_splits(tmp_path):
    src = tmp_path / 'src'
    build_coco2017(src, 'train2017', images_folder=src / 'images' / 'train2017')
    build_coco2017(src, 'val2017')
    summaries = convert(src, tmp_path / 'out', splits=['val2017', 'train2017'])
    assert sorted(summaries) == ['train2017', 'val2017']
    check_records(records_of(tmp_path / 'out', 'train2017'),
                  expected_by_pycocotools(src / 'annotations' / 'instances_train2017.json',
                                          src / 'images' / 'train2017'))


#: A Roboflow-style export: category 0 is the dataset's name, the classes' supercategory.
EXPORT_CATEGORIES = [{'id': 0, 'name': 'pets', 'supercategory': 'none'},
                     {'id': 1, 'name': 'cat', 'supercategory': 'pets'},
                     {'id': 2, 'name': 'dog', 'supercategory': 'pets'}]
EXPORT_ANNOTATIONS = [(1, 101, 2, [1, 2, 10, 20], 0), (2, 7, 1, [5, 5, 20, 20], 0)]


@pytest.mark.parametrize('layout', detection.LAYOUTS)
def test_an_export_layout_leaves_out_the_dataset_category(tmp_path, capsys, layout):
    for split in ('train', 'valid'):
        write_images(tmp_path / 'src' / split)
        (tmp_path / 'src' / split / coco.EXPORT_JSON).write_text(json.dumps(coco_json(
            annotations=EXPORT_ANNOTATIONS, categories=EXPORT_CATEGORIES)))
    summaries = convert(tmp_path / 'src', tmp_path / 'out', layout=layout)
    assert sorted(summaries) == ['train', 'valid']
    assert "left out the category 0 'pets'" in capsys.readouterr().err
    info = json.loads((tmp_path / 'out' / 'dataset_info.json').read_text())
    assert info['labels_to_names'] == {'0': 'none', '1': 'cat', '2': 'dog'}
    expected = expected_by_pycocotools(tmp_path / 'src' / 'valid' / coco.EXPORT_JSON,
                                       tmp_path / 'src' / 'valid', layout='od-api')
    check_records(records_of(tmp_path / 'out', 'valid', layout), expected, layout)


def test_an_od_api_layout_with_category_id_0_in_use_numbers_from_1(tmp_path, capsys):
    categories = [{'id': 0, 'name': 'cat'}, {'id': 5, 'name': 'dog'}]
    annotations = [(1, 101, 0, [1, 2, 10, 20], 0), (2, 7, 5, [5, 5, 20, 20], 0)]
    build_coco2017(tmp_path / 'src', document=coco_json(annotations=annotations,
                                                        categories=categories))
    convert(tmp_path / 'src', tmp_path / 'out', layout='od-api')
    assert 'category id 0 cannot be an OD API label' in capsys.readouterr().err
    labels = {record['image/source_id']: record['image/object/class/label'].tolist()
              for record in records_of(tmp_path / 'out', 'val2017', 'od-api')}
    assert labels[b'101'] == [1] and labels[b'7'] == [2]


def test_a_json_file_with_its_image_folder_is_one_split(tmp_path):
    write_images(tmp_path / 'pictures')
    json_path = tmp_path / 'labels' / 'custom_train.json'
    json_path.parent.mkdir()
    json_path.write_text(json.dumps(coco_json()))
    summaries = convert(json_path, tmp_path / 'out', images=str(tmp_path / 'pictures'),
                        splits='train')
    assert list(summaries) == ['train']
    check_records(records_of(tmp_path / 'out', 'train'),
                  expected_by_pycocotools(json_path, tmp_path / 'pictures'))
    with pytest.raises(ValueError, match='one JSON file, so one split: name it with --split'):
        convert(json_path, tmp_path / 'out2', images=str(tmp_path / 'pictures'))


def test_file_names_with_a_folder_default_to_the_json_folder(tmp_path):
    """Label Studio's export: result.json beside images/, file names 'images/x.jpg'."""
    write_images(tmp_path / 'export' / 'images')
    named = {f'images/{name}': spec for name, spec in IMAGES.items()}
    json_path = tmp_path / 'export' / 'result.json'
    json_path.write_text(json.dumps(coco_json(images=named)))
    convert(json_path, tmp_path / 'out', splits='train')
    check_records(records_of(tmp_path / 'out', 'train'),
                  expected_by_pycocotools(json_path, tmp_path / 'export'))


def test_classes_by_name_select_and_order(tmp_path):
    build_coco2017(tmp_path / 'src')
    with pytest.raises(ValueError, match=r"annotation id 2: unknown class name 'person'.*"
                                         r"--classes"):
        convert(tmp_path / 'src', tmp_path / 'out', classes='dog,cat')
    summary = convert(tmp_path / 'src', tmp_path / 'out', classes='dog,cat',
                      on_unknown_class='skip')['val2017']
    assert len(summary.notes["object of an unknown class left out: 'person'"]) == 3
    labels = {record['image/encoded']: record['image/object/bbox/label'].tolist()
              for record in records_of(tmp_path / 'out', 'val2017')}
    with open(tmp_path / 'src' / 'val2017' / 'a.jpg', 'rb') as f:
        assert labels[f.read()] == [2]  # cat is the second class named


def test_classes_auto_are_the_sorted_names_annotations_use(tmp_path, capsys):
    document = coco_json(categories=CATEGORIES + [{'id': 1, 'name': 'unused'}])
    build_coco2017(tmp_path / 'src', document=document)
    convert(tmp_path / 'src', tmp_path / 'out', classes='auto')
    info = json.loads((tmp_path / 'out' / 'dataset_info.json').read_text())
    assert info['labels_to_names'] == {'0': 'none', '1': 'cat', '2': 'dog', '3': 'person'}


def test_a_seeded_rerun_is_reused_and_byte_identical(tmp_path):
    build_coco2017(tmp_path / 'src')
    first = convert(tmp_path / 'src', tmp_path / 'out')['val2017']
    again = convert(tmp_path / 'src', tmp_path / 'out')['val2017']
    assert again.shards_reused == len(first.shards) == 2
    convert(tmp_path / 'src', tmp_path / 'pool', processes=2)
    for shard in first.shards:
        assert ((tmp_path / 'out' / shard['file']).read_bytes() ==
                (tmp_path / 'pool' / shard['file']).read_bytes())


def test_an_interrupted_conversion_is_finished_by_a_rerun(tmp_path):
    build_coco2017(tmp_path / 'src')
    missing = tmp_path / 'src' / 'val2017' / 'e.jpg'
    data = missing.read_bytes()
    missing.unlink()
    with pytest.raises(ValueError, match=re.escape(f'{missing} does not exist, but ') +
                       '.*instances_val2017.json lists it as image id 12'):
        convert(tmp_path / 'src', tmp_path / 'out', num_shards=5)
    entry = json.loads((tmp_path / 'out' / 'dataset_info.json').read_text())['splits']
    assert entry['val2017']['complete'] is False
    written = len(entry['val2017']['shards'])
    missing.write_bytes(data)
    summary = convert(tmp_path / 'src', tmp_path / 'out', num_shards=5)['val2017']
    assert summary.shards_reused == written and summary.num_records == len(IMAGES)
    convert(tmp_path / 'src', tmp_path / 'fresh', num_shards=5)
    for shard in summary.shards:
        assert ((tmp_path / 'out' / shard['file']).read_bytes() ==
                (tmp_path / 'fresh' / shard['file']).read_bytes())


def test_an_edited_json_is_refused_without_overwrite(tmp_path):
    json_path = build_coco2017(tmp_path / 'src')
    convert(tmp_path / 'src', tmp_path / 'out')
    edited = coco_json()
    edited['annotations'][0]['bbox'] = [2, 2, 10, 20]
    json_path.write_text(json.dumps(edited))
    with pytest.raises(ValueError, match='the list of examples'):
        convert(tmp_path / 'src', tmp_path / 'out')
    convert(tmp_path / 'src', tmp_path / 'out', overwrite=True)
    check_records(records_of(tmp_path / 'out', 'val2017'),
                  expected_by_pycocotools(json_path, tmp_path / 'src' / 'val2017'))


# --- Boxes -----------------------------------------------------------------------------------

def test_boxes_crossing_the_edge_are_clipped_and_empty_ones_dropped(tmp_path):
    annotations = [(1, 101, 3, [-4, 2, 10, 40], 0), (2, 101, 7, [3, 3, 0, 5], 0),
                   (3, 101, 7, [3, 3, 5, -1], 0)]
    build_coco2017(tmp_path / 'src', document=coco_json(annotations=annotations))
    summary = convert(tmp_path / 'src', tmp_path / 'out')['val2017']
    assert len(summary.notes['box clipped to the image']) == 1
    dropped = summary.notes['object dropped: empty box (width or height <= 0)']
    assert [detail.split(': ')[0].rsplit(' ', 1)[1] for detail in dropped] == ['2', '3']
    [record] = [r for r in records_of(tmp_path / 'out', 'val2017')
                if r['image/object/bbox/label'].size]
    np.testing.assert_allclose([record['image/object/bbox/' + k][0]
                                for k in ('ymin', 'xmin', 'ymax', 'xmax')],
                               [2 / 30, 0, 1, 6 / 40], atol=1e-6)
    with pytest.raises(ValueError, match='annotation id 2: bbox width 0.0, height 5.0: an '
                                         'empty box'):
        convert(tmp_path / 'src', tmp_path / 'out2', on_bad_box='error')


# --- Errors name the JSON and the id ---------------------------------------------------------

def error_of(tmp_path, document=None, text=None, **options):
    src = tmp_path / 'src'
    json_path = build_coco2017(src, document=document)
    if text is not None:
        json_path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError) as raised:
        convert(src, tmp_path / 'out', **options)
    message = str(raised.value)
    assert str(json_path) in message, message
    return message


def with_annotation(**fields):
    document = coco_json()
    document['annotations'][1].update(fields)
    return document


@pytest.mark.parametrize('fields, message', [
    ({'image_id': 999}, 'annotation id 2 names image id 999, which is not in "images"'),
    ({'category_id': 4}, 'annotation id 2 names category id 4, which is not in "categories"'),
    ({'bbox': [1, 2, 3]}, 'annotation id 2: bbox is a JSON array of 3; expected [x, y'),
    ({'bbox': [1, 2, '3', 4]}, 'annotation id 2: bbox is a JSON array of 4; expected'),
    ({'bbox': [1, 2, True, 4]}, 'annotation id 2: bbox is a JSON array of 4; expected'),
    ({'bbox': None}, 'annotation id 2: bbox is missing; expected'),
    ({'image_id': '101'}, "annotation id 2: image_id is '101'; expected an integer"),
    ({'category_id': 2 ** 64}, 'annotation id 2: category_id is 18446744073709551616; '
                               'expected an integer'),
    ({'iscrowd': 2}, 'annotation id 2: iscrowd is 2; expected 0 or 1'),
    ({'id': 1.5}, 'annotations[1]: id is 1.5; expected an integer'),
])
def test_a_bad_annotation_names_the_json_and_its_id(tmp_path, fields, message):
    assert message in error_of(tmp_path, with_annotation(**fields))


def test_nan_and_infinity_are_not_coordinates(tmp_path):
    text = json.dumps(with_annotation(bbox=[1, 2, 3, 4])).replace('[1, 2, 3, 4]',
                                                                  '[1, NaN, 3, Infinity]')
    assert 'annotation id 2: bbox is a JSON array of 4' in error_of(tmp_path, text=text)


@pytest.mark.parametrize('change, message', [
    (lambda d: d['images'].append(dict(d['images'][0])), 'image id 101 appears twice'),
    (lambda d: d['images'][0].update(file_name='../a.jpg'), "image id 101: file_name "
                                                            "'../a.jpg' points outside"),
    (lambda d: d['images'][0].update(file_name=7), 'image id 101: file_name is 7'),
    (lambda d: d['images'][0].update(file_name='a\x00.jpg'), "image id 101: file_name "
                                                             "'a\\x00.jpg' holds a control"),
    (lambda d: d['images'][0].update(width='40'), "image id 101: width is '40'"),
    (lambda d: d['categories'].append({'id': 8, 'name': 'cat'}),
     "category id 8: the name 'cat' is also category id 3's"),
    (lambda d: d['categories'].append({'id': 3, 'name': 'cow'}),
     'category id 3 appears twice in "categories"'),
    (lambda d: d.update(images={'a': 1}), "'images' holds a dict; expected an array"),
    (lambda d: d.pop('categories'), 'has no "categories" array'),
    (lambda d: d.update(images=[]), '"images" is empty'),
    (lambda d: d['images'].__setitem__(0, 'a.jpg'), "images[0] is 'a.jpg'; expected an "
                                                    "object"),
])
def test_a_bad_document_names_the_json_and_the_place(tmp_path, change, message):
    document = coco_json()
    change(document)
    assert message in error_of(tmp_path, document)


@pytest.mark.parametrize('text, message', [
    ('[1, 2]', "expected an object (an annotation file is one JSON object) at line 1 column 1"),
    ('{"licenses": [{"id": 1}\n, {"id": 2,}]}', 'is not valid JSON: Expecting property '
                                                'name enclosed in double quotes in '
                                                'licenses[1], at line 2 column 12'),
    ('{"images": []', "expected ',' or '}' in the top-level object at line 1 column 14, "
                      'found the end of the file'),
    ('{"images": [], "images": []}', "the key 'images' appears twice"),
    ('{"images": []} []', 'more data after the top-level object, at line 1 column 16'),
    (b'{"info": "\xff"}', 'is not UTF-8 text near byte 10'),
    ('{"images": [{"id": ' + '9' * 5000 + '}]}', 'images[0] at line 1 column 13: Exceeds the '
                                                 'limit (4300 digits)'),
])
def test_json_that_is_not_an_annotation_document(tmp_path, text, message):
    assert message in error_of(tmp_path, text=text)


def test_a_missing_image_file_names_the_json_and_the_image_id(tmp_path):
    build_coco2017(tmp_path / 'src')
    (tmp_path / 'src' / 'val2017' / 'b.jpg').unlink()
    with pytest.raises(ValueError, match=r'val2017/b\.jpg does not exist, but .*'
                                         r'instances_val2017\.json lists it as image id 7'):
        convert(tmp_path / 'src', tmp_path / 'out')


def test_a_folder_of_no_known_layout_and_misplaced_options(tmp_path):
    (tmp_path / 'empty').mkdir()
    with pytest.raises(ValueError, match='holds no COCO annotations in a known layout'):
        convert(tmp_path / 'empty', tmp_path / 'out')
    build_coco2017(tmp_path / 'src')
    with pytest.raises(ValueError, match='--images names the image folder of a JSON file'):
        convert(tmp_path / 'src', tmp_path / 'out', images=str(tmp_path))
    with pytest.raises(ValueError, match=r"split 'train2017' is not in .*; it holds "
                                         r"\['val2017'\]"):
        convert(tmp_path / 'src', tmp_path / 'out', splits='train2017')
    # A split whose images are not there is refused when asked for, and only then.
    (tmp_path / 'src' / 'annotations' / 'instances_test2017.json').write_text('{}')
    assert list(convert(tmp_path / 'src', tmp_path / 'out', splits='val2017')) == ['val2017']
    with pytest.raises(ValueError, match=r'instances_test2017\.json has no image folder: '
                                         r'expected .*/src/test2017/ or .*/src/images/test2017/'):
        convert(tmp_path / 'src', tmp_path / 'out')
    with pytest.raises(ValueError, match="on_crowd='drop'; expected one of"):
        convert(tmp_path / 'src', tmp_path / 'out', on_crowd='drop')


# --- Hostile JSON, in bounded memory ---------------------------------------------------------

MEMORY_LIMIT = 768 << 20
_CHILD = ('import resource, sys\n'
          f'resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT}))\n'
          'sys.argv = sys.argv[1:]\n'
          'exec(sys.argv[0])\n')


def in_child(code, *args):
    """Runs `code` (sys.argv[1:] = args) in a child limited to MEMORY_LIMIT of address space,
    with one BLAS thread (so the limit does not depend on the machine's cores)."""
    env = {**os.environ, 'OPENBLAS_NUM_THREADS': '1', 'OMP_NUM_THREADS': '1'}
    return subprocess.run([sys.executable, '-c', _CHILD, code, *map(str, args)],
                          capture_output=True, text=True, timeout=300, env=env)


_CONVERT = 'from slimdata import cli\nsys.exit(cli.main(sys.argv[1:]))'
_READ = ('from slimdata.datasets import coco, convert_utils\n'
         'import os\n'
         'parsed = coco.read_coco_json(sys.argv[1], convert_utils.SourcePolicy('
         'os.path.dirname(sys.argv[1])))\n'
         'print(len(parsed.images), parsed.num_annotations)\n')
_JSON_LOAD = 'import json\njson.load(open(sys.argv[1], "rb"))\n'


@pytest.mark.parametrize('text, message', [
    ('{"images": [' + '[' * 2_000_000 + ']' * 2_000_000 + ']}',
     "images[0] is nested deeper than Python's JSON decoder allows (at line 1 column 13)"),
    ('{"images": [1e999999]}', 'images[0] is inf; expected an object'),
])
def test_hostile_json_ends_in_one_error_line_in_bounded_memory(tmp_path, text, message):
    json_path = build_coco2017(tmp_path / 'src')
    json_path.write_text(text)
    run = in_child(_CONVERT, 'convert', 'coco', tmp_path / 'src', tmp_path / 'out', '-q')
    assert run.returncode == 1, run.stderr
    assert 'Traceback' not in run.stderr and message in run.stderr, run.stderr


def generated_json(path, num_images, num_annotations, polygon_points):
    """A COCO-like JSON with long polygons (most of a real file's bytes), written quickly."""
    rng = np.random.default_rng(0)
    polygon = ','.join(f'{v:.2f}' for v in rng.uniform(0, 600, 2 * polygon_points))
    with open(path, 'w') as f:
        f.write('{"images": [')
        f.write(','.join(f'{{"id": {i}, "file_name": "{i:012d}.jpg", "width": 640, '
                         f'"height": 480}}' for i in range(num_images)))
        f.write('], "annotations": [')
        f.write(','.join(f'{{"segmentation": [[{polygon}]], "area": 100.5, "iscrowd": 0, '
                         f'"image_id": {i % num_images}, "bbox": [1.5, 2.5, 30.25, 40.75], '
                         f'"category_id": {1 + i % 80}, "id": {i}}}'
                         for i in range(num_annotations)))
        f.write('], "categories": [')
        f.write(','.join(f'{{"id": {c}, "name": "class{c}"}}' for c in range(1, 81)))
        f.write(']}')


@pytest.mark.slow
def test_a_large_json_is_read_where_json_load_runs_out_of_memory(tmp_path):
    path = tmp_path / 'big.json'
    generated_json(path, 20_000, 150_000, 60)
    assert os.path.getsize(path) > 100 << 20
    read = in_child(_READ, path)
    assert read.returncode == 0 and read.stdout.split() == ['20000', '150000'], read.stderr
    loaded = in_child(_JSON_LOAD, path)
    assert loaded.returncode != 0 and 'MemoryError' in loaded.stderr


def test_a_json_over_the_size_bound_is_refused_naming_it(tmp_path):
    build_coco2017(tmp_path / 'src')
    with pytest.raises(ValueError, match=r'instances_val2017\.json has [\d,]+ bytes or more, '
                                         r'over the limit of 1,000 bytes .*--max-file-size'):
        convert(tmp_path / 'src', tmp_path / 'out', max_file_bytes=1000)


# --- The streaming reader itself -------------------------------------------------------------

@pytest.mark.parametrize('chunk', [1, 3, 7, 64])
def test_streamed_elements_equal_json_loads_across_any_piece_boundary(tmp_path, chunk,
                                                                      monkeypatch):
    document = coco_json(extra={'nested': {'a': [1, {'b': 'é\u2603'}]}, 'n': -1.5e-7})
    document['images'][0]['file_name'] = 'snow\u2603man "quoted".jpg'
    text = json.dumps(document, indent=chunk % 3 or None, ensure_ascii=chunk % 2 == 0)
    (tmp_path / 'doc.json').write_text(text, encoding='utf-8')
    monkeypatch.setattr(json_stream, 'CHUNK_BYTES', chunk)
    got = {key: [] for key in ('images', 'annotations', 'licenses', 'missing')}
    with open(tmp_path / 'doc.json', 'rb') as f:
        found = json_stream.stream_arrays(
            f, 'doc.json', {key: lambda i, e, key=key: got[key].append((i, e)) for key in got})
    assert found == {'images', 'annotations', 'licenses'}
    for key in found:
        assert got[key] == list(enumerate(json.loads(text)[key]))


@pytest.mark.parametrize('text', [
    '{"annotations": [{"segmentation": [' + '1,' * 600 + '1]}]}',   # complete but too long
    '{"annotations": [{"segmentation": [' + '1,' * 600,            # and cut short
])
def test_an_element_over_the_bound_is_refused(tmp_path, monkeypatch, text):
    (tmp_path / 'doc.json').write_text(text)
    monkeypatch.setattr(json_stream, 'CHUNK_BYTES', 64)
    with open(tmp_path / 'doc.json', 'rb') as f, pytest.raises(ValueError) as raised:
        json_stream.stream_arrays(f, 'doc.json', {'annotations': lambda i, e: None},
                                  max_element_chars=1000)
    assert str(raised.value).startswith('doc.json: annotations[0] at line 1 column 18 is not '
                                        'a JSON value of at most 1,000 characters (')


def test_the_command_line(tmp_path, capsys):
    build_coco2017(tmp_path / 'src')
    assert cli.main(['convert', 'coco', str(tmp_path / 'src'), str(tmp_path / 'out'),
                     '--layout', 'od-api', '--classes', 'person,dog,cat',
                     '--on-crowd', 'keep', '--shards', '1']) == 0
    output = capsys.readouterr()
    assert 'val2017: 5 records in 1 shard' in output.out
    assert 'crowd region kept as an object (iscrowd: 1): 1' in output.out
    labels = sorted(label for record in records_of(tmp_path / 'out', 'val2017', 'od-api')
                    for label in record['image/object/class/label'].tolist())
    assert labels == [1, 1, 1, 2, 2, 3, 3]
