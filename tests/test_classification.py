"""Classification converters and descriptors (slimdata.datasets.classification).

Source folders and MNIST idx files are built by the tests (idx files with numpy + struct, as
the format's description says), converted, and read back through the descriptors and
DatasetDataProvider in graph mode; every decoded image is compared with its source (PNG pixels
exactly, JPEG against TensorFlow's own decoding of the same bytes) and every label with the
label the test gave it.
"""

import gzip
import os
import re
import struct

import numpy as np
import pytest
from PIL import Image

from conftest import drain
from slimdata import cli
from slimdata._tf import tf
from slimdata.dataset_data_provider import DatasetDataProvider
from slimdata.datasets import classification, convert_utils
from slimdata.records import dataset_info

WIDTH, HEIGHT = 24, 16


# --- Building sources -----------------------------------------------------------------------

def write_image(path, seed, image_format, mode='RGB', size=(WIDTH, HEIGHT)):
    """Writes random pixels; returns what a 3-channel decoder must give back."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    channels = {'RGB': 3, 'L': 1}[mode]
    pixels = np.random.default_rng(seed).integers(0, 256, size=(size[1], size[0], channels),
                                                  dtype=np.uint8)
    Image.fromarray(pixels.squeeze(2) if channels == 1 else pixels).save(path, image_format)
    if image_format == 'JPEG':
        with open(path, 'rb') as f:
            return tf.io.decode_jpeg(f.read(), channels=3).numpy()
    return np.repeat(pixels, 3 // channels, axis=2)


def build_class_folders(root, per_class):
    """root/<class>/<n>.{png,jpg}; returns {path: (expected pixels, class name)}."""
    sources = {}
    for c, (class_name, count) in enumerate(per_class.items()):
        for n in range(count):
            image_format = ('PNG', 'JPEG')[n % 2]
            path = os.path.join(root, class_name, f'{n:03d}.{image_format.lower()}')
            mode = 'L' if n == 2 else 'RGB'  # a grayscale PNG is decoded to 3 equal channels
            sources[path] = (write_image(path, 100 * c + n, image_format, mode), class_name)
    return sources


def idx_bytes(magic, array):
    return struct.pack('>I', magic) + struct.pack(f'>{array.ndim}I', *array.shape) + \
        array.astype(np.uint8).tobytes()


def write_idx(path, magic, array, gzipped=False):
    data = idx_bytes(magic, array)
    with open(path, 'wb') as f:
        f.write(gzip.compress(data) if gzipped else data)


def build_mnist(src_dir, num_train=12, num_test=5, gzipped=False):
    """Writes the four idx files; returns {'train': (images, labels), 'test': ...}."""
    os.makedirs(src_dir, exist_ok=True)
    rng = np.random.default_rng(7)
    splits = {}
    suffix = '.gz' if gzipped else ''
    for split, prefix, count in (('train', 'train', num_train), ('test', 't10k', num_test)):
        images = rng.integers(0, 256, size=(count, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=count, dtype=np.uint8)
        write_idx(os.path.join(src_dir, f'{prefix}-images-idx3-ubyte{suffix}'), 2051, images,
                  gzipped)
        write_idx(os.path.join(src_dir, f'{prefix}-labels-idx1-ubyte{suffix}'), 2049, labels,
                  gzipped)
        splits[split] = (images, labels)
    return splits


# --- Reading back ---------------------------------------------------------------------------

def read_all(dataset, items=('image', 'label')):
    """Every example of `dataset` through DatasetDataProvider (graph mode, one epoch)."""
    with tf.Graph().as_default():
        provider = DatasetDataProvider(dataset, shuffle=False, num_epochs=1)
        return [dict(zip(items, values)) for values in drain(provider.get(list(items)))]


def match_sources(examples, sources, labels_to_names):
    """Matches each example to the one source with its pixels; returns the matched paths."""
    matched = []
    for example in examples:
        [path] = [path for path, (pixels, _) in sources.items()
                  if pixels.shape == example['image'].shape
                  and np.array_equal(pixels, example['image'])]
        assert labels_to_names[int(example['label'])] == sources[path][1]
        matched.append(path)
    return matched


def convert_error(convert, *args, **kwargs):
    with pytest.raises(ValueError) as error:
        convert(*args, **kwargs)
    return str(error.value)


# --- Image folders --------------------------------------------------------------------------

def test_class_folders_round_trip(tmp_path):
    src, out = tmp_path / 'photos', tmp_path / 'out'
    sources = build_class_folders(str(src), {'tulips': 4, 'daisy': 3, 'roses': 5})
    (src / 'LICENSE.txt').write_text('not part of the layout: files beside class folders')
    summaries = classification.convert_image_folder(str(src), str(out), validation_ratio=0.25,
                                                    seed=3, num_shards=2)
    assert {s: summary.num_records for s, summary in summaries.items()} == {
        'train': 9, 'validation': 3}

    expected_names = {0: 'daisy', 1: 'roses', 2: 'tulips'}
    matched = []
    for split, size in (('train', 9), ('validation', 3)):
        dataset = classification.get_split('image_folder', split, str(out))
        assert (dataset.num_samples, dataset.num_classes) == (size, 3)
        assert dataset.labels_to_names == expected_names
        examples = read_all(dataset)
        assert len(examples) == size
        matched += match_sources(examples, sources, expected_names)
    assert sorted(matched) == sorted(sources)
    assert dataset_info.read_labels_file(str(out)) == expected_names


def test_records_pass_image_bytes_through(tmp_path):
    src, out = tmp_path / 'photos', tmp_path / 'out'
    sources = build_class_folders(str(src), {'a': 3, 'b': 2})
    classification.convert_image_folder(str(src), str(out), validation_ratio=0, num_shards=1)
    files = tf.io.gfile.glob(os.path.join(str(out), 'train-*.tfrecord'))
    records = [tf.train.Example.FromString(r.numpy()) for r in tf.data.TFRecordDataset(files)]
    by_bytes = {}
    for path in sources:
        with open(path, 'rb') as f:
            by_bytes[f.read()] = path
    assert len(records) == len(sources)
    for record in records:
        feature = record.features.feature
        path = by_bytes[feature['image/encoded'].bytes_list.value[0]]
        assert feature['image/format'].bytes_list.value == [
            b'png' if path.endswith('.png') else b'jpeg']
        assert feature['image/class/label'].int64_list.value == [
            {'a': 0, 'b': 1}[sources[path][1]]]
        assert feature['image/height'].int64_list.value == [HEIGHT]
        assert feature['image/width'].int64_list.value == [WIDTH]


def test_labelled_filenames_with_integer_labels(tmp_path):
    src, out = tmp_path / 'flat', tmp_path / 'out'
    sources = {}
    for n, (name, label) in enumerate([('cat_0', 0), ('dog_2', 2), ('img_7_2', 2),
                                       ('x_0', 0), ('y_5', 5)]):
        path = os.path.join(str(src), f'{name}.png')
        sources[path] = (write_image(path, n, 'PNG'), str(label))
    classification.convert_image_folder(str(src), str(out), layout='labelled_filenames',
                                        validation_ratio=0)
    dataset = classification.get_split('image_folder', 'train', str(out))
    assert dataset.labels_to_names == {0: '0', 2: '2', 5: '5'}
    assert dataset.num_classes == 6
    assert sorted(match_sources(read_all(dataset), sources, dataset.labels_to_names)) == \
        sorted(sources)


def test_labelled_filenames_with_class_names(tmp_path):
    src, out = tmp_path / 'flat', tmp_path / 'out'
    sources = {}
    for n, (name, label) in enumerate([('a_cat', 'cat'), ('b_dog', 'dog'), ('c_cat', 'cat'),
                                       ('d_10', '10')]):
        path = os.path.join(str(src), f'{name}.jpg')
        sources[path] = (write_image(path, n, 'JPEG'), label)
    classification.convert_image_folder(str(src), str(out), layout='labelled_filenames',
                                        validation_ratio=0)
    dataset = classification.get_split('image_folder', 'train', str(out))
    assert dataset.labels_to_names == {0: '10', 1: 'cat', 2: 'dog'}
    assert sorted(match_sources(read_all(dataset), sources, dataset.labels_to_names)) == \
        sorted(sources)


def test_non_images_are_refused_or_skipped_and_counted(tmp_path):
    src = tmp_path / 'photos'
    sources = build_class_folders(str(src), {'a': 3, 'b': 3})
    junk = src / 'b' / 'notes.jpg'
    junk.write_text('a text file with an image extension')
    message = convert_error(classification.convert_image_folder, str(src),
                            str(tmp_path / 'x'))
    assert str(junk) in message and 'skip' in message

    summaries = classification.convert_image_folder(str(src), str(tmp_path / 'out'),
                                                    validation_ratio=0.2,
                                                    on_non_image='skip')
    assert summaries['train'].skipped == {classification.NON_IMAGE_REASON: [str(junk)]}
    assert summaries['validation'].skipped == {}
    assert sum(s.num_records for s in summaries.values()) == len(sources)
    assert 'skipped 1 items' in summaries['train'].format()


def test_corrupt_image_names_the_file(tmp_path):
    src = tmp_path / 'photos'
    sources = build_class_folders(str(src), {'a': 2, 'b': 2})
    for n, path in enumerate(sorted(sources)[:2]):  # a/000.png and a/001.jpeg
        with open(path, 'rb') as f:
            data = f.read()
        with open(path, 'wb') as f:
            f.write(data[:len(data) // 2])
        message = convert_error(classification.convert_image_folder, str(src),
                                str(tmp_path / f'out{n}'), validation_ratio=0)
        assert path in message and 'corrupt' in message
        with open(path, 'wb') as f:
            f.write(data)


def test_bad_layouts_are_named(tmp_path):
    flat = tmp_path / 'flat'
    write_image(str(flat / 'nolabel.png'), 0, 'PNG')
    message = convert_error(classification.convert_image_folder, str(flat), str(tmp_path / 'o'),
                            layout='labelled_filenames')
    assert str(flat / 'nolabel.png') in message and '<name>_<label>' in message
    message = convert_error(classification.convert_image_folder, str(flat), str(tmp_path / 'o'))
    assert str(flat) in message and 'class folders' in message
    message = convert_error(classification.convert_image_folder, str(flat), str(tmp_path / 'o'),
                            layout='imagenet')
    assert "'imagenet'" in message
    empty = tmp_path / 'empty'
    empty.mkdir()
    (empty / 'README').write_text('no images here')
    message = convert_error(classification.convert_image_folder, str(empty), str(tmp_path / 'o'),
                            layout='labelled_filenames', on_non_image='skip')
    assert str(empty) in message and '1 other files skipped' in message


def test_split_is_deterministic_and_independent_of_listing_order(tmp_path, monkeypatch):
    src = tmp_path / 'photos'
    build_class_folders(str(src), {'a': 10, 'b': 10})

    def validation_files(seed, out):
        classification.convert_image_folder(str(src), str(tmp_path / out),
                                            validation_ratio=0.3, seed=seed)
        files = tf.io.gfile.glob(str(tmp_path / out / 'validation-*.tfrecord'))
        return sorted(tf.train.Example.FromString(r.numpy()).features.feature[
            'image/encoded'].bytes_list.value[0] for r in tf.data.TFRecordDataset(files))

    first = validation_files(1, 'a')
    assert len(first) == round(20 * 0.3)
    assert validation_files(1, 'b') == first
    assert validation_files(2, 'c') != first
    # The file system may list a folder in any order: the split must not change.
    listdir = tf.io.gfile.listdir
    monkeypatch.setattr(tf.io.gfile, 'listdir', lambda path: list(reversed(listdir(path))))
    assert validation_files(1, 'd') == first


def test_split_train_validation():
    items = list(range(20))
    train, validation = convert_utils.split_train_validation(items, 0.25, seed=4)
    assert len(validation) == 5 and sorted(train + validation) == items
    assert convert_utils.split_train_validation(items, 0.25, seed=4) == (train, validation)
    assert convert_utils.split_train_validation(items, 0.25, seed=None) == (items[5:],
                                                                             items[:5])
    assert convert_utils.split_train_validation(items, 0, seed=4)[1] == []
    with pytest.raises(ValueError, match='validation split empty'):
        convert_utils.split_train_validation(items[:3], 0.1, seed=4)
    with pytest.raises(ValueError, match=r'\[0, 1\)'):
        convert_utils.split_train_validation(items, 1.0, seed=4)


def test_image_folder_descriptor_needs_a_converted_folder(tmp_path):
    with pytest.raises(ValueError, match='Convert the images first') as raised:
        classification.get_split('image_folder', 'train', str(tmp_path))
    # The command the message suggests is one the CLI accepts.
    suggested = re.search(r'`slimdata (convert [^`]+)`', str(raised.value)).group(1).split()
    assert 'SRC' in suggested  # the one placeholder; SRC must exist to be accepted
    parsed = cli.build_parser(selected='convert').parse_args(
        [str(tmp_path) if word == 'SRC' else word for word in suggested])
    assert parsed.output_dir == str(tmp_path)
    with pytest.raises(ValueError, match="unknown classification dataset 'imagenet'"):
        classification.get_split('imagenet', 'train', str(tmp_path))


# --- MNIST idx files ------------------------------------------------------------------------

@pytest.mark.parametrize('gzipped', [False, True])
def test_mnist_round_trip(tmp_path, gzipped):
    src, out = tmp_path / 'mnist', tmp_path / 'out'
    splits = build_mnist(str(src), gzipped=gzipped)
    summaries = classification.convert_mnist_idx(str(src), str(out), seed=None, num_shards=2)
    assert {s: summary.num_records for s, summary in summaries.items()} == {
        'train': 12, 'test': 5}
    for split, (images, labels) in splits.items():
        dataset = classification.get_split('mnist', split, str(out))
        assert dataset.num_samples == len(images)  # from dataset_info.json, not 60000
        assert dataset.labels_to_names[3] == 'three' and dataset.num_classes == 10
        examples = read_all(dataset)
        assert len(examples) == len(images)
        for example, image, label in zip(examples, images, labels):
            assert example['image'].shape == (28, 28, 1)
            np.testing.assert_array_equal(example['image'][..., 0], image)
            assert example['label'] == label


def test_mnist_validation_split(tmp_path):
    src, out = tmp_path / 'mnist', tmp_path / 'out'
    splits = build_mnist(str(src), num_train=20)
    summaries = classification.convert_mnist_idx(str(src), str(out), validation_ratio=0.25,
                                                 seed=9)
    assert {s: summary.num_records for s, summary in summaries.items()} == {
        'train': 15, 'validation': 5, 'test': 5}
    train_images = splits['train'][0]
    found = []
    for split in ('train', 'validation'):
        for example in read_all(classification.get_split('mnist', split, str(out))):
            [index] = [i for i, image in enumerate(train_images)
                       if np.array_equal(image, example['image'][..., 0])]
            assert example['label'] == splits['train'][1][index]
            found.append(index)
    assert sorted(found) == list(range(20))


def corrupt_file(path, transform):
    with open(path, 'rb') as f:
        data = f.read()
    with open(path, 'wb') as f:
        f.write(transform(data))


@pytest.mark.parametrize('name, transform, expected', [
    ('train-images-idx3-ubyte', lambda d: struct.pack('>I', 2049) + d[4:], 'bad magic'),
    ('train-labels-idx1-ubyte', lambda d: d[:6], 'truncated header'),
    ('t10k-images-idx3-ubyte', lambda d: d[:-1], 'truncated'),
    ('t10k-labels-idx1-ubyte', lambda d: d + b'\0', 'trailing data'),
    ('train-labels-idx1-ubyte', lambda d: d[:-1] + b'\x0a', 'not a digit'),
])
def test_bad_idx_files_are_named(tmp_path, name, transform, expected):
    src = tmp_path / 'mnist'
    build_mnist(str(src))
    corrupt_file(str(src / name), transform)
    message = convert_error(classification.convert_mnist_idx, str(src), str(tmp_path / 'out'))
    assert str(src / name) in message and expected in message


def test_idx_count_mismatch_and_missing_files_are_named(tmp_path):
    src = tmp_path / 'mnist'
    splits = build_mnist(str(src))
    write_idx(str(src / 'train-labels-idx1-ubyte'), 2049, splits['train'][1][:-1])
    message = convert_error(classification.convert_mnist_idx, str(src), str(tmp_path / 'o'))
    assert str(src / 'train-images-idx3-ubyte') in message
    assert str(src / 'train-labels-idx1-ubyte') in message and '11 labels' in message
    os.remove(src / 't10k-images-idx3-ubyte')
    write_idx(str(src / 'train-labels-idx1-ubyte'), 2049, splits['train'][1])
    message = convert_error(classification.convert_mnist_idx, str(src), str(tmp_path / 'o'))
    assert 't10k-images-idx3-ubyte.gz' in message and str(src) in message


def test_bad_gzip_is_named(tmp_path):
    src = tmp_path / 'mnist'
    build_mnist(str(src), gzipped=True)
    corrupt_file(str(src / 'train-images-idx3-ubyte.gz'), lambda d: d[:len(d) // 2])
    message = convert_error(classification.convert_mnist_idx, str(src), str(tmp_path / 'o'))
    assert str(src / 'train-images-idx3-ubyte.gz') in message and 'gzip' in message


# --- Published descriptors ------------------------------------------------------------------

def test_published_sizes_and_names_without_dataset_info(tmp_path):
    for name, split, size, num_classes, label, label_name in (
            ('mnist', 'train', 60000, 10, 9, 'nine'),
            ('cifar10', 'test', 10000, 10, 0, 'airplane'),
            ('flowers', 'validation', 350, 5, 4, 'tulips')):
        dataset = classification.get_split(name, split, str(tmp_path))
        assert (dataset.num_samples, dataset.num_classes) == (size, num_classes)
        assert dataset.labels_to_names[label] == label_name
    with pytest.raises(ValueError, match='known splits'):
        classification.get_split('flowers', 'test', str(tmp_path))


def test_reads_cifar10_records_written_the_slim_way(tmp_path):
    """A file as models/research/slim's download_and_convert_cifar10 names and fills it."""
    rng = np.random.default_rng(11)
    images = rng.integers(0, 256, size=(4, 32, 32, 3), dtype=np.uint8)
    labels = [3, 0, 9, 3]
    with tf.io.TFRecordWriter(str(tmp_path / 'cifar10_test.tfrecord')) as writer:
        for image, label in zip(images, labels):
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                'image/encoded': tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[tf.io.encode_png(image).numpy()])),
                'image/format': tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[b'png'])),
                'image/class/label': tf.train.Feature(int64_list=tf.train.Int64List(
                    value=[label])),
                'image/height': tf.train.Feature(int64_list=tf.train.Int64List(value=[32])),
                'image/width': tf.train.Feature(int64_list=tf.train.Int64List(value=[32])),
            })).SerializeToString())
    dataset = classification.get_split('cifar10', 'test', str(tmp_path),
                                       file_pattern='cifar10_%s.tfrecord')
    assert dataset.num_samples == 10000  # the published size; this file holds 4 records, and
    dataset.num_samples = len(labels)    # an epoch that ends short of num_samples is an error
    examples = read_all(dataset)
    assert [int(e['label']) for e in examples] == labels
    for example, image in zip(examples, images):
        np.testing.assert_array_equal(example['image'], image)


def test_command_line_arguments(tmp_path, capsys):
    src, out = tmp_path / 'photos', tmp_path / 'out'
    build_class_folders(str(src), {'a': 3, 'b': 3})
    (src / 'a' / '.DS_Store').write_bytes(b'\0\0\0\1Bud1')
    assert cli.main(['convert', 'image-folder', str(src), str(out), '--validation-ratio', '0.5',
                     '--num-shards', '1']) == 0
    info = dataset_info.read_dataset_info(str(out))
    assert dataset_info.split_sizes(info) == {'train': 3, 'validation': 3}
    printed = capsys.readouterr().out
    # A hidden file is not an image: left out without --skip-non-images, and counted.
    assert 'train: 3 records' in printed and '.DS_Store' in printed

    mnist_src = tmp_path / 'mnist'
    build_mnist(str(mnist_src), gzipped=True)
    assert cli.main(['convert', 'mnist-idx', str(mnist_src), str(tmp_path / 'mnist_out')]) == 0
    info = dataset_info.read_dataset_info(str(tmp_path / 'mnist_out'))
    assert dataset_info.split_sizes(info) == {'train': 12, 'test': 5}
