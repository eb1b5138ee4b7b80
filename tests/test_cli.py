"""Tests of the `slimdata` command line (count, verify, inspect, index)."""

import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import write_with_tf
from slimdata import cli
from slimdata._tf import tf
from slimdata.records import dataset_info, tfrecord


def tf_count(path, compression=None):
    dataset = tf.data.TFRecordDataset(str(path), compression_type=compression or '')
    return int(dataset.reduce(0, lambda count, _: count + 1))


def run(capsys, *argv):
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def shards(tmp_path):
    """A folder of three shards (one GZIP) with dataset_info.json and labels.txt."""
    folder = tmp_path / 'toy'
    folder.mkdir()
    sizes = {'train-00000-of-00002.tfrecord': 7, 'train-00001-of-00002.tfrecord': 5,
             'val-00000-of-00001.tfrecord': 3}
    for name, size in sizes.items():
        write_with_tf(folder / name, [b'%s #%d' % (name.encode(), i) * 50 for i in range(size)],
                      'GZIP' if name.startswith('val') else None)
    dataset_info.write_dataset_info(
        str(folder), 'toy',
        {split: [{'file': name, 'num_records': n} for name, n in sizes.items()
                 if name.startswith(split)] for split in ('train', 'val')},
        labels_to_names={0: 'zero', 1: 'one'})
    return folder, sizes


def set_recorded_count(folder, shard_name, count):
    info_path = folder / 'dataset_info.json'
    info = json.loads(info_path.read_text())
    for entry in info['splits'].values():
        for shard in entry['shards']:
            if shard['file'] == shard_name:
                shard['num_records'] = count
    info_path.write_text(json.dumps(info))


# ----------------------------------------------------------------------------------------------
# count

def test_count_prints_each_file_and_the_total_tensorflow_counts(capsys, shards):
    folder, sizes = shards
    status, out, _ = run(capsys, 'count', str(folder))
    assert status == 0
    lines = out.splitlines()
    counts = {folder / name: tf_count(folder / name, 'GZIP' if name.startswith('val') else None)
              for name in sizes}
    for path, count in counts.items():
        assert f'{count:>12}  {path}' in lines
    assert lines[-1] == f'{sum(counts.values()):>12}  total'
    assert len(lines) == len(sizes) + 1  # dataset_info.json and labels.txt are not counted


def test_count_with_glob_and_explicit_compression(capsys, shards):
    folder, sizes = shards
    status, out, _ = run(capsys, 'count', str(folder / 'train-*'), '--compression', 'none')
    assert status == 0
    assert out.splitlines()[-1] == f'{12:>12}  total'
    status, _, err = run(capsys, 'count', str(folder / 'val-*'), '--compression', 'none')
    assert status == 1
    assert "compression='GZIP'" in err


def test_count_of_a_path_that_matches_nothing_is_a_usage_error(capsys, tmp_path):
    status, _, err = run(capsys, 'count', str(tmp_path / 'missing-*.tfrecord'))
    assert status == 2
    assert 'missing-*.tfrecord' in err


# ----------------------------------------------------------------------------------------------
# verify

def test_verify_lists_every_bad_file_and_counts_the_good_ones(capsys, tmp_path):
    good = [write_with_tf(tmp_path / f'good{i}.tfrecord', [b'x' * 100] * (i + 2))
            for i in range(2)]
    cut = write_with_tf(tmp_path / 'cut.tfrecord', [b'y' * 100] * 3)
    with open(cut, 'r+b') as f:
        f.truncate(2 * 116 + 50)
    flipped = write_with_tf(tmp_path / 'flipped.tfrecord', [b'z' * 100] * 4)
    raw = bytearray(open(flipped, 'rb').read())
    raw[116 + 12 + 7] ^= 0x04
    open(flipped, 'wb').write(raw)

    status, out, _ = run(capsys, 'verify', str(tmp_path))
    assert status == 1
    assert f'{cut}: record 2 at byte offset 232: truncated data' in out
    assert f'{flipped}: record 1 at byte offset 116: data CRC mismatch' in out
    assert 'verified 4 files, 8 records' in out  # 2 + 3 good, and 2 + 1 before the damage
    problems = out.split('2 problems:')[1]
    assert cut in problems and flipped in problems
    for path in good:
        assert re.search(rf'^ok .* {re.escape(path)}$', out, re.M)


