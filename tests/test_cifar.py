"""`slimdata convert cifar10|cifar100`: pickle batches in the published layout -> slim records.

The batches are written here the way the published ones are (pickled dicts with bytes keys,
protocol 2, a uint8 [N, 3072] array of R, G and B planes), with random pixels; the records
are read back through the `cifar10` / `cifar100` descriptors and DatasetDataProvider in graph
mode and compared with the source rows, reshaped here independently.
"""

import io
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from slimdata._tf import tf
from slimdata.datasets import cifar, dataset_factory
from slimdata.records import example_schema, tfrecord
from test_classification import read_all

CIFAR10_NAMES = [f'class{i}' for i in range(10)]  # not the published names: read from meta


def _pixels_of_row(row):
    """A 3072-byte row -> 32x32x3: the first 1024 bytes are red, then green, then blue."""
    return np.stack([row[plane * 1024:(plane + 1) * 1024].reshape(32, 32)
                     for plane in range(3)], axis=-1)


def _dump(path, value):
    with open(path, 'wb') as stream:
        pickle.dump(value, stream, protocol=2)


def make_cifar10(root, rows_per_batch=4, seed=0):
    """cifar-10-batches-py under `root`; returns {split: [(pixels, label), ...]}."""
    rng = np.random.default_rng(seed)
    folder = root / 'cifar-10-batches-py'
    folder.mkdir(parents=True)
    expected = {'train': [], 'test': []}
    for name in [f'data_batch_{i}' for i in range(1, 6)] + ['test_batch']:
        data = rng.integers(0, 256, (rows_per_batch, 3072), dtype=np.uint8)
        labels = [int(label) for label in rng.integers(0, 10, rows_per_batch)]
        _dump(folder / name, {b'batch_label': name.encode(), b'labels': labels, b'data': data,
                              b'filenames': [b'x.png'] * rows_per_batch})
        split = 'test' if name == 'test_batch' else 'train'
        expected[split] += [(_pixels_of_row(row), label) for row, label in zip(data, labels)]
    _dump(folder / 'batches.meta', {b'label_names': [n.encode() for n in CIFAR10_NAMES],
                                    b'num_cases_per_batch': rows_per_batch, b'num_vis': 3072})
    return expected


def make_cifar100(root, rows=6, seed=1):
    """cifar-100-python under `root`; returns {split: (pixels, fine labels, coarse labels)}."""
    rng = np.random.default_rng(seed)
    folder = root / 'cifar-100-python'
    folder.mkdir(parents=True)
    expected = {}
    for split in ('train', 'test'):
        data = rng.integers(0, 256, (rows, 3072), dtype=np.uint8)
        fine = [int(label) for label in rng.integers(0, 100, rows)]
        coarse = [int(label) for label in rng.integers(0, 20, rows)]
        _dump(folder / split, {b'data': data, b'fine_labels': fine, b'coarse_labels': coarse,
                               b'filenames': [b'y.png'] * rows})
        expected[split] = ([_pixels_of_row(row) for row in data], fine, coarse)
    _dump(folder / 'meta', {b'fine_label_names': [f'fine{i}'.encode() for i in range(100)],
                            b'coarse_label_names': [f'coarse{i}'.encode() for i in range(20)]})
    return expected


def _as_multiset(pairs):
    return sorted((pixels.tobytes(), int(label)) for pixels, label in pairs)


def test_cifar10_records_hold_the_source_pixels_and_labels(tmp_path):
    expected = make_cifar10(tmp_path / 'src')
    out = tmp_path / 'out'
    summaries = cifar.convert_cifar10(str(tmp_path / 'src'), str(out))
    assert {split: summary.num_records for split, summary in summaries.items()} == {
        'train': 20, 'test': 4}
    for split in ('train', 'test'):
        dataset = dataset_factory.get_dataset('cifar10', split, str(out))
        assert dataset.num_samples == len(expected[split])
        assert dataset.num_classes == 10
        assert dataset.labels_to_names == dict(enumerate(CIFAR10_NAMES))
        examples = read_all(dataset)
        assert all(example['image'].shape == (32, 32, 3) for example in examples)
        assert _as_multiset((e['image'], e['label']) for e in examples) == _as_multiset(
            expected[split])
    assert (out / 'labels.txt').read_text().splitlines()[:2] == ['0:class0', '1:class1']


