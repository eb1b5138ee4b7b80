"""Hostile source trees: every converter refuses, naming the file, what it must not read.

Symlinks that leave the dataset root, files over the size bound, folders where files belong,
MNIST `.gz` files that inflate far beyond their header, and file names that are not UTF-8.
(FIFOs, which would hang a plain `open`, are tested through the command line in
tests/test_interruptions.py.)
"""

import gzip
import os
import shutil
import subprocess
import sys
import zlib

import numpy as np
import pytest

from slimdata import cli
from slimdata.datasets import classification, pascalvoc, segmentation, synthetic
from slimdata.records import example_schema, fs, tfrecord


@pytest.fixture(scope='module')
def trees(tmp_path_factory):
    """Small synthetic trees of each converter, built once and copied by each test."""
    base = tmp_path_factory.mktemp('trees')
    synthetic.make_image_folder(str(base / 'shapes'), num_classes=2, images_per_class=3,
                                image_size=16)
    synthetic.make_voc_tree(str(base / 'voc'), num_images=4, image_size=(64, 48),
                            splits={'trainval': 1.0})
    synthetic.make_voc_seg_tree(str(base / 'seg'), num_images=4, image_size=(64, 48),
                                num_classes=6, splits={'train': 1.0})
    return base


@pytest.fixture
def copy(trees, tmp_path):
    def copy_tree(name):
        shutil.copytree(trees / name, tmp_path / name, symlinks=True)
        return tmp_path / name
    return copy_tree


def refused(function, *args, **kwargs):
    with pytest.raises((ValueError, OSError)) as raised:
        function(*args, **kwargs)
    return str(raised.value)


# --- Symlinks --------------------------------------------------------------------------------

def test_an_image_symlinked_out_of_the_tree_is_refused_unless_asked_for(copy, tmp_path):
    shapes = copy('shapes')
    outside = tmp_path / 'secret.png'
    victim = sorted((shapes / 'ring').iterdir())[0] if (shapes / 'ring').exists() else \
        sorted(next(shapes.iterdir()).iterdir())[0]
    shutil.copy(victim, outside)
    victim.unlink()
    victim.symlink_to(outside)
    message = refused(classification.convert_image_folder, str(shapes), str(tmp_path / 'out'))
    assert message == (f'{victim} resolves to {outside}, outside the dataset root {shapes}; '
                       'converters read only files inside it (--follow-symlinks allows links '
                       'that leave it)')
    summaries = classification.convert_image_folder(str(shapes), str(tmp_path / 'followed'),
                                                    validation_ratio=0, follow_symlinks=True)
    assert summaries['train'].num_records == 6


def test_a_symlink_inside_the_tree_is_fine(copy, tmp_path):
    shapes = copy('shapes')
    folder = next(shapes.iterdir())
    images = sorted(folder.iterdir())
    images[0].unlink()
    images[0].symlink_to(images[1].name)  # a relative link to a sibling
    summaries = classification.convert_image_folder(str(shapes), str(tmp_path / 'out'),
                                                    validation_ratio=0)
    assert summaries['train'].num_records == 6


def test_a_voc_annotation_symlinked_out_of_the_tree_is_refused(copy, tmp_path):
    voc = copy('voc')
    xml = voc / 'VOC2007' / 'Annotations' / '000002.xml'
    shutil.copy(xml, tmp_path / 'elsewhere.xml')
    xml.unlink()
    xml.symlink_to(tmp_path / 'elsewhere.xml')
    message = refused(pascalvoc.convert, str(voc), str(tmp_path / 'out'), '2007', 'trainval')
    assert f'{xml} resolves to {tmp_path / "elsewhere.xml"}, outside the dataset root' in message


def test_a_label_map_symlinked_out_of_the_tree_is_refused(copy, tmp_path):
    seg = copy('seg') / 'VOC2012'
    label = sorted((seg / 'SegmentationClass').iterdir())[0]
    shutil.copy(label, tmp_path / 'label.png')
    label.unlink()
    label.symlink_to(tmp_path / 'label.png')
    message = refused(segmentation.convert_voc_seg, str(seg), str(tmp_path / 'out'), 'train',
                      num_classes=6)
    assert f'{label} resolves to {tmp_path / "label.png"}, outside the dataset root' in message


def test_a_label_folder_given_outside_the_root_is_allowed(copy, tmp_path):
    """`--label-dir /elsewhere` names a folder on purpose (deeplab's SegmentationClassAug is
    often unpacked beside VOC2012): its files are read."""
    seg = copy('seg') / 'VOC2012'
    shutil.move(str(seg / 'SegmentationClass'), str(tmp_path / 'labels'))
    summaries = segmentation.convert_voc_seg(str(seg), str(tmp_path / 'out'), 'train',
                                             label_dir=str(tmp_path / 'labels'), num_classes=6)
    assert summaries['train'].num_records == 4


# --- Not regular files, too large ------------------------------------------------------------

