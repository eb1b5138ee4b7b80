"""The sharded, parallel, atomic TFRecord writer that every converter uses.

A converter lists each split's source items (paths, ids, tuples of paths, ...) and gives a
picklable top-level `encode(item)` that reads and validates one item and returns its
serialized `tf.train.Example` (or an `EncodedExample` with notes), or raises `SkipExample`::

    summaries = write_dataset(output_dir, [
        SplitSource('train', items, encode, options={'seed': 0},
                    files_of=lambda item: [item[0]])],
        dataset_name='mydata', labels_to_names=..., keys_to_features=..., processes=8)
    print(summaries['train'].format())

What it guarantees:

- **Layout.** Shard k of S holds `items[k*N//S:(k+1)*N//S]` (minus skipped items), in
  order, named `shard_filename(split, k, S)`, e.g. `train-00001-of-00004.tfrecord`. With
  fewer items than shards, S is the number of items. By default S follows the split's size
  (`shards_for_size`: as TensorFlow Datasets chooses, a power of two that puts 64 MiB to
  1 GiB in each shard). The bytes do not depend on `processes` (this needs a deterministic
  encode, such as `slimdata.records.example.serialize_example`): worker processes write
  pieces of shards, which are joined in order (`slimdata.records.shards`,
  `slimdata.records.local_pool`), and no record crosses between processes.
- **Nothing half-written under a final name.** A shard is written as `.<name>.tmp-<pid>`
  in the same folder, fsync'ed, and renamed when complete (`slimdata.records.fs`). On an
  error, Ctrl-C or SIGTERM the workers stop at their next item and every temporary is
  removed; workers whose parent died (even by SIGKILL) remove theirs and exit within a
  fraction of a second, so nothing keeps writing or holds the output pipe open. A later run
  removes temporaries of its own naming that a killed run left.
- **Re-runs never mix data.** `dataset_info.json` records, per split, a fingerprint of what
  produced it (`slimdata.records.fingerprint`: the items in order, the options, the shard
  count, slimdata's version) and every shard with its record count, size, CRC-32C and a
  digest of its source files' sizes and times, as each shard is completed. A re-run into the
  same folder reuses a shard only when the fingerprint matches, the shard's size and CRC
  check and its source files are unchanged; it writes what an interrupted run left
  unwritten, and rewrites the shards whose source files were edited since (the result is
  the same as a fresh conversion's). Anything else (other items or options, a damaged or
  foreign shard, shards no `dataset_info.json` describes) is refused with a `RerunError`
  naming what changed, before anything is written. `overwrite=True` replaces the split: the
  new shards are written under temporary names and take the old ones' place only when all
  are complete. While a split is being written its entry says `"complete": false`, and
  descriptors refuse to read it.
- **One conversion per folder.** The folder is locked while written (`fs.lock_folder`).
- **Errors name their place.** An `encode` that raises anything but `SkipExample` aborts
  with a `ConversionError` (a ValueError) naming the split, item index and item; an I/O
  error (a full disk) is an `fs.FileError` naming the shard. A worker that dies is a
  RuntimeError naming the shards and items it was writing.

`processes > 1` starts a pool of worker processes with the spawn start method (TensorFlow
must never be forked), so a script that calls this must guard its entry point with
`if __name__ == '__main__':`, and each worker imports the encode function's module. The same
splits can be written by an Apache Beam pipeline instead (`slimdata.records.beam_pipeline`).
"""

import collections
import dataclasses
import os
import pickle
import re
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from crc32c import crc32c

from slimdata import progress as progress_lines
from slimdata.deprecation import renamed_argument
from slimdata.progress import Progress
from slimdata.records import dataset_info, fingerprint, fs, local_pool
from slimdata.records.shards import (
    ConversionError,
    EncodedExample,
    PieceResult,
    ShardJob,
    SkipExample,
    add_counts,
)

__all__ = ['ConversionError', 'EncodedExample', 'RerunError', 'SkipExample', 'SplitSource',
           'WriteSummary', 'shard_filename', 'shards_for_size', 'write_dataset',
           'write_sharded']

T = TypeVar('T')

