"""Every record read once per epoch, or an error that says which file came up short.

TensorFlow's TFRecord readers have three ways to fail a long training run (docs/troubleshooting.md,
"Damaged records"): a record header declaring more bytes than the machine's memory kills the process
(they allocate the declared length first); a file that ends inside a record header (or a
GZIP/ZLIB file cut almost anywhere) reads as a shorter file, without an error; and a damaged
record stops the file with an error naming only a byte offset. slimdata's pipelines guard
against all three in two steps:

1. When a pipeline is built, `record_source` finds the data files its worker reads and, when
   TensorFlow's TFRecord reader reads them (recognised by the op the reader builds, so a
   class, a subclass, a lambda or a `functools.partial` wrapping it are alike), checks the
   framing of every one of them before any of TensorFlow's readers opens it
   (`slimdata.records.tfrecord.check_file`: once per file per process, cached; an
   uncompressed file is checked from its record headers alone), and refuses a damaged file
   with a `TFRecordError` naming it, the record and its offset. What it counts is what every
   epoch must read.
2. While the pipeline runs, what was read is compared with those counts and with
   `num_samples`: `RecordSource.counted_records` (the tf.data bridge, and the providers with
   `skip_corrupt=True` or with records divided between workers) per file and per epoch; the
   queue pipelines at the end of their input (`slimdata.parallel_reader`), whatever the
   reader.

With `skip_corrupt=True`, a damaged file is read up to its damage (records after it are
skipped), and each epoch's skipped records are counted and reported in a warning of the
`slimdata` logger at the end of the epoch.
"""

import concurrent.futures
import dataclasses
import logging
import random
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from slimdata import workers
from slimdata._tf import tf
from slimdata.records import tfrecord
from slimdata.types import ReaderClass

LOGGER = logging.getLogger('slimdata')

# TFRecord framing around each record's data: length (8) + length CRC (4) + data CRC (4).
_FRAMING_BYTES = tfrecord.FRAMING_SIZE
# Files checked at once when a pipeline is built: reads of headers overlap when the files are
# not in the page cache (2,000 shards of 100 KB records: 5.7 s one at a time, 1.6 s with 16
# threads); when they are, the header walk holds the GIL, and more threads only contend.
_CHECK_THREADS = 8


# The ops of TensorFlow's TFRecord reader (V2 is what tf.compat.v1.TFRecordReader builds).
_TFRECORD_READER_OPS = ('TFRecordReaderV2', 'TFRecordReader')


def tfrecord_compression(reader: ReaderClass,
                         reader_kwargs: Optional[Dict[str, Any]] = None) -> Optional[str]:
    """'', 'GZIP' or 'ZLIB' if `reader(**reader_kwargs)` is TensorFlow's TFRecord reader (how it
    reads its files), None for any other reader.

    The reader is recognised by what it builds: one is made in a graph of its own (nothing is
    added to the caller's graph; it costs under a millisecond), and its op tells whether it
    reads TFRecords and how they are compressed. So `tf.compat.v1.TFRecordReader`, a subclass,
    and the wrappers scripts use to pass options (`lambda: tf.compat.v1.TFRecordReader(
    options=...)`, `functools.partial`) are all recognised, whether the options come from the
    wrapper or from `reader_kwargs`.
    """
    with tf.Graph().as_default():
        built = reader(**(reader_kwargs or {}))
    op = getattr(getattr(built, 'reader_ref', None), 'op', None)
    if op is None or op.type not in _TFRECORD_READER_OPS:
        return None
    return op.get_attr('compression_type').decode()


def reader_name(reader: ReaderClass) -> str:
    """How errors name a reader: its class or function name."""
    return repr(getattr(reader, '__name__', reader))


