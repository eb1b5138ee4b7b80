"""deeplab segmentation converters and descriptors (slimdata.datasets.segmentation).

Each test builds a tiny source tree (VOC2012, Cityscapes, ADE20K layouts) in tmp_path,
converts it, and reads the records back through the descriptor and DatasetDataProvider in
graph mode, comparing every value with the source files: PNG pixels exactly, JPEG pixels
against TensorFlow's own decoding of the same file bytes, label maps against the indices the
test wrote.
"""

import io
import json
import os

import numpy as np
import pytest
from PIL import Image

from conftest import drain
from slimdata import cli, tfexample_decoder
from slimdata._tf import tf
from slimdata.dataset import Dataset
from slimdata.dataset_data_provider import DatasetDataProvider
from slimdata.datasets import segmentation
from slimdata.records import dataset_info

WIDTH, HEIGHT = 24, 16
ITEMS = ['image', 'image_name', 'height', 'width', 'labels_class']


# --- Building source trees ------------------------------------------------------------------

def random_pixels(seed, shape=(HEIGHT, WIDTH, 3)):
    return np.random.default_rng(seed).integers(0, 256, size=shape, dtype=np.uint8)


def random_labels(seed, num_classes, ignore_label, shape=(HEIGHT, WIDTH)):
    values = np.append(np.arange(num_classes), ignore_label).astype(np.uint8)
    return np.random.default_rng(seed).choice(values, size=shape)


def save(path, image, image_format):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    image.save(path, format=image_format)


def write_rgb(path, pixels, image_format):
    save(path, Image.fromarray(pixels), image_format)


def write_index_png(path, indices):
    """A grayscale (mode L) PNG whose values are the class indices."""
    save(path, Image.fromarray(indices), 'PNG')


def write_palette_png(path, indices):
    """A palette (mode P) PNG: pixels are palette indices, shown as VOC-like colours.

    The palette maps index i to a colour whose channels are all unlike i, so anything that
    reads the colours (or a grayscale conversion of them) instead of the indices gives other
    values.
    """
    image = Image.frombytes('P', (indices.shape[1], indices.shape[0]), indices.tobytes())
    image.putpalette([(37 * i + 101 + 53 * channel) % 256
                      for i in range(256) for channel in range(3)])
    save(path, image, 'PNG')


def build_voc(root, ids, label_dirs=('SegmentationClass',), split='train', seed=0,
              num_classes=21, ignore_label=255):
    """A VOC2012 tree; returns {id: (jpeg path, {label dir: indices})}."""
    os.makedirs(os.path.join(root, 'ImageSets', 'Segmentation'), exist_ok=True)
    with open(os.path.join(root, 'ImageSets', 'Segmentation', f'{split}.txt'), 'w') as f:
        f.write(''.join(f'{image_id}\n' for image_id in ids))
    sources = {}
    for n, image_id in enumerate(ids):
        jpeg = os.path.join(root, 'JPEGImages', f'{image_id}.jpg')
        write_rgb(jpeg, random_pixels(seed + n), 'JPEG')
        labels = {}
        for k, label_dir in enumerate(label_dirs):
            indices = random_labels(seed + 100 * (k + 1) + n, num_classes, ignore_label)
            write = write_palette_png if label_dir == 'SegmentationClass' else write_index_png
            write(os.path.join(root, label_dir, f'{image_id}.png'), indices)
            labels[label_dir] = indices
        sources[image_id] = (jpeg, labels)
    return sources


def build_cityscapes(root, split, cities, per_city=2):
    """A Cityscapes tree; returns {image id: (png path, pixels, train ids)}."""
    sources = {}
    for c, city in enumerate(cities):
        for n in range(per_city):
            image_id = f'{city}_{c:06d}_{n:06d}'
            pixels = random_pixels(10 * c + n)
            train_ids = random_labels(10 * c + n, 19, 255)
            png = os.path.join(root, 'leftImg8bit', split, city, f'{image_id}_leftImg8bit.png')
            write_rgb(png, pixels, 'PNG')
            write_index_png(os.path.join(root, 'gtFine', split, city,
                                         f'{image_id}_gtFine_labelTrainIds.png'), train_ids)
            # The other gtFine files of a real tree must not be taken for labels.
            write_index_png(os.path.join(root, 'gtFine', split, city,
                                         f'{image_id}_gtFine_labelIds.png'), train_ids + 1)
            sources[image_id] = (png, pixels, train_ids)
    return sources


