"""What the image converters share: source images, deterministic order, writer options.

Converters pass image bytes through unchanged (never re-encoded), so a record holds exactly
the bytes of the source file. This module identifies a file's format from its first bytes
(not its extension), reads the size from the header and decodes the pixels once with Pillow,
so a corrupt file fails at conversion time with its name rather than in the middle of a
training run (`jpeg_size` reads a JPEG's header alone, for converters that check no more).
It also orders source items deterministically (a seeded shuffle, a seeded train/validation
split) and declares the writer options every converter's command line offers. (Records are
built with `slimdata.records.example.serialize_example`.)

Converter worker processes import this module, so it does not import TensorFlow: local
paths are read with the standard library, and only a path with a URL scheme (`gs://...`)
goes through `tf.io.gfile`, which imports TensorFlow when first needed.
"""

import argparse
import dataclasses
import io
import os
import random
import struct
from typing import Any, BinaryIO, List, Optional, Sequence, Tuple, TypeVar

import numpy as np
from PIL import Image

T = TypeVar('T')

#: The leading bytes of the formats `tfexample_decoder.Image` decodes and converters store.
_SIGNATURES = {b'\xff\xd8\xff': 'jpeg', b'\x89PNG\r\n\x1a\n': 'png'}
_SIGNATURE_LENGTH = max(len(signature) for signature in _SIGNATURES)

#: What Pillow raises on a file it cannot parse or decode (truncated data, a broken chunk,
#: an absurd size).
_PILLOW_ERRORS = (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError)


@dataclasses.dataclass(frozen=True)
class EncodedImage:
    """An image file's bytes as stored in a record, and what its header says.

    Attributes:
      data: the file's bytes, unchanged.
      format: 'jpeg' or 'png', from the bytes.
      height: rows, from the header.
      width: columns, from the header.
    """
    data: bytes
    format: str
    height: int
    width: int


def image_format_of(data: bytes) -> Optional[str]:
    """Returns 'jpeg' or 'png' from the leading bytes of `data`, or None for anything else."""
    for signature, image_format in _SIGNATURES.items():
        if data.startswith(signature):
            return image_format
    return None


def _gfile(path: str) -> Optional[Any]:
    """`tf.io.gfile` for a path with a URL scheme (`gs://`, `s3://`, ...), None for a local one.

    Only such paths import TensorFlow: a worker reading local files starts seconds faster.
    """
    if '://' not in path:
        return None
    from slimdata._tf import tf
    return tf.io.gfile


def _open_binary(path: str) -> BinaryIO:
    """Opens the file `path` for reading bytes, local or (through `tf.io.gfile`) remote."""
    gfile = _gfile(path)
    return open(path, 'rb') if gfile is None else gfile.GFile(path, 'rb')


def sniff_image_format(path: str) -> Optional[str]:
    """Returns 'jpeg' or 'png' from the first bytes of the file `path`, or None."""
    with _open_binary(path) as f:
        return image_format_of(f.read(_SIGNATURE_LENGTH))


def read_file(path: str) -> bytes:
    """Returns the bytes of `path` (a local path, or a `gs://` one and the like)."""
    with _open_binary(path) as f:
        return f.read()


def sorted_listdir(path: str) -> List[str]:
    """The entry names of the folder `path`, sorted (empty if there is no such folder).

    Sorting makes every listing, and so every conversion, independent of the order in which
    the file system happens to list a folder.
    """
    gfile = _gfile(path)
    if gfile is None:
        return sorted(os.listdir(path)) if os.path.isdir(path) else []
    if not gfile.isdir(path):
        return []
    return sorted(name.rstrip('/') for name in gfile.listdir(path))


def decode_with_pillow(data: bytes, path: str) -> Image.Image:
    """Decodes all of `data` with Pillow (catching truncation), or raises naming `path`.

    Raises:
      ValueError: if Pillow cannot parse or fully decode the bytes.
    """
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except _PILLOW_ERRORS as error:
        raise ValueError(f'{path}: corrupt or unreadable image ({type(error).__name__}: '
                         f'{error})') from error
    return image


def read_image(path: str) -> EncodedImage:
    """Reads a JPEG or PNG file for storing as is, after checking that it decodes.

    Raises:
      ValueError: naming the file, if it is neither JPEG nor PNG (by its bytes) or corrupt.
    """
    data = read_file(path)
    image_format = image_format_of(data)
    if image_format is None:
        raise ValueError(f'{path} is not a JPEG or PNG image (it starts with '
                         f'{data[:_SIGNATURE_LENGTH]!r})')
    width, height = decode_with_pillow(data, path).size
    return EncodedImage(data=data, format=image_format, height=height, width=width)


# JPEG markers (ITU T.81, table B.1) that `jpeg_size` tells apart. A frame header (SOF) is
# any of 0xC0-0xCF except DHT (0xC4), JPG (0xC8) and DAC (0xCC), which share the range.
_JPEG_SOI, _JPEG_EOI, _JPEG_SOS = 0xD8, 0xD9, 0xDA
_JPEG_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_MARKERS_WITHOUT_LENGTH = frozenset([0x01, *range(0xD0, 0xD8)])  # TEM, RST0-RST7
_JPEG_CHANNELS = (1, 3, 4)  # grayscale, YCbCr/RGB, CMYK/YCCK: what decoders accept


