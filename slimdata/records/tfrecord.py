"""The TFRecord file format without TensorFlow: write, read, count, verify and index.

A TFRecord file is a sequence of records, each framed as (little-endian)::

    uint64 length | uint32 masked_crc32c(length bytes) | data | uint32 masked_crc32c(data)

where ``masked_crc32c(x) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 (mod 2**32)`` of the
CRC-32C (Castagnoli) of ``x``. A file may be compressed as a whole: ``'GZIP'`` (a gzip stream,
as many members as you like) or ``'ZLIB'`` (one zlib stream), exactly as
``tf.io.TFRecordWriter`` writes them and ``tf.data.TFRecordDataset`` reads them.

This module imports no TensorFlow, so ``slimdata count|verify|index`` start in a fraction of a
second and run where TensorFlow is not installed. Files are opened through
`slimdata.records.fs`, so paths with a URL scheme (``gs://``, ``ram://``) work too (through
``tf.io.gfile``, which imports TensorFlow when the first one is seen).

Compression. Writers take ``None`` (or ``''``), ``'GZIP'`` or ``'ZLIB'``, as TensorFlow does.
Readers also take ``'auto'``, their default: a file whose first 12 bytes are a valid record
header (length plus the length's CRC, a 1 in 2**32 chance for anything else) is uncompressed;
otherwise a file that starts with the gzip magic ``1f 8b`` is GZIP and one that starts with a
zlib header is ZLIB; anything else is read as uncompressed, and fails as "not a TFRecord file".
An empty file is a valid uncompressed file with zero records. In compressed files, record byte
offsets count bytes of the decompressed stream.

Errors. Every problem in a file is a `TFRecordError` (a ValueError) that names the file, the
record index and the byte offset where that record starts, and says what was wrong. A missing
file raises FileNotFoundError naming it. A file that ends inside a record header is reported as
truncated (TensorFlow takes it for the end of the file and silently returns fewer records).

Indexes. `write_index` writes the text index of NVIDIA DALI's ``tfrecord2idx`` and of the PyPI
``tfrecord`` package: one line ``"{offset} {size}"`` per record, where ``size`` is the whole
framed record, ``16 + len(data)`` bytes.
"""

