"""Checking encoded images before they go into records (and after, in `verify --decode`).

Converters pass image bytes through unchanged, so a damaged source file would otherwise
reach the records and fail, naming no record, inside `decode_jpeg` hours into training. Two
levels of check, both naming the file:

- `'structure'` (the converters' default): the whole file's structure, to its end, without
  decoding pixels. JPEG: every marker segment from start-of-image to end-of-image (EOI),
  every scan's entropy-coded data included, and at least the scan data that the frame
  header's size needs (each 8x8 block takes at least one bit of Huffman-coded data, so a
  header claiming 65000x65000 pixels over a few kilobytes is refused). PNG: every chunk's
  length and CRC from IHDR to IEND, and the image data inflated (without keeping it) to
  exactly the size IHDR declares. About a tenth of the time of a decode.
- `'full'`: a complete decode with Pillow (`--check-images full`), which also finds damage
  inside the compressed data that the structure cannot show (flipped bits in a scan).

Both refuse images of more than `max_pixels` pixels (`DEFAULT_MAX_PIXELS`, Pillow's own
decompression-bomb limit): a decoder would need gigabytes for them.

This module imports no TensorFlow. JPEG and PNG are walked by hand because no library
checks a file's structure without decoding it: the walk costs about 30 microseconds for a
100 kB JPEG, Pillow's decode about 1,500 (`benchmarks/bench_voc_convert.py`).
"""

import dataclasses
import io
import struct
import zlib
from typing import List, Optional, Tuple, Union

import numpy as np
from PIL import Image

CHECK_MODES = ('structure', 'full')
DEFAULT_CHECK = 'structure'
#: Pillow's decompression-bomb error threshold (twice its warning limit): 178,956,970 pixels.
DEFAULT_MAX_PIXELS = 2 * Image.MAX_IMAGE_PIXELS if Image.MAX_IMAGE_PIXELS else 178_956_970

#: The leading bytes of the formats converters store.
_SIGNATURES = {b'\xff\xd8\xff': 'jpeg', b'\x89PNG\r\n\x1a\n': 'png'}
SIGNATURE_LENGTH = max(len(signature) for signature in _SIGNATURES)

#: What Pillow raises on a file it cannot parse or decode (`slimdata show` catches them too).
PILLOW_ERRORS = (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError,
                  struct.error, zlib.error)


class ImageError(ValueError):
    """An image file that must not go into a record; the message names it and says why."""


@dataclasses.dataclass(frozen=True)
class ImageInfo:
    """What an image file's header says.

    Attributes:
      format: 'jpeg' or 'png', from the bytes.
      width, height: pixels.
      channels: colour components (1 grey, 3 colour, 4 CMYK or RGBA, 2 grey + alpha).
    """
    format: str
    width: int
    height: int
    channels: int


def image_format_of(data: bytes) -> Optional[str]:
    """Returns 'jpeg' or 'png' from the leading bytes of `data`, or None for anything else."""
    for signature, image_format in _SIGNATURES.items():
        if data.startswith(signature):
            return image_format
    return None


def check_image(data: bytes, path: str, mode: str = DEFAULT_CHECK,
                max_pixels: int = DEFAULT_MAX_PIXELS) -> ImageInfo:
    """Checks a JPEG or PNG file's bytes (see the module docstring) and returns its header.

    Args:
      data: the file's bytes.
      path: the file, named in errors.
      mode: 'structure' or 'full'.
      max_pixels: larger images are refused.

    Raises:
      ImageError: naming `path`, if the bytes are not a JPEG or PNG, are damaged, or
        describe an image of more than `max_pixels` pixels.
      ValueError: for an unknown `mode`.
    """
    if mode not in CHECK_MODES:
        raise ValueError(f'image check mode must be one of {CHECK_MODES}, got {mode!r}')
    image_format = image_format_of(data)
    if image_format is None:
        raise ImageError(f'{path} is not a JPEG or PNG image (it starts with '
                         f'{data[:SIGNATURE_LENGTH]!r})')
    check = check_jpeg if image_format == 'jpeg' else check_png
    info = check(data, path, max_pixels)
    if mode == 'full':
        decode_with_pillow(data, path)
    return info


