"""datasets/detection.py: the user's classes, records of both layouts, and their writer.

Records are read back with TensorFlow's own parser (`tf.io.parse_single_example`) and every
value is compared with the objects the test made; images are Pillow-written JPEGs and PNGs.
"""

import functools
import hashlib
import io
import json
import os

import numpy as np
import pytest
from PIL import Image

from slimdata._tf import tf
from slimdata.datasets import detection
from slimdata.datasets.detection import Classes, DetectionObject
from slimdata.records import dataset_info, images, label_map
from slimdata.records.writer import SplitSource

# --- Classes --------------------------------------------------------------------------------


def never_called():
    raise AssertionError('found() must be called only for auto')


def test_no_spec_gives_the_default_and_no_default_asks_for_classes():
    classes = Classes.from_spec(None, default=['cat', 'dog'], found=never_called)
    assert (classes.names, classes.ids) == (('cat', 'dog'), (1, 2))
    with pytest.raises(ValueError, match='pass --classes'):
        Classes.from_spec(None, default=None, found=never_called)


def test_a_comma_list_in_its_order_and_auto_sorted():
    classes = Classes.from_spec('mask, no-mask,person', default=None, found=never_called)
    assert classes.names == ('mask', 'no-mask', 'person') and classes.ids == (1, 2, 3)
    assert classes.labels_to_names() == {0: 'none', 1: 'mask', 2: 'no-mask', 3: 'person'}
    auto = Classes.from_spec('auto', default=None, found=lambda: iter(['b', 'a', 'b', 'c']))
    assert auto.names == ('a', 'b', 'c') and auto.ids == (1, 2, 3)
    with pytest.raises(ValueError, match='hold no object'):
        Classes.from_spec('auto', default=None, found=lambda: [])


def test_a_file_of_names_and_a_labels_txt(tmp_path):
    names = tmp_path / 'classes.txt'
    names.write_text('\ufeffhelmet\r\n\r\nhead\nperson\n', encoding='utf-8')
    assert Classes.from_spec(str(names), default=None, found=never_called).names == (
        'helmet', 'head', 'person')
    # The labels.txt a conversion wrote: ids kept, the background left out.
    written = dataset_info.write_labels_file({0: 'none', 1: 'mask', 3: 'no-mask'},
                                             str(tmp_path))
    classes = Classes.from_spec(written, default=None, found=never_called)
    assert (classes.names, classes.ids) == (('mask', 'no-mask'), (1, 3))
    assert classes.num_classes() == 4


LABEL_MAP = """\
# a label map as the OD API's tools write it, with comments and both quotes
item {
  name: "mask"
  id: 2
  display_name: 'Mask on'
}
item { id: 0 name: 'background' }
item {
  id: 5
  name: 'no-mask'  # trailing comment
  keypoints { id: 1 label: "nose" }
}
"""


def test_a_label_map_keeps_its_ids_and_leaves_the_background_out(tmp_path):
    path = tmp_path / 'label_map.pbtxt'
    path.write_text(LABEL_MAP)
    classes = Classes.from_spec(str(path), default=None, found=never_called)
    assert (classes.names, classes.ids) == (('mask', 'no-mask'), (2, 5))
    assert classes.labels_to_names() == {0: 'none', 2: 'mask', 5: 'no-mask'}
    assert classes.num_classes() == 6
    # A label map is recognised by its content too, whatever its name.
    other = tmp_path / 'classes'
    other.write_text(LABEL_MAP)
    assert Classes.from_spec(str(other), default=None, found=never_called) == classes


@pytest.mark.parametrize('text, message', [
    ('item { id: 1 name: "a" color: 3 }', r'has no field named "color"'),
    ('item { id: 1 name: "a" ', r'line 1'),
    ('item { id: 1 }', r'item 0: every item needs an id and a name'),
    ('item { id: -1 name: "a" }', r'negative'),
    ('item { id: 1 name: "a" } item { id: 1 name: "b" }', r'id 1 is given twice'),
    ('item { id: 1 name: "a" } item { id: 2 name: "a" }', r"name 'a' is given twice"),
    ('item {\n' * 100_000, r'is not a label map'),  # nesting bounded by the schema
    ('', r'is not a label map|no item'),
])
def test_bad_label_maps_name_the_file(tmp_path, text, message):
    path = tmp_path / 'label_map.pbtxt'
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as raised:
        Classes.from_spec(str(path), default=None, found=never_called)
    assert str(path) in str(raised.value)


@pytest.mark.parametrize('spec, message', [
    ('cat,,dog', 'empty'),
    ('cat,dog,cat', "name 'cat' is given twice"),
    ('none,cat', 'background'),
    ('missing/classes.txt', 'no such file'),
    ('labels.pbtxt', 'no such file'),
])
def test_bad_specs(spec, message):
    with pytest.raises(ValueError, match=message):
        Classes.from_spec(spec, default=None, found=never_called)