def check_data_files(data_files: Sequence[str], compression: str,
                     skip_corrupt: bool = False) -> List[tfrecord.FileCheck]:
    """Checks the framing of every data file before TensorFlow's readers open them.

    Args:
      data_files: the files, as the pipeline lists them (a file listed twice is read twice).
      compression: '', 'GZIP' or 'ZLIB', as TensorFlow's reader will read them.
      skip_corrupt: if True, a damaged file is reported in a warning (its records before the
        damage are read, the rest is skipped); if False it is refused.

    Returns:
      One `FileCheck` per entry of `data_files`: how many records each holds (before its
      damage, if any).

    Raises:
      TFRecordError: naming the first damaged file, the record and its offset, when
        `skip_corrupt` is False (and how many other files are damaged).
      FileNotFoundError: naming a data file that does not exist.
    """
    started = time.perf_counter()
    unique = list(dict.fromkeys(data_files))
    # Threads overlap the reads of the record headers (one read per record, where records are
    # larger than a read), which dominate when the files are not in the page cache.
    with concurrent.futures.ThreadPoolExecutor(max(1, min(_CHECK_THREADS, len(unique)))) as pool:
        checks = dict(zip(unique, pool.map(
            lambda path: tfrecord.check_file(path, compression or None), unique)))
    elapsed = time.perf_counter() - started
    LOGGER.debug('checked the framing of %d data files (%.1f MB) in %.1f ms', len(checks),
                 sum(check.num_bytes for check in checks.values()) / 1e6, elapsed * 1e3)
    damaged = [check for check in checks.values() if not check.ok]
    if damaged and not skip_corrupt:
        raise _refusal([check.error for check in damaged if check.error is not None])
    for check in damaged:
        LOGGER.warning('skip_corrupt: %s; its %d records before the damage are read, the rest '
                       'of the file is skipped', check.error, check.num_records)
    return [checks[path] for path in data_files]


def _refusal(errors: List[tfrecord.TFRecordError]) -> tfrecord.TFRecordError:
    """The error of the first damaged file, naming the others."""
    first = errors[0]
    reason = (f'{first.reason}. The pipeline refuses the file before TensorFlow\'s reader opens '
              'it (that reader would crash on a huge length, or read a cut file as a shorter '
              'one); pass skip_corrupt=True to read up to the damage and skip the rest')
    if len(errors) > 1:
        others = ', '.join(error.path for error in errors[1:6])
        more = ', ...' if len(errors) > 6 else ''
        reason += (f'. {len(errors) - 1} more data files are damaged: {others}{more} '
                   '(`slimdata verify` lists every problem)')
    return tfrecord.TFRecordError(first.path, first.record_index, first.offset, reason,
                                  first.compression)


def num_samples_mismatch(records_per_epoch: int, num_samples: Optional[int]) -> Optional[str]:
    """What to say when an epoch of `records_per_epoch` records is not `num_samples`, or None."""
    if num_samples is None or records_per_epoch == num_samples:
        return None
    return _num_samples_says(num_samples)


def _num_samples_says(num_samples: int) -> str:
    return (f'num_samples says {num_samples} (is a file missing, listed twice, or num_samples '
            'wrong?)')


def warn_if_num_samples_differs(checks: Sequence[tfrecord.FileCheck],
                                num_samples: Optional[int],
                                num_epochs: Optional[int] = None) -> None:
    """Logs a warning when the files hold another number of records than `num_samples`,
    saying what that does to the pipeline as built.

    A warning, not an error, when the pipeline is built: tf_slim accepted any `num_samples`
    (its own tests read 10 records described as 100). With `num_epochs`, the input ends, and
    its end checks the count: the pipeline fails there. With `num_epochs=None` the input never
    ends and nothing fails; only what counts epochs by `num_samples` is off.
    """
    if not all(check.ok for check in checks):
        return  # damaged files read with skip_corrupt: their counts are not known
    records = sum(check.num_records for check in checks)
    problem = num_samples_mismatch(records, num_samples)
    if not problem:
        return
    if num_epochs is None:
        LOGGER.warning('the data files hold %d records and %s; with num_epochs=None the input '
                       'never ends and nothing fails, but what counts epochs by num_samples '
                       '(a decay schedule, an evaluation of num_samples records) is off', records,
                       problem)
    else:
        LOGGER.warning('the data files hold %d records and %s; with num_epochs=%d the input '
                       'ends, and reading it to its end fails there (the end checks the '
                       'count)', records, problem, num_epochs)


# ----------------------------------------------------------------------------------------------
# The records one worker reads