def jpeg_size(data: bytes, path: str) -> Tuple[int, int, int]:
    """(width, height, channels) from a JPEG's frame header, without decoding any pixels.

    Walks the marker segments from the start-of-image marker to the first start of scan
    (skipping APPn such as EXIF, comments, tables), as decoders do, and reads the frame header
    (SOF0-SOF15: baseline, extended, progressive, lossless, arithmetic) on the way: the same
    answer as opening the file with Pillow, for a fifth of the time. As in libjpeg, stray
    bytes between segments are skipped.

    Args:
      data: the file's bytes.
      path: the file, named in errors.

    Raises:
      ValueError: naming `path` and the byte offset, if the header is truncated or corrupt,
        has no frame header before the scan, or describes an image that 8-bit decoders (and
        so TensorFlow's decode_jpeg) cannot decode.
    """
    if data[:2] != b'\xff\xd8':
        raise _jpeg_error(path, f'it starts with {data[:4]!r}, not the start-of-image marker '
                          'FF D8', 0)
    end = len(data)
    offset = 2
    frame = None  # (offset of the SOF segment's length, marker)
    while True:
        offset = data.find(b'\xff', offset)
        while 0 <= offset < end - 1 and data[offset + 1] == 0xFF:
            offset += 1  # fill bytes before a marker
        if offset < 0 or offset + 1 >= end:
            raise _jpeg_error(path, 'the file ends before the image data (no start of scan)',
                              end)
        marker = data[offset + 1]
        offset += 2
        if marker in _JPEG_MARKERS_WITHOUT_LENGTH or marker == 0:  # 0: an escaped FF byte
            continue
        if marker in (_JPEG_SOI, _JPEG_EOI):
            raise _jpeg_error(path, f'marker FF {marker:02X} before the image data', offset - 2)
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
            frame = (offset, marker)
        elif marker == _JPEG_SOS:
            break
        offset += length
    if frame is None:
        raise _jpeg_error(path, 'no frame header (SOF marker) before the image data', offset)
    return _jpeg_frame_size(data, frame[0], frame[1], path)


def _jpeg_frame_size(data: bytes, offset: int, marker: int,
                     path: str) -> Tuple[int, int, int]:
    """(width, height, channels) from the SOF segment whose length field is at `offset`."""
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
                          f'components; expected a positive size and 1, 3 or 4 components',
                          offset)
    return width, height, channels


def _jpeg_error(path: str, reason: str, offset: int) -> ValueError:
    return ValueError(f'{path} is not a readable JPEG: {reason} (at byte {offset})')


def encode_png(pixels: np.ndarray) -> bytes:
    """Encodes a uint8 array, [height, width] or [height, width, 1], as a grayscale PNG.

    Pillow's PNG encoder with fixed settings is deterministic, so the same pixels always give
    the same bytes (converters are byte-reproducible).
    """
    if pixels.dtype != np.uint8:
        raise ValueError(f'encode_png expects uint8 pixels, got {pixels.dtype}')
    buffer = io.BytesIO()
    Image.fromarray(pixels.reshape(pixels.shape[:2])).save(buffer, format='PNG')
    return buffer.getvalue()


def deterministic_shuffle(items: Sequence[T], seed: Optional[int]) -> List[T]:
    """Returns `items` shuffled by `seed` (the same order for the same items and seed).

    The caller passes items in a canonical order (sorted paths, the order of a list file),
    never the file system's listing order, so the result does not depend on the disk.
    `seed=None` keeps that order.
    """
    shuffled = list(items)
    if seed is not None:
        random.Random(seed).shuffle(shuffled)
    return shuffled


def split_train_validation(items: Sequence[T], validation_ratio: float,
                           seed: Optional[int]) -> Tuple[List[T], List[T]]:
    """Splits items into (train, validation), reproducibly.

    Items are shuffled by `seed` (see `deterministic_shuffle`) and the first
    `round(len(items) * validation_ratio)` (Python's round: ties to even) become the
    validation split.

    Raises:
      ValueError: if the ratio is outside [0, 1), or leaves a split it asks for empty.
    """
    if not 0 <= validation_ratio < 1:
        raise ValueError(f'validation_ratio must be in [0, 1), got {validation_ratio}')
    shuffled = deterministic_shuffle(items, seed)
    num_validation = round(len(shuffled) * validation_ratio)
    if validation_ratio > 0 and not 0 < num_validation < len(shuffled):
        raise ValueError(f'validation_ratio {validation_ratio} of {len(shuffled)} items leaves '
                         f'{"the validation" if num_validation == 0 else "the train"} split '
                         'empty; use more items or another ratio')
    return shuffled[num_validation:], shuffled[:num_validation]


def add_writer_arguments(parser: argparse.ArgumentParser, default_num_shards: int) -> None:
    """Adds the options every converter passes to `slimdata.records.writer.write_sharded`."""
    parser.add_argument('--shards', '--num-shards', dest='num_shards', type=int,
                        default=default_num_shards,
                        help='TFRecord files per split (default: %(default)s)')
    parser.add_argument('--workers', type=int, default=1,
                        help='processes that read and validate the source files and write '
                             'the shards, each a whole shard at a time, so no more than '
                             'the number of shards (default: %(default)s)')
    parser.add_argument('--seed', type=int, default=0,
                        help='seed of the order of the examples in the shards (and of the '
                             'train/validation split, where there is one); the same seed gives '
                             'the same files (default: %(default)s)')
