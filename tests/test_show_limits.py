"""`slimdata show` on hostile records, run in a child process with 512 MB of address space.

Each case of issue 21 (items 1 and 2) must end as a sheet with the records that cannot be
drawn marked and named, or a usage error, never a MemoryError, a hang or a corrupt image
drawn as fine. The child sets RLIMIT_AS itself before importing anything of slimdata (no
`preexec_fn`: the test process has threads), with one BLAS thread so that the limit does
not depend on the machine's cores: a `show` of a small file peaks at about 125 MB of
address space so. Before the fixes, one 733-byte record took 1.3 GB and 16 of them 7 GB.

Records are written by TensorFlow's TFRecordWriter, JPEGs encoded by tf.io.encode_jpeg.
"""

import os
import re
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest
from PIL import Image

from conftest import write_with_tf
from slimdata import show
from slimdata._tf import tf
from test_show import example, grey_image, pixels_of

MEMORY_LIMIT = 512 << 20
TIMEOUT = 120  # a hang guard only: each case takes a few seconds
_CHILD = ('import resource, sys\n'
          f'resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT}))\n'
          'sys.argv = sys.argv[1:]\n'
          'exec(sys.argv[0])\n')
_SHOW = 'from slimdata import cli\nsys.exit(cli.main(sys.argv[1:]))'


def in_child(code, *args):
    """Runs `code` (with `sys.argv[1:]` = args) in a child limited to MEMORY_LIMIT bytes."""
    env = {**os.environ, 'OPENBLAS_NUM_THREADS': '1', 'OMP_NUM_THREADS': '1'}
    return subprocess.run([sys.executable, '-c', _CHILD, code, *map(str, args)],
                          capture_output=True, text=True, timeout=TIMEOUT, env=env)


def show_in_child(*args):
    return in_child(_SHOW, 'show', *args)


def error_lines(result, label='error'):
    return [line for line in result.stderr.splitlines() if line.startswith(f'{label}: ')]


def jpeg_claiming(width, height):
    """A 16x16 JPEG whose frame header says `width` x `height`: a few hundred bytes."""
    data = bytearray(tf.io.encode_jpeg(np.full((16, 16, 3), 90, np.uint8)).numpy())
    frame = data.index(b'\xff\xc0')  # baseline frame header: FF C0, length, precision, H, W
    struct.pack_into('>HH', data, frame + 5, height, width)
    return bytes(data)


def zeros_zlib(num_bytes, piece=1 << 20):
    """A zlib stream of `num_bytes` zero bytes (a multiple of `piece`), built in a few
    milliseconds: compressing a piece ends with a full flush, after which the compressor
    refers to nothing before, so every later piece compresses to the same bytes; the stream
    ends with the Adler-32 of all the bytes."""
    assert num_bytes % piece == 0 and num_bytes // piece >= 3
    zeros = bytes(piece)
    compressor = zlib.compressobj(9)
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    middle = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    last = compressor.compress(zeros) + compressor.flush()
    adler = 1
    for _ in range(num_bytes // piece):
        adler = zlib.adler32(zeros, adler)
    return first + middle * (num_bytes // piece - 2) + last[:-4] + struct.pack('>I', adler)


def png_chunk(kind, body):
    return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body))


def grey_png(width, height, image_data):
    return (b'\x89PNG\r\n\x1a\n'
            + png_chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 8, 0, 0, 0, 0))
            + png_chunk(b'IDAT', image_data) + png_chunk(b'IEND', b''))


@pytest.fixture(scope='module')
def black_png_13000():
    """A valid 13000x13000 grey PNG of zeros: 164 kB that decode to 169 MB (507 MB as RGB)."""
    width = height = 13000
    data = grey_png(width, height, zeros_zlib((1 + width) * height, piece=(1 + width) * 100))
    inflater, produced = zlib.decompressobj(), 0  # checked independently: inflated, counted
    pending = data[data.index(b'IDAT') + 4:-len(png_chunk(b'IEND', b'')) - 4]
    while pending:
        produced += len(inflater.decompress(pending, 1 << 24))
        pending = inflater.unconsumed_tail
    assert inflater.eof and produced == (1 + width) * height
    return data


