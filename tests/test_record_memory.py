"""Memory per record in `show`, `inspect` and `verify --decode` (issue 28 items 2 and 3), in a
child limited to 512 MB of address space (`test_show_limits.in_child`).

- A 40 MB record of 10 million floats beside its image: `show` draws it, `inspect` lists
  10,000,000 values, `verify --decode` decodes its image. Before the fix each made a Python
  list of the floats (about 13 times the record: 550 MB).
- A record of 3,000,000 boxes: `show` draws its first 100 (docs/show.md) and says how many
  the record has, without a `Box` per box.
- `verify --decode` checks images as `show` and the converters do (`images.decode_stored_image`):
  a JPEG whose header claims 12000x12000 over a few hundred bytes of scan data is a problem
  naming the record and key (before: "no problems found" after a decode of 432 MB); an
  image over `--max-pixels` is a problem, not decoded.

Records are written by TensorFlow's TFRecordWriter; expected values come from the numbers
written.
"""

import json

import numpy as np
import pytest

from conftest import write_with_tf
from slimdata._tf import tf
from test_show import example, grey_image
from test_show_limits import error_lines, in_child, jpeg_claiming

_CLI = 'from slimdata import cli\nsys.exit(cli.main(sys.argv[1:]))'
NUM_FLOATS = 10_000_000


def cli_in_child(*args):
    return in_child(_CLI, *args)


@pytest.fixture(scope='module')
def big_record(tmp_path_factory):
    floats = tf.train.Feature(float_list=tf.train.FloatList(
        value=np.arange(NUM_FLOATS, dtype=np.float32)))
    record = tf.train.Example(features=tf.train.Features(feature={
        'image/encoded': tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[grey_image(32, 24)])),
        'image/format': tf.train.Feature(bytes_list=tf.train.BytesList(value=[b'png'])),
        'image/height': tf.train.Feature(int64_list=tf.train.Int64List(value=[24])),
        'image/width': tf.train.Feature(int64_list=tf.train.Int64List(value=[32])),
        'image/embedding': floats})).SerializeToString()
    assert len(record) > 40_000_000
    folder = tmp_path_factory.mktemp('big')
    return write_with_tf(folder / 'train-00000-of-00001.tfrecord', [record, record])


@pytest.mark.slow
def test_show_draws_a_40_mb_record_in_bounded_memory(big_record, tmp_path):
    result = cli_in_child('show', big_record, '-o', tmp_path / 'sheet.png')
    assert result.returncode == 0, result.stderr[-2000:]
    assert 'wrote' in result.stdout and ': 2 records' in result.stdout


@pytest.mark.slow
def test_inspect_counts_10_million_values_in_bounded_memory(big_record):
    result = cli_in_child('inspect', big_record)
    assert result.returncode == 0, result.stderr[-2000:]
    [row] = [line for line in result.stdout.splitlines() if line.startswith('image/embedding')]
    assert row.split()[1:4] == ['float', str(NUM_FLOATS), '[0,']
    assert row.rstrip().endswith('1, 2, 3, ...]')


@pytest.mark.slow
def test_verify_decode_of_40_mb_records_in_bounded_memory(big_record):
    result = cli_in_child('verify', '--decode', '--json', big_record)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert (report['ok'], report['records'], report['images_decoded']) == (True, 2, 2)


@pytest.mark.slow
def test_show_keeps_100_of_3_million_boxes(tmp_path):
    count = 3_000_000
    coordinates = [0.25, 0.75]
    feature = {f'image/object/bbox/{name}': tf.train.Feature(float_list=tf.train.FloatList(
        value=np.full(count, coordinates[name.endswith('max')], np.float32)))
        for name in ('ymin', 'xmin', 'ymax', 'xmax')}
    feature['image/object/bbox/label'] = tf.train.Feature(int64_list=tf.train.Int64List(
        value=np.ones(count, np.int64)))
    feature['image/encoded'] = tf.train.Feature(bytes_list=tf.train.BytesList(
        value=[grey_image(64, 64)]))
    path = write_with_tf(tmp_path / 'boxes.tfrecord', [tf.train.Example(
        features=tf.train.Features(feature=feature)).SerializeToString()])
    result = cli_in_child('show', path, '-o', tmp_path / 'sheet.png')
    assert result.returncode == 0, result.stderr[-2000:]


def test_verify_decode_refuses_a_jpeg_header_its_data_cannot_hold(tmp_path):
    record = example(image__encoded=jpeg_claiming(12000, 12000), image__format=b'jpeg')
    path = write_with_tf(tmp_path / 'claims.tfrecord', [record])
    result = cli_in_child('verify', '--decode', '--json', path)
    assert result.returncode == 1, result.stderr[-2000:]
    [problem] = json.loads(result.stdout)['problems']
    assert (problem['kind'], problem['record'], problem['key']) == (
        'undecodable-image', 0, 'image/encoded')
    assert problem['message'].startswith(
        f"{path}: record 0, key 'image/encoded' is not a readable JPEG: its frame header says "
        '12000x12000 pixels, which need at least')


def test_verify_decode_refuses_an_image_over_max_pixels_naming_it(tmp_path):
    records = [example(image__encoded=grey_image(100, 50), image__format=b'png'),
               example(image__encoded=grey_image(40, 50), image__format=b'png')]
    path = write_with_tf(tmp_path / 'sizes.tfrecord', records)
    result = cli_in_child('verify', '--decode', '--max-pixels', '2000', path)
    assert result.returncode == 1
    assert [line.strip() for line in result.stdout.splitlines() if 'pixels' in line][-1] == (
        f"{path}: record 0, key 'image/encoded': 100x50 pixels, over the limit of 2,000 "
        'pixels (decoding it would take 0.0 GB)')
    assert error_lines(result) == []
    assert 'verified 1 file, 2 records' in result.stdout and '1 image decoded' in result.stdout