def test_unknown_class_names_where_and_the_fix():
    classes = Classes.from_names(['cat', 'dog'])
    assert classes.label_of('dog', 'a.xml object 0') == 2
    with pytest.raises(ValueError) as raised:
        classes.label_of('mask', 'a.xml object 3')
    message = str(raised.value)
    assert message.startswith("a.xml object 3: unknown class name 'mask'")
    assert "['cat', 'dog']" in message and '--classes' in message
    assert 'same command' not in message
    assert classes.label_of('mask', 'a.xml object 3', 'skip') is None


def test_classes_pickle_and_compare():
    import pickle
    classes = Classes.from_names(['b', 'a'], [7, 3])
    assert classes.label_of('a', '') == 3  # fills the lookup cache
    assert pickle.loads(pickle.dumps(classes)) == classes
    with pytest.raises(ValueError, match='ids start at 1'):
        Classes.from_names(['a'], [0])


# --- Records --------------------------------------------------------------------------------

def encoded_image(width, height, image_format='JPEG'):
    pixels = (np.arange(height * width * 3) % 251).astype(np.uint8).reshape(height, width, 3)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, image_format)
    return buffer.getvalue()


OBJECTS = [
    DetectionObject('cat', (0.1, 0.2, 0.5, 0.6), 1, 0, 'a.xml object 0', 'Left'),
    DetectionObject('dog', (-0.25, 0.5, 0.75, 1.25), 0, 1, 'a.xml object 1'),   # clipped
    DetectionObject('dog', (0.5, 0.5, 0.25, 0.75), 0, 0, 'a.xml object 2'),     # inverted
    DetectionObject('bird', (0.0, 0.0, 1.0, 1.0), 0, 0, 'a.xml object 3'),       # unknown
]
CLASSES = Classes.from_names(['dog', 'cat'])
#: What the records must hold of OBJECTS with on_bad_box='clip', on_unknown_class='skip'.
KEPT_BOXES = [(0.1, 0.2, 0.5, 0.6), (0.0, 0.5, 0.75, 1.0)]
KEPT = dict(labels=[2, 1], texts=[b'cat', b'dog'], difficult=[1, 0], truncated=[0, 1],
            views=[b'Left', b''])


def make(layout, objects=OBJECTS, image=None, image_format='JPEG'):
    image = image or encoded_image(40, 30, image_format)
    info = images.check_image(image, 'a.jpg')
    return image, detection.make_record(
        image, info, objects, classes=CLASSES, layout=layout, on_bad_box='clip',
        on_unknown_class='skip', filename='a.jpg', source_id='id-a')


def parsed(record, layout):
    specs = dataset_info.keys_to_features_from_json(detection.FEATURES_OF_LAYOUT[layout])
    features = tf.io.parse_single_example(record, specs)
    return {key: (tf.sparse.to_dense(value) if isinstance(value, tf.SparseTensor)
                  else value).numpy() for key, value in features.items()}


def boxes_of(values):
    return np.stack([values['image/object/bbox/' + field]
                     for field in ('ymin', 'xmin', 'ymax', 'xmax')], axis=1)


def test_ssd_record_read_back_by_tensorflow():
    image, record = make('ssd')
    values = parsed(record.data, 'ssd')
    assert values['image/encoded'] == image and values['image/format'] == b'JPEG'
    assert values['image/shape'].tolist() == [30, 40, 3]
    assert (values['image/height'], values['image/width'], values['image/channels']) == (
        [30], [40], [3])
    np.testing.assert_allclose(boxes_of(values), KEPT_BOXES, atol=1e-7)
    prefix = 'image/object/bbox/'
    assert values[prefix + 'label'].tolist() == KEPT['labels']
    assert values[prefix + 'label_text'].tolist() == KEPT['texts']
    assert values[prefix + 'difficult'].tolist() == KEPT['difficult']
    assert values[prefix + 'truncated'].tolist() == KEPT['truncated']


def test_notes_and_counts():
    _, record = make('ssd')
    reasons = [reason for reason, _ in record.notes]
    assert reasons == ['box clipped to the image', 'object dropped: inverted box',
                       "object of an unknown class left out: 'bird'"]
    assert dict(record.notes)['box clipped to the image'].startswith('a.xml object 1 (dog)')
    assert record.counts == {"objects of class 'cat'": 1, "objects of class 'dog'": 1}
    _, empty = make('ssd', objects=[])
    assert empty.counts == {'images without objects': 1} and empty.notes == ()
    assert parsed(empty.data, 'ssd')['image/object/bbox/label'].tolist() == []


def test_unknown_class_and_bad_box_errors_name_the_object():
    image = encoded_image(40, 30)
    info = images.check_image(image, 'a.jpg')
    common = dict(classes=CLASSES, layout='ssd', filename='a.jpg', source_id='a')
    with pytest.raises(ValueError, match=r"a.xml object 3: unknown class name 'bird'"):
        detection.make_record(image, info, OBJECTS, on_bad_box='clip',
                              on_unknown_class='error', **common)
    with pytest.raises(ValueError, match=r'a.xml object 1 \(dog\).*crosses the image edge'):
        detection.make_record(image, info, OBJECTS[:2], on_bad_box='error',
                              on_unknown_class='error', **common)