# ----------------------------------------------------------------------------------------------
# images whose headers claim more than their data holds


def test_16_tiny_jpegs_claiming_13000x13000_are_marked_unreadable(tmp_path):
    records = [example(image__encoded=jpeg_claiming(13000, 13000), image__format=b'jpeg',
                       image__class__label=i) for i in range(16)]
    path = write_with_tf(tmp_path / 'claims.tfrecord', records)
    assert os.path.getsize(path) < 12_000  # issue 21: "an 11 KB file"
    result = show_in_child(path, '-o', tmp_path / 'sheet.png')
    assert result.returncode == 1, result.stderr
    errors = error_lines(result)
    assert len(errors) == 16
    for index, line in enumerate(errors):
        assert line.startswith(f"error: {path}: record {index}, key 'image/encoded' is not a "
                               'readable JPEG: its frame header says 13000x13000 pixels, which '
                               'need at least 990,641 bytes of image data, but the scans hold')
    assert result.stdout.rstrip().endswith('; 16 not drawn, marked (16 unreadable)')
    written = Image.open(tmp_path / 'sheet.png')
    assert written.size == show.contact_sheet([path]).image.size


def test_one_700_byte_record_with_such_a_jpeg_is_not_drawn_as_fine(tmp_path):
    record = example(image__encoded=jpeg_claiming(13000, 13000), image__format=b'jpeg')
    assert len(record) < 720  # issue 21: "one 703-byte record"
    path = write_with_tf(tmp_path / 'one.tfrecord', [record])
    result = show_in_child(path, '-o', tmp_path / 'sheet.png')
    assert result.returncode == 1
    error, = error_lines(result)
    assert f'{path}: record 0, ' in error and 'its frame header says 13000x13000' in error
    cell, = show.contact_sheet([path]).cells
    assert cell.problem.kind == show.UNREADABLE and cell.problem.text == 'corrupt image'


# ----------------------------------------------------------------------------------------------
# decompression bombs


def test_png_of_169_megapixels_is_marked_too_large_without_decoding(tmp_path, black_png_13000):
    path = write_with_tf(tmp_path / 'bomb.tfrecord', [example(image__encoded=black_png_13000)])
    result = show_in_child(path, '-o', tmp_path / 'sheet.png')
    assert result.returncode == 0, result.stderr  # a sound image: a limit of show, not an error
    warning, = error_lines(result, 'warning')
    assert warning == (f"warning: {path}: record 0, key 'image/encoded': 13000x13000 pixels, "
                       'over the limit of 50,000,000 pixels decoded per image; its cell is '
                       'marked')
    assert result.stdout.rstrip().endswith('; 1 not drawn, marked (1 too large)')


