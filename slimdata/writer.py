"""The sharded, parallel, atomic TFRecord writer that every converter uses.

A converter lists its source items (paths, tuples of paths, ...) and gives a picklable
top-level `encode(item)` that reads and validates one item and returns its serialized
`tf.train.Example` (or an `EncodedExample` with notes), or raises `SkipExample`::

    summary = write_sharded(items, encode, output_dir, 'train', num_shards=4, workers=8)
    print(summary.format())
    write_dataset_info(output_dir, 'mydata', {'train': summary.shards}, ...)

What it guarantees:

- Shard k of S holds `items[k*N//S:(k+1)*N//S]` (minus skipped items), in order, and is
  named `shard_filename(split, k, S)`, e.g. `train-00001-of-00004.tfrecord`. When there are
  fewer items than `num_shards`, S is the number of items (one item per shard) rather than
  writing shards that could never hold a record.
- The bytes written do not depend on `workers`: workers only encode, in chunks that come back
  in item order, and this process frames and writes every record. This needs an encode that
  is deterministic across processes: serialize with `slimdata.example.serialize_example`
  (protobuf's default map order differs from process to process).
- Each shard is written to `.<name>.tmp-<pid>` in the same folder and renamed when complete,
  so a file under a final name is always complete. On any error (or Ctrl-C) the temporary
  file is removed; shards completed before the error stay. A re-run keeps the shards already
  present under their final name (`shards_reused`) and writes only the missing ones, so it
  must be given the same items and encode; to convert different data, use an empty folder.
  Temporaries left by a killed run of the same split are removed on start (so run one
  writer per split and folder at a time).
- An empty item list is refused (a split without examples is almost always a wrong path or
  an empty list file). Shards of the same split written with another shard count are refused
  too: a reader's `<split>-*.tfrecord` pattern would read both sets.
- An `encode` that raises anything but `SkipExample` aborts the write with a
  `ConversionError` (a ValueError) naming the split, the item index and the item, with the
  original message; in the process pool the original traceback is attached as its cause.

`workers > 1` starts a process pool with the spawn start method (TensorFlow must never be
forked), so a script that calls this must guard its entry point with
`if __name__ == '__main__':`, and each worker imports the encode function's module. Output
folders with a URL scheme (`gs://...`) are written through `tf.io.gfile`.
"""

import collections
import contextlib
import itertools
import multiprocessing
import os
import pickle
import re
import signal
import sys
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import (Any, Callable, Deque, Dict, Iterable, Iterator, List, Optional, Sequence,
                    Tuple, TypeVar, Union)

from tqdm import tqdm

from slimdata.tfrecord import TFRecordWriter, count_records

T = TypeVar('T')

_DETAILS_SHOWN = 3       # details listed per skip/note reason in WriteSummary.format()
_MAX_CHUNK_SIZE = 32     # items per pool task: small enough for a smooth progress bar
_CHUNKS_PER_WORKER = 4   # pool tasks in flight per worker: keeps workers busy, bounds memory


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


@dataclass(frozen=True)
class EncodedExample:
    """What an encode function returns when it has something to report about a kept item.

    Attributes:
      data: a serialized tf.train.Example.
      notes: (reason, detail) pairs counted in the summary but NOT skipped, e.g.
        ('box clipped to image', 'a.xml obj 2').
    """
    data: bytes
    notes: Sequence[Tuple[str, str]] = ()


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
        # Rebuilt from its own arguments when it crosses the process pool.
        return type(self), (self.split, self.index, self.item, self.cause)


@dataclass
class WriteSummary:
    """What `write_sharded` wrote.

    Attributes:
      split: the split name.
      shards: [{'file': basename, 'num_records': n}, ...] in shard order (reused ones too).
      num_records: records in all shards.
      num_bytes: bytes of all shard files.
      skipped: reason -> details of the items skipped (by this run's encoding).
      notes: reason -> details noted but kept (by this run's encoding).
      seconds: wall time of the call.
      shards_reused: complete shards found from an earlier run and kept.
    """
    split: str
    shards: List[Dict[str, Any]]
    num_records: int
    num_bytes: int
    skipped: Dict[str, List[str]] = field(default_factory=dict)
    notes: Dict[str, List[str]] = field(default_factory=dict)
    seconds: float = 0.0
    shards_reused: int = 0

    def format(self) -> str:
        """A multi-line human summary: records, shards, bytes, time, rates, skips and notes."""
        reused = f' ({self.shards_reused} reused from an earlier run)' if self.shards_reused else ''
        shards = f'{len(self.shards)} shard' + ('' if len(self.shards) == 1 else 's')
        lines = [f'{self.split}: {self.num_records} records in {shards}{reused}',
                 f'  {_human_bytes(self.num_bytes)} in {self.seconds:.1f} s' + self._rates()]
        lines += _format_reasons(f'skipped {_count(self.skipped)} items', self.skipped)
        lines += _format_reasons(f'noted {_count(self.notes)} times (kept)', self.notes)
        return '\n'.join(lines)

    def _rates(self) -> str:
        if self.shards_reused:
            return '; no rates, as reused shards were not re-encoded'
        seconds = max(self.seconds, 1e-9)
        return (f', {self.num_records / seconds:.0f} records/s, '
                f'{self.num_bytes / seconds / 1e6:.1f} MB/s')