@dataclasses.dataclass(frozen=True)
class RecordSource:
    """The data files one worker reads, as `record_source` found and checked them.

    Attributes:
      data_files: the files this worker reads, in order.
      compression: '', 'GZIP' or 'ZLIB' when TensorFlow's TFRecord reader reads them; None for
        another reader (the files are then not checked).
      checks: one `tfrecord.FileCheck` per data file (None for another reader).
      num_samples: the records each epoch of this worker must read by the dataset's
        description, or None when it says nothing about this worker (see `record_source`).
      share: (num_workers, worker_index) when this worker reads every record and keeps only
        its share of them (fewer files than workers); else None.
      skip_corrupt: whether damaged files are read up to their damage.
    """
    data_files: List[str]
    compression: Optional[str]
    checks: Optional[List[tfrecord.FileCheck]]
    num_samples: Optional[int]
    share: Optional[Tuple[int, int]]
    skip_corrupt: bool = False

    @property
    def records_per_epoch(self) -> Optional[int]:
        """The records the files held when they were checked (None for another reader)."""
        return None if self.checks is None else sum(c.num_records for c in self.checks)

    def counted_records(self, shuffle: bool, num_epochs: Optional[int], num_readers: int,
                        seed: Optional[int]) -> tf.data.Dataset:
        """A `tf.data.Dataset` of batches (keys, records, indices) of this worker's records.

        Each batch holds up to RECORDS_PER_BATCH consecutive records of one file (only this
        worker's share of them, with `share`). Keys are `b'<file>:<byte offset>'` as
        `tf.compat.v1.TFRecordReader` makes them, indices the records' indices in their file.
        Files are read through TensorFlow's reader; at the end of each file a `ReadAccounts`
        compares what the file gave with its check: a file that came up short fails the
        pipeline with InvalidArgumentError naming the file, the damaged record and why (or,
        with skip_corrupt, is counted as skipped), and each whole epoch is compared with
        `num_samples`.

        Args:
          shuffle: shuffle the files each epoch.
          num_epochs: the passes over the files; None repeats forever.
          num_readers: files read in parallel (interleaved, a batch at a time).
          seed: the seed of the file shuffle.

        Raises:
          ValueError: for files not read by TensorFlow's TFRecord reader.
        """
        if self.checks is None:
            raise ValueError('counted_records reads TFRecord files (tf.compat.v1.TFRecordReader)')
        accounts = ReadAccounts(self.checks, self.num_samples, self.skip_corrupt)
        records = _counted_records(self.checks, self.compression, shuffle, num_epochs,
                                   num_readers, seed, accounts)
        if self.share is None:
            return records
        num_workers, worker_index = self.share
        # Masked after the count: the accounts see every record, as the worker reads them all.
        return records.map(lambda keys, batch, indices: tuple(
            tf.boolean_mask(tensor, workers.keep_mask(indices, num_workers, worker_index))
            for tensor in (keys, batch, indices)))


