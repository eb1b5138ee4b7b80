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
- The bytes written do not depend on `workers`: a worker writes whole shards, each from its
  own contiguous items in order, so no record crosses between processes. This needs an encode
  that is deterministic across processes: serialize with `slimdata.records.example.serialize_example`
  (protobuf's default map order differs from process to process). It also means that at most
  as many workers run as there are shards to write: ask for at least as many shards as
  workers (a multiple of the workers balances them best).
- Each shard is written to `.<name>.tmp-<pid>` in the same folder and renamed, in shard
  order, when complete, so a file under a final name is always complete. On any error (or
  Ctrl-C) the temporary files are removed; the shards before the failing one are completed
  and stay, as when writing in one process. A re-run keeps the shards already
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

`workers > 1` (with more than one shard to write) starts a process pool with the spawn start
method (TensorFlow must never be forked), so a script that calls this must guard its entry
point with `if __name__ == '__main__':`, and each worker imports the encode function's
module. Output folders with a URL scheme (`gs://...`) are written through `tf.io.gfile` (in
the workers too, which then import TensorFlow).
"""

import collections
import contextlib
import multiprocessing
import os
import pickle
import re
import signal
import sys
import time
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar, Union

from tqdm import tqdm

from slimdata.records.tfrecord import WRITE_BUFFER_SIZE, TFRecordWriter, count_records

T = TypeVar('T')

_DETAILS_SHOWN = 3         # details listed per skip/note reason in WriteSummary.format()
_PROGRESS_SECONDS = 0.1    # how often the progress bar shows what the workers have done


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
      workers: processes that encode and write shards, one shard each at a time (so no more
        than the number of shards to write); 1 does all the work in this process.
      desc: the progress bar's label; defaults to `split`.

    Returns:
      The WriteSummary; `summary.shards` is what `write_dataset_info` records.

    Raises:
      ValueError: for bad arguments, no items, or shards of another shard count present.
      ConversionError: when `encode` raises anything but SkipExample.
      RuntimeError: when a worker process dies (it names the shards and items being written).
    """
    start_time = time.perf_counter()
    items = list(items)
    _check_arguments(items, encode, split, num_shards, workers)
    total_shards = min(num_shards, len(items))
    files = _file_system_for(output_dir)
    files.makedirs(output_dir)
    existing = _prepare_folder(files, output_dir, split, total_shards)
    paths, jobs = [], []
    for index in range(total_shards):
        name = shard_filename(split, index, total_shards)
        paths.append(os.path.join(output_dir, name))
        if name not in existing:
            start, stop = (index * len(items) // total_shards,
                           (index + 1) * len(items) // total_shards)
            jobs.append(_ShardJob(path=paths[-1], temporary=_temporary_path(paths[-1]),
                                  items=[(i, items[i]) for i in range(start, stop)]))
    if 0 < len(jobs) < workers:
        print(f'{split}: {len(jobs)} shard(s) to write, so {len(jobs)} of the {workers} workers '
              'can work (each writes whole shards); ask for more shards to use them all',
              file=sys.stderr)
    with tqdm(total=len(items), desc=desc or split, unit='ex', file=sys.stderr) as progress:
        progress.update(len(items) - sum(len(job.items) for job in jobs))  # reused shards
        if min(workers, len(jobs)) > 1:
            results = _write_in_pool(files, jobs, encode, split, workers, progress)
        else:  # no pool to start: its start-up would cost more than it saves
            results = _write_in_this_process(files, jobs, encode, split, progress)
    return _summarize(files, split, paths, results, time.perf_counter() - start_time)


@dataclass(frozen=True)
class _ShardJob:
    """One shard to write: where it goes and its (item index, item) pairs, in order."""
    path: str
    temporary: str
    items: List[Tuple[int, Any]]


@dataclass
class _ShardResult:
    """What writing one shard found: records written, (reason, detail) skips and notes."""
    num_records: int = 0
    skipped: List[Tuple[str, str]] = field(default_factory=list)
    notes: List[Tuple[str, str]] = field(default_factory=list)


def _temporary_path(path: str) -> str:
    folder, name = os.path.split(path)
    return os.path.join(folder, f'.{name}.tmp-{os.getpid()}')


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


def _write_in_this_process(files: '_FileSystem', jobs: List[_ShardJob], encode: Callable,
                           split: str, progress: tqdm) -> Dict[str, _ShardResult]:
    """Writes the shards one after the other; returns their results by path."""
    results = {}
    for job in jobs:
        results[job.path] = _write_shard(job, encode, split, progress.update)
        files.rename(job.temporary, job.path)
    return results


def _write_in_pool(files: '_FileSystem', jobs: List[_ShardJob], encode: Callable, split: str,
                   workers: int, progress: tqdm) -> Dict[str, _ShardResult]:
    """Writes the shards in worker processes, one task per shard; returns results by path.

    Only small results cross between processes, never records. Shards are renamed to their
    final names here, in shard order, so a failing shard leaves exactly the shards before it
    (as when writing in this process); on any error or Ctrl-C the workers abandon their
    shards at the next item and every temporary file is removed.
    """
    context = multiprocessing.get_context('spawn')
    items_done = context.RawArray('q', len(jobs))  # per job, set by the worker writing it
    stop = context.RawValue('b', 0)  # 1: workers abandon their shards
    executor = ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=context,
                                   initializer=_init_worker, initargs=(items_done, stop))
    results = {}
    try:
        futures = [executor.submit(_write_shard_in_worker, job, encode, split, position)
                   for position, job in enumerate(jobs)]
        shown = 0  # items shown on the progress bar so far
        for position, (job, future) in enumerate(zip(jobs, futures)):
            while not wait([future], timeout=_PROGRESS_SECONDS).done:
                shown = _show_progress(progress, items_done, shown)
            results[job.path] = _pool_result(future, split, jobs[position:])
            files.rename(job.temporary, job.path)
        _show_progress(progress, items_done, shown)
    except BaseException:
        stop.value = 1
        executor.shutdown(wait=True, cancel_futures=True)
        for job in jobs:
            if job.path not in results:
                files.remove(job.temporary)
        raise
    executor.shutdown(wait=True)
    return results


def _show_progress(progress: tqdm, items_done: Sequence[int], shown: int) -> int:
    done = sum(items_done)
    progress.update(done - shown)
    return done


def _pool_result(future: Future, split: str, unfinished: List[_ShardJob]) -> _ShardResult:
    """The future's shard result; a worker's death becomes a RuntimeError naming the shards."""
    try:
        return future.result()
    except BrokenProcessPool as error:
        # A worker was killed (out of memory?) or crashed in native code while writing one
        # of the unfinished shards.
        first, last = unfinished[0], unfinished[-1]
        raise RuntimeError(
            f'split {split!r}: a worker process died while writing '
            f'{os.path.basename(first.path)} to {os.path.basename(last.path)} (items '
            f'{first.items[0][0]} to {last.items[-1][0]}); run with workers=1 to find the '
            'failing item') from error


class _Stopped(Exception):
    """A worker abandons its shard: the parent stopped the run (an error elsewhere, Ctrl-C)."""


_worker_shared = None  # in a pool worker: (items_done, stop) shared with the parent


def _init_worker(items_done: Sequence[int], stop: Any) -> None:
    global _worker_shared
    _worker_shared = (items_done, stop)
    # Ctrl-C reaches the whole process group; only the parent acts on it (it stops the
    # workers and removes the temporary files) instead of every worker printing a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _write_shard_in_worker(job: _ShardJob, encode: Callable, split: str,
                           position: int) -> _ShardResult:
    """Runs in a pool worker: writes one shard, counting items where the parent sees them."""
    items_done, stop = _worker_shared

    def item_done() -> None:
        items_done[position] += 1
        if stop.value:
            raise _Stopped(job.path)

    if stop.value:
        raise _Stopped(job.path)
    return _write_shard(job, encode, split, item_done)