def decode_with_pillow(data: bytes, path: str,
                       max_pixels: int = DEFAULT_MAX_PIXELS) -> Image.Image:
    """Decodes all of `data` with Pillow (catching truncation), or raises naming `path`.

    The size is read from the header first: an image of more than `max_pixels` pixels is
    refused before any pixel is decoded.

    Raises:
      ImageError: if Pillow cannot parse or fully decode the bytes, or the image is too large.
    """
    try:
        image = Image.open(io.BytesIO(data))
    except PILLOW_ERRORS as error:
        raise _unreadable(path, error) from error
    _check_pixels(path, image.width, image.height, len(image.getbands()), max_pixels)
    try:
        image.load()
    except PILLOW_ERRORS as error:
        raise _unreadable(path, error) from error
    return image


def _unreadable(path: str, error: BaseException) -> ImageError:
    return ImageError(f'{path}: corrupt or unreadable image ({type(error).__name__}: {error})')


def decode_stored_image(data: bytes, where: str,
                        max_pixels: int = DEFAULT_MAX_PIXELS) -> Image.Image:
    """The check of an image read back from a record (`slimdata verify --decode`): the
    converters' check, then a whole decode.

    A JPEG or PNG must pass `check_image`'s structure check (so a header claiming more pixels
    than its data can hold is refused before a decoder allocates them); any image is refused
    over `max_pixels` before its pixels are decoded, then decoded whole with Pillow.

    Raises:
      ImageError: naming `where`, as `check_image` and `decode_with_pillow` do.
    """
    if image_format_of(data) is not None:
        check_image(data, where, 'structure', max_pixels)
    return decode_with_pillow(data, where, max_pixels)


# ----------------------------------------------------------------------------------------------
# JPEG (ITU T.81)

_JPEG_SOI, _JPEG_EOI, _JPEG_SOS, _JPEG_DNL = 0xD8, 0xD9, 0xDA, 0xDC
# Frame headers are 0xC0-0xCF but DHT (0xC4), JPG (0xC8) and DAC (0xCC), which share the range.
_JPEG_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_ARITHMETIC_SOF = frozenset([0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF])
_JPEG_LOSSLESS_SOF = frozenset([0xC3, 0xC7, 0xCB, 0xCF])
_JPEG_SEQUENTIAL_HUFFMAN_SOF = frozenset([0xC0, 0xC1, 0xC5])
_JPEG_MARKERS_WITHOUT_LENGTH = frozenset([0x01, *range(0xD0, 0xD8)])  # TEM, RST0-RST7
_JPEG_CHANNELS = (1, 3, 4)  # grayscale, YCbCr/RGB, CMYK/YCCK: what decoders accept


@dataclasses.dataclass
class _JpegFrame:
    marker: int
    width: int
    height: int
    # (horizontal, vertical) sampling factors of each component
    sampling: List[Tuple[int, int]]