def test_verify_a_good_dataset_folder(capsys, shards):
    folder, sizes = shards
    status, out, _ = run(capsys, 'verify', str(folder))
    assert status == 0, out
    assert f'verified 3 files, {sum(sizes.values())} records' in out
    assert 'no problems found' in out


def test_verify_reports_a_count_that_differs_from_dataset_info(capsys, shards):
    folder, _ = shards
    set_recorded_count(folder, 'train-00001-of-00002.tfrecord', 6)
    status, out, _ = run(capsys, 'verify', str(folder))
    assert status == 1
    shard = folder / 'train-00001-of-00002.tfrecord'
    assert re.search(rf'{re.escape(str(shard))}: 5 records, but .*dataset_info.json says 6', out)
    assert '1 problem:' in out  # the split's num_examples (12) still matches the shards


def test_verify_reports_a_split_total_that_differs(capsys, shards):
    folder, _ = shards
    info_path = folder / 'dataset_info.json'
    info = json.loads(info_path.read_text())
    info['splits']['val']['num_examples'] = 4
    info_path.write_text(json.dumps(info))
    status, out, _ = run(capsys, 'verify', str(folder))
    assert status == 1
    assert "split 'val' has num_examples 4, but its shards hold 3 records" in out


def test_verify_reports_a_missing_shard(capsys, shards):
    folder, _ = shards
    os.remove(folder / 'train-00000-of-00002.tfrecord')
    status, out, _ = run(capsys, 'verify', str(folder))
    assert status == 1
    assert re.search(r'train-00000-of-00002.tfrecord: missing; .*dataset_info.json lists it in '
                     r"split 'train' with 7 records", out)


def test_verify_one_file_checks_it_against_its_folders_info(capsys, shards):
    folder, _ = shards
    status, out, _ = run(capsys, 'verify', str(folder / 'train-00000-of-00002.tfrecord'))
    assert status == 0, out
    set_recorded_count(folder, 'val-00000-of-00001.tfrecord', 2)
    status, out, _ = run(capsys, 'verify', str(folder / 'val-00000-of-00001.tfrecord'))
    assert status == 1
    assert 'val-00000-of-00001.tfrecord: 3 records, but' in out


def test_verify_notes_files_the_info_does_not_list(capsys, shards):
    folder, _ = shards
    stale = write_with_tf(folder / 'train-00000-of-00003.tfrecord', [b'old'])
    status, out, _ = run(capsys, 'verify', str(folder))
    assert status == 0
    assert f'note: {stale} is not listed in' in out


# ----------------------------------------------------------------------------------------------
# inspect

def make_example(features):
    def feature(values):
        if isinstance(values[0], bytes):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
        if isinstance(values[0], float):
            return tf.train.Feature(float_list=tf.train.FloatList(value=values))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Example(features=tf.train.Features(
        feature={key: feature(values) for key, values in features.items()}))


EXAMPLES = [
    {'image/encoded': [b'\x89PNG\r\n\x1a\n' + bytes(range(40))], 'image/format': [b'png'],
     'image/class/label': [3], 'image/shape': [4, 5, 3], 'bbox/xmin': [0.25],
     'caption': [b'a cat'], 'tags': [b'a', b'b'], 'mixed': [1]},
    {'image/encoded': [b'\xff\xd8\xff' * 9], 'image/format': [b'jpeg'],
     'image/class/label': [7], 'image/shape': [8, 2, 3], 'bbox/xmin': [0.5, 0.75, 0.125],
     'tags': [b'c'], 'mixed': [2.5]},
    {'image/encoded': [b'raw'], 'image/format': [b'raw'], 'image/class/label': [0],
     'image/shape': [1, 1, 3], 'bbox/xmin': [0.0, 1.0], 'caption': [b'two dogs'],
     'tags': [b'd', b'e', b'f'], 'mixed': [3]},
]