def build_ade20k(root, folder, count):
    """An ADEChallengeData2016 tree; returns {image id: (jpeg path, annotation)}."""
    sources = {}
    for n in range(count):
        image_id = f'ADE_{folder}_{n + 1:08d}'
        jpeg = os.path.join(root, 'images', folder, f'{image_id}.jpg')
        write_rgb(jpeg, random_pixels(50 + n), 'JPEG')
        annotation = random_labels(50 + n, 151, 0)
        write_index_png(os.path.join(root, 'annotations', folder, f'{image_id}.png'), annotation)
        sources[image_id] = (jpeg, annotation)
    return sources


# --- Reading back ---------------------------------------------------------------------------

def read_all(dataset, items=ITEMS):
    """Every example of `dataset` through DatasetDataProvider (graph mode, one epoch)."""
    with tf.Graph().as_default():
        provider = DatasetDataProvider(dataset, shuffle=False, num_epochs=1)
        return [dict(zip(items, values)) for values in drain(provider.get(items))]


def jpeg_pixels(path):
    with open(path, 'rb') as f:
        return tf.io.decode_jpeg(f.read(), channels=3).numpy()


def check_examples(examples, expected):
    """`expected`: image id -> (pixels, label indices); every id exactly once."""
    assert sorted(e['image_name'].decode() for e in examples) == sorted(expected)
    for example in examples:
        pixels, indices = expected[example['image_name'].decode()]
        assert (example['height'], example['width']) == indices.shape
        np.testing.assert_array_equal(example['image'], pixels)
        assert example['labels_class'].shape == indices.shape + (1,)
        np.testing.assert_array_equal(example['labels_class'][..., 0], indices)


def raw_examples(output_dir, split):
    files = sorted(tf.io.gfile.glob(os.path.join(output_dir, f'{split}-*.tfrecord')))
    return [tf.train.Example.FromString(record.numpy())
            for record in tf.data.TFRecordDataset(files)]


def convert_error(convert, *args, **kwargs):
    with pytest.raises(ValueError) as error:
        convert(*args, **kwargs)
    return str(error.value)


# --- VOC2012 --------------------------------------------------------------------------------

VOC_IDS = ['2007_000032', '2007_000039', '2008_000123', '2009_004001', '2011_003000']


def test_voc_palette_labels_round_trip(tmp_path):
    root, out = tmp_path / 'VOC2012', tmp_path / 'out'
    sources = build_voc(str(root), VOC_IDS)
    summary = segmentation.convert_voc_seg(str(root), str(out), 'train', num_shards=2)['train']
    assert summary.num_records == len(VOC_IDS) and len(summary.shards) == 2
    assert summary.notes == {} and summary.skipped == {}

    dataset = segmentation.get_split('pascal_voc_seg', 'train', str(out))
    assert dataset.num_samples == len(VOC_IDS)
    assert (dataset.num_classes, dataset.ignore_label) == (21, 255)
    assert dataset.labels_to_names[15] == 'person'
    check_examples(read_all(dataset), {
        image_id: (jpeg_pixels(jpeg), labels['SegmentationClass'])
        for image_id, (jpeg, labels) in sources.items()})
    info = dataset_info.read_dataset_info(str(out))
    assert info['extra'] == {'num_classes': 21, 'ignore_label': 255,
                             'label_dir': 'SegmentationClass'}