def check_jpeg(data: bytes, path: str, max_pixels: int = DEFAULT_MAX_PIXELS) -> ImageInfo:
    """Walks a JPEG from its start-of-image to its end-of-image marker.

    Every marker segment's length must fit in the file, a frame header (SOF0-SOF15) must
    come before the first scan, every scan's entropy-coded data must end in a marker, the
    file must reach EOI, and the scans must hold at least the data the frame's size needs.
    Stray bytes between segments are skipped, as libjpeg does; bytes after EOI are allowed
    (cameras append data there, and decoders ignore it).

    Raises:
      ImageError: naming `path` and the byte offset of the problem.
    """
    if data[:2] != b'\xff\xd8':
        raise _jpeg_error(path, f'it starts with {data[:4]!r}, not the start-of-image marker '
                          'FF D8', 0)
    end = len(data)
    offset = 2
    frame: Optional[_JpegFrame] = None
    scan_bytes = 0
    markers = None  # where each scan's entropy-coded data can end, found at the first scan
    while True:
        offset = data.find(b'\xff', offset)
        while 0 <= offset < end - 1 and data[offset + 1] == 0xFF:
            offset += 1  # fill bytes before a marker
        if offset < 0 or offset + 1 >= end:
            raise _jpeg_error(path, 'the file ends before its end-of-image marker (FF D9): '
                              'it is truncated', end)
        marker = data[offset + 1]
        offset += 2
        if marker in _JPEG_MARKERS_WITHOUT_LENGTH or marker == 0:  # 0: an escaped FF byte
            continue
        if marker == _JPEG_EOI:
            break
        if marker == _JPEG_SOI:
            raise _jpeg_error(path, 'a second start-of-image marker', offset - 2)
        if offset + 2 > end:
            raise _jpeg_error(path, 'the file ends inside a segment header', end)
        length = data[offset] << 8 | data[offset + 1]
        if length < 2:
            raise _jpeg_error(path, f'segment FF {marker:02X} has the impossible length '
                              f'{length}', offset)
        if offset + length > end:
            raise _jpeg_error(path, f'segment FF {marker:02X} of {length} bytes runs past the '
                              f'end of the file ({end - offset} bytes left)', offset)
        if marker in _JPEG_SOF_MARKERS and frame is None:
            frame = _jpeg_frame(data, offset, marker, path)
            _check_pixels(path, frame.width, frame.height, len(frame.sampling), max_pixels)
        elif marker == _JPEG_SOS:
            if frame is None:
                raise _jpeg_error(path, 'no frame header (SOF marker) before the image data',
                                  offset)
            scan_start = offset + length
            if markers is None:
                markers = _marker_positions(data)
            following = int(np.searchsorted(markers, scan_start))
            if following == len(markers):
                raise _jpeg_error(path, 'the image data ends without an end-of-image marker '
                                  '(FF D9): the file is truncated', end)
            offset = int(markers[following])
            scan_bytes += offset - scan_start
            continue
        offset += length
    if frame is None or not scan_bytes:
        raise _jpeg_error(path, 'no image data (scan) before the end-of-image marker', offset)
    _check_scan_size(frame, scan_bytes, path)
    return ImageInfo('jpeg', frame.width, frame.height, len(frame.sampling))


def _marker_positions(data: bytes) -> np.ndarray:
    """The offsets of every FF byte that starts a marker: followed by neither a stuffed zero,
    nor a restart marker (RST0-RST7 sit inside scan data), nor another FF (a fill byte).

    Scan data ends at the first of them after the scan header. Found in one vectorised pass:
    about twice as fast as `re` or `bytes.find` over the FF bytes of the scan data.
    """
    array = np.frombuffer(data, np.uint8)
    following = array[1:]
    # Masks over the whole data first, so that only the few markers are gathered: stuffed
    # zeros are as many as a byte in 256 of the scan data.
    candidates = np.flatnonzero((array[:-1] == 0xFF) & (following != 0) & (following != 0xFF))
    marker = following[candidates]
    return candidates[(marker < 0xD0) | (marker > 0xD7)]


def _jpeg_frame(data: bytes, offset: int, marker: int, path: str) -> _JpegFrame:
    """The frame header (SOF segment) whose length field is at `offset`."""
    length = data[offset] << 8 | data[offset + 1]
    if length < 8:
        raise _jpeg_error(path, f'frame header FF {marker:02X} is {length} bytes, too short',
                          offset)
    precision, height, width, channels = struct.unpack_from('>BHHB', data, offset + 2)
    if precision != 8:
        raise _jpeg_error(path, f'{precision}-bit samples; only 8-bit JPEGs are decodable',
                          offset)
    if not height or not width or channels not in _JPEG_CHANNELS:
        raise _jpeg_error(path, f'frame header gives {width}x{height} pixels with {channels} '
                          f'components; expected a positive size and 1, 3 or 4 components '
                          '(a height of 0, defined later by a DNL marker, is not supported '
                          'by decoders either)', offset)
    if length < 8 + 3 * channels:
        raise _jpeg_error(path, f'frame header FF {marker:02X} is {length} bytes, too short '
                          f'for {channels} components', offset)
    sampling = []
    for component in range(channels):
        factors = data[offset + 9 + 3 * component]
        horizontal, vertical = factors >> 4, factors & 0x0F
        if not (1 <= horizontal <= 4 and 1 <= vertical <= 4):
            raise _jpeg_error(path, f'component {component} has the sampling factors '
                              f'{horizontal}x{vertical}; each must be 1 to 4', offset)
        sampling.append((horizontal, vertical))
    return _JpegFrame(marker, width, height, sampling)


