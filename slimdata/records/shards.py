"""The unit of work of every writer driver: a piece of a shard, encoded and framed.

A shard's items are cut into pieces, contiguous runs of items. A piece's items are encoded by
the converter's `encode` (one call per item, the per-example code every driver shares), and
its records framed as TFRecords, one after the other, into a file (the local driver) or into
memory (the Beam driver). Uncompressed TFRecord files concatenate: a shard is its pieces
joined in order, byte for byte what one process writing the whole shard writes, whatever the
number and size of the pieces. So work can be handed out in pieces finer than shards, and the
output does not depend on how it was.

Nothing here imports TensorFlow: the converters' worker processes run it.
"""

import dataclasses
import errno
import mmap
import os
import shutil
from typing import Any, Callable, Dict, List, Mapping, Sequence, Tuple, Union

from crc32c import crc32c

from slimdata.records import fs
from slimdata.records.tfrecord import WRITE_BUFFER_SIZE, TFRecordWriter


class SkipExample(Exception):
    """Raised by an encode function to skip one source item on purpose (the user chose skip).

    Args:
      reason: a short category counted in the summary ('missing image', 'inverted box', ...).
      detail: names the file / object skipped.
    """

    def __init__(self, reason: str, detail: str = ''):
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail

    def __str__(self) -> str:
        return f'{self.reason}: {self.detail}' if self.detail else self.reason


@dataclasses.dataclass(frozen=True)
class EncodedExample:
    """What an encode function returns when it has something to report about a kept item.

    Attributes:
      data: a serialized tf.train.Example.
      notes: (reason, detail) pairs counted in the summary but NOT skipped, e.g.
        ('box clipped to image', 'a.xml obj 2').
      counts: what the record holds, counted in the summary without details, e.g.
        {"objects of class 'cat'": 2} (summed, not listed: a dataset has millions).
    """
    data: bytes
    notes: Sequence[Tuple[str, str]] = ()
    counts: Mapping[str, int] = dataclasses.field(default_factory=dict)


class ConversionError(ValueError):
    """An encode function failed on one item: names the split, the item index and the item.

    Attributes:
      split, index, item: where it happened.
      cause: the original exception's type and message.
    """

    def __init__(self, split: str, index: int, item: Any, cause: str):
        super().__init__(f'split {split!r}, item {index} ({_short_repr(item)}): {cause}')
        self.split = split
        self.index = index
        self.item = item
        self.cause = cause

    def __reduce__(self):
        # Rebuilt from its own arguments when it crosses a process boundary.
        return type(self), (self.split, self.index, self.item, self.cause)


@dataclasses.dataclass(frozen=True)
class ShardJob:
    """One shard to write: where it goes, its (item index, item) pairs in order, and the
    digest of its items' source files."""
    path: str
    temporary: str
    items: List[Tuple[int, Any]]
    sources: str = ''


@dataclasses.dataclass(frozen=True)
class Piece:
    """A run of a shard's items, written to its own temporary (the shard's own temporary
    when the shard is a single piece).

    Attributes:
      shard: the position of its shard among the jobs.
      number: its position among the shard's pieces.
      temporary: the file it is written to.
      items: (item index, item) pairs, in order.
    """
    shard: int
    number: int
    temporary: str
    items: List[Tuple[int, Any]]


@dataclasses.dataclass
class PieceResult:
    """What writing a piece (or a shard, its pieces joined) found: records and bytes written,
    the CRC-32C of those bytes, (reason, detail) skips and notes, and the records' counts."""
    num_records: int = 0
    num_bytes: int = 0
    crc32c: int = 0
    skipped: List[Tuple[str, str]] = dataclasses.field(default_factory=list)
    notes: List[Tuple[str, str]] = dataclasses.field(default_factory=list)
    counts: Dict[str, int] = dataclasses.field(default_factory=dict)

    def extend(self, other: 'PieceResult') -> None:
        """Appends the result of the piece that follows this one (its CRC computed apart)."""
        self.num_records += other.num_records
        self.num_bytes += other.num_bytes
        self.skipped += other.skipped
        self.notes += other.notes
        add_counts(self.counts, other.counts)


def add_counts(total: Dict[str, int], counts: Mapping[str, int]) -> None:
    """Adds `counts` into `total`, key by key."""
    for key, count in counts.items():
        total[key] = total.get(key, 0) + count


def cut_into_pieces(jobs: Sequence[ShardJob], pieces_per_shard: int) -> List[Piece]:
    """Every job's pieces, in shard order: at most `pieces_per_shard` per shard, of equal
    sizes (to an item), each with at least one item."""
    pieces = []
    for position, job in enumerate(jobs):
        count = max(1, min(pieces_per_shard, len(job.items)))
        for number in range(count):
            start = number * len(job.items) // count
            stop = (number + 1) * len(job.items) // count
            temporary = job.temporary if count == 1 else f'{job.temporary}.piece-{number:05d}'
            pieces.append(Piece(position, number, temporary, job.items[start:stop]))
    return pieces