import dataclasses
import io
import os
import struct
import zlib
from typing import (
    Callable,
    Dict,
    Iterator,
    List,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

from crc32c import crc32c as _crc32c

from slimdata.records import fs

PathLike = Union[str, 'os.PathLike[str]']
ProgressCallback = Callable[[Union[bytes, memoryview]], None]  # a chunk of the file, as read
_T = TypeVar('_T')

HEADER_SIZE = 12  # uint64 length + uint32 masked CRC of the length
FOOTER_SIZE = 4  # uint32 masked CRC of the data
FRAMING_SIZE = HEADER_SIZE + FOOTER_SIZE

_HEADER = struct.Struct('<QI')
_LENGTH = struct.Struct('<Q')
_CRC = struct.Struct('<I')
_MASK_DELTA = 0xA282EAD8
_UINT32 = 0xFFFFFFFF
# The masked CRC of a length depends on the length only, and files repeat lengths, so the
# readers remember the CRCs of lengths already checked: for small records this saves a fifth
# of the time. Bounded, because a file can have as many distinct lengths as records.
_LENGTH_CRC_CACHE_SIZE = 4096

# Read size of the record scanner: big enough that reads are few and a record rarely straddles
# two of them (the straddling part is moved to the front of the buffer), small enough to stay
# cheap per open file. Sizes from 256 KiB to 2 MiB measured alike; 128 KiB and less slows
# 50 KB records down.
_CHUNK_SIZE = 1024 * 1024
# Files the writer opens are buffered this much: a write call per record (two, for a record
# bigger than the default 8 KiB buffer) costs about a third of the time of writing a 60 kB
# image record on ext4; with this buffer, one call serves many records.
WRITE_BUFFER_SIZE = 1024 * 1024
# `count_records` reads headers through windows this big: one read serves every header in it
# when records are small, and little is read in vain when they are large.
_HEADER_WINDOW_SIZE = 8 * 1024

UNCOMPRESSED = None
GZIP = 'GZIP'
ZLIB = 'ZLIB'
AUTO = 'auto'
_ZLIB_WBITS = {GZIP: 16 + zlib.MAX_WBITS, ZLIB: zlib.MAX_WBITS}

# What `expand_paths` leaves out when it lists a folder: the files converters write beside
# the shards, index files, and temporary or hidden files.
_SIDE_FILE_SUFFIXES = ('.json', '.txt', '.idx', '.tfindex')
INDEX_SUFFIX = '.idx'


def masked_crc32c(data) -> int:
    """The masked CRC-32C of a bytes-like object, as stored in TFRecord framing."""
    crc = _crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & _UINT32


class TFRecordError(ValueError):
    """A TFRecord file is corrupt, truncated, or not a TFRecord file.

    Attributes:
      path: the file.
      record_index: the 0-based index of the record that could not be read.
      offset: the byte offset where that record starts (in the decompressed stream when the
        file is compressed).
      reason: what was wrong.
      compression: None, 'GZIP' or 'ZLIB': how the file was read.
    """

    def __init__(self, path: PathLike, record_index: int, offset: int, reason: str,
                 compression: Optional[str] = None):
        self.path = os.fspath(path)
        self.record_index = record_index
        self.offset = offset
        self.reason = reason
        self.compression = compression
        where = f'byte offset {offset}'
        if compression:
            where += f' of the decompressed {compression} stream'
        super().__init__(f'{self.path}: record {record_index} at {where}: {reason}')

    def __reduce__(self):  # keeps the attributes when the error crosses a process boundary
        return (type(self),
                (self.path, self.record_index, self.offset, self.reason, self.compression))


@dataclasses.dataclass
class VerifyResult:
    """What `verify_file` found.

    Attributes:
      path: the file.
      num_records: records whose framing and CRCs are correct (those before the first
        problem, if there is one).
      num_bytes: the size of the file on disk.
      ok: True when the whole file is valid.
      error: the first problem found, or None.
    """
    path: str
    num_records: int
    num_bytes: int
    ok: bool
    error: Optional[TFRecordError] = None


def normalize_compression(compression: Optional[str], allow_auto: bool = True) -> Optional[str]:
    """Returns None, 'GZIP', 'ZLIB' (or 'auto' when allowed) for any spelling of them.

    None, '' and 'none' mean uncompressed; names are case-insensitive.
    """
    name = (compression or '').strip().upper()
    if name in ('', 'NONE'):
        return UNCOMPRESSED
    if name in _ZLIB_WBITS:
        return name
    if name == AUTO.upper() and allow_auto:
        return AUTO
    allowed = "None, '', 'GZIP', 'ZLIB'" + (", 'auto'" if allow_auto else '')
    raise ValueError(f'Unknown TFRecord compression {compression!r}; expected one of {allowed}')


def _looks_compressed(head: bytes) -> Optional[str]:
    """'GZIP' or 'ZLIB' when `head` starts like such a stream, else None."""
    if head[:2] == b'\x1f\x8b':
        return GZIP
    if len(head) >= 2:
        cmf, flg = head[0], head[1]
        # RFC 1950: deflate method, window <= 32 KiB, header check bits, no preset dictionary.
        if cmf & 0x0F == 8 and cmf >> 4 <= 7 and ((cmf << 8) | flg) % 31 == 0 and not flg & 0x20:
            return ZLIB
    return None


def _is_record_header(head: bytes) -> bool:
    return (len(head) >= HEADER_SIZE
            and masked_crc32c(head[:8]) == _CRC.unpack_from(head, 8)[0])


def detect_compression(path: PathLike) -> Optional[str]:
    """Guesses how a TFRecord file is compressed from its first bytes: None, 'GZIP' or 'ZLIB'.

    A valid uncompressed record header wins, so an uncompressed file is never mistaken for a
    compressed one; see the module docstring.
    """
    with fs.open_read(os.fspath(path)) as file:
        head = file.read(HEADER_SIZE)
    if not head or _is_record_header(head):
        return UNCOMPRESSED
    return _looks_compressed(head)


def _resolve_compression(path: PathLike, compression: Optional[str]) -> Optional[str]:
    compression = normalize_compression(compression)
    return detect_compression(path) if compression == AUTO else compression


# ----------------------------------------------------------------------------------------------
# Writing

class WritableFile(Protocol):
    """What `TFRecordWriter` writes into: a binary file object (only write and flush used)."""

    def write(self, data: bytes, /) -> object: ...

    def flush(self) -> None: ...


class TFRecordWriter:
    """Writes records in TFRecord framing, optionally GZIP or ZLIB compressed.

    Usage::

        with TFRecordWriter('train.tfrecord') as writer:
            for example in examples:
                writer.write(example.SerializeToString())

    Args:
      path_or_file: a path, or a binary file object open for writing. A file object passed in
        is flushed by `close()` but stays open: whoever opened it closes it.
      compression: None or '' (uncompressed), 'GZIP' or 'ZLIB'.
    """

    def __init__(self, path_or_file: Union[PathLike, WritableFile],
                 compression: Optional[str] = None):
        self.compression = normalize_compression(compression, allow_auto=False)
        self._owned_file: Optional[io.RawIOBase] = None  # closed by close()
        if isinstance(path_or_file, (str, bytes, os.PathLike)):
            self._file: WritableFile = fs.open_write(os.fsdecode(path_or_file), WRITE_BUFFER_SIZE)
            self._owned_file = self._file
        else:
            self._file = path_or_file
        self._compressor = None
        #: The size and CRC-32C of the bytes written to the file so far (the sharded writer
        #: records both, so that a shard can later be told from any other file).
        self.bytes_written = 0
        self.crc32c = 0
        if self.compression is not None:
            # TensorFlow's defaults: compression level 6 (Z_DEFAULT_COMPRESSION), memLevel 9.
            self._compressor = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED,
                                                _ZLIB_WBITS[self.compression], 9)
        self._closed = False

    def write(self, data: bytes) -> None:
        """Appends one record whose payload is the bytes-like `data`."""
        if self._closed:
            raise ValueError('write() on a closed TFRecordWriter')
        try:
            payload = memoryview(data).cast('B')
        except TypeError as error:
            raise TypeError('TFRecordWriter.write() takes bytes (e.g. '
                            f'example.SerializeToString()), not {type(data).__name__}') from error
        length = _LENGTH.pack(len(payload))
        header = length + _CRC.pack(masked_crc32c(length))
        footer = _CRC.pack(masked_crc32c(payload))
        for piece in (header, data, footer):  # `data` as given: some file objects want bytes
            self._emit(piece)

    def _emit(self, piece) -> None:
        if self._compressor is not None:
            piece = self._compressor.compress(piece)
        self._emit_compressed(piece)

    def _emit_compressed(self, piece: bytes) -> None:
        if piece:
            self._file.write(piece)
            self.bytes_written += len(piece)
            self.crc32c = _crc32c(piece, self.crc32c)

    def flush(self) -> None:
        """Pushes everything written so far to the file (a sync point of a compressed stream)."""
        if self._closed:
            return
        if self._compressor is not None:
            self._emit_compressed(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self) -> None:
        """Ends the compressed stream, flushes, and closes the file if this writer opened it."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._compressor is not None:
                self._emit_compressed(self._compressor.flush(zlib.Z_FINISH))
            self._file.flush()
        finally:
            if self._owned_file is not None:
                self._owned_file.close()

    def __enter__(self) -> 'TFRecordWriter':
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


# ----------------------------------------------------------------------------------------------
# Reading: byte sources the record scanner pulls from

class _StreamError(Exception):
    """A compressed stream is corrupt or cut short; the scanner adds where it happened."""


class _FileSource:
    """The bytes of an uncompressed file, read straight into the scanner's buffer."""

    def __init__(self, file: fs.Reader, on_read: Optional[ProgressCallback]):
        self._file = file
        self._on_read = on_read

    def readinto(self, view: memoryview) -> int:
        count = self._file.readinto(view)
        if self._on_read is not None and count:
            self._on_read(view[:count])
        return count