def test_inspect_prints_a_keys_to_features_that_parses_the_records(capsys, tmp_path):
    path = write_with_tf(tmp_path / 'examples.tfrecord',
                         [make_example(e).SerializeToString() for e in EXAMPLES])
    status, out, _ = run(capsys, 'inspect', path)
    assert status == 0
    table = {line.split()[0]: line.split()[1:3] for line in out.splitlines()
             if line.startswith(('image/', 'bbox/', 'caption', 'tags', 'mixed'))}
    assert table['image/shape'] == ['int64', '3']
    assert table['bbox/xmin'] == ['float', '1..3']
    assert table['caption'] == ['bytes', '1']
    assert table['mixed'][0] == 'float/int64'
    assert "'png'" in out and '<48 bytes: 89 50 4e 47' in out

    source = out[out.index('keys_to_features = {'):]
    source = source[:source.index('\n}') + 2]
    namespace = {'tf': tf}
    exec(source, namespace)
    keys_to_features = namespace['keys_to_features']
    assert set(keys_to_features) == set(EXAMPLES[0]) - {'mixed'}
    assert "# 'mixed'" in source
    for example, record in zip(EXAMPLES, tfrecord.iter_records(path)):
        parsed = tf.io.parse_single_example(record, keys_to_features)
        assert parsed['image/encoded'].numpy() == example['image/encoded'][0]
        assert parsed['image/class/label'].numpy() == example['image/class/label'][0]
        assert parsed['image/shape'].numpy().tolist() == example['image/shape']
        np.testing.assert_allclose(parsed['bbox/xmin'].values.numpy(), example['bbox/xmin'])
        assert parsed['tags'].values.numpy().tolist() == example['tags']
        assert parsed['caption'].numpy() == example.get('caption', [b''])[0]


def test_inspect_reads_only_the_first_n_records(capsys, tmp_path):
    examples = [make_example({'label': [i]}).SerializeToString() for i in range(10)]
    path = write_with_tf(tmp_path / 'many.tfrecord.gz', examples, 'GZIP')
    status, out, _ = run(capsys, 'inspect', path, '-n', '2')
    assert status == 0
    assert '2 record(s) parsed' in out
    assert re.search(r'^label\s+int64\s+1\s+\[0\]$', out, re.M)


def test_inspect_of_records_that_are_not_examples(capsys, tmp_path):
    path = write_with_tf(tmp_path / 'junk.tfrecord', [b'\xff\xff\xff\xff'])
    status, _, err = run(capsys, 'inspect', path)
    assert status == 1
    assert f'{path}: record 0 is not a tf.train.Example' in err


def png(pixels):
    import io

    from PIL import Image
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, 'PNG')
    return buffer.getvalue()


def segmentation_example(image, label, width, height):
    """A deeplab-layout Example built with TensorFlow's own protos."""
    def feature(value):
        if isinstance(value, bytes):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))
    return tf.train.Example(features=tf.train.Features(feature={
        'image/encoded': feature(image), 'image/format': feature(b'png'),
        'image/height': feature(height), 'image/width': feature(width),
        'image/segmentation/class/encoded': feature(label),
        'image/segmentation/class/format': feature(b'png')})).SerializeToString()


