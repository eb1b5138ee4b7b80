"""slimdata.records.images: JPEG and PNG structure checks against Pillow, TensorFlow and
files built by hand from the format specifications."""

import io
import re
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from slimdata._tf import tf
from slimdata.records import images


def jpeg_size(data, path):
    info = images.check_jpeg(data, path)
    return info.width, info.height, info.channels


# --- JPEG: the header against Pillow and TensorFlow ------------------------------------------

def jpeg_bytes(width, height, mode='RGB', **save_options):
    """A JPEG written by Pillow (noise, so that every option changes the file)."""
    rng = np.random.default_rng(width * 7 + height)
    channels = {'L': 1, 'RGB': 3, 'CMYK': 4}[mode]
    pixels = rng.integers(0, 256, (height, width, channels), dtype=np.uint8)
    image = Image.fromarray(pixels[..., 0] if mode == 'L' else pixels, mode=mode)
    buffer = io.BytesIO()
    image.save(buffer, 'JPEG', **save_options)
    return buffer.getvalue()


def exif_with_a_description():
    exif = Image.Exif()
    exif[0x010E] = 'a photo with an EXIF block, APP1 ' * 20  # ImageDescription
    return exif.tobytes()


JPEGS = {
    'baseline RGB': jpeg_bytes(500, 375),
    'grayscale': jpeg_bytes(33, 17, 'L'),
    'progressive': jpeg_bytes(64, 48, progressive=True),
    'progressive grayscale': jpeg_bytes(31, 29, 'L', progressive=True),
    'optimized Huffman tables': jpeg_bytes(40, 30, optimize=True),
    'EXIF (APP1)': jpeg_bytes(20, 10, exif=exif_with_a_description()),
    'comment (COM)': jpeg_bytes(12, 9, comment=b'made by the tests'),
    'no chroma subsampling': jpeg_bytes(15, 7, subsampling=0),
    'restart markers (DRI)': jpeg_bytes(80, 64, restart_marker_blocks=1),
    'CMYK': jpeg_bytes(8, 6, 'CMYK'),
    'one pixel': jpeg_bytes(1, 1),
    'a tall strip': jpeg_bytes(2, 1000, 'L'),
}


def frame_header_offset(data):
    """Where the SOF marker is, found by Pillow-independent means (the first FF C0/C2)."""
    return min(i for i in (data.find(b'\xff\xc0'), data.find(b'\xff\xc2')) if i >= 0)


@pytest.mark.parametrize('name', sorted(JPEGS))
def test_jpeg_size_agrees_with_pillow_and_tensorflow(name):
    data = JPEGS[name]
    with Image.open(io.BytesIO(data)) as image:
        from_pillow = (image.width, image.height, len(image.getbands()))
    height, width, channels = tf.io.extract_jpeg_shape(data).numpy().tolist()
    assert jpeg_size(data, 'x.jpg') == from_pillow == (width, height, channels)


def test_jpeg_size_skips_fill_bytes_and_stray_bytes_before_markers():
    data = JPEGS['progressive']
    sof = frame_header_offset(data)
    padded = data[:sof] + b'\xff\xff\xff' + data[sof:]  # fill bytes: legal before a marker
    stray = data[:sof] + b'\x00\x17' + data[sof:]  # junk libjpeg skips with a warning
    for variant in (padded, stray):
        height, width, channels = tf.io.extract_jpeg_shape(variant).numpy().tolist()
        assert jpeg_size(variant, 'x.jpg') == (width, height, channels) == (64, 48, 3)


def with_frame_header_bytes(data, position, replacement):
    """`data` with the SOF segment's bytes from `position` (0: its marker's FF) replaced.
    The segment: FF Cn, length (2 bytes), precision, height (2), width (2), components."""
    at = frame_header_offset(data) + position
    return data[:at] + replacement + data[at + len(replacement):]


def without_frame_header(data):
    at = frame_header_offset(data)
    return data[:at] + data[at + 2 + int.from_bytes(data[at + 2:at + 4], 'big'):]


GRAY = JPEGS['grayscale']  # 33x17


@pytest.mark.parametrize('corrupt, reason', [
    (with_frame_header_bytes(GRAY, 4, b'\x0c'), '12-bit samples'),
    (with_frame_header_bytes(GRAY, 9, b'\x02'), 'with 2 components'),
    (with_frame_header_bytes(GRAY, 5, b'\x00\x00'), 'gives 33x0 pixels'),  # height from DNL
    (with_frame_header_bytes(GRAY, 2, b'\x00\x01'), 'impossible length 1'),
    (with_frame_header_bytes(GRAY, 2, b'\x00\x05'), 'frame header FF C0 is 5 bytes'),
    (without_frame_header(GRAY), 'no frame header'),
    (b'\xff\xd8\xff\xd9', 'no image data (scan) before the end-of-image marker'),
    (b'\xff\xd9\xff\xd8', 'not the start-of-image marker'),
])
def test_corrupt_jpeg_headers_are_errors_naming_the_file(corrupt, reason):
    with pytest.raises(images.ImageError) as raised:
        images.check_jpeg(corrupt, '/data/x.jpg')
    assert str(raised.value).startswith('/data/x.jpg is not a readable JPEG: ')
    assert reason in str(raised.value)