class _InflatingSource:
    """The decompressed bytes of a GZIP or ZLIB file.

    GZIP files may hold several members one after the other (TensorFlow reads them all);
    a ZLIB file holds one stream, and bytes after its end are reported, not ignored.
    """

    def __init__(self, file: fs.Reader, compression: str, on_read: Optional[ProgressCallback],
                 file_size: int):
        self._file = file
        self._file_size = file_size
        self._compression = compression
        self._on_read = on_read
        self._inflater = zlib.decompressobj(_ZLIB_WBITS[compression])
        self._input = b''  # compressed bytes not yet given to the inflater
        self._output = memoryview(b'')  # decompressed bytes not yet handed out
        self._empty = True  # nothing read from the file yet
        self._consumed = 0  # compressed bytes read from the file so far

    def readinto(self, view: memoryview) -> int:
        while not self._output:
            if not self._inflate(len(view)):
                return 0
        count = min(len(view), len(self._output))
        view[:count] = self._output[:count]
        self._output = self._output[count:]
        return count

    def _inflate(self, max_length: int) -> bool:
        """Decompresses more into `self._output`; False at the clean end of the file."""
        if self._inflater.eof:
            if not self._input:
                self._input = self._read_input()
                if not self._input:
                    return False
            if self._compression == ZLIB:
                raise _StreamError(f'{self._trailing_size()} bytes after the end of the ZLIB '
                                   'stream (TensorFlow ignores them; the file was probably '
                                   'written twice or concatenated)')
            self._inflater = zlib.decompressobj(_ZLIB_WBITS[GZIP])  # the next gzip member
        if not self._input:
            self._input = self._read_input()
            if not self._input:
                if self._empty:  # an empty file holds no records, compressed or not (as in TF)
                    return False
                raise _StreamError(f'the {self._compression} stream ends early (the file is '
                                   'truncated)')
        try:
            self._output = memoryview(self._inflater.decompress(self._input, max_length))
        except zlib.error as error:
            raise _StreamError(f'bad {self._compression} stream: {error}') from error
        self._input = self._inflater.unconsumed_tail or self._inflater.unused_data
        return True

    def _read_input(self) -> bytes:
        data = self._file.read(_CHUNK_SIZE)
        if data:
            self._empty = False
            self._consumed += len(data)
            if self._on_read is not None:
                self._on_read(data)
        return data

    def _trailing_size(self) -> int:
        return len(self._input) + self._file_size - self._consumed