def test_voc_prefers_raw_labels_and_honours_label_dir(tmp_path):
    root = tmp_path / 'VOC2012'
    sources = build_voc(str(root), VOC_IDS[:2],
                        label_dirs=('SegmentationClass', 'SegmentationClassRaw'))
    for label_dir, out in ((None, tmp_path / 'default'),
                           ('SegmentationClass', tmp_path / 'palette')):
        segmentation.convert_voc_seg(str(root), str(out), 'train', label_dir=label_dir)
        used = label_dir or 'SegmentationClassRaw'
        assert dataset_info.read_dataset_info(str(out))['extra']['label_dir'] == used
        examples = read_all(segmentation.get_split('pascal_voc_seg', 'train', str(out)))
        check_examples(examples, {image_id: (jpeg_pixels(jpeg), labels[used])
                                  for image_id, (jpeg, labels) in sources.items()})


def test_record_layout_passes_image_bytes_through(tmp_path):
    root, out = tmp_path / 'VOC2012', tmp_path / 'out'
    sources = build_voc(str(root), VOC_IDS[:3])
    segmentation.convert_voc_seg(str(root), str(out), 'train', num_shards=1)
    examples = raw_examples(str(out), 'train')
    assert len(examples) == 3
    for example in examples:
        feature = example.features.feature
        image_id = feature['image/filename'].bytes_list.value[0].decode()
        jpeg, labels = sources[image_id]
        with open(jpeg, 'rb') as f:
            assert feature['image/encoded'].bytes_list.value == [f.read()]
        assert feature['image/format'].bytes_list.value == [b'jpeg']
        assert feature['image/channels'].int64_list.value == [3]
        assert feature['image/height'].int64_list.value == [HEIGHT]
        assert feature['image/width'].int64_list.value == [WIDTH]
        assert feature['image/segmentation/class/format'].bytes_list.value == [b'png']
        label_png = Image.open(io.BytesIO(
            feature['image/segmentation/class/encoded'].bytes_list.value[0]))
        assert label_png.mode == 'L'  # one channel of indices, no palette
        np.testing.assert_array_equal(np.asarray(label_png), labels['SegmentationClass'])


def test_records_read_by_a_deeplab_style_descriptor(tmp_path):
    """deeplab's segmentation_dataset.get_dataset: its keys, defaults and handlers."""
    root, out = tmp_path / 'VOC2012', tmp_path / 'out'
    sources = build_voc(str(root), VOC_IDS[:3], split='val')
    segmentation.convert_voc_seg(str(root), str(out), 'val', num_shards=2)
    keys_to_features = {
        'image/encoded': tf.io.FixedLenFeature((), tf.string, default_value=''),
        'image/filename': tf.io.FixedLenFeature((), tf.string, default_value=''),
        'image/format': tf.io.FixedLenFeature((), tf.string, default_value='jpeg'),
        'image/height': tf.io.FixedLenFeature((), tf.int64, default_value=0),
        'image/width': tf.io.FixedLenFeature((), tf.int64, default_value=0),
        'image/segmentation/class/encoded':
            tf.io.FixedLenFeature((), tf.string, default_value=''),
        'image/segmentation/class/format':
            tf.io.FixedLenFeature((), tf.string, default_value='png'),
    }
    items_to_handlers = {
        'image': tfexample_decoder.Image(image_key='image/encoded',
                                         format_key='image/format', channels=3),
        'image_name': tfexample_decoder.Tensor('image/filename'),
        'height': tfexample_decoder.Tensor('image/height'),
        'width': tfexample_decoder.Tensor('image/width'),
        'labels_class': tfexample_decoder.Image(
            image_key='image/segmentation/class/encoded',
            format_key='image/segmentation/class/format', channels=1),
    }
    dataset = Dataset(
        data_sources=os.path.join(str(out), '%s-*' % 'val'),
        reader=tf.compat.v1.TFRecordReader,
        decoder=tfexample_decoder.TFExampleDecoder(keys_to_features, items_to_handlers),
        # deeplab says 1449 for val; this set holds 3 (an epoch short of num_samples is an error)
        num_samples=len(sources), items_to_descriptions={}, ignore_label=255, num_classes=21,
        name='pascal_voc_seg', multi_label=True)
    check_examples(read_all(dataset), {
        image_id: (jpeg_pixels(jpeg), labels['SegmentationClass'])
        for image_id, (jpeg, labels) in sources.items()})