# --- JPEG: the whole file, to its end-of-image marker ----------------------------------------

@pytest.mark.parametrize('name', ['baseline RGB', 'progressive', 'restart markers (DRI)',
                                  'EXIF (APP1)'])
def test_every_cut_of_a_jpeg_is_refused(name):
    """A file cut anywhere (in its header or in any scan's data) lacks its end: refused."""
    data = JPEGS[name]
    step = max(1, len(data) // 400)
    for length in range(0, len(data) - 1, step):
        with pytest.raises(images.ImageError, match=re.escape('/data/x.jpg')):
            images.check_jpeg(data[:length], '/data/x.jpg')


def test_a_cut_jpeg_is_what_tensorflow_fails_on():
    """The independent side of the test above: TensorFlow's decoder refuses a cut file too,
    mid-training, naming no record (the failure the check moves to conversion time)."""
    data = JPEGS['baseline RGB']
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.io.decode_jpeg(data[:len(data) // 2])


def test_bytes_after_the_end_of_image_are_allowed_as_decoders_allow_them():
    data = JPEGS['grayscale'] + b'camera trailer'
    assert jpeg_size(data, 'x.jpg') == (33, 17, 1)
    assert tf.io.decode_jpeg(data).shape == (17, 33, 1)


def test_a_header_claiming_a_huge_image_is_refused_before_anything_is_decoded():
    forged = with_frame_header_bytes(JPEGS['baseline RGB'], 5, struct.pack('>HH', 65000, 65000))
    with pytest.raises(images.ImageError) as raised:
        images.check_image(forged, '/data/huge.jpg')
    assert str(raised.value) == ('/data/huge.jpg: 65000x65000 pixels, over the limit of '
                                 '178,956,970 pixels (decoding it would take 12.7 GB)')


def test_a_header_claiming_more_blocks_than_the_scans_can_hold_is_refused():
    # 20000x15000 pixels (300 M... under a raised pixel limit) need at least 2 bits per 8x8
    # block of each of 3 components in a sequential JPEG: ~17.6 MB, over the ~100 kB there.
    forged = with_frame_header_bytes(JPEGS['baseline RGB'], 5, struct.pack('>HH', 15000, 20000))
    with pytest.raises(images.ImageError, match='which need at least') as raised:
        images.check_image(forged, '/data/big.jpg', max_pixels=10**9)
    assert '/data/big.jpg is not a readable JPEG' in str(raised.value)


def test_full_check_decodes_and_finds_damage_the_structure_cannot_show():
    data = JPEGS['baseline RGB']
    at = data.find(b'\xff\xc4')  # a Huffman table, zeroed: every marker and length intact
    length = int.from_bytes(data[at + 2:at + 4], 'big')
    damaged = data[:at + 4] + bytes(length - 2) + data[at + 2 + length:]
    assert images.check_image(damaged, 'x.jpg').width == 500  # the structure is fine
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.io.decode_jpeg(damaged)  # but TensorFlow cannot decode it
    with pytest.raises(images.ImageError, match=r'^x\.jpg: corrupt or unreadable image'):
        images.check_image(damaged, 'x.jpg', mode='full')


def test_unknown_check_mode_and_unknown_formats_are_refused():
    with pytest.raises(ValueError, match="image check mode must be one of"):
        images.check_image(GRAY, 'x.jpg', mode='quick')
    with pytest.raises(images.ImageError, match=r"x\.gif is not a JPEG or PNG image"):
        images.check_image(b'GIF89a....', 'x.gif')


# --- PNG -------------------------------------------------------------------------------------

def png_bytes(pixels, mode=None):
    buffer = io.BytesIO()
    Image.fromarray(pixels, mode=mode).save(buffer, 'PNG')
    return buffer.getvalue()


def chunk(kind, body):
    return struct.pack('>I', len(body)) + kind + body + struct.pack('>I',
                                                                    zlib.crc32(kind + body))


def adam7_png(pixels):
    """An interlaced 8-bit grey PNG built by hand from the PNG specification (Pillow cannot
    write interlaced PNGs): the seven passes' rows, each with filter byte 0."""
    height, width = pixels.shape
    rows = []
    for x0, y0, dx, dy in ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
                           (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)):
        sub = pixels[y0::dy, x0::dx]
        if sub.size:
            rows += [b'\x00' + row.tobytes() for row in sub]
    header = struct.pack('>IIBBBBB', width, height, 8, 0, 0, 0, 1)
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header)
            + chunk(b'IDAT', zlib.compress(b''.join(rows))) + chunk(b'IEND', b''))