def shard_filename(split: str, index: int, num_shards: int) -> str:
    """The basename of shard `index` of `num_shards`: `<split>-%05d-of-%05d.tfrecord`."""
    return f'{split}-{index:05d}-of-{num_shards:05d}.tfrecord'


def write_sharded(items: Sequence[T], encode: Callable[[T], Union[bytes, EncodedExample]],
                  output_dir: str, split: str, num_shards: int, workers: int = 1,
                  desc: Optional[str] = None) -> WriteSummary:
    """Encodes `items` and writes them as TFRecord shards of one split (see the module doc).

    Args:
      items: picklable source descriptions (paths, tuples of paths, ...), in record order.
      encode: a picklable top-level function (or functools.partial of one) that reads and
        validates one item and returns its serialized tf.train.Example (bytes) or an
        EncodedExample, or raises SkipExample to leave it out.
      output_dir: the folder of the shards (created if missing); may be a `gs://` URL.
      split: the split name, the shards' file name prefix.
      num_shards: the number of shards (fewer when there are fewer items).
      workers: processes that run `encode`; 1 runs it in this process.
      desc: the progress bar's label; defaults to `split`.

    Returns:
      The WriteSummary; `summary.shards` is what `write_dataset_info` records.

    Raises:
      ValueError: for bad arguments, no items, or shards of another shard count present.
      ConversionError: when `encode` raises anything but SkipExample.
      RuntimeError: when a worker process dies (it names the items being encoded).
    """
    start_time = time.perf_counter()
    items = list(items)
    _check_arguments(items, encode, split, num_shards, workers)
    total_shards = min(num_shards, len(items))
    files = _file_system_for(output_dir)
    files.makedirs(output_dir)
    existing = _prepare_folder(files, output_dir, split, total_shards)
    bounds = [(k * len(items) // total_shards, (k + 1) * len(items) // total_shards)
              for k in range(total_shards)]
    names = [shard_filename(split, k, total_shards) for k in range(total_shards)]
    pending = [index for name, (start, stop) in zip(names, bounds) if name not in existing
               for index in range(start, stop)]
    summary = WriteSummary(split=split, shards=[], num_records=0, num_bytes=0)
    skipped = collections.defaultdict(list)
    notes = collections.defaultdict(list)
    with contextlib.ExitStack() as stack:
        progress = stack.enter_context(
            tqdm(total=len(items), desc=desc or split, unit='ex', file=sys.stderr))
        outcomes = _encoded_outcomes(stack, items, pending, encode, split, workers)
        for name, (start, stop) in zip(names, bounds):
            path = os.path.join(output_dir, name)
            if name in existing:
                num_records = files.count_records(path)
                summary.shards_reused += 1
                progress.update(stop - start)
            else:
                num_records = _write_shard(files, path, itertools.islice(outcomes, stop - start),
                                           skipped, notes, progress)
            summary.shards.append({'file': name, 'num_records': num_records})
            summary.num_records += num_records
            summary.num_bytes += files.size(path)
    summary.skipped = dict(skipped)
    summary.notes = dict(notes)
    summary.seconds = time.perf_counter() - start_time
    return summary


def _check_arguments(items: List[Any], encode: Callable, split: str, num_shards: int,
                     workers: int) -> None:
    if not split or split.startswith('.') or '/' in split or os.sep in split:
        raise ValueError(f'split must be a plain file name prefix, got {split!r}')
    if not items:
        raise ValueError(f'split {split!r}: no items to write (an empty list file or a wrong '
                         'source folder?)')
    for name, value in (('num_shards', num_shards), ('workers', workers)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f'{name} must be an int >= 1, got {value!r}')
    if workers > 1:
        try:
            pickle.dumps(encode)
        except (pickle.PicklingError, AttributeError, TypeError) as error:
            raise ValueError(f'encode must be picklable when workers > 1 (a top-level function '
                             f'or a functools.partial of one), got {encode!r}: {error}') from error


def _prepare_folder(files: '_FileSystem', output_dir: str, split: str,
                    total_shards: int) -> set:
    """Removes stale temporaries of `split`; returns its complete shards' names.

    Raises ValueError if shards of `split` with another shard count are present.
    """
    shard_pattern = re.escape(split) + r'-\d{5,}-of-(\d{5,})\.tfrecord'
    final_name = re.compile(shard_pattern)
    temporary_name = re.compile(r'\.' + shard_pattern + r'\.tmp-.+')
    existing, foreign = set(), []
    for name in sorted(files.listdir(output_dir)):
        if temporary_name.fullmatch(name):
            files.remove(os.path.join(output_dir, name))
            continue
        match = final_name.fullmatch(name)
        if match and int(match.group(1)) == total_shards:
            existing.add(name)
        elif match:
            foreign.append(name)
    if foreign:
        raise ValueError(
            f'{output_dir} holds shards of split {split!r} with another shard count '
            f'({", ".join(foreign[:3])}{", ..." if len(foreign) > 3 else ""}) and this run '
            f'writes {total_shards}; a reader of {split}-*.tfrecord would read both. Remove '
            'them or write to another folder.')
    return existing


def _encoded_outcomes(stack: contextlib.ExitStack, items: List[Any], pending: List[int],
                      encode: Callable, split: str,
                      workers: int) -> Iterator[Union[EncodedExample, SkipExample]]:
    """The outcomes of encoding `items[i] for i in pending`, in that order."""
    if workers == 1 or len(pending) <= 1:
        return (_encode_one(encode, split, index, items[index]) for index in pending)
    chunk_size = max(1, min(_MAX_CHUNK_SIZE, len(pending) // (workers * _CHUNKS_PER_WORKER)))
    chunks = [[(index, items[index]) for index in pending[start:start + chunk_size]]
              for start in range(0, len(pending), chunk_size)]
    executor = ProcessPoolExecutor(max_workers=min(workers, len(chunks)),
                                   mp_context=multiprocessing.get_context('spawn'),
                                   initializer=_init_worker)
    # On an error or Ctrl-C, drop the queued chunks and wait for the running ones.
    stack.callback(executor.shutdown, wait=True, cancel_futures=True)
    return _pool_outcomes(executor, chunks, encode, split, workers * _CHUNKS_PER_WORKER)


def _pool_outcomes(executor: ProcessPoolExecutor, chunks: List[List[Tuple[int, Any]]],
                   encode: Callable, split: str,
                   max_in_flight: int) -> Iterator[Union[EncodedExample, SkipExample]]:
    """Submits chunks as results are consumed (bounded memory) and yields them in order."""
    in_flight = collections.deque()
    for chunk in chunks:
        in_flight.append((chunk, executor.submit(_encode_chunk, encode, split, chunk)))
        if len(in_flight) >= max_in_flight:
            yield from _pop_oldest_result(split, in_flight)
    while in_flight:
        yield from _pop_oldest_result(split, in_flight)


def _pop_oldest_result(split: str, in_flight: Deque[Tuple[List[Tuple[int, Any]], Future]]
                       ) -> List[Union[EncodedExample, SkipExample]]:
    oldest_chunk, future = in_flight[0]
    try:
        results = future.result()
    except BrokenProcessPool as error:
        # A worker was killed (out of memory?) or crashed in native code; any chunk in flight
        # may have been its.
        newest_chunk = in_flight[-1][0]
        raise RuntimeError(f'split {split!r}: a worker process died while encoding items '
                           f'{oldest_chunk[0][0]} to {newest_chunk[-1][0]}; run with workers=1 '
                           'to find the failing item') from error
    in_flight.popleft()
    return results


def _init_worker() -> None:
    # Ctrl-C reaches the whole process group; only the parent acts on it (it cancels the
    # pool and removes its temporary file) instead of every worker printing a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _encode_chunk(encode: Callable, split: str,
                  chunk: List[Tuple[int, Any]]) -> List[Union[EncodedExample, SkipExample]]:
    return [_encode_one(encode, split, index, item) for index, item in chunk]


def _encode_one(encode: Callable, split: str, index: int,
                item: Any) -> Union[EncodedExample, SkipExample]:
    """Runs `encode(item)`; a SkipExample is returned, any other exception wrapped."""
    try:
        return _as_encoded(encode(item))
    except SkipExample as skip:
        return skip
    except Exception as error:
        raise ConversionError(split, index, item, f'{type(error).__name__}: {error}') from error


def _as_encoded(result: Any) -> EncodedExample:
    if isinstance(result, bytes):
        return EncodedExample(result)
    if isinstance(result, EncodedExample) and isinstance(result.data, bytes):
        return result
    raise TypeError(f'encode returned {type(result).__name__}; expected bytes (a serialized '
                    'tf.train.Example, e.g. from slimdata.example.serialize_example) or an '
                    'EncodedExample')


def _write_shard(files: '_FileSystem', path: str,
                 outcomes: Iterable[Union[EncodedExample, SkipExample]],
                 skipped: Dict[str, List[str]], notes: Dict[str, List[str]],
                 progress: tqdm) -> int:
    """Writes one shard through a temporary file; returns its number of records."""
    folder, name = os.path.split(path)
    temporary = os.path.join(folder, f'.{name}.tmp-{os.getpid()}')
    num_records = 0
    try:
        with files.open_write(temporary) as file, TFRecordWriter(file) as writer:
            for outcome in outcomes:
                if isinstance(outcome, SkipExample):
                    skipped[outcome.reason].append(outcome.detail)
                else:
                    writer.write(outcome.data)
                    num_records += 1
                    for reason, detail in outcome.notes:
                        notes[reason].append(detail)
                progress.update()
        files.rename(temporary, path)
    except BaseException:
        files.remove(temporary)
        raise
    return num_records


class _LocalFileSystem:
    """The file operations the writer needs, on local paths."""

    def makedirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def listdir(self, path: str) -> List[str]:
        return os.listdir(path)

    def open_write(self, path: str):
        return open(path, 'wb')

    def rename(self, source: str, target: str) -> None:
        os.replace(source, target)

    def remove(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)

    def size(self, path: str) -> int:
        return os.path.getsize(path)

    def count_records(self, path: str) -> int:
        return count_records(path)


class _GFileSystem:
    """The same operations through `tf.io.gfile`, for URLs such as gs://bucket/folder."""

    def __init__(self):
        from slimdata._tf import tf  # only folders with a URL scheme need TensorFlow
        self._tf = tf
        self._gfile = tf.io.gfile

    def makedirs(self, path: str) -> None:
        self._gfile.makedirs(path)

    def listdir(self, path: str) -> List[str]:
        return self._gfile.listdir(path)

    def open_write(self, path: str):
        return self._gfile.GFile(path, 'wb')

    def rename(self, source: str, target: str) -> None:
        self._gfile.rename(source, target, overwrite=True)

    def remove(self, path: str) -> None:
        if self._gfile.exists(path):
            self._gfile.remove(path)

    def size(self, path: str) -> int:
        return self._gfile.stat(path).length

    def count_records(self, path: str) -> int:
        # slimdata.tfrecord reads local paths only, so TensorFlow counts; in a graph of its
        # own, which works whether or not the caller runs eagerly.
        tf = self._tf
        with tf.Graph().as_default():
            count = tf.data.TFRecordDataset(path).reduce(tf.constant(0, tf.int64),
                                                         lambda total, _: total + 1)
            with tf.compat.v1.Session() as session:
                return int(session.run(count))


_FileSystem = Union[_LocalFileSystem, _GFileSystem]


def _file_system_for(output_dir: str) -> _FileSystem:
    return _GFileSystem() if '://' in output_dir else _LocalFileSystem()


def _short_repr(item: Any, limit: int = 300) -> str:
    text = repr(item)
    return text if len(text) <= limit else text[:limit - 3] + '...'


def _human_bytes(num_bytes: int) -> str:
    size = float(num_bytes)
    for unit in ('B', 'kB', 'MB', 'GB'):
        if size < 1000 or unit == 'GB':
            return f'{size:.0f} {unit}' if unit == 'B' else f'{size:.1f} {unit}'
        size /= 1000


def _count(details: Dict[str, List[str]]) -> int:
    return sum(len(entries) for entries in details.values())


def _format_reasons(heading: str, details: Dict[str, List[str]]) -> List[str]:
    """'  heading:' then one line per reason (most frequent first) with its first details."""
    if not details:
        return []
    lines = [f'  {heading}:']
    for reason, entries in sorted(details.items(), key=lambda pair: (-len(pair[1]), pair[0])):
        shown = [entry for entry in entries if entry][:_DETAILS_SHOWN]
        more = len(entries) - len(shown)
        listed = ', '.join(shown) + (f', ... {more} more' if shown and more else '')
        lines.append(f'    {reason}: {len(entries)}' + (f' ({listed})' if listed else ''))
    return lines