_DETAILS_SHOWN = 3         # details listed per skip/note reason in WriteSummary.format()
_STATE_SECONDS = 2.0       # how often completed shards are recorded in dataset_info.json
_CHECK_CHUNK = 1 << 22     # bytes read at a time when checking a reused shard's CRC

#: The default shard count puts this many bytes in each shard, at least and at most (the
#: bounds of TensorFlow Datasets: shards large enough to read at disk speed, small enough to
#: spread over readers and workers).
MIN_SHARD_BYTES = 64 << 20
MAX_SHARD_BYTES = 1 << 30
#: TFRecord framing per record (length, two CRCs), counted in a shard's size.
_RECORD_OVERHEAD = 16
#: Items whose remote source files are stat'ed to estimate a split's size.
_REMOTE_SIZE_SAMPLE = 64


class RerunError(ValueError):
    """Writing would mix this run's records with an earlier run's: refused, nothing written.

    The message names each split, what changed, and what to do (`--overwrite`, another
    folder).
    """


@dataclasses.dataclass(frozen=True)
class SplitSource:
    """One split to write.

    Attributes:
      split: the split name, the shards' file name prefix.
      items: picklable source descriptions (paths, tuples of paths, ...), in record order.
      encode: a picklable top-level function (or functools.partial of one) that reads and
        validates one item and returns its serialized tf.train.Example (bytes) or an
        EncodedExample, or raises SkipExample to leave it out.
      num_shards: the number of shards (fewer when there are fewer items); None chooses it
        by the split's size (`shards_for_size`).
      options: the converter's options that shape the records (JSON values), recorded in
        the fingerprint and named when a re-run differs.
      files_of: item -> the source files it is read from; their sizes and modification
        times are recorded per shard, so an edited source is never covered by old shards.
      desc: the progress display's label; defaults to `split`.
      size_of: item -> about how many bytes its record holds, for the default shard count;
        by default the sizes of its `files_of` files (records hold the source files'
        bytes). Items that share files (pixel arrays read from one file) need their own.
    """
    split: str
    items: Sequence[Any]
    encode: Callable[[Any], Union[bytes, EncodedExample]]
    num_shards: Optional[int] = None
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    files_of: Optional[Callable[[Any], Sequence[str]]] = None
    desc: Optional[str] = None
    size_of: Optional[Callable[[Any], int]] = None


@dataclasses.dataclass
class WriteSummary:
    """What writing one split did.

    Attributes:
      split: the split name.
      shards: per shard, in order: {'file', 'num_records', 'num_bytes', 'crc32c'}.
      num_records: records in all shards.
      num_bytes: bytes of all shard files.
      skipped: reason -> details of the items skipped (by this run's encoding).
      notes: reason -> details noted but kept (by this run's encoding).
      counts: what this run's records hold, counted (e.g. objects per class).
      seconds: wall time.
      shards_reused: complete shards of an earlier run with the same fingerprint, kept.
      shards_stale: shards of an earlier run rewritten because their source files changed.
      output_dir: the folder of the shards.
    """
    split: str
    shards: List[Dict[str, Any]]
    num_records: int
    num_bytes: int
    skipped: Dict[str, List[str]] = dataclasses.field(default_factory=dict)
    notes: Dict[str, List[str]] = dataclasses.field(default_factory=dict)
    counts: Dict[str, int] = dataclasses.field(default_factory=dict)
    seconds: float = 0.0
    shards_reused: int = 0
    shards_stale: int = 0
    output_dir: str = ''

    def format(self) -> str:
        """A multi-line human summary: records, shards, bytes, time, rates, skips and notes."""
        if self.shards and self.shards_reused == len(self.shards):
            reused = ' (all reused: already converted from the same input)'
        elif self.shards_reused:
            reused = f' ({self.shards_reused} reused from an earlier run)'
        else:
            reused = ''
        if self.shards_stale:
            reused += (f' ({self.shards_stale} rewritten: their source files changed since '
                       'they were written)')
        shards = progress_lines.plural(len(self.shards), 'shard')
        where = f' in {self.output_dir}' if self.output_dir else ''
        records = progress_lines.plural(self.num_records, 'record')
        lines = [f'{self.split}: {records} in {shards}{where}{reused}',
                 f'  {progress_lines.format_bytes(self.num_bytes)} in {self.seconds:.1f} s'
                 + self._rates()]
        lines += _format_reasons(f'skipped {_count(self.skipped)} items', self.skipped)
        lines += _format_reasons(f'noted {_count(self.notes)} times (kept)', self.notes)
        if self.counts:
            lines.append('  counted: ' + ', '.join(
                f'{key} {count}' for key, count in sorted(self.counts.items())))
        return '\n'.join(lines)

    def _rates(self) -> str:
        if self.shards_reused:
            return '; no rates, as reused shards were not re-encoded'
        seconds = max(self.seconds, 1e-9)
        return (f', {self.num_records / seconds:.0f} records/s, '
                f'{progress_lines.format_bytes(self.num_bytes / seconds)}/s')