def test_cifar100_coarse_labels_read_without_tensorflow(tmp_path):
    expected = make_cifar100(tmp_path / 'src')
    out = tmp_path / 'out'
    # SRC may be the unpacked folder itself.
    cifar.convert_cifar100(str(tmp_path / 'src' / 'cifar-100-python'), str(out),
                        label_mode='coarse')
    pixels, _, coarse = expected['test']
    records = []
    [shard] = sorted(out.glob('test-*.tfrecord'))
    for record in tfrecord.iter_records(str(shard)):
        features = {key: values for key, (_, values)
                    in example_schema.parse_example(record).items()}
        assert features['image/format'] == [b'png']
        assert (features['image/height'], features['image/width']) == ([32], [32])
        decoded = np.asarray(Image.open(io.BytesIO(features['image/encoded'][0])))
        records.append((decoded, features['image/class/label'][0]))
    assert _as_multiset(records) == _as_multiset(zip(pixels, coarse))
    dataset = dataset_factory.get_dataset('cifar100', 'train', str(out))
    assert dataset.num_classes == 20
    assert dataset.labels_to_names[19] == 'coarse19'


def test_cifar100_fine_labels_through_the_command_line(tmp_path):
    expected = make_cifar100(tmp_path / 'src')
    out = tmp_path / 'out'
    run = subprocess.run([sys.executable, '-m', 'slimdata', 'convert', 'cifar100',
                          str(tmp_path / 'src'), str(out), '--validation-ratio', '0.5'],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert f'next: slimdata verify {out}' in run.stdout
    splits = {split: read_all(dataset_factory.get_dataset('cifar100', split, str(out)))
              for split in ('train', 'validation', 'test')}
    assert [len(examples) for examples in splits.values()] == [3, 3, 6]
    train_pixels, fine, _ = expected['train']
    assert _as_multiset((e['image'], e['label']) for e in splits['train'] + splits[
        'validation']) == _as_multiset(zip(train_pixels, fine))


def test_cifar10_has_no_label_mode_option(tmp_path):
    make_cifar10(tmp_path / 'src')
    run = subprocess.run([sys.executable, '-m', 'slimdata', 'convert', 'cifar10',
                          str(tmp_path / 'src'), str(tmp_path / 'out'), '--label-mode',
                          'coarse'], capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and '--label-mode' in run.stderr


class _RunsACommand:
    """An object whose unpickling would run a shell command (what a hostile file does)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f'touch {self.marker}',))


def test_a_pickle_that_would_run_code_is_refused_naming_the_file(tmp_path):
    make_cifar10(tmp_path / 'src')
    batch = tmp_path / 'src' / 'cifar-10-batches-py' / 'data_batch_2'
    marker = tmp_path / 'it-ran'
    _dump(batch, {b'data': _RunsACommand(marker), b'labels': []})
    with pytest.raises(ValueError) as error:
        cifar.convert_cifar10(str(tmp_path / 'src'), str(tmp_path / 'out'))
    assert str(batch) in str(error.value) and 'system' in str(error.value)
    assert not marker.exists()
    assert not (tmp_path / 'out').exists()


@pytest.mark.parametrize('damage, message', [
    (lambda batch: {**batch, b'data': batch[b'data'][:, :3000]},
     r"b'data' is a uint8 array of shape \(4, 3000\), expected a uint8 array \[N, 3072\]"),
    (lambda batch: {**batch, b'data': batch[b'data'].astype(np.float32)},
     r"b'data' is a float32 array"),
    (lambda batch: {**batch, b'labels': batch[b'labels'][:3]},
     r"b'labels' holds \(3,\) int64 values, expected 4 integer labels"),
    (lambda batch: {**batch, b'labels': [0, 1, 10, 2]},
     r"b'labels'\[2\] is 10, outside 0..9"),
    (lambda batch: {b'labels': batch[b'labels']}, r"no b'data' in it"),
    (lambda batch: [batch], r'holds a list, expected a dict'),
])
def test_a_damaged_batch_is_an_error_naming_file_and_key(tmp_path, damage, message):
    make_cifar10(tmp_path / 'src')
    batch = tmp_path / 'src' / 'cifar-10-batches-py' / 'data_batch_3'
    with open(batch, 'rb') as stream:
        original = pickle.load(stream, encoding='bytes')
    _dump(batch, damage(original))
    with pytest.raises(ValueError, match=message) as error:
        cifar.convert_cifar10(str(tmp_path / 'src'), str(tmp_path / 'out'))
    assert str(batch) in str(error.value)


def test_a_missing_batch_or_folder_is_named(tmp_path):
    make_cifar10(tmp_path / 'src')
    missing = tmp_path / 'src' / 'cifar-10-batches-py' / 'data_batch_4'
    missing.unlink()
    with pytest.raises(FileNotFoundError, match='data_batch_4'):
        cifar.convert_cifar10(str(tmp_path / 'src'), str(tmp_path / 'out'))
    with pytest.raises(ValueError, match='neither batches.meta nor cifar-10-batches-py/'):
        cifar.convert_cifar10(str(tmp_path), str(tmp_path / 'out'))
    truncated = tmp_path / 'src' / 'cifar-10-batches-py' / 'test_batch'
    truncated.write_bytes(truncated.read_bytes()[:500])
    with pytest.raises(ValueError, match='not a CIFAR python pickle'):
        cifar.load_pickle(str(truncated), cifar.convert_utils.SourcePolicy(str(tmp_path)))


def test_slims_own_reader_settings_read_the_records(tmp_path):
    """models/research/slim's cifar10 reader keys, with slimdata's shard pattern."""
    expected = make_cifar10(tmp_path / 'src', rows_per_batch=2)
    cifar.convert_cifar10(str(tmp_path / 'src'), str(tmp_path / 'out'))
    keys_to_features = {
        'image/encoded': tf.io.FixedLenFeature((), tf.string, default_value=''),
        'image/format': tf.io.FixedLenFeature((), tf.string, default_value='png'),
        'image/class/label': tf.io.FixedLenFeature([], tf.int64, default_value=0),
    }
    from slimdata import dataset as slim_dataset
    from slimdata import tfexample_decoder
    decoder = tfexample_decoder.TFExampleDecoder(keys_to_features, {
        'image': tfexample_decoder.Image(shape=[32, 32, 3]),
        'label': tfexample_decoder.Tensor('image/class/label')})
    dataset = slim_dataset.Dataset(
        data_sources=str(tmp_path / 'out' / 'test-*.tfrecord'),
        reader=tf.compat.v1.TFRecordReader, decoder=decoder, num_samples=2,
        items_to_descriptions={})
    examples = read_all(dataset)
    assert _as_multiset((e['image'], e['label']) for e in examples) == _as_multiset(
        expected['test'])


# --- Hostile and unusual pickles: arrays only from bytes in the file ---------------------------

ADDRESS_SPACE = 1 << 30  # the converter's whole address space in these runs: 1 GiB


def _convert_bounded(src, out):
    """`slimdata convert cifar10 SRC OUT` in a subprocess whose address space is bounded, so
    that an allocation the file asks for fails there, not in the test process."""
    import resource

    def bound():
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    return subprocess.run([sys.executable, '-m', 'slimdata', 'convert', 'cifar10', str(src),
                           str(out), '-q'], capture_output=True, text=True, timeout=300,
                          preexec_fn=bound, env={**os.environ, 'OPENBLAS_NUM_THREADS': '1'})


class _Uninitialised:
    """Unpickles as `numpy.ndarray(shape, dtype)`: an array of memory the file never held."""

    def __init__(self, shape):
        self.shape = shape

    def __reduce__(self):
        return np.ndarray, (self.shape, np.dtype('uint8'))


class _DeclaredShape:
    """Unpickles as numpy does an array, with a shape that the bytes given do not fill."""

    def __init__(self, shape, data):
        self.shape, self.data = shape, data

    def __reduce__(self):
        reconstruct = np.ndarray.__reduce__(np.zeros(1, np.uint8))[0]
        return (reconstruct, (np.ndarray, (0,), b'b'),
                (1, self.shape, np.dtype('uint8'), False, self.data))


class _Codec:
    """Unpickles as `_codecs.encode(text, codec)`: a codec can expand a few bytes a lot."""

    def __init__(self, text, codec):
        self.text, self.codec = text, codec

    def __reduce__(self):
        import _codecs
        return _codecs.encode, (self.text, self.codec)


@pytest.mark.parametrize('data, message', [
    (_Uninitialised((400000, 3072)),
     'the pickle calls numpy.ndarray((400000, 3072), dtype(\'u1\')) directly, which makes an '
     'array whose bytes are not in the file; refused'),
    (_DeclaredShape((10 ** 13, 3072), b'\0' * 30),
     'a numpy array of shape (10000000000000, 3072) and type u1 needs '
     '30,720,000,000,000,000 bytes; the file holds 30 for it'),
    (_Codec('x' * 10, 'zlib_codec'), 'the pickle asks for _codecs.encode with '),
])
def test_a_hostile_batch_is_one_line_naming_it_in_bounded_memory(tmp_path, data, message):
    make_cifar10(tmp_path / 'src')
    batch = tmp_path / 'src' / 'cifar-10-batches-py' / 'data_batch_1'
    _dump(batch, {b'data': data, b'labels': [0, 1]})
    run = _convert_bounded(tmp_path / 'src', tmp_path / 'out')
    assert run.returncode == 1, run.stderr
    [line] = run.stderr.splitlines()
    assert line.startswith(f'slimdata convert cifar10: error: {batch}: {message}')
    assert not (tmp_path / 'out').exists() or not list((tmp_path / 'out').glob('*.tfrecord'))


def test_the_bound_is_real(tmp_path):
    """The same subprocess bound stops a real 400000-row allocation (so the refusal above is
    the unpickler's, not luck)."""
    import resource

    def bound():
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    run = subprocess.run([sys.executable, '-c', 'import numpy; numpy.ones((400000, 3072), '
                          'numpy.uint8)'], capture_output=True, text=True, timeout=300,
                         preexec_fn=bound, env={**os.environ, 'OPENBLAS_NUM_THREADS': '1'})
    assert run.returncode != 0 and 'MemoryError' in run.stderr


@pytest.mark.parametrize('labels', [
    lambda values: [np.int64(value) for value in values],   # numpy scalars: data, not code
    lambda values: np.array(values, dtype=np.int64),          # one int64 array
    lambda values: np.array(values, dtype='>i4'),             # big-endian int32
])
def test_numpy_labels_are_read_as_the_numbers_they_hold(tmp_path, labels):
    expected = make_cifar10(tmp_path / 'src', rows_per_batch=2)
    folder = tmp_path / 'src' / 'cifar-10-batches-py'
    for name in [f'data_batch_{i}' for i in range(1, 6)] + ['test_batch']:
        with open(folder / name, 'rb') as stream:
            batch = pickle.load(stream, encoding='bytes')
        _dump(folder / name, {**batch, b'labels': labels(batch[b'labels'])})
    summaries = cifar.convert_cifar10(str(tmp_path / 'src'), str(tmp_path / 'out'))
    assert summaries['train'].num_records == 10
    records = [example_schema.parse_example(record)
               for shard in sorted((tmp_path / 'out').glob('test-*.tfrecord'))
               for record in tfrecord.iter_records(str(shard))]
    assert sorted(record['image/class/label'][1][0] for record in records) == \
        sorted(label for _, label in expected['test'])


def test_arrays_pickled_with_protocol_5_are_read_too(tmp_path):
    expected = make_cifar10(tmp_path / 'src', rows_per_batch=2)
    folder = tmp_path / 'src' / 'cifar-10-batches-py'
    with open(folder / 'test_batch', 'rb') as stream:
        batch = pickle.load(stream, encoding='bytes')
    (folder / 'test_batch').write_bytes(pickle.dumps(batch, protocol=5))
    loaded = cifar.load_pickle(str(folder / 'test_batch'),
                               cifar.convert_utils.SourcePolicy(str(folder)))
    assert np.array_equal(loaded[b'data'], batch[b'data'])
    assert [(pixels.tobytes(), label) for pixels, label in expected['test']] == [
        (_pixels_of_row(row).tobytes(), label)
        for row, label in zip(loaded[b'data'], loaded[b'labels'])]