def _check_scan_size(frame: _JpegFrame, scan_bytes: int, path: str) -> None:
    """Refuses scan data too short for the frame's size.

    Huffman codes are at least one bit long. Every 8x8 block of every component (every
    sample, in lossless JPEG) gets at least one code in the first scan that holds the
    component; in a sequential JPEG, at least two (its DC difference, and an end-of-block or
    AC code). Arithmetic coding can spend less than a bit, so it gets no bound. The bound
    catches absurd headers (a few kB claiming a huge image) and scans cut short; a header
    that overstates a size moderately passes it, and `--check-images full` catches that.
    """
    if frame.marker in _JPEG_ARITHMETIC_SOF:
        return
    max_h = max(h for h, _ in frame.sampling)
    max_v = max(v for _, v in frame.sampling)
    unit = 1 if frame.marker in _JPEG_LOSSLESS_SOF else 8  # samples, or 8x8 blocks
    units = sum(_ceil(_ceil(frame.width * h, max_h), unit)
                * _ceil(_ceil(frame.height * v, max_v), unit) for h, v in frame.sampling)
    bits_per_unit = 2 if frame.marker in _JPEG_SEQUENTIAL_HUFFMAN_SOF else 1
    needed = _ceil(units * bits_per_unit, 8)
    if scan_bytes < needed:
        raise _jpeg_error(path, f'its frame header says {frame.width}x{frame.height} pixels, '
                          f'which need at least {needed:,} bytes of image data, but the scans '
                          f'hold {scan_bytes:,}: the header or the data is damaged', 0)


def _ceil(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def _check_pixels(path: str, width: int, height: int, channels: int, max_pixels: int) -> None:
    if width * height > max_pixels:
        raise ImageError(f'{path}: {width}x{height} pixels, over the limit of {max_pixels:,} '
                         f'pixels (decoding it would take {width * height * channels / 1e9:.1f} '
                         'GB)')


def _jpeg_error(path: str, reason: str, offset: int) -> ImageError:
    return ImageError(f'{path} is not a readable JPEG: {reason} (at byte {offset})')


# ----------------------------------------------------------------------------------------------
# PNG (ISO/IEC 15948)

_PNG_CHUNK = struct.Struct('>I4s')
_PNG_IHDR = struct.Struct('>IIBBBBB')
_PNG_MAX_LENGTH = 2**31 - 1
# colour type -> (channels, the bit depths allowed)
_PNG_COLOUR_TYPES = {0: (1, (1, 2, 4, 8, 16)), 2: (3, (8, 16)), 3: (1, (1, 2, 4, 8)),
                     4: (2, (8, 16)), 6: (4, (8, 16))}
# Adam7 passes: (x start, y start, x step, y step)
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
          (0, 1, 1, 2))
_INFLATE_PIECE = 1 << 20  # bytes of image data inflated at a time, then dropped


def check_png(data: bytes, path: str, max_pixels: int = DEFAULT_MAX_PIXELS) -> ImageInfo:
    """Walks a PNG's chunks from IHDR to IEND, checking each CRC, and inflates its image data.

    Raises:
      ImageError: naming `path` and the byte offset of the problem.
    """
    offset = len(b'\x89PNG\r\n\x1a\n')
    end = len(data)
    header: Optional[Tuple[int, int, int, int, bool]] = None
    idat = []  # memoryviews of the IDAT chunks' data, in order
    idat_ended = False
    view = memoryview(data)
    while True:
        if offset + 12 > end:
            raise _png_error(path, 'the file ends before its IEND chunk: it is truncated',
                             offset)
        length, chunk_type = _PNG_CHUNK.unpack_from(data, offset)
        name = chunk_type.decode('latin-1')
        if length > _PNG_MAX_LENGTH:
            raise _png_error(path, f'chunk {name!r} declares {length} bytes', offset)
        if offset + 12 + length > end:
            raise _png_error(path, f'chunk {name!r} of {length} bytes runs past the end of the '
                             'file: it is truncated', offset)
        body = view[offset + 8:offset + 8 + length]
        stored_crc = struct.unpack_from('>I', data, offset + 8 + length)[0]
        if zlib.crc32(body, zlib.crc32(chunk_type)) != stored_crc:
            raise _png_error(path, f'chunk {name!r} has a wrong CRC (damaged data)', offset)
        if header is None and chunk_type != b'IHDR':
            raise _png_error(path, f'the first chunk is {name!r}, not IHDR', offset)
        if chunk_type == b'IHDR':
            if header is not None:
                raise _png_error(path, 'a second IHDR chunk', offset)
            header = _png_header(body, path, offset)
            _check_pixels(path, header[0], header[1], header[2], max_pixels)
        elif chunk_type == b'IDAT':
            if idat_ended:
                raise _png_error(path, 'IDAT chunks are not consecutive', offset)
            idat.append(body)
        elif chunk_type == b'IEND':
            break
        elif idat:
            idat_ended = True
        offset += 12 + length
    if not idat:
        raise _png_error(path, 'no image data (IDAT chunk)', offset)
    assert header is not None, 'the loop refuses a first chunk other than IHDR'
    width, height, channels, bits, interlaced = header
    _check_png_data(idat, _png_data_size(width, height, channels * bits, interlaced), path)
    return ImageInfo('png', width, height, channels)