@pytest.mark.parametrize('image_format, stored', [('JPEG', b'jpeg'), ('PNG', b'png')])
def test_od_api_record_read_back_by_tensorflow(image_format, stored):
    image, record = make('od-api', image_format=image_format)
    values = parsed(record.data, 'od-api')
    assert values['image/encoded'] == image and values['image/format'] == stored
    assert (values['image/height'], values['image/width']) == (30, 40)
    assert (values['image/filename'], values['image/source_id']) == (b'a.jpg', b'id-a')
    assert values['image/key/sha256'] == hashlib.sha256(image).hexdigest().encode()
    np.testing.assert_allclose(boxes_of(values), KEPT_BOXES, atol=1e-7)
    assert values['image/object/class/label'].tolist() == KEPT['labels']
    assert values['image/object/class/text'].tolist() == KEPT['texts']
    assert values['image/object/difficult'].tolist() == KEPT['difficult']
    assert values['image/object/truncated'].tolist() == KEPT['truncated']
    assert values['image/object/view'].tolist() == KEPT['views']


def test_an_ssd_png_record_says_png():
    _, record = make('ssd', image_format='PNG')
    assert parsed(record.data, 'ssd')['image/format'] == b'PNG'


# --- Writing --------------------------------------------------------------------------------

def encode_item(item, layout):
    """The writer's encode function: item = (width, height, objects)."""
    width, height, objects = item
    image = encoded_image(width, height)
    return detection.make_record(
        image, images.check_image(image, 'x.jpg'), objects, classes=CLASSES, layout=layout,
        on_bad_box='clip', on_unknown_class='skip', filename='x.jpg', source_id='x')


ITEMS = [(40, 30, OBJECTS), (20, 10, []), (30, 30, OBJECTS[:1])]


@pytest.mark.parametrize('layout', detection.LAYOUTS)
def test_write_detection(tmp_path, layout):
    out = str(tmp_path / 'out')
    source = SplitSource('train', ITEMS, functools.partial(encode_item, layout=layout),
                         options={'layout': layout})
    summaries = detection.write_detection(out, [source], dataset_name='detection',
                                          classes=CLASSES, layout=layout)
    summary = summaries['train']
    assert summary.num_records == 3
    assert summary.counts == {"objects of class 'cat'": 2, "objects of class 'dog'": 1,
                              'images without objects': 1}
    assert "counted: images without objects 1, objects of class 'cat' 2" in summary.format()
    info = json.loads((tmp_path / 'out' / 'dataset_info.json').read_text())
    assert info['extra'] == {'num_classes': 3, 'classes': ['dog', 'cat'], 'layout': layout}
    assert info['labels_to_names'] == {'0': 'none', '1': 'dog', '2': 'cat'}
    assert (tmp_path / 'out' / 'labels.txt').read_text() == '0:none\n1:dog\n2:cat\n'
    label_map = tmp_path / 'out' / detection.LABEL_MAP_FILENAME
    assert label_map.exists() == (layout == 'od-api')
    if layout == 'od-api':  # read back as the user would pass it to --classes
        assert Classes.from_spec(str(label_map), default=None, found=never_called) == CLASSES
    [shard] = [os.path.join(out, s['file']) for s in summary.shards]
    labels = [parsed(record, layout)['image/object/' + (
        'bbox/label' if layout == 'ssd' else 'class/label')].tolist()
        for record in tf.data.TFRecordDataset(shard).as_numpy_iterator()]
    assert labels == [[2, 1], [], [2]]


@pytest.mark.slow
def test_counts_cross_worker_processes(tmp_path):
    """Counts made in worker processes add up to those of one process."""
    def write(folder, processes):
        source = SplitSource('train', ITEMS * 4, functools.partial(encode_item, layout='ssd'),
                             num_shards=2)
        return detection.write_detection(str(tmp_path / folder), [source],
                                         dataset_name='detection', classes=CLASSES,
                                         layout='ssd', processes=processes)['train']
    assert write('one', 1).counts == write('two', 2).counts == {
        "objects of class 'cat'": 8, "objects of class 'dog'": 4, 'images without objects': 4}


def test_bad_policies_are_refused():
    with pytest.raises(ValueError, match="layout='coco'"):
        detection.check_policies('coco', 'clip', 'error')
    with pytest.raises(ValueError, match="on_unknown_class='drop'"):
        detection.check_policies('ssd', 'clip', 'drop')


def test_a_written_label_map_reads_back_with_any_name(tmp_path):
    names = ['with "quotes"', 'back\\slash', 'ünïcode', "it's"]
    path = tmp_path / 'label_map.pbtxt'
    path.write_text(label_map.format_label_map([4, 1, 9, 2], names), encoding='utf-8')
    classes = Classes.from_spec(str(path), default=None, found=never_called)
    assert (classes.names, classes.ids) == (tuple(names), (4, 1, 9, 2))