def test_a_folder_where_an_image_belongs_is_refused(copy, tmp_path):
    voc = copy('voc')
    jpeg = voc / 'VOC2007' / 'JPEGImages' / '000003.jpg'
    jpeg.unlink()
    jpeg.mkdir()
    message = refused(pascalvoc.convert, str(voc), str(tmp_path / 'out'), '2007', 'trainval')
    assert f'{jpeg} is a folder, not a regular file' in message


def test_a_source_over_the_size_bound_is_refused_naming_its_size(copy, tmp_path):
    voc = copy('voc')
    jpeg = voc / 'VOC2007' / 'JPEGImages' / '000001.jpg'
    size = jpeg.stat().st_size
    message = refused(pascalvoc.convert, str(voc), str(tmp_path / 'out'), '2007', 'trainval',
                      max_file_bytes=size - 1, seed=None)  # the list's order: 000001 first
    assert f'{jpeg} has {size:,} bytes or more, over the limit of {size - 1:,} bytes' in message


class _Reads:
    """A file's read function that returns at most `cap` bytes a call (as a kernel read
    does beyond 2 GiB) from `content`, which grew by `grow` after its size was taken."""

    def __init__(self, content, cap, grow=b''):
        self.content, self.cap, self.position, self.calls = content + grow, cap, 0, 0

    def __call__(self, wanted):
        self.calls += 1
        piece = self.content[self.position:self.position + min(wanted, self.cap)]
        self.position += len(piece)
        return piece


@pytest.mark.parametrize('cap, grow, calls', [
    (1 << 40, b'', 1),       # the usual file: one read of its size + 1, which comes back short
    (7, b'', 4),             # short reads before the end are read on (24 bytes in 7s)
    (1 << 40, b'more', 2),   # a file that grows while it is read: the growth is read too
])
def test_a_source_is_read_to_its_end_whatever_the_reads_return(cap, grow, calls):
    content = bytes(range(24))
    reads = _Reads(content, cap, grow)
    assert fs._read_to_end(reads, 'f', len(content), 1000) == content + grow
    assert reads.calls == calls


def test_a_source_growing_past_the_bound_while_read_is_refused():
    with pytest.raises(fs.SourceError, match='f has 1,048,601 bytes or more'):
        fs._read_to_end(_Reads(bytes(24), 1 << 40, bytes(1 << 21)), 'f', 24, 1 << 20)


def test_the_size_bound_on_the_command_line(copy, tmp_path, capsys):
    shapes = copy('shapes')
    status = cli.main(['convert', 'image-folder', str(shapes), str(tmp_path / 'out'),
                       '--max-file-size', '100'])
    assert status == 1
    assert 'over the limit of 100 bytes for one source file' in capsys.readouterr().err


# --- MNIST idx files ---------------------------------------------------------------------------

def idx_bytes(array, magic):
    header = magic.to_bytes(4, 'big') + b''.join(d.to_bytes(4, 'big') for d in array.shape)
    return header + array.astype(np.uint8).tobytes()


def write_mnist(folder, images, labels, compress=True):
    folder.mkdir(parents=True, exist_ok=True)
    for prefix in ('train', 't10k'):
        for kind, array, magic in (('images-idx3-ubyte', images, 2051),
                                   ('labels-idx1-ubyte', labels, 2049)):
            data = idx_bytes(array, magic)
            name = f'{prefix}-{kind}' + ('.gz' if compress else '')
            (folder / name).write_bytes(gzip.compress(data) if compress else data)


def test_a_gz_that_inflates_beyond_its_header_is_refused_without_inflating_it_all(tmp_path):
    """A small .gz whose header promises 10 images but whose stream goes on for 512 MB: the
    reader stops one byte past the promise; the process never holds the 512 MB."""
    rng = np.random.default_rng(0)
    images, labels = rng.integers(0, 256, (10, 28, 28)), rng.integers(0, 10, 10)
    src = tmp_path / 'mnist'
    write_mnist(src, images, labels)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    body = [compressor.compress(idx_bytes(images, 2051))]
    body += [compressor.compress(zeros) for _ in range(512)] + [compressor.flush()]
    bomb = src / 'train-images-idx3-ubyte.gz'
    bomb.write_bytes(b''.join(body))
    assert bomb.stat().st_size < 2_000_000
    # The peak resident memory of this process's own image (VmHWM; getrusage's ru_maxrss
    # would carry over the forking test process's peak across exec).
    code = ('from slimdata.datasets import classification\n'
            'try:\n'
            f'    classification.read_mnist_split({str(src)!r}, "train")\n'
            'except ValueError as error:\n'
            '    print(error)\n'
            'status = open("/proc/self/status").read()\n'
            'print(int(status.split("VmHWM:")[1].split()[0]) // 1024)\n')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            check=True, timeout=300)
    message, peak_mb = result.stdout.strip().splitlines()
    assert message == (f'{bomb}: trailing data: dimensions [10, 28, 28] need 7856 bytes, the '
                       'file has more')
    assert int(peak_mb) < 200  # the bomb inflated whole would take over 512