def _png_header(body: memoryview, path: str, offset: int) -> Tuple[int, int, int, int, bool]:
    """(width, height, channels, bit depth, interlaced) from the IHDR chunk's data."""
    if len(body) != _PNG_IHDR.size:
        raise _png_error(path, f'IHDR has {len(body)} bytes, expected {_PNG_IHDR.size}', offset)
    width, height, bits, colour, compression, filtering, interlace = _PNG_IHDR.unpack(body)
    if not 0 < width <= _PNG_MAX_LENGTH or not 0 < height <= _PNG_MAX_LENGTH:
        raise _png_error(path, f'IHDR gives the size {width}x{height}', offset)
    if colour not in _PNG_COLOUR_TYPES or bits not in _PNG_COLOUR_TYPES[colour][1]:
        raise _png_error(path, f'IHDR gives colour type {colour} with bit depth {bits}, which '
                         'PNG does not define', offset)
    if compression or filtering or interlace not in (0, 1):
        raise _png_error(path, f'IHDR gives compression {compression}, filter {filtering}, '
                         f'interlace {interlace}; PNG defines 0, 0 and 0 or 1', offset)
    return width, height, _PNG_COLOUR_TYPES[colour][0], bits, interlace == 1


def _png_data_size(width: int, height: int, bits_per_pixel: int, interlaced: bool) -> int:
    """Bytes of the filtered image data: one filter byte plus the pixels, per row (per pass)."""
    passes = _ADAM7 if interlaced else ((0, 0, 1, 1),)
    total = 0
    for x_start, y_start, x_step, y_step in passes:
        columns = _ceil(width - x_start, x_step) if width > x_start else 0
        rows = _ceil(height - y_start, y_step) if height > y_start else 0
        if columns and rows:
            total += rows * (1 + _ceil(columns * bits_per_pixel, 8))
    return total


def _check_png_data(idat: List[memoryview], expected: int, path: str) -> None:
    """Inflates the IDAT stream piece by piece, keeping nothing: it must give `expected`."""
    inflater = zlib.decompressobj()
    produced = 0
    try:
        for chunk in idat:
            pending: Union[memoryview, bytes] = chunk
            while pending and not inflater.eof and produced <= expected:
                produced += len(inflater.decompress(pending, _INFLATE_PIECE))
                pending = inflater.unconsumed_tail
        if produced <= expected:
            produced += len(inflater.flush())
    except zlib.error as error:
        raise _png_error(path, f'its image data is not a valid zlib stream ({error})', 0) from None
    if produced > expected:
        raise _png_error(path, f'its image data inflates to more than the {expected:,} bytes '
                         'its IHDR size needs', 0)
    if produced < expected or not inflater.eof:
        raise _png_error(path, f'its image data inflates to {produced:,} bytes, but its IHDR '
                         f'size needs {expected:,}: it is truncated or damaged', 0)


def _png_error(path: str, reason: str, offset: int) -> ImageError:
    return ImageError(f'{path} is not a readable PNG: {reason} (at byte {offset})')