def _open_source(file: fs.Reader, compression: Optional[str],
                 on_read: Optional[ProgressCallback], file_size: int):
    if compression is None:
        return _FileSource(file, on_read)
    return _InflatingSource(file, compression, on_read, file_size)


# ----------------------------------------------------------------------------------------------
# Reading: the errors, worded once for the reader and the counter

def _truncation_reason(available: int, length: Optional[int]) -> str:
    """Why a record that has only `available` bytes left in the file cannot be read."""
    if length is None or available < HEADER_SIZE:
        return (f'truncated header: the file ends {available} bytes into the record, and a '
                f'record header is {HEADER_SIZE} bytes')
    if available < HEADER_SIZE + length:
        return (f'truncated data: the header says {length} bytes of data, the file ends after '
                f'{available - HEADER_SIZE}')
    return (f'truncated data CRC: the file ends {available - HEADER_SIZE - length} bytes into '
            f'the {FOOTER_SIZE}-byte CRC after the data')


def _length_crc_reason(record_index: int, header: bytes, compression: Optional[str]) -> str:
    length, stored = _HEADER.unpack_from(header)
    mismatch = (f'length CRC mismatch (stored 0x{stored:08x}, computed '
                f'0x{masked_crc32c(header[:8]):08x})')
    if record_index > 0:
        return f'{mismatch}: the length field ({length}) is corrupt'
    reason = f'not a TFRecord file (or corrupt at the start): {mismatch}'
    looks_like = _looks_compressed(header)
    if compression is None and looks_like:
        reason += (f'; it starts like a {looks_like} stream, so read it with '
                   f"compression='{looks_like}' (or 'auto')")
    return reason


def _check_length_crc(header: bytes, length_crcs: Dict[int, int]) -> bool:
    """Whether the header's length CRC is right; remembers it in `length_crcs` if so."""
    length, stored = _HEADER.unpack_from(header)
    if masked_crc32c(header[:8]) != stored:
        return False
    if len(length_crcs) < _LENGTH_CRC_CACHE_SIZE:
        length_crcs[length] = stored
    return True


def _data_crc_reason(stored: int, computed: int) -> str:
    return f'data CRC mismatch (stored 0x{stored:08x}, computed 0x{computed:08x})'


# ----------------------------------------------------------------------------------------------
# Reading: the record scanner