def test_an_idx_header_declaring_more_than_the_bound_is_refused_before_reading(tmp_path):
    src = tmp_path / 'mnist'
    write_mnist(src, np.zeros((2, 28, 28)), np.zeros(2))
    header = (2051).to_bytes(4, 'big') + b''.join(d.to_bytes(4, 'big')
                                                  for d in (2_000_000, 28, 28))
    (src / 'train-images-idx3-ubyte.gz').write_bytes(gzip.compress(header))
    message = refused(classification.convert_mnist_idx, str(src), str(tmp_path / 'out'))
    assert message == (f'{src / "train-images-idx3-ubyte.gz"}: its header declares dimensions '
                       '[2000000, 28, 28], 1,568,000,016 bytes, over the limit of '
                       '1,073,741,824 bytes for one source file (--max-file-size raises it)')


@pytest.mark.parametrize('damage, message', [
    (lambda data: data[:len(data) // 2], 'the gzip stream ends early (the file is truncated)'),
    (lambda data: data[:-8] + b'\x00' * 8, 'not a valid gzip file'),  # CRC and size trailer
])
def test_a_damaged_gz_is_refused_naming_it(tmp_path, damage, message):
    src = tmp_path / 'mnist'
    rng = np.random.default_rng(1)
    write_mnist(src, rng.integers(0, 256, (5, 28, 28)), rng.integers(0, 10, 5))
    path = src / 't10k-labels-idx1-ubyte.gz'
    path.write_bytes(damage(path.read_bytes()))
    assert refused(classification.convert_mnist_idx, str(src), str(tmp_path / 'out')) \
        .startswith(f'{path}: {message}')


def test_plain_and_multi_member_gz_idx_files_read_alike(tmp_path):
    rng = np.random.default_rng(2)
    images, labels = rng.integers(0, 256, (7, 28, 28)), rng.integers(0, 10, 7)
    plain, members = tmp_path / 'plain', tmp_path / 'members'
    write_mnist(plain, images, labels, compress=False)
    write_mnist(members, images, labels)
    data = idx_bytes(images, 2051)
    (members / 'train-images-idx3-ubyte.gz').write_bytes(  # two gzip members, as cat a b
        gzip.compress(data[:1000]) + gzip.compress(data[1000:]))
    for src in (plain, members):
        pairs, _ = classification.read_mnist_split(str(src), 'train')
        assert np.array_equal(np.stack([image for image, _ in pairs]), images)
        assert [label for _, label in pairs] == labels.tolist()


# --- File names that are not UTF-8 ------------------------------------------------------------

NOT_UTF8 = os.fsdecode(b'caf\xe9')  # Latin-1 'café', as an old archive may carry it


def test_a_class_folder_name_that_is_not_utf8_is_refused_by_name(copy, tmp_path):
    shapes = copy('shapes')
    folder = next(shapes.iterdir())
    folder.rename(shapes / NOT_UTF8)
    message = refused(classification.convert_image_folder, str(shapes), str(tmp_path / 'out'))
    assert message == (f"{os.fsencode(shapes / NOT_UTF8)!r}: the class folder name "
                       "b'caf\\xe9' is not valid UTF-8, and it would be stored as text; "
                       'rename it')


def test_image_file_names_that_are_not_utf8_are_converted(copy, tmp_path, capsys):
    shapes = copy('shapes')
    image = sorted(next(shapes.iterdir()).iterdir())[0]
    image.rename(image.with_name(NOT_UTF8 + '.png'))
    assert cli.main(['convert', 'image-folder', str(shapes), str(tmp_path / 'out'),
                     '--validation-ratio', '0']) == 0
    assert 'train: 6 records' in capsys.readouterr().out


def test_an_image_id_that_is_not_utf8_is_stored_as_the_names_bytes(tmp_path):
    """ADE20K takes image ids from file names; deeplab reads image/filename as bytes."""
    root = tmp_path / 'ADEChallengeData2016'
    for folder in ('images/validation', 'annotations/validation'):
        (root / folder).mkdir(parents=True)
    image_id = os.fsdecode(b'ADE_val_\xff')
    rng = np.random.default_rng(3)
    from PIL import Image
    Image.fromarray(rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)).save(
        root / 'images/validation' / f'{image_id}.jpg')
    Image.fromarray(rng.integers(0, 151, (6, 8), dtype=np.uint8)).save(
        root / 'annotations/validation' / f'{image_id}.png')
    out = tmp_path / 'out'
    segmentation.convert_ade20k(str(root), str(out), 'val', num_shards=1)
    [shard] = [name for name in fs.listdir(str(out)) if name.endswith('.tfrecord')]
    [record] = list(tfrecord.iter_records(str(out / shard)))
    assert example_schema.parse_example(record)['image/filename'] == ('bytes_list',
                                                                     [b'ADE_val_\xff'])