def _write_shard(job: _ShardJob, encode: Callable, split: str,
                 item_done: Callable[[], Any]) -> _ShardResult:
    """Encodes the job's items into its temporary file; removes the file on any error.

    `item_done` is called after each item (it may raise to abandon the shard).
    """
    files = _file_system_for(job.path)
    result = _ShardResult()
    try:
        with files.open_write(job.temporary) as file, TFRecordWriter(file) as writer:
            for index, item in job.items:
                outcome = _encode_one(encode, split, index, item)
                if isinstance(outcome, SkipExample):
                    result.skipped.append((outcome.reason, outcome.detail))
                else:
                    writer.write(outcome.data)
                    result.num_records += 1
                    result.notes.extend(outcome.notes)
                item_done()
    except BaseException:
        files.remove(job.temporary)
        raise
    return result


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
                    'tf.train.Example, e.g. from slimdata.records.example.serialize_example) or an '
                    'EncodedExample')


def _summarize(files: '_FileSystem', split: str, paths: List[str],
               results: Dict[str, _ShardResult], seconds: float) -> WriteSummary:
    """The summary of all shards, in shard order; shards without a result were reused."""
    summary = WriteSummary(split=split, shards=[], num_records=0, num_bytes=0)
    skipped = collections.defaultdict(list)
    notes = collections.defaultdict(list)
    for path in paths:
        result = results.get(path)
        if result is None:
            num_records = files.count_records(path)
            summary.shards_reused += 1
        else:
            num_records = result.num_records
            for reason, detail in result.skipped:
                skipped[reason].append(detail)
            for reason, detail in result.notes:
                notes[reason].append(detail)
        summary.shards.append({'file': os.path.basename(path), 'num_records': num_records})
        summary.num_records += num_records
        summary.num_bytes += files.size(path)
    summary.skipped = dict(skipped)
    summary.notes = dict(notes)
    summary.seconds = seconds
    return summary


class _LocalFileSystem:
    """The file operations the writer needs, on local paths."""

    def makedirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def listdir(self, path: str) -> List[str]:
        return os.listdir(path)

    def open_write(self, path: str):
        return open(path, 'wb', buffering=WRITE_BUFFER_SIZE)

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
        # slimdata.records.tfrecord reads local paths only, so TensorFlow counts; in a graph of its
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