def test_custom_classes_in_the_voc_layout_are_recorded(tmp_path):
    root, out = tmp_path / 'VOC2012', tmp_path / 'out'
    sources = build_voc(str(root), VOC_IDS[:2], label_dirs=('SegmentationClassRaw',),
                        num_classes=3, ignore_label=200)
    segmentation.convert_voc_seg(str(root), str(out), 'train', num_classes=3, ignore_label=200)
    dataset = segmentation.get_split('pascal_voc_seg', 'train', str(out))
    assert (dataset.num_classes, dataset.ignore_label) == (3, 200)
    assert dataset.labels_to_names == {}  # VOC's names are not these classes'
    check_examples(read_all(dataset), {
        image_id: (jpeg_pixels(jpeg), labels['SegmentationClassRaw'])
        for image_id, (jpeg, labels) in sources.items()})
    # With VOC's classes, 200 is out of range.
    message = convert_error(segmentation.convert_voc_seg, str(root), str(tmp_path / 'x'),
                            'train')
    assert 'SegmentationClassRaw' in message and '[200]' in message


# --- Cityscapes and ADE20K ------------------------------------------------------------------

def test_cityscapes_round_trip(tmp_path):
    root, out = tmp_path / 'cityscapes', tmp_path / 'out'
    train = build_cityscapes(str(root), 'train', ['aachen', 'bochum'])
    val = build_cityscapes(str(root), 'val', ['frankfurt'], per_city=1)
    assert cli.main(['convert', 'cityscapes', str(root), str(out), '--split', 'train',
                     'val_fine', '--shards', '3', '--seed', '5']) == 0
    info = dataset_info.read_dataset_info(str(out))
    assert dataset_info.split_sizes(info) == {'train_fine': 4, 'val_fine': 1}
    for split, sources in (('train_fine', train), ('val_fine', val)):
        dataset = segmentation.get_split('cityscapes', split, str(out))
        assert (dataset.num_classes, dataset.ignore_label) == (19, 255)
        check_examples(read_all(dataset), {image_id: (pixels, train_ids) for image_id,
                                           (_, pixels, train_ids) in sources.items()})


def test_ade20k_round_trip(tmp_path):
    root, out = tmp_path / 'ADEChallengeData2016', tmp_path / 'out'
    sources = build_ade20k(str(root), 'validation', 3)
    segmentation.convert_ade20k(str(root), str(out), 'val', num_shards=2)
    dataset = segmentation.get_split('ade20k', 'val', str(out))
    assert (dataset.num_samples, dataset.num_classes, dataset.ignore_label) == (3, 151, 0)
    check_examples(read_all(dataset), {image_id: (jpeg_pixels(jpeg), annotation)
                                       for image_id, (jpeg, annotation) in sources.items()})


def test_published_sizes_without_dataset_info(tmp_path):
    for name, split, size, num_classes, ignore_label in (
            ('pascal_voc_seg', 'train_aug', 10582, 21, 255),
            ('cityscapes', 'train_coarse', 22973, 19, 255),
            ('cityscapes', 'test_fine', 1525, 19, 255),
            ('ade20k', 'train', 20210, 151, 0)):
        dataset = segmentation.get_split(name, split, str(tmp_path))
        assert (dataset.num_samples, dataset.num_classes, dataset.ignore_label) == (
            size, num_classes, ignore_label)
        assert dataset.data_sources == os.path.join(str(tmp_path), f'{split}-*.tfrecord')
    with pytest.raises(ValueError, match='known splits'):
        segmentation.get_split('ade20k', 'test', str(tmp_path))
    with pytest.raises(ValueError, match="unknown segmentation dataset 'voc'"):
        segmentation.get_split('voc', 'train', str(tmp_path))