def record_source(data_files: Sequence[str], reader: ReaderClass,
                  reader_kwargs: Optional[Dict[str, Any]] = None,
                  num_samples: Optional[int] = None, skip_corrupt: bool = False,
                  num_workers: int = 1, worker_index: int = 0,
                  num_epochs: Optional[int] = None) -> RecordSource:
    """The data files one worker reads, checked before any reader opens them.

    The one road of every slimdata pipeline (the providers, `parallel_read`, the tf.data
    bridge) from the data files to what is read:

    - the worker's files (`slimdata.workers.files_of_worker`): all of them for one worker; for
      several, its share of the files, or every file when there are fewer files than workers
      (it then keeps its share of their records);
    - with TensorFlow's TFRecord reader (`tfrecord_compression`), the framing of each of them
      is checked (`check_data_files`), a damaged file refused (or, with `skip_corrupt`, read up
      to its damage), and their records counted;
    - what an epoch of this worker must read. The one rule for `num_samples`, the records of
      the whole dataset: it is what an epoch of this worker reads when the worker reads every
      record (one worker, or records divided: each reads them all and keeps its share). When
      the files are divided, the worker reads its own files: their checks count its epoch, and
      `num_samples` is not compared.

    Args:
      data_files: all the data files, sorted (as `parallel_reader.get_data_files` gives them).
      reader: the reader class, or a callable making a reader (called with `reader_kwargs`).
      reader_kwargs: the reader's keyword arguments, e.g. `{'options': 'GZIP'}`.
      num_samples: the records of one epoch over all the data files, or None.
      skip_corrupt: read a damaged TFRecord file up to its damage instead of refusing it.
      num_workers, worker_index: see `slimdata.workers`.
      num_epochs: how many times the pipeline reads the files (None: forever), for what a
        num_samples warning says will happen.

    Raises:
      ValueError: bad worker arguments, or `skip_corrupt` or a division of the records (fewer
        files than workers) asked of another reader than TensorFlow's TFRecord reader.
      TFRecordError: a TFRecord data file is damaged (and `skip_corrupt` is False).
    """
    files, keep_share = workers.files_of_worker(data_files, num_workers, worker_index)
    compression = tfrecord_compression(reader, reader_kwargs)
    if compression is None and skip_corrupt:
        raise ValueError('skip_corrupt=True needs tf.compat.v1.TFRecordReader; the reader is '
                         f'{reader_name(reader)}')
    if compression is None and keep_share:
        raise ValueError('dividing the records of fewer data files than workers needs '
                         'tf.compat.v1.TFRecordReader; write at least num_workers files')
    epoch_size = num_samples if num_workers == 1 or keep_share else None
    checks = None
    if compression is not None:
        checks = check_data_files(files, compression, skip_corrupt)
        warn_if_num_samples_differs(checks, epoch_size, num_epochs)
    return RecordSource(files, compression, checks, epoch_size,
                        (num_workers, worker_index) if keep_share else None, skip_corrupt)


# ----------------------------------------------------------------------------------------------
# Counting what tf.data reads

@dataclasses.dataclass
class _Skip:
    """Records of one file that one epoch did not read."""
    path: str
    first_record: int  # the index of the first record not read
    offset: int  # its byte offset
    reason: str
    count: Optional[int]  # how many; None when the file's framing is broken there


@dataclasses.dataclass
class _Epoch:
    files_ended: int = 0
    records_read: int = 0
    skips: List[_Skip] = dataclasses.field(default_factory=list)
    failed: bool = False  # a file of the epoch failed: its own error says what was lost