def test_verify_decode_names_shard_record_and_key_of_every_bad_image(capsys, tmp_path):
    rng = np.random.default_rng(0)
    image = png(rng.integers(0, 256, (6, 8, 3), dtype=np.uint8))
    label = png(rng.integers(0, 21, (6, 8), dtype=np.uint8))
    good = segmentation_example(image, label, 8, 6)
    path = write_with_tf(tmp_path / 'val-00000-of-00001.tfrecord', [
        good,
        segmentation_example(image[:len(image) // 2], label, 8, 6),        # cut image
        segmentation_example(image, png(np.zeros((5, 8), np.uint8)), 8, 6),  # label 8x5
        b'\xff\xff not an Example',
        good,
    ])
    status, out, _ = run(capsys, 'verify', '--decode', path)
    assert status == 1
    problems = out.split('3 problems:')[1].strip().splitlines()
    assert len(problems) == 3
    assert f"{path}: record 1, key 'image/encoded': corrupt or unreadable image" in problems[0]
    assert f"{path}: record 2, key 'image/segmentation/class/encoded': decodes to 8x5" \
        in problems[1]
    assert f'{path}: record 3: not a tf.train.Example' in problems[2]
    assert '7 images decoded' in out  # 2 x 2 good records, 1 of the cut one, 2 of record 2
    status, out, _ = run(capsys, 'verify', path)  # without --decode: the framing is fine
    assert status == 0 and 'no problems found' in out


def test_verify_decode_passes_on_a_converted_dataset(capsys, tmp_path):
    from slimdata.datasets import segmentation, synthetic
    voc = synthetic.make_voc_seg_tree(str(tmp_path / 'src'), num_images=6, image_size=(40, 30),
                                      num_classes=6, splits={'train': 1.0})
    segmentation.convert_voc_seg(voc, str(tmp_path / 'out'), 'train', num_classes=6,
                                 num_shards=2)
    capsys.readouterr()
    status, out, _ = run(capsys, 'verify', '--decode', str(tmp_path / 'out'))
    assert status == 0, out
    assert '6 records' in out and '12 images decoded' in out


# ----------------------------------------------------------------------------------------------
# index

def test_index_writes_one_index_per_file(capsys, shards, tmp_path):
    folder, sizes = shards
    plain = [n for n in sizes if not n.startswith('val')]
    status, out, err = run(capsys, 'index', *(str(folder / n) for n in plain),
                           '--output-dir', str(tmp_path / 'idx'))
    assert status == 0, err
    for name in plain:
        written = tmp_path / 'idx' / (name + '.idx')
        assert f'{folder / name} -> {written}' in out
        lines = written.read_text().splitlines()
        assert len(lines) == tf_count(folder / name)
        offsets = [int(line.split()[0]) for line in lines]
        sizes_in_index = [int(line.split()[1]) for line in lines]
        assert offsets == [0] + list(np.cumsum(sizes_in_index)[:-1])
        assert sum(sizes_in_index) == os.path.getsize(folder / name)


def test_index_of_a_compressed_file_fails_and_says_why(capsys, shards):
    folder, _ = shards
    status, _, err = run(capsys, 'index', str(folder / 'val-00000-of-00001.tfrecord'))
    assert status == 1
    assert 'GZIP-compressed' in err


def test_index_refuses_two_inputs_with_the_same_basename(capsys, tmp_path):
    for folder in ('a', 'b'):
        (tmp_path / folder).mkdir()
        write_with_tf(tmp_path / folder / 'train.tfrecord', [folder.encode()])
    status, _, err = run(capsys, 'index', str(tmp_path / 'a' / 'train.tfrecord'),
                         str(tmp_path / 'b' / 'train.tfrecord'), '--output-dir',
                         str(tmp_path / 'idx'))
    assert status == 2
    assert err.strip() == (
        f'slimdata index: error: 2 inputs are named train.tfrecord '
        f'({tmp_path / "a" / "train.tfrecord"}, {tmp_path / "b" / "train.tfrecord"}): their '
        f'index files would both be {tmp_path / "idx" / "train.tfrecord.idx"}; index them into '
        'separate folders, or beside the records (without --output-dir)')
    assert not (tmp_path / 'idx').exists()


# ----------------------------------------------------------------------------------------------
# Without TensorFlow, and as a program

def test_count_verify_and_index_do_not_import_tensorflow(shards, tmp_path):
    folder, _ = shards
    code = f'''
        import sys
        from slimdata import cli
        assert cli.main(['count', {str(folder)!r}]) == 0
        assert cli.main(['verify', {str(folder)!r}]) == 0
        assert cli.main(['index', {str(folder / 'train-*')!r}, '--output-dir',
                         {str(tmp_path / 'idx')!r}]) == 0
        assert 'tensorflow' not in sys.modules, 'tensorflow was imported'
    '''
    done = subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_python_dash_m_slimdata(shards):
    folder, sizes = shards
    done = subprocess.run([sys.executable, '-m', 'slimdata', 'count', str(folder)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f'{sum(sizes.values()):>12}  total'