def test_seed_orders_examples_reproducibly(tmp_path):
    root = tmp_path / 'ADEChallengeData2016'
    build_ade20k(str(root), 'training', 8)

    def names(seed, out):
        segmentation.convert_ade20k(str(root), str(tmp_path / out), 'train', num_shards=1,
                                    seed=seed)
        return [e.features.feature['image/filename'].bytes_list.value[0].decode()
                for e in raw_examples(str(tmp_path / out), 'train')]

    in_order = names(None, 'none')
    assert in_order == sorted(in_order)
    first = names(1, 'a')
    assert names(1, 'b') == first != in_order
    second = names(2, 'c')
    assert sorted(second) == in_order and second != first


@pytest.mark.slow
def test_workers_write_the_same_bytes(tmp_path):
    root = tmp_path / 'ADEChallengeData2016'
    build_ade20k(str(root), 'training', 6)
    shard_bytes = []
    for workers in (1, 2):
        out = tmp_path / f'workers{workers}'
        segmentation.convert_ade20k(str(root), str(out), 'train', num_shards=2, processes=workers)
        shard_bytes.append([(out / name).read_bytes()
                            for name in sorted(os.listdir(out)) if name.endswith('.tfrecord')])
    assert shard_bytes[0] == shard_bytes[1]


# --- Bad input ------------------------------------------------------------------------------

def test_image_label_size_mismatch_names_both_files(tmp_path):
    root = tmp_path / 'VOC2012'
    sources = build_voc(str(root), VOC_IDS[:2])
    label = os.path.join(str(root), 'SegmentationClass', f'{VOC_IDS[1]}.png')
    write_palette_png(label, np.zeros((HEIGHT, WIDTH + 1), np.uint8))
    message = convert_error(segmentation.convert_voc_seg, str(root), str(tmp_path / 'out'),
                            'train')
    assert 'size mismatch' in message
    assert sources[VOC_IDS[1]][0] in message and label in message


def test_colour_label_png_is_refused(tmp_path):
    root = tmp_path / 'VOC2012'
    build_voc(str(root), VOC_IDS[:1], label_dirs=('SegmentationClassRaw',))
    label = os.path.join(str(root), 'SegmentationClassRaw', f'{VOC_IDS[0]}.png')
    write_rgb(label, random_pixels(3), 'PNG')
    message = convert_error(segmentation.convert_voc_seg, str(root), str(tmp_path / 'out'),
                            'train')
    assert label in message and "mode 'RGB'" in message


def test_out_of_range_labels_error_or_become_ignore_label(tmp_path):
    root = tmp_path / 'VOC2012'
    sources = build_voc(str(root), VOC_IDS[:3], label_dirs=('SegmentationClassRaw',))
    bad_id = VOC_IDS[1]
    indices = sources[bad_id][1]['SegmentationClassRaw'].copy()
    indices[0, :3] = [21, 200, 21]
    label = os.path.join(str(root), 'SegmentationClassRaw', f'{bad_id}.png')
    write_index_png(label, indices)

    message = convert_error(segmentation.convert_voc_seg, str(root), str(tmp_path / 'x'),
                            'train')
    assert label in message and '[21, 200]' in message

    out = tmp_path / 'out'
    summary = segmentation.convert_voc_seg(str(root), str(out), 'train',
                                           on_bad_label='ignore')['train']
    assert summary.num_records == 3
    notes = summary.notes[segmentation.BAD_LABEL_NOTE]
    assert len(notes) == 1 and label in notes[0] and '3 pixels' in notes[0]
    assert 'label values mapped to ignore_label' in summary.format()
    expected = indices.copy()
    expected[0, :3] = 255
    examples = {e['image_name'].decode(): e for e in
                read_all(segmentation.get_split('pascal_voc_seg', 'train', str(out)))}
    np.testing.assert_array_equal(examples[bad_id]['labels_class'][..., 0], expected)