class ReadAccounts:
    """What each file and each epoch of a `RecordSource.counted_records` pipeline read, checked
    against the counts of `check_data_files` and `num_samples`.

    Its methods run in `tf.py_function`s: once when an iteration over the pipeline starts,
    and at the start and the end of each file of each epoch, never per record. What an epoch
    skipped is reported in a warning of the `slimdata` logger when the epoch ends.
    """

    def __init__(self, checks: Sequence[tfrecord.FileCheck], num_samples: Optional[int],
                 skip_corrupt: bool):
        self._checks = list(checks)
        self._num_samples = num_samples
        self._skip_corrupt = skip_corrupt
        self._lock = threading.Lock()
        self._runs = 0
        self._epochs: Dict[Tuple[int, int], _Epoch] = {}
        self._damage: Dict[str, str] = {}  # path -> the reason of its first damaged record

    def start_run(self) -> Tuple[int, int]:
        """A new iteration over the pipeline: its number, and a seed for its file shuffles."""
        with self._lock:
            self._runs += 1
            return self._runs, random.getrandbits(31)

    def file_started(self, file_index) -> Tuple[int, bytes]:
        """Checks a file again just before TensorFlow's reader opens it, so that a file
        replaced since the pipeline was built cannot crash the reader either (`check_file`
        remembers unchanged files: this costs a `stat`).

        Returns:
          The records to read (-1: all of them), and an error message or b''.
        """
        index = int(file_index)
        built = self._checks[index]
        try:
            check = tfrecord.check_file(built.path, built.compression)
        except OSError as error:
            check = tfrecord.FileCheck(built.path, built.compression, 0, 0, tfrecord.TFRecordError(
                built.path, 0, 0, f'cannot be read: {error}', built.compression))
        self._checks[index] = check
        if check.ok:
            return -1, b''
        if not self._skip_corrupt:
            return 0, (f'{check.error} (found when the TensorFlow reader was about to open the '
                       'file; it changed since the pipeline was built)').encode()
        return check.num_records, b''

    def file_ended(self, run, epoch, file_index, records_read, offset) -> bytes:
        """Accounts for the end of one file in one epoch; returns an error message or b''.

        Args:
          run, epoch: which epoch of which iteration (tensors, from the pipeline).
          file_index: the file's index in the checks.
          records_read: how many records TensorFlow's reader gave (it stops a file at a
            damaged record, and tf.data's `ignore_errors` moves on to the next file).
          offset: the byte offset where it stopped.
        """
        check = self._checks[int(file_index)]
        records_read, offset = int(records_read), int(offset)
        problem, skip = self._shortfall(check, records_read, offset)
        with self._lock:
            key = (int(run), int(epoch))
            account = self._epochs.setdefault(key, _Epoch())
            account.files_ended += 1
            account.records_read += records_read
            account.failed = account.failed or problem is not None
            if skip is not None:
                account.skips.append(skip)
            if account.files_ended == len(self._checks):
                del self._epochs[key]
                # Files are read in parallel, and the end of another file may be accounted
                # (and raised) before a failed file's error reaches the consumer: the epoch's
                # count is checked only when no file failed, so that the one error raised is
                # the one that names the damaged file.
                if not account.failed:
                    problem = self._epoch_ended(int(epoch), account)
        return (problem or '').encode()

    def _shortfall(self, check: tfrecord.FileCheck, records_read: int,
                   offset: int) -> Tuple[Optional[str], Optional[_Skip]]:
        """(an error message, a skip) for a file that gave `records_read` records."""
        if records_read > check.num_records:
            return (f'{check.path}: the TensorFlow reader gave {records_read} records, more '
                    f'than the {check.num_records} the file held when the pipeline was built '
                    '(was it changed since?)'), None
        if records_read < check.num_records:
            reason = self._damage_reason(check, records_read)
            if not self._skip_corrupt:
                return (f'{check.path}: record {records_read} at byte offset {offset}: {reason}. '
                        f'The epoch read {records_read} of the {check.num_records} records of '
                        'the file (the TensorFlow reader stops a file at a damaged record); '
                        'pass skip_corrupt=True to skip the rest of a damaged file'), None
            unread = None if check.error else check.num_records - records_read
            return None, _Skip(check.path, records_read, offset, reason, unread)
        if check.error is not None:  # read up to the damage found when the pipeline was built
            return None, _Skip(check.path, records_read, check.error.offset, check.error.reason,
                               None)
        return None, None

    def _damage_reason(self, check: tfrecord.FileCheck, record_index: int) -> str:
        """Why TensorFlow's reader stopped at `record_index`, found by slimdata's reader (which
        checks every CRC); run once per damaged file, and only when one is met. (Messages avoid
        apostrophes: the Assert that raises them escapes quotes.)"""
        if check.path not in self._damage:
            result = tfrecord.verify_file(check.path, check.compression)
            if result.error is not None and result.error.record_index == record_index:
                self._damage[check.path] = result.error.reason
            elif result.error is not None:
                self._damage[check.path] = ('the TensorFlow reader stopped here; the slimdata '
                                            f'reader finds: {result.error}')
            else:
                self._damage[check.path] = (
                    f'the file now holds {result.num_records} whole records, '
                    f'{check.num_records} when the pipeline was built (was it changed?)')
        return self._damage[check.path]

    def _epoch_ended(self, epoch: int, account: _Epoch) -> Optional[str]:
        """Checks a whole epoch against `num_samples`; reports its skipped records."""
        known = sum(skip.count for skip in account.skips if skip.count is not None)
        unknown = any(skip.count is None for skip in account.skips)
        accounted = account.records_read + known
        if self._num_samples is not None and (accounted > self._num_samples or (
                not unknown and accounted != self._num_samples)):
            skipped = f' (and skipped {known})' if known else ''
            return (f'epoch {epoch + 1} read {account.records_read} records{skipped}, and '
                    + _num_samples_says(self._num_samples))
        if account.skips:
            if unknown and self._num_samples is not None:
                known, unknown = self._num_samples - account.records_read, False
            LOGGER.warning('epoch %d read %d records and skipped %s records of damaged files '
                           '(skip_corrupt=True): %s', epoch + 1, account.records_read,
                           'an unknown number of' if unknown else known,
                           '; '.join(_describe(skip) for skip in account.skips))
        return None