def encode_one(encode: Callable, split: str, index: int,
               item: Any) -> Union[EncodedExample, SkipExample]:
    """Runs `encode(item)`; a SkipExample is returned, any other exception wrapped in a
    ConversionError naming the split, item index and item."""
    try:
        return _as_encoded(encode(item))
    except SkipExample as skip:
        return skip
    except Exception as error:
        raise ConversionError(split, index, item, f'{type(error).__name__}: {error}') from error


def write_items(writer: TFRecordWriter, items: Sequence[Tuple[int, Any]], encode: Callable,
                split: str, item_done: Callable[[], Any]) -> PieceResult:
    """Encodes items into `writer`; `item_done` is called after each (it may raise to stop).

    Returns the counts, skips and notes (the caller reads the bytes and CRC off `writer`).
    """
    result = PieceResult()
    for index, item in items:
        outcome = encode_one(encode, split, index, item)
        if isinstance(outcome, SkipExample):
            result.skipped.append((outcome.reason, outcome.detail))
        else:
            writer.write(outcome.data)
            result.num_records += 1
            result.notes.extend(outcome.notes)
            add_counts(result.counts, outcome.counts)
        item_done()
    return result


def write_piece(piece: Piece, shard_path: str, encode: Callable, split: str,
                item_done: Callable[[], Any]) -> PieceResult:
    """Writes a piece's records to its temporary file, synced; removes it on any error.

    An I/O error is a FileError naming the shard (`shard_path`), which is what the user
    knows of.
    """
    try:
        with fs.open_write(piece.temporary, WRITE_BUFFER_SIZE) as file:
            with TFRecordWriter(file) as writer:
                result = write_items(writer, piece.items, encode, split, item_done)
            file.sync()
        result.num_bytes, result.crc32c = writer.bytes_written, writer.crc32c
    except fs.FileError as error:
        fs.remove(piece.temporary)
        raise fs.FileError(shard_path, error.action, error.reason, error.errno) from error
    except BaseException:
        fs.remove(piece.temporary)
        raise
    return result


def join_pieces(pieces: Sequence[Piece], results: Sequence[PieceResult], job: ShardJob
                ) -> PieceResult:
    """Joins a shard's piece files, in order, into the shard's (synced) temporary file and
    removes them; returns the shard's result, its CRC-32C that of the joined bytes.

    The bytes move inside the kernel (`os.copy_file_range`), so joining costs this process
    no copy; their CRC is taken through a memory map of each piece.
    """
    joined = PieceResult()
    checksum = 0
    try:
        with open(job.temporary, 'wb') as target:
            for piece, result in zip(pieces, results):
                checksum = _append_file(piece.temporary, target, checksum)
                joined.extend(result)
            target.flush()
            os.fsync(target.fileno())
    except OSError as error:
        fs.remove(job.temporary)
        raise fs.FileError(job.path, 'write', str(error), error.errno) from error
    finally:
        for piece in pieces:
            fs.remove(piece.temporary)
    joined.crc32c = checksum
    return joined


def _append_file(path: str, target: Any, checksum: int) -> int:
    """Appends the file `path` to the open `target`; returns the CRC-32C continued over it."""
    with open(path, 'rb') as source:
        size = os.fstat(source.fileno()).st_size
        if not size:
            return checksum
        with mmap.mmap(source.fileno(), size, access=mmap.ACCESS_READ) as view:
            checksum = crc32c(view, checksum)
        try:
            copied = 0
            while copied < size:
                count = os.copy_file_range(source.fileno(), target.fileno(), size - copied)
                if not count:
                    raise OSError(errno.EIO, f'{path} shrank while being joined into the shard')
                copied += count
        except OSError as error:
            if error.errno not in _NO_COPY_FILE_RANGE:
                raise
            source.seek(copied)  # a file system that cannot: copy through this process
            shutil.copyfileobj(source, target, _COPY_CHUNK)
            target.flush()
    return checksum


# What copy_file_range answers where it cannot copy (an old kernel, another file system).
_NO_COPY_FILE_RANGE = (errno.ENOSYS, errno.EXDEV, errno.EINVAL, errno.EOPNOTSUPP)
_COPY_CHUNK = 1 << 20


def _as_encoded(result: Any) -> EncodedExample:
    if isinstance(result, bytes):
        return EncodedExample(result)
    if isinstance(result, EncodedExample) and isinstance(result.data, bytes):
        return result
    raise TypeError(f'encode returned {type(result).__name__}; expected bytes (a serialized '
                    'tf.train.Example, e.g. from slimdata.records.example.serialize_example) '
                    'or an EncodedExample')


def _short_repr(item: Any, limit: int = 300) -> str:
    text = repr(item)
    return text if len(text) <= limit else text[:limit - 3] + '...'