def test_missing_label_names_both_paths(tmp_path):
    root = tmp_path / 'VOC2012'
    sources = build_voc(str(root), VOC_IDS[:2])
    label = os.path.join(str(root), 'SegmentationClass', f'{VOC_IDS[0]}.png')
    os.remove(label)
    message = convert_error(segmentation.convert_voc_seg, str(root), str(tmp_path / 'out'),
                            'train')
    assert label in message and sources[VOC_IDS[0]][0] in message


def test_missing_cityscapes_label_names_both_paths(tmp_path):
    root = tmp_path / 'cityscapes'
    sources = build_cityscapes(str(root), 'val', ['lindau'], per_city=1)
    [(image_id, (png, _, _))] = sources.items()
    label = os.path.join(str(root), 'gtFine', 'val', 'lindau',
                         f'{image_id}_gtFine_labelTrainIds.png')
    os.remove(label)
    message = convert_error(segmentation.convert_cityscapes, str(root), str(tmp_path / 'out'),
                            'val')
    assert label in message and png in message


@pytest.mark.parametrize('entry', ['../outside', '/etc/passwd', 'a/../../b'])
def test_list_entry_escaping_the_root_is_refused(tmp_path, entry):
    root = tmp_path / 'VOC2012'
    build_voc(str(root), VOC_IDS[:1])
    list_file = os.path.join(str(root), 'ImageSets', 'Segmentation', 'train.txt')
    with open(list_file, 'a') as f:
        f.write(f'{entry}\n')
    message = convert_error(segmentation.convert_voc_seg, str(root), str(tmp_path / 'out'),
                            'train')
    assert f'{list_file}:2' in message and repr(entry) in message


def test_corrupt_image_names_the_file(tmp_path):
    root = tmp_path / 'ADEChallengeData2016'
    sources = build_ade20k(str(root), 'validation', 2)
    jpeg = sources['ADE_validation_00000002'][0]
    with open(jpeg, 'rb') as f:
        data = f.read()
    with open(jpeg, 'wb') as f:
        f.write(data[:len(data) // 2])
    message = convert_error(segmentation.convert_ade20k, str(root), str(tmp_path / 'out'),
                            'val')
    assert jpeg in message and 'corrupt' in message


def test_missing_split_and_folders_are_named(tmp_path):
    root = tmp_path / 'VOC2012'
    build_voc(str(root), VOC_IDS[:1])
    message = convert_error(segmentation.convert_voc_seg, str(root), str(tmp_path / 'o'),
                            'trainval')
    assert 'trainval.txt' in message and "['train']" in message
    message = convert_error(segmentation.convert_voc_seg, str(root), str(tmp_path / 'o'),
                            'train', label_dir='SegmentationObject')
    assert os.path.join(str(root), 'SegmentationObject') in message
    message = convert_error(segmentation.convert_cityscapes, str(tmp_path), str(tmp_path / 'o'),
                            'train')
    assert os.path.join(str(tmp_path), 'leftImg8bit', 'train') in message
    message = convert_error(segmentation.convert_ade20k, str(root), str(tmp_path / 'o'), 'test')
    assert "'test'" in message


def test_command_line_arguments(tmp_path, capsys):
    root, out = tmp_path / 'VOC2012', tmp_path / 'out'
    build_voc(str(root), VOC_IDS[:2], label_dirs=('SegmentationClassRaw',))
    assert cli.main(['convert', 'voc-seg', str(root), str(out), '--split', 'train',
                     '--num-shards', '1']) == 0
    printed = capsys.readouterr()
    assert 'SegmentationClassRaw' in printed.err and 'train: 2 records' in printed.out
    with open(os.path.join(str(out), dataset_info.DATASET_INFO_FILENAME)) as f:
        assert json.load(f)['name'] == 'pascal_voc_seg'
    with pytest.raises(SystemExit):
        cli.main(['convert', 'voc-seg', '--help'])
    assert 'ImageSets/Segmentation' in capsys.readouterr().out