def _describe(skip: _Skip) -> str:
    count = 'the rest of the file' if skip.count is None else f'{skip.count} records'
    return (f'{skip.path}: {count} from record {skip.first_record} (byte offset '
            f'{skip.offset}: {skip.reason})')


def _counted_records(checks, compression, shuffle, num_epochs, num_readers, seed, accounts):
    """`RecordSource.counted_records` of the files of `checks`, counted by `accounts`."""
    paths = tf.constant([check.path for check in checks])
    num_files = len(checks)

    def run_epochs(run, run_seed):
        epochs = tf.data.Dataset.range(num_epochs) if num_epochs else tf.data.Dataset.counter()

        def files_of_epoch(epoch):
            order = tf.range(num_files, dtype=tf.int64)
            if shuffle:
                shuffle_seed = tf.stack([tf.constant(seed, tf.int64) if seed is not None
                                         else run_seed, run * 1_000_003 + epoch])
                order = tf.random.experimental.stateless_shuffle(order, shuffle_seed)
            return tf.data.Dataset.from_tensor_slices(order).map(lambda index: (epoch, index))

        return epochs.flat_map(files_of_epoch).interleave(
            lambda epoch, index: _batches_of_file(run, epoch, index, paths[index],
                                                  compression, accounts),
            cycle_length=num_readers, num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=not shuffle)

    start = tf.data.Dataset.from_tensors(0).map(
        lambda _: tuple(tf.py_function(accounts.start_run, [], [tf.int64, tf.int64])))
    return start.flat_map(run_epochs)


# Records per batch of `counted_records`: the keys, offsets and checks are made a batch at a
# time, since per record they cost more than reading the record.
RECORDS_PER_BATCH = 32


def _batches_of_file(run, epoch, file_index, path, compression, accounts):
    """Batches (keys, records, indices) of one file, and the check of its count at its end."""
    # A file damaged in its framing is read up to the damage (only with skip_corrupt: other
    # damaged files fail here); -1 reads a whole file.
    limit, problem = tf.py_function(accounts.file_started, [file_index], [tf.int64, tf.string])
    with tf.control_dependencies([tf.debugging.Assert(tf.equal(problem, b''), [problem])]):
        limit = tf.reshape(limit, [])
    records = tf.data.TFRecordDataset(path, compression_type=compression).take(limit)
    # A damaged record ends the file (TensorFlow's reader moves on to the next file), and the
    # count at the end says what was lost. An empty batch, which no records make, marks the end.
    batches = records.ignore_errors().batch(RECORDS_PER_BATCH).concatenate(
        tf.data.Dataset.from_tensors(tf.constant([], tf.string)))

    def step(state, batch):
        offset, records_read = state
        size = tf.size(batch, out_type=tf.int64)
        problem = tf.cond(
            tf.equal(size, 0),
            lambda: tf.py_function(accounts.file_ended,
                                   [run, epoch, file_index, records_read, offset], tf.string),
            lambda: tf.constant(b''))
        framed = _FRAMING_BYTES + tf.cast(tf.strings.length(batch), tf.int64)
        ends = offset + tf.cumsum(framed)
        with tf.control_dependencies([tf.debugging.Assert(tf.equal(problem, b''), [problem])]):
            keys = tf.strings.join([path, ':', tf.strings.as_string(ends - framed)])
        indices = records_read + tf.range(size)
        return (offset + tf.reduce_sum(framed), records_read + size), (keys, batch, indices)

    zero = tf.constant(0, tf.int64)
    return batches.scan((zero, zero), step).filter(
        lambda keys, batch, indices: tf.size(batch) > 0)