@pytest.mark.slow
def test_png_of_169_megapixels_is_drawn_in_bounded_memory_with_the_limit_raised(
        tmp_path, black_png_13000):
    # Pillow's own limit: the grey image is decoded (169 MB) and reduced before it becomes RGB.
    path = write_with_tf(tmp_path / 'bomb.tfrecord', [example(image__encoded=black_png_13000)])
    result = show_in_child(path, '--max-pixels', 178_956_970, '-o', tmp_path / 'sheet.png')
    assert result.returncode == 0, result.stderr
    assert not error_lines(result, 'warning')
    sheet = np.asarray(Image.open(tmp_path / 'sheet.png'))
    cell_origin = (show.MARGIN, show.MARGIN + show._line_height(show._font(show.FONT_SIZE))
                   + show.GUTTER // 2)
    x, y = cell_origin
    assert np.all(sheet[y:y + show.MAX_SIDE, x:x + show.MAX_SIDE] == 0)


def test_the_memory_limit_binds_a_full_rgb_decode_of_that_png(tmp_path, black_png_13000):
    # The control: decoded as the earlier `show` did, the same PNG does not fit the limit.
    (tmp_path / 'bomb.png').write_bytes(black_png_13000)
    code = ('from PIL import Image\n'
            'Image.MAX_IMAGE_PIXELS = None\n'
            'try:\n'
            '    Image.open(sys.argv[1]).convert("RGB")\n'
            'except MemoryError:\n'
            '    print("MemoryError")\n')
    assert in_child(code, tmp_path / 'bomb.png').stdout == 'MemoryError\n'


def test_png_whose_data_inflates_past_its_size_is_marked_unreadable(tmp_path):
    bomb = grey_png(64, 64, zeros_zlib(256 << 20))  # 256 MB of data for 4,160 bytes of pixels
    assert len(bomb) < 300_000
    path = write_with_tf(tmp_path / 'idat.tfrecord', [example(image__encoded=bomb)])
    result = show_in_child(path, '-o', tmp_path / 'sheet.png')
    assert result.returncode == 1
    error, = error_lines(result)
    assert error.startswith(f"error: {path}: record 0, key 'image/encoded' is not a readable "
                            'PNG: its image data inflates to more than the 4,160 bytes its '
                            'IHDR size needs')


# ----------------------------------------------------------------------------------------------
# what the command line asks for, and what records hold besides images


def test_columns_100000_for_2_records_draws_2_columns(tmp_path):
    path = write_with_tf(tmp_path / 'two.tfrecord', [example(image__encoded=grey_image(8, 8))] * 2)
    result = show_in_child(path, '--columns', 100_000, '-n', 2, '-o', tmp_path / 'sheet.png')
    assert result.returncode == 0, result.stderr
    expected = show.contact_sheet([path], num_records=2, columns=2)
    assert np.array_equal(np.asarray(Image.open(tmp_path / 'sheet.png')), pixels_of(expected))


@pytest.mark.parametrize('args, message', [
    (['-n', 100_000], '100,000 records in 317 columns of cells up to 256 pixels could make '
                      'a sheet of 84,968x105,932 pixels, more than the 64,000,000 drawn at '
                      'most: ask for fewer records, fewer columns or smaller cells'),
    (['--size', 100_000], '16 records in 4 columns of cells up to 100000 pixels could make'),
    (['-n', 300, '--columns', 300], '300 records in 300 columns'),
    (['--max-pixels', 10**9], '--max-pixels 1000000000: at most 178956970'),
])
def test_numbers_that_could_make_too_large_a_sheet_are_usage_errors(tmp_path, args, message):
    path = write_with_tf(tmp_path / 'one.tfrecord', [example(image__encoded=grey_image(8, 8))])
    result = show_in_child(path, *args, '-o', tmp_path / 'sheet.png')
    assert result.returncode == 2
    assert message in result.stderr
    assert not (tmp_path / 'sheet.png').exists()


def test_200_kb_of_label_text_is_drawn_at_once(tmp_path):
    # The shortening of a caption measured every shorter text: over 180 s for this record.
    text = ('label ' * 40_000).encode()
    record = example(image__encoded=grey_image(64, 48), image__class__label=1,
                     image__class__text=text)
    path = write_with_tf(tmp_path / 'text.tfrecord', [record])
    result = show_in_child(path, '-o', tmp_path / 'sheet.png')
    assert result.returncode == 0, result.stderr
    caption = show.contact_sheet([path]).cells[0].captions[0][0]
    assert re.fullmatch(r'label la.*….*label  \(1\)', caption), caption


def test_20000_boxes_of_20000_classes_make_a_sheet_of_bounded_size(tmp_path):
    # Before: every box and a legend of 20,000 lines, a sheet of 152x370680 pixels.
    num_boxes = 20_000
    corners = np.random.default_rng(0).random((num_boxes, 2, 2))
    low, high = corners.min(axis=1).T.tolist(), corners.max(axis=1).T.tolist()
    record = example(image__encoded=grey_image(64, 48), image__object__bbox__ymin=low[0],
                     image__object__bbox__xmin=low[1], image__object__bbox__ymax=high[0],
                     image__object__bbox__xmax=high[1],
                     image__object__bbox__label=list(range(num_boxes)))
    path = write_with_tf(tmp_path / 'boxes.tfrecord', [record])
    result = show_in_child(path, '-o', tmp_path / 'sheet.png')
    assert result.returncode == 0, result.stderr
    width, height = Image.open(tmp_path / 'sheet.png').size
    assert width * height < 1_000_000