def shard_filename(split: str, index: int, num_shards: int) -> str:
    """The basename of shard `index` of `num_shards`: `<split>-%05d-of-%05d.tfrecord`."""
    return f'{split}-{index:05d}-of-{num_shards:05d}.tfrecord'


def _shard_name_pattern(split: str) -> 're.Pattern':
    return re.compile(re.escape(split) + r'-\d{5,}-of-\d{5,}\.tfrecord')


def shards_for_size(num_bytes: int, num_items: int) -> int:
    """The default number of shards of a split of `num_items` records, `num_bytes` in all.

    The rule of TensorFlow Datasets: of the powers of two up to 1024, the largest that puts
    MIN_SHARD_BYTES to MAX_SHARD_BYTES in each shard (1024 when it can, for many readers);
    beyond 1024 shards, the smallest multiple of 1024 that keeps shards under
    MAX_SHARD_BYTES; never more shards than records; 1 for a split under 128 MiB.
    """
    total = num_bytes + _RECORD_OVERHEAD * num_items
    fewest = max(1, -(-total // MAX_SHARD_BYTES))
    most = total // MIN_SHARD_BYTES
    if fewest > 1024:
        return min(1024 * -(-fewest // 1024), max(1, num_items))
    for count in (1024, 512, 256, 128, 64, 32, 16, 8, 4, 2):
        if fewest <= count <= most and count <= num_items:
            return count
    return 1


@renamed_argument('workers', 'processes')
def write_sharded(items: Sequence[T], encode: Callable[[T], Union[bytes, EncodedExample]],
                  output_dir: str, split: str, num_shards: Optional[int] = None,
                  processes: int = 1, desc: Optional[str] = None, *,
                  options: Optional[Mapping[str, Any]] = None,
                  files_of: Optional[Callable[[T], Sequence[str]]] = None,
                  overwrite: bool = False,
                  beam_options: Optional[Sequence[str]] = None) -> WriteSummary:
    """Writes one split (see the module doc); `write_dataset` with one `SplitSource`.

    Returns:
      The split's WriteSummary.
    """
    source = SplitSource(split, items, encode, num_shards, options or {}, files_of, desc)
    return write_dataset(output_dir, [source], processes=processes, overwrite=overwrite,
                         beam_options=beam_options)[split]


@renamed_argument('workers', 'processes')
def write_dataset(output_dir: str, splits: Sequence[SplitSource], *,
                  dataset_name: Optional[str] = None,
                  labels_to_names: Optional[Mapping[int, str]] = None,
                  keys_to_features: Optional[Mapping[str, Any]] = None,
                  extra: Optional[Mapping[str, Any]] = None, processes: int = 1,
                  overwrite: bool = False, absent_splits: Sequence[str] = (),
                  beam_options: Optional[Sequence[str]] = None) -> Dict[str, WriteSummary]:
    """Encodes and writes splits as TFRecord shards, and records them in dataset_info.json.

    Every split is checked against what the folder holds before anything is written (see
    the module doc); then the splits are written one after the other, and the dataset-wide
    fields (name, labels and `labels.txt`, the `keys_to_features` schema, extra) recorded.

    Args:
      output_dir: the folder of the shards (created if missing); may be a URL (`gs://`).
      splits: the splits to write.
      dataset_name: the dataset's name for `dataset_info.json`; a folder that holds another
        dataset is refused.
      labels_to_names, keys_to_features, extra: see `dataset_info.write_dataset_info`.
        Values that differ from those recorded for other splits of the folder are refused
        (those splits were written with other labels or options).
      processes: how many processes encode and write shards: 1 does all the work in this
        process; more start a pool of worker processes, which write pieces of shards.
        (`workers=` is the deprecated old name.)
      overwrite: replace the splits (their new shards take the old ones' place once all are
        complete) instead of refusing to write over shards of other input.
      absent_splits: splits this conversion does not produce (e.g. no validation split with
        a validation ratio of 0). An earlier run's split of that name would stand beside this
        run's as if it belonged to them: it is refused, or with `overwrite` removed.
      beam_options: write the shards with an Apache Beam pipeline with these pipeline
        options (e.g. ['--runner=DirectRunner']) instead of local processes
        (`slimdata.records.beam_pipeline`); `processes` is then unused.

    Returns:
      split name -> its WriteSummary.

    Raises:
      ValueError: for bad arguments or no items.
      RerunError: when the folder holds shards of other input (names what changed).
      fs.FolderBusyError: when another conversion writes into the folder.
      ConversionError: when `encode` raises anything but SkipExample.
      fs.FileError: on an I/O error, naming the file.
      RuntimeError: when a worker process dies (it names the shards and items being written).
    """
    for source in splits:
        _check_arguments(source, processes)
    if processes > 1 and output_dir.startswith('ram://'):
        raise ValueError(f'{output_dir}: ram:// is TensorFlow\'s in-memory file system of one '
                         'process, which worker processes cannot write into; use processes=1')
    fs.makedirs(output_dir)
    with fs.lock_folder(output_dir):
        info = dataset_info.read_dataset_info(output_dir) or {}
        fields = _dataset_fields(labels_to_names, keys_to_features, extra)
        plans = _plan_all(output_dir, info, splits, dataset_name, fields, overwrite,
                          absent_splits)
        summaries = {plan.source.split: _write_split(output_dir, plan, processes, beam_options)
                     for plan in plans}
        for split in absent_splits:
            if split in info.get('splits', {}):  # only reached with overwrite
                _remove_split(output_dir, split, info['splits'][split])
        if dataset_name is not None or fields:
            dataset_info.write_dataset_info(output_dir, dataset_name,
                                            labels_to_names=labels_to_names,
                                            keys_to_features=keys_to_features, extra=extra)
        fs.sync_folder(output_dir)
    return summaries


# ----------------------------------------------------------------------------------------------
# Planning: what may be reused, what must be written, what is refused

@dataclasses.dataclass
class _SplitPlan:
    source: SplitSource
    fingerprint: Dict[str, Any]
    total_shards: int
    reused: List[Dict[str, Any]]     # recorded shards kept, in shard order
    jobs: List[ShardJob]            # shards to write
    stale: int                       # recorded shards rewritten, their sources having changed
    replace: bool                    # write all to temporaries, then take the old ones' place
    stale_files: List[str]           # this split's other shard files, removed after a replace


def _check_arguments(source: SplitSource, processes: int) -> None:
    split = source.split
    if not split or split.startswith('.') or '/' in split or os.sep in split:
        raise ValueError(f'split must be a plain file name prefix, got {split!r}')
    if not len(source.items):
        raise ValueError(f'split {split!r}: no items to write (an empty list file or a wrong '
                         'source folder?)')
    counts = [('processes', processes)]
    if source.num_shards is not None:
        counts.append(('num_shards', source.num_shards))
    for name, value in counts:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f'{name} must be an int >= 1, got {value!r}')
    if processes > 1:
        try:
            pickle.dumps(source.encode)
        except (pickle.PicklingError, AttributeError, TypeError) as error:
            raise ValueError(f'encode must be picklable when processes > 1 (a top-level function '
                             f'or a functools.partial of one), got {source.encode!r}: '
                             f'{error}') from error


def _dataset_fields(labels_to_names: Optional[Mapping[int, str]],
                    keys_to_features: Optional[Mapping[str, Any]],
                    extra: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The dataset-wide fields as dataset_info.json records them."""
    fields: Dict[str, Any] = {}
    if labels_to_names is not None:
        fields['labels_to_names'] = {str(k): v for k, v in sorted(labels_to_names.items())}
    if keys_to_features is not None:
        fields['keys_to_features'] = dataset_info.keys_to_features_to_json(keys_to_features)
    if extra is not None:
        fields['extra'] = fingerprint.json_options(extra)
    return fields


def _plan_all(output_dir: str, info: Mapping[str, Any], splits: Sequence[SplitSource],
              dataset_name: Optional[str], fields: Mapping[str, Any], overwrite: bool,
              absent_splits: Sequence[str]) -> List[_SplitPlan]:
    """Plans every split; raises one RerunError listing every refusal."""
    problems = _dataset_problems(output_dir, info, [*splits, *absent_splits], dataset_name,
                                 fields)
    if not overwrite:
        problems += [f'split {split!r} in {output_dir} comes from an earlier conversion, and '
                     'this one makes no such split (another validation ratio?); it would '
                     'stand beside the new splits: pass --overwrite to remove it, or write '
                     'into another folder'
                     for split in absent_splits if split in info.get('splits', {})]
    names = fs.listdir(output_dir)
    plans = []
    for source in splits:
        try:
            plans.append(_plan(output_dir, info, names, source, overwrite))
        except RerunError as error:
            problems.append(str(error))
    if problems:
        raise RerunError('\n'.join(problems) if len(problems) == 1 else
                         'refused, nothing was written:\n' + '\n'.join(f'  - {problem}'
                                                                      for problem in problems))
    return plans


def _dataset_problems(output_dir: str, info: Mapping[str, Any],
                      splits: Sequence[Union[SplitSource, str]], dataset_name: Optional[str],
                      fields: Mapping[str, Any]) -> List[str]:
    """Refusals that concern the whole folder: another dataset, other labels or options
    than the splits this run leaves as they are."""
    problems = []
    recorded_name = info.get('name')
    if dataset_name and recorded_name and recorded_name != dataset_name:
        problems.append(f'{output_dir} holds the dataset {recorded_name!r}; this conversion '
                        f'writes {dataset_name!r}, which would mix the two: write into '
                        'another folder')
    names = {split if isinstance(split, str) else split.split for split in splits}
    others = sorted(set(info.get('splits', {})) - names)
    for field, value in fields.items():
        recorded = info.get(field)
        if others and recorded is not None and recorded != value:
            problems.append(
                f'{output_dir}: this conversion has other {field} than the split(s) '
                f'{others} recorded in {dataset_info.DATASET_INFO_FILENAME} '
                f'({_first_difference(recorded, value)}); convert those splits again in the '
                'same run, or write into another folder')
    return problems


def _first_difference(recorded: Any, new: Any) -> str:
    if isinstance(recorded, dict) and isinstance(new, dict):
        for key in sorted(set(recorded) | set(new), key=str):
            if recorded.get(key) != new.get(key):
                return f'{key}: {recorded.get(key, "(none)")!r} -> {new.get(key, "(none)")!r}'
    return f'{recorded!r} -> {new!r}'


def _plan(output_dir: str, info: Mapping[str, Any], names: Sequence[str],
          source: SplitSource, overwrite: bool) -> _SplitPlan:
    split, items = source.split, source.items
    stamps = fingerprint.SourceStamps()
    total = _num_shards(source, stamps)
    new_fingerprint = fingerprint.fingerprint(items, source.options, total)
    jobs = _jobs(output_dir, source, total, stamps)
    final_names = [shard_filename(split, k, total) for k in range(total)]
    on_disk = [name for name in names if _shard_name_pattern(split).fullmatch(name)]
    entry = info.get('splits', {}).get(split)
    where = f'split {split!r} in {output_dir}'
    if overwrite:
        return _SplitPlan(source, new_fingerprint, total, [], jobs, 0, replace=True,
                          stale_files=[name for name in on_disk if name not in final_names])
    if entry is None:
        if on_disk:
            raise RerunError(
                f'{where}: {len(on_disk)} shard file(s) ({_some(on_disk)}) that '
                f'{dataset_info.DATASET_INFO_FILENAME} does not describe (another tool, or '
                'an older slimdata, wrote them): pass --overwrite (overwrite=True) to replace '
                'them, or write into another folder')
        return _SplitPlan(source, new_fingerprint, total, [], jobs, 0, replace=False,
                          stale_files=[])
    if 'fingerprint' not in entry:
        raise RerunError(f'{where} was written without a fingerprint (by an older slimdata or '
                         'another tool), so it cannot be told whether its shards match this '
                         'input: pass --overwrite to replace it')
    differences = fingerprint.changes(entry['fingerprint'], new_fingerprint)
    if differences:
        state = 'was converted' if dataset_info.is_complete(entry) else \
            'is partly converted (an interrupted run)'
        raise RerunError(f'{where} {state} from other input: {"; ".join(differences)}. Pass '
                         '--overwrite to replace it (the old shards stay until the new ones '
                         'are complete), or write into another folder')
    foreign = [name for name in on_disk if name not in final_names]
    if foreign:
        raise RerunError(f'{where}: shard files of another shard count ({_some(foreign)}) '
                         f'beside the {total} this input needs; a reader of {split}-*.tfrecord '
                         'would read both: pass --overwrite to remove them')
    sources = {os.path.basename(job.path): job.sources for job in jobs}
    current = [shard for shard in entry.get('shards', [])
               if shard.get('sources') == sources.get(shard.get('file'))]
    reused, problems = _check_recorded_shards(output_dir, current)
    if problems:
        raise RerunError(f'{where} matches this input, but {"; ".join(problems)}: pass '
                         '--overwrite to write the split again')
    done = {shard['file'] for shard in reused}
    return _SplitPlan(source, new_fingerprint, total, reused,
                      [job for job in jobs if os.path.basename(job.path) not in done],
                      stale=len(entry.get('shards', [])) - len(current), replace=False,
                      stale_files=[])


def _num_shards(source: SplitSource, stamps: fingerprint.SourceStamps) -> int:
    """The split's shard count: as given (at most one per item), else by its size."""
    if source.num_shards is not None:
        return min(source.num_shards, len(source.items))
    num_bytes = _source_bytes(source, stamps)
    count = shards_for_size(num_bytes, len(source.items))
    progress_lines.info(f'{source.desc or source.split}: {progress_lines.plural(count, "shard")} '
                        f'for about {progress_lines.format_bytes(num_bytes)} of source data '
                        '(by size: 64 MiB to 1 GiB per shard)')
    return count


def _source_bytes(source: SplitSource, stamps: fingerprint.SourceStamps) -> int:
    """About how many bytes the split's records hold (see `SplitSource.size_of`)."""
    items = source.items
    if source.size_of is not None:
        return sum(source.size_of(item) for item in items)
    if source.files_of is None:
        return 0
    if not any(fs.is_url(path) for path in source.files_of(items[0])):
        return sum(stamps.size(path) for item in items for path in source.files_of(item))
    # A stat per remote file would cost more than the conversion: a sample tells the size.
    sample = items[::max(1, len(items) // _REMOTE_SIZE_SAMPLE)]
    return sum(_size_or_zero(path) for item in sample
               for path in source.files_of(item)) * len(items) // len(sample)


def _size_or_zero(path: str) -> int:
    try:
        return fs.size(path)
    except OSError:
        return 0  # a missing source is reported, naming it, when its item is encoded


def _jobs(output_dir: str, source: SplitSource, total: int,
          stamps: fingerprint.SourceStamps) -> List[ShardJob]:
    items, jobs = source.items, []
    for index in range(total):
        path = os.path.join(output_dir, shard_filename(source.split, index, total))
        start, stop = index * len(items) // total, (index + 1) * len(items) // total
        sources = '' if source.files_of is None else stamps.digest(
            file for i in range(start, stop) for file in source.files_of(items[i]))
        jobs.append(ShardJob(path=path, temporary=fs.temporary_path(path),
                              items=[(i, items[i]) for i in range(start, stop)],
                              sources=sources))
    return jobs


def _check_recorded_shards(output_dir: str, shards: Sequence[Mapping[str, Any]]
                           ) -> Tuple[List[Dict[str, Any]], List[str]]:
    """(the recorded shards whose file is intact, the problems of the others)."""
    reused, problems = [], []
    total_bytes = sum(shard.get('num_bytes', 0) for shard in shards)
    with Progress(total_bytes, 'checking the shards of an earlier run', unit='B',
                  unit_scale=True, delay=2.0) as progress:
        for shard in shards:
            problem = _shard_problem(os.path.join(output_dir, shard['file']), shard, progress)
            if problem:
                problems.append(problem)
            else:
                reused.append(dict(shard))
    return reused, problems


def _shard_problem(path: str, shard: Mapping[str, Any], progress: Progress) -> Optional[str]:
    if 'crc32c' not in shard or 'num_bytes' not in shard:
        return f'{path} was recorded without its size and CRC'
    if not fs.exists(path):
        return f'{path} is missing'
    size = fs.size(path)
    if size != shard['num_bytes']:
        return f'{path} has {size:,} bytes, {shard["num_bytes"]:,} were written'
    checksum = 0
    with fs.open_read(path) as file:
        while True:
            chunk = file.read(_CHECK_CHUNK)
            if not chunk:
                break
            checksum = crc32c(chunk, checksum)
            progress.update(len(chunk))
    if checksum != shard['crc32c']:
        return f'{path} has other bytes than were written (CRC-32C {checksum} != {shard["crc32c"]})'
    return None


def _some(names: Sequence[str]) -> str:
    return ', '.join(names[:3]) + (', ...' if len(names) > 3 else '')


# ----------------------------------------------------------------------------------------------
# Writing one split

class _SplitState:
    """The split's entry in dataset_info.json, kept in step with the shards on disk."""

    def __init__(self, output_dir: str, split: str, split_fingerprint: Mapping[str, Any],
                 shards: Sequence[Mapping[str, Any]]):
        self._output_dir = output_dir
        self._split = split
        self._fingerprint = dict(split_fingerprint)
        self.shards = {shard['file']: dict(shard) for shard in shards}
        self._saved_at = 0.0

    def add(self, job: ShardJob, result: PieceResult) -> None:
        name = os.path.basename(job.path)
        self.shards[name] = {'file': name, 'num_records': result.num_records,
                             'num_bytes': result.num_bytes, 'crc32c': result.crc32c,
                             'sources': job.sources}

    def save(self, complete: bool = False, force: bool = True) -> None:
        """Records the state; when not forced, at most every _STATE_SECONDS."""
        now = time.monotonic()
        if not force and now - self._saved_at < _STATE_SECONDS:
            return
        shards = [self.shards[name] for name in sorted(self.shards)]
        if complete:
            entry = dataset_info.complete_split_entry(shards, self._fingerprint)
        else:
            entry = {'complete': False, 'shards': shards, 'fingerprint': self._fingerprint}
        dataset_info.record_split(self._output_dir, self._split, entry)
        self._saved_at = now


def _write_split(output_dir: str, plan: _SplitPlan, processes: int,
                 beam_options: Optional[Sequence[str]]) -> WriteSummary:
    source = plan.source
    start_time = time.perf_counter()
    _remove_stale_temporaries(output_dir, source.split)
    state = _SplitState(output_dir, source.split, plan.fingerprint, plan.reused)
    results: Dict[str, PieceResult] = {}
    if plan.jobs:
        if not plan.replace:
            state.save()  # a crash from here on leaves a state a re-run can finish

        def shard_done(job: ShardJob, result: PieceResult) -> None:
            results[job.path] = result
            if not plan.replace:
                fs.rename(job.temporary, job.path)
                state.add(job, result)
                state.save(force=False)

        try:
            _run_jobs(plan, processes, beam_options, shard_done)
        except BaseException:
            if plan.replace:
                for job in plan.jobs:
                    fs.remove(job.temporary)
            else:
                state.save()  # the shards completed so far, for a re-run to reuse
            raise
        if plan.replace:
            _take_place(output_dir, plan, state, results)
    state.save(complete=True)
    paths = [os.path.join(output_dir, shard_filename(source.split, k, plan.total_shards))
             for k in range(plan.total_shards)]
    summary = _summarize(output_dir, source.split, paths, state, results,
                         time.perf_counter() - start_time)
    summary.shards_stale = plan.stale
    return summary


def _run_jobs(plan: _SplitPlan, processes: int, beam_options: Optional[Sequence[str]],
              shard_done: Callable[[ShardJob, PieceResult], None]) -> None:
    """Writes the plan's shards with the local driver, or the Beam one."""
    source = plan.source
    if beam_options is not None:
        from slimdata.records import beam_pipeline  # an optional extra: only when asked for
        beam_pipeline.run_jobs(plan.jobs, source.encode, source.split, beam_options,
                               shard_done)
        return
    num_items = len(source.items)
    with Progress(num_items, source.desc or source.split) as progress:
        progress.update(num_items - sum(len(job.items) for job in plan.jobs))
        local_pool.run_jobs(plan.jobs, source.encode, source.split, processes, progress,
                            shard_done)


def _take_place(output_dir: str, plan: _SplitPlan, state: _SplitState,
                results: Mapping[str, PieceResult]) -> None:
    """Replaces the split's old shards by the complete new ones (written as temporaries).

    The entry says "complete": false while files are renamed, so a crash in between leaves
    a split that readers refuse and a re-run with this input rewrites.
    """
    state.save()
    for job in plan.jobs:
        fs.rename(job.temporary, job.path)
        state.add(job, results[job.path])
    for name in plan.stale_files:
        fs.remove(os.path.join(output_dir, name))


def _remove_split(output_dir: str, split: str, entry: Mapping[str, Any]) -> None:
    """Removes a split's shards and its entry (its shards go first: an entry without
    files is reported by `verify`, files without an entry are refused by a re-run)."""
    names = [name for name in fs.listdir(output_dir)
             if _shard_name_pattern(split).fullmatch(name)]
    names += [shard['file'] for shard in entry.get('shards', []) if shard['file'] not in names]
    for name in names:
        fs.remove(os.path.join(output_dir, name))
    dataset_info.record_split(output_dir, split, None)


def _remove_stale_temporaries(output_dir: str, split: str) -> None:
    """Removes temporaries of this split's shards, and staging folders of the Beam driver,
    that a killed run left (the folder lock says no other conversion is writing them)."""
    pattern = re.compile(r'\.' + _shard_name_pattern(split).pattern
                         + re.escape(fs.TEMPORARY_MARK) + r'\d+(\.piece-\d+)?')
    for name in fs.listdir(output_dir):
        if pattern.fullmatch(name):
            fs.remove(os.path.join(output_dir, name))
        elif name.startswith(f'.slimdata-beam-{split}-'):  # a Beam driver's staging folder
            from slimdata.records import beam_pipeline
            beam_pipeline.remove_staging(os.path.join(output_dir, name))


def _summarize(output_dir: str, split: str, paths: List[str], state: _SplitState,
               results: Mapping[str, PieceResult], seconds: float) -> WriteSummary:
    """The summary of all shards, in shard order; shards without a result were reused."""
    summary = WriteSummary(split=split, shards=[], num_records=0, num_bytes=0,
                           output_dir=output_dir)
    skipped = collections.defaultdict(list)
    notes = collections.defaultdict(list)
    for path in paths:
        shard = state.shards[os.path.basename(path)]
        result = results.get(path)
        if result is None:
            summary.shards_reused += 1
        else:
            for reason, detail in result.skipped:
                skipped[reason].append(detail)
            for reason, detail in result.notes:
                notes[reason].append(detail)
            add_counts(summary.counts, result.counts)
        summary.shards.append(dict(shard))
        summary.num_records += shard['num_records']
        summary.num_bytes += shard['num_bytes']
    summary.skipped = dict(skipped)
    summary.notes = dict(notes)
    summary.seconds = seconds
    return summary


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