def _scan_records(path: str, source, compression: Optional[str], verify: bool,
                  emit: Callable[[memoryview], _T]) -> Iterator[_T]:
    """Yields `emit(view of each record's data)`, checking the framing as it goes.

    The length CRC is always checked (a corrupt length must not send the reader astray);
    the data CRC when `verify` is true. The view passed to `emit` is only valid during the
    call. Everything the loop touches is a local variable: this is the hot path.
    """
    buffer = bytearray(_CHUNK_SIZE)
    view = memoryview(buffer)
    start = end = 0  # buffer[start:end] holds bytes read and not yet consumed
    base = 0  # the stream offset of buffer[0]
    index = 0
    crc32c = _crc32c
    unpack_header = _HEADER.unpack_from
    unpack_crc = _CRC.unpack_from
    length_crcs: Dict[int, int] = {}  # length -> its masked CRC, for lengths already checked
    while True:
        if end - start < HEADER_SIZE:
            where = (path, index, base + start, compression)
            buffer, view, end = _fill(source, buffer, view, start, end, HEADER_SIZE, where)
            base, start = base + start, 0
            if end == 0:
                return
            if end < HEADER_SIZE:
                raise TFRecordError(*where[:3], _truncation_reason(end, None), compression)
        length, stored = unpack_header(view, start)
        if length_crcs.get(length) != stored:
            header = bytes(view[start:start + HEADER_SIZE])
            if not _check_length_crc(header, length_crcs):
                raise TFRecordError(path, index, base + start,
                                    _length_crc_reason(index, header, compression), compression)
        record_end = start + FRAMING_SIZE + length
        if end < record_end:
            where = (path, index, base + start, compression)
            buffer, view, end = _fill(source, buffer, view, start, end, FRAMING_SIZE + length,
                                      where)
            base, start = base + start, 0
            record_end = FRAMING_SIZE + length
            if end < record_end:
                raise TFRecordError(*where[:3], _truncation_reason(end, length), compression)
        data_start = start + HEADER_SIZE
        data_end = record_end - FOOTER_SIZE
        if verify:
            crc = crc32c(view[data_start:data_end])
            computed = (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & _UINT32
            stored = unpack_crc(view, data_end)[0]
            if computed != stored:
                raise TFRecordError(path, index, base + start,
                                    _data_crc_reason(stored, computed), compression)
        yield emit(view[data_start:data_end])
        start = record_end
        index += 1


def _fill(source, buffer: bytearray, view: memoryview, start: int, end: int, need: int,
          where: Tuple[str, int, int, Optional[str]]) -> Tuple[bytearray, memoryview, int]:
    """Reads until `need` unconsumed bytes are buffered, or the source ends.

    Moves the unconsumed bytes buffer[start:end] to the front (into a bigger buffer if `need`
    does not fit), so the caller's `start` becomes 0. The buffer grows with the data that
    actually arrives, so a huge length in a corrupt header cannot exhaust memory. `where`
    (path, record index, offset, compression) places a broken compressed stream.

    Returns (buffer, view, the new end of the unconsumed bytes).
    """
    end -= start
    if start:
        view[:end] = view[start:start + end]
    try:
        while end < need:
            if end == len(buffer):
                grown = bytearray(min(need, 2 * len(buffer)))
                grown[:end] = view[:end]
                view.release()
                buffer, view = grown, memoryview(grown)
            count = source.readinto(view[end:])
            if not count:
                break
            end += count
    except _StreamError as error:
        raise TFRecordError(*where[:3], str(error), where[3]) from None
    return buffer, view, end


def _open_for_reading(path: PathLike) -> fs.Reader:
    """Opens `path` unbuffered (the scanner buffers); FileNotFoundError names a missing path."""
    return fs.open_read(os.fspath(path))


def _read_records(path: PathLike, verify: bool, compression: Optional[str],
                  emit: Callable[[memoryview], _T],
                  on_read: Optional[ProgressCallback] = None) -> Iterator[_T]:
    compression = _resolve_compression(path, compression)
    file_size = fs.size(os.fspath(path))
    with _open_for_reading(path) as file:
        yield from _scan_records(os.fspath(path),
                                 _open_source(file, compression, on_read, file_size),
                                 compression, verify, emit)


def iter_records(path: PathLike, verify: bool = True,
                 compression: Optional[str] = AUTO) -> Iterator[bytes]:
    """Yields the data of each record in a TFRecord file, as bytes.

    Args:
      path: the file.
      verify: check each record's data CRC (the length CRC is always checked).
      compression: 'auto' (the default: detected from the first bytes), None or '' for
        uncompressed, 'GZIP' or 'ZLIB'.

    Raises:
      FileNotFoundError: at once, when `path` does not exist.
      TFRecordError: when a record is corrupt or truncated, as iteration reaches it.
    """
    fs.stat(os.fspath(path))  # a missing file fails here, not at the first next()
    return _read_records(path, verify, compression, bytes)


def count_records(path: PathLike, compression: Optional[str] = AUTO) -> int:
    """Counts the records of a TFRecord file.

    An uncompressed file is counted without reading its data: the reader jumps from header to
    header, checks each length's CRC, and checks the file does not end inside a record. A
    compressed file has to be decompressed, and is (data CRCs are not checked then either).

    Args:
      path: the file.
      compression: as for `iter_records`.

    Raises:
      FileNotFoundError: when `path` does not exist.
      TFRecordError: on a corrupt length or a file that ends inside a record.
    """
    compression = _resolve_compression(path, compression)
    if compression is None:
        return sum(1 for _ in iter_record_spans(path))
    return sum(1 for _ in _read_records(path, False, compression, len))


def iter_record_spans(path: PathLike) -> Iterator[Tuple[int, int]]:
    """Yields (offset, data length) of each record of an uncompressed file, without its data.

    Checks each length's CRC and that the file does not end inside a record, as
    `count_records` does.
    """
    path = os.fspath(path)
    size = fs.size(path)
    with _open_for_reading(path) as file:
        window, window_start = b'', 0
        offset, index = 0, 0
        length_crcs: Dict[int, int] = {}  # length -> its masked CRC, of lengths checked
        while offset < size:
            at = offset - window_start
            if at + HEADER_SIZE > len(window):
                file.seek(offset)
                window, window_start, at = file.read(_HEADER_WINDOW_SIZE), offset, 0
                if len(window) < HEADER_SIZE:
                    raise TFRecordError(path, index, offset,
                                        _truncation_reason(size - offset, None))
            length, stored = _HEADER.unpack_from(window, at)
            if length_crcs.get(length) != stored:
                header = window[at:at + HEADER_SIZE]
                if not _check_length_crc(header, length_crcs):
                    raise TFRecordError(path, index, offset,
                                        _length_crc_reason(index, header, None))
            if offset + FRAMING_SIZE + length > size:
                raise TFRecordError(path, index, offset,
                                    _truncation_reason(size - offset, length))
            yield offset, length
            offset += FRAMING_SIZE + length
            index += 1


def verify_file(path: PathLike, compression: Optional[str] = AUTO,
                on_read: Optional[ProgressCallback] = None) -> VerifyResult:
    """Checks the framing and both CRCs of every record of a file, up to the first problem.

    Args:
      path: the file.
      compression: as for `iter_records`.
      on_read: called with each chunk of the file's bytes as read from disk (a bytes-like
        object valid during the call): for progress displays, or a checksum of the file.

    Returns:
      A `VerifyResult`; problems in the file are reported in it, not raised.

    Raises:
      FileNotFoundError: when `path` does not exist.
    """
    num_bytes = fs.size(os.fspath(path))
    num_records = 0
    try:
        for _ in _read_records(path, True, compression, len, on_read):
            num_records += 1
    except TFRecordError as error:
        return VerifyResult(os.fspath(path), num_records, num_bytes, False, error)
    return VerifyResult(os.fspath(path), num_records, num_bytes, True)


def holds_damaged_record_at(path: PathLike, offset: int) -> bool:
    """Whether an uncompressed file holds the damaged record that TensorFlow's readers report
    at byte `offset` ("corrupted record at 850", naming no file).

    TensorFlow reports the record's start (a truncated record, a wrong length CRC) or its
    payload's start (a wrong data CRC). This walks the record headers up to `offset`, seeking
    over the payloads, and checks the record found there.
    """
    with _open_for_reading(path) as file:
        start = 0
        while start <= offset:
            if start in (offset, offset - _HEADER.size):
                return not _record_is_whole(file, start)
            file.seek(start)
            header = file.read(_HEADER.size)
            if len(header) < _HEADER.size or not _check_length_crc(header, {}):
                return False  # damaged before `offset`: not the record reported
            start += _HEADER.size + _LENGTH.unpack_from(header)[0] + _CRC.size
    return False


def _record_is_whole(file: fs.Reader, start: int) -> bool:
    """Whether a record with correct framing and CRCs starts at byte `start` of `file`."""
    file.seek(start)
    header = file.read(_HEADER.size)
    if len(header) < _HEADER.size or not _check_length_crc(header, {}):
        return False
    length = _LENGTH.unpack_from(header)[0]
    data = file.read(length)
    footer = file.read(_CRC.size)
    return (len(data) == length and len(footer) == _CRC.size
            and masked_crc32c(data) == _CRC.unpack(footer)[0])


# ----------------------------------------------------------------------------------------------
# Checking a file before TensorFlow's reader opens it

@dataclasses.dataclass(frozen=True)
class FileCheck:
    """What `check_file` found.

    Attributes:
      path: the file.
      compression: None, 'GZIP' or 'ZLIB': how the file was read.
      num_bytes: the size of the file on disk.
      num_records: the records before the first problem (every record when `ok`).
      error: the first problem with the framing (a `TFRecordError` naming the record and its
        offset), or None.
    """
    path: str
    compression: Optional[str]
    num_bytes: int
    num_records: int
    error: Optional[TFRecordError] = None

    @property
    def ok(self) -> bool:
        return self.error is None


# (path, compression asked, size, mtime_ns, inode, device) -> FileCheck, for `check_file`.
_FILE_CHECKS: Dict[Tuple[str, Optional[str], int, int, int, int], 'FileCheck'] = {}


def check_file(path: PathLike, compression: Optional[str] = AUTO) -> FileCheck:
    """Checks that a file's framing holds together: each record's length CRC, and that every
    declared length fits in the file (or, compressed, in its decompressed stream).

    TensorFlow's readers allocate a record's declared length before reading it: a header that
    declares more bytes than the machine's memory (2**35 on a 32 GB machine), with a valid
    length CRC, kills the process, and a file that ends inside a record header reads as a
    shorter file. A file this check passes holds exactly `num_records` records for TensorFlow's
    readers too; their data CRCs are not checked (`verify_file` does that).

    An uncompressed file is checked without reading its data (`iter_record_spans` jumps from
    header to header); a compressed one has to be decompressed. The result is remembered for
    the life of the process, keyed by the path and the file's size, modification time and
    inode, so each file is checked once however many pipelines read it, and again when it
    changes.

    Args:
      path: the file.
      compression: as for `iter_records`.

    Returns:
      A `FileCheck`; a problem in the file is reported in it, not raised.

    Raises:
      FileNotFoundError: when `path` does not exist.
    """
    path = os.fspath(path)
    stat = fs.stat(path)
    key = (path, compression, *stat)
    found = _FILE_CHECKS.get(key)
    if found is None:
        found = _check_framing(path, _resolve_compression(path, compression), stat.size)
        _FILE_CHECKS[key] = found
    return found


def _check_framing(path: str, compression: Optional[str], num_bytes: int) -> FileCheck:
    num_records = 0
    records = (iter_record_spans(path) if compression is None
               else _read_records(path, False, compression, len))
    try:
        for _ in records:
            num_records += 1
    except TFRecordError as error:
        return FileCheck(path, compression, num_bytes, num_records, error)
    return FileCheck(path, compression, num_bytes, num_records)


# ----------------------------------------------------------------------------------------------
# Index files

def default_index_path(tfrecord_path: PathLike, output_dir: Optional[PathLike] = None) -> str:
    """`<file>.idx`, beside the file or in `output_dir`."""
    tfrecord_path = os.fspath(tfrecord_path)
    if output_dir is None:
        return tfrecord_path + INDEX_SUFFIX
    return os.path.join(os.fspath(output_dir), os.path.basename(tfrecord_path) + INDEX_SUFFIX)


def write_index(tfrecord_path: PathLike, index_path: Optional[PathLike] = None) -> str:
    """Writes the DALI / PyPI `tfrecord` index of an uncompressed TFRecord file.

    One line per record, ``"{offset} {size}"``: the byte offset where the record starts and
    its whole framed size (``16 + len(data)``), as DALI's ``tfrecord2idx`` and the ``tfrecord``
    package's ``tfrecord2idx`` write them. Neither tool has a default name (DALI's examples
    use ``.idx``, the ``tfrecord`` package's folder mode ``<stem>.tfindex``); ours is
    ``<file>.idx``. The index is written to a temporary name and renamed, so it is never
    seen half-written.

    Args:
      tfrecord_path: an uncompressed TFRecord file (those tools seek in the raw file, so
        compressed files cannot be indexed).
      index_path: where to write; `default_index_path(tfrecord_path)` if None.

    Returns:
      The path written.

    Raises:
      TFRecordError: when the file is corrupt (nothing is written then).
      ValueError: when the file is compressed.
    """
    compression = detect_compression(tfrecord_path)
    if compression is not None:
        raise ValueError(f'{os.fspath(tfrecord_path)} is {compression}-compressed; index files '
                         'describe offsets in uncompressed TFRecord files only')
    index_path = os.fspath(index_path) if index_path is not None else default_index_path(
        tfrecord_path)
    lines = [f'{offset} {FRAMING_SIZE + length}\n'
             for offset, length in iter_record_spans(tfrecord_path)]
    fs.write_text_atomic(index_path, ''.join(lines))
    return index_path


# ----------------------------------------------------------------------------------------------
# Command-line paths

def _is_record_file_name(name: str) -> bool:
    return not (name.startswith('.') or '.tmp' in name or name.endswith(_SIDE_FILE_SUFFIXES))


def _list_record_files(directory: str) -> List[str]:
    return [os.path.join(directory, name) for name in fs.list_files(directory)
            if _is_record_file_name(name)]


#: File name endings of images: a folder holding only these is a source folder, not records.
IMAGE_SUFFIXES = ('.jpg', '.jpeg', '.png', '.gif', '.bmp', '.webp', '.tif', '.tiff')


def _all_images(files: Sequence[str]) -> bool:
    return all(name.lower().endswith(IMAGE_SUFFIXES) for name in files)


def _no_records_message(folder: str, found: Sequence[str]) -> str:
    """Why a folder holds no TFRecord files, in one line, and where records likely are: a
    folder of images (a converter's source), or of dataset folders (named)."""
    if found:
        return (f'{folder!r} holds {len(found):,} images (JPEG, PNG, ...), not TFRecord '
                'files: it looks like a source folder; convert it first (slimdata convert '
                'image-folder SRC OUT), then give OUT')
    datasets = sorted(name for name in fs.listdir(folder)
                      if fs.exists(os.path.join(folder, name, 'dataset_info.json')))
    if datasets:
        shown = ', '.join(os.path.join(folder, name) for name in datasets[:10])
        more = f' and {len(datasets) - 10} more' if len(datasets) > 10 else ''
        return (f'No TFRecord files in folder {folder!r}; it holds dataset folders: '
                f'{shown}{more} (give one of them, or several)')
    entries = len(fs.listdir(folder))
    return (f'No TFRecord files in folder {folder!r} (it has {entries:,} '
            f'{"entry" if entries == 1 else "entries"}, none a record file)')


def _record_files_of_match(match: str) -> List[str]:
    if fs.isdir(match):
        return _list_record_files(match)
    return [match] if _is_record_file_name(os.path.basename(match)) else []


def expand_paths(paths: Sequence[PathLike]) -> List[str]:
    """Turns command-line paths into the list of TFRecord files they name.

    Each path is a file (taken as it is), a folder, or a glob pattern. A folder stands for
    every regular file directly in it except hidden files (``.*``), temporary files
    (``*.tmp*``), index files (``*.idx``, ``*.tfindex``) and the ``*.json`` / ``*.txt`` files
    converters write beside the shards (``dataset_info.json``, ``labels.txt``); anything else
    there is taken to be a record file, so a stray file is verified and reported rather than
    silently skipped. Glob matches are sorted, and the same files are left out of them;
    folders among them are expanded as above. The result keeps the order given, without
    duplicates.

    Raises:
      ValueError: naming a path that matches nothing, or a folder with no record files.
    """
    files: List[str] = []
    for path in (os.fspath(given) for given in paths):
        if fs.isdir(path):
            found = _list_record_files(path)
            if not found or _all_images(found):
                raise ValueError(_no_records_message(path, found))
        elif fs.exists(path):
            found = [path]
        elif any(char in path for char in '*?['):
            matches = fs.glob(path)
            if not matches:
                raise ValueError(f'No files match {path!r}')
            found = [file for match in matches for file in _record_files_of_match(match)]
            if not found:
                raise ValueError(f'No TFRecord files among the {len(matches)} matches of '
                                 f'{path!r}')
        else:
            raise ValueError(f'No such file or folder: {path!r}')
        files.extend(found)
    return list(dict.fromkeys(files))