RNG = np.random.default_rng(5)
PNGS = {
    'RGB': png_bytes(RNG.integers(0, 256, (37, 53, 3), dtype=np.uint8)),
    'grey': png_bytes(RNG.integers(0, 256, (20, 9), dtype=np.uint8)),
    'palette': png_bytes(RNG.integers(0, 21, (30, 40), dtype=np.uint8), mode='P'),
    'RGBA': png_bytes(RNG.integers(0, 256, (5, 6, 4), dtype=np.uint8)),
    '16-bit grey': png_bytes(RNG.integers(0, 65536, (11, 13), dtype=np.uint16)),
    'one bit': png_bytes(RNG.integers(0, 2, (9, 17), dtype=bool)),
    'interlaced': adam7_png(RNG.integers(0, 256, (19, 23), dtype=np.uint8)),
}


@pytest.mark.parametrize('name', sorted(PNGS))
def test_png_size_agrees_with_pillow(name):
    with Image.open(io.BytesIO(PNGS[name])) as image:
        image.load()
        expected = (image.width, image.height, len(image.getbands()))
    info = images.check_png(PNGS[name], 'x.png')
    assert (info.width, info.height, info.channels) == expected


def test_the_hand_built_interlaced_png_is_what_pillow_reads():
    pixels = RNG.integers(0, 256, (19, 23), dtype=np.uint8)
    with Image.open(io.BytesIO(adam7_png(pixels))) as image:
        assert image.info.get('interlace') == 1
        assert np.array_equal(np.asarray(image), pixels)


@pytest.mark.parametrize('name', ['RGB', 'interlaced', 'palette'])
def test_every_cut_of_a_png_is_refused(name):
    data = PNGS[name]
    for length in range(0, len(data) - 1, max(1, len(data) // 300)):
        with pytest.raises(images.ImageError, match=re.escape('/data/x.png')):
            images.check_png(data[:length], '/data/x.png')


def test_a_flipped_bit_in_any_chunk_is_a_crc_error():
    data = PNGS['palette']
    for at in range(8, len(data), 7):
        if 8 + 4 <= at % len(data):
            damaged = data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1:]
            with pytest.raises(images.ImageError):
                images.check_png(damaged, 'x.png')


def test_a_header_size_that_disagrees_with_the_image_data_is_refused():
    """IHDR says 60 rows where the data holds 20 (a valid chunk, CRC recomputed)."""
    data = PNGS['grey']
    ihdr = bytearray(data[16:29])
    struct.pack_into('>I', ihdr, 4, 60)
    forged = data[:8] + chunk(b'IHDR', bytes(ihdr)) + data[33:]
    with pytest.raises(images.ImageError, match='inflates to 200 bytes, but its IHDR size '
                                                'needs 600'):
        images.check_png(forged, 'x.png')
    with pytest.raises(tf.errors.InvalidArgumentError):  # TensorFlow fails on it mid-training
        tf.io.decode_png(forged)
    with Image.open(io.BytesIO(forged)) as image:  # Pillow alone would let it pass
        image.load()
    with pytest.raises(images.ImageError):  # so the full check walks the structure first
        images.check_image(forged, 'x.png', mode='full')


def test_image_data_that_inflates_beyond_the_header_is_stopped_there():
    """A 'zip bomb' in IDAT: 4x4 pixels declared, 50 MB of zeros inflated; refused after
    inflating a megabyte, not fifty."""
    bomb = zlib.compress(bytes(50_000_000), 9)
    header = struct.pack('>IIBBBBB', 4, 4, 8, 0, 0, 0, 0)
    data = (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) + chunk(b'IDAT', bomb)
            + chunk(b'IEND', b''))
    with pytest.raises(images.ImageError, match='inflates to more than the 20 bytes'):
        images.check_png(data, 'bomb.png')


def test_a_png_claiming_a_huge_image_is_refused_before_inflating():
    header = struct.pack('>IIBBBBB', 100_000, 100_000, 8, 2, 0, 0, 0)
    data = (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) + chunk(b'IDAT', zlib.compress(b''))
            + chunk(b'IEND', b''))
    with pytest.raises(images.ImageError, match='100000x100000 pixels, over the limit'):
        images.check_image(data, 'x.png')
