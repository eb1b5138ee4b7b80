"""A parallel data reader with queues and optional shuffling (TF1 graph mode).

`parallel_read` is what `DatasetDataProvider` uses: a filename queue feeds `num_readers`
reader instances whose records go into one common queue (a RandomShuffleQueue when
shuffling, else a FIFOQueue); queue runners added to the graph's QUEUE_RUNNERS collection do
the reading once `tf.compat.v1.train.start_queue_runners` is called::

    key, value = parallel_read(['/data/train-*.tfrecord'], tf.compat.v1.TFRecordReader,
                               num_readers=4)

Same classes, functions, signatures and defaults as `tf_slim.data.parallel_reader`, on the
public TensorFlow API. Calling them under eager execution raises a RuntimeError saying how to
switch to graph mode (or to use `slimdata.tfdata`).

With `tf.compat.v1.TFRecordReader` (the class, a subclass, or a lambda or `functools.partial`
making one), `parallel_read`, `make_parallel_reader` and `single_pass_read` check every data
file's framing before TensorFlow's reader opens it, and refuse a damaged file with a
`TFRecordError` (see `slimdata.record_checks`); with `num_epochs`, the end of the input is
checked too: the readers must have read what the files held and what `num_samples` says (this
last with any reader), or the queue runner fails with InvalidArgumentError saying so.

On several machines (`tf.compat.v1.train.replica_device_setter`, models/research/slim's
`model_deploy`), a pipeline's state stays on the worker that reads: the epoch counter of
`num_epochs` is a local variable, which `replica_device_setter` would put on a parameter server
(it places every variable there, whatever its collection), where the pipelines of all workers
would share it by its name. It is colocated with the pipeline's own queue or reader instead,
in a resource container of the pipeline's own. A pipeline built on a parameter server's device
is refused when it is built, with the fix in the message.
"""

import dataclasses
import logging
import uuid
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from slimdata import record_checks
from slimdata._tf import require_graph_mode, tf
from slimdata.types import DataSources, DType, Queue, ReaderClass, Tensor

_GLOB_CHARACTERS = ('*', '?', '[')

# Each reader moves up to this many records into the common queue per step of its queue
# runner (`read_up_to` + `enqueue_many`) instead of one: a step costs a Python-level
# session call, which dominated the time per record of small records (see
# docs/performance.md). The records and their order within a file are unchanged.
RECORDS_PER_READ = 32

#: The graph collection of every data file the readers of a graph read. TensorFlow names a
#: damaged record by its offset only; `QueueSession` looks in these files for the one it is in.
DATA_FILES_COLLECTION = 'slimdata_data_files'

#: The job of parameter servers (`replica_device_setter`'s, model_deploy's and TF_CONFIG's
#: name): its devices are shared by every worker, so no input pipeline is built there.
PARAMETER_SERVER_JOB = 'ps'

LOGGER = logging.getLogger('slimdata')


class ParallelReader(tf.compat.v1.ReaderBase):
    """Reader class that uses multiple readers in parallel to improve speed.

    See `tf.compat.v1.ReaderBase` for supported methods.
    """

    def __init__(self, reader_class: ReaderClass, common_queue: Queue, num_readers: int = 4,
                 reader_kwargs: Optional[Dict[str, Any]] = None,
                 end_of_input_check: Optional['EndOfInputCheck'] = None,
                 record_check: Optional[Callable[[Tensor, Tensor], Tensor]] = None):
        """Creates `num_readers` instances of `reader_class`.

        Each instance is created by calling `reader_class(**reader_kwargs)`. Reading from a
        ParallelReader dequeues examples from `common_queue`, into which the readers, reading
        different files in parallel, enqueue asynchronously. If `common_queue` is a shuffling
        queue, the examples are shuffled. There is no guarantee that all the readers read
        the same number of examples.

        Args:
          reader_class: a `tf.compat.v1.ReaderBase` subclass, e.g. TFRecordReader, or a
            callable making one.
          common_queue: a queue holding (key, value) pairs; its `dtypes` must be
            [tf.string, tf.string]. E.g. `tf.queue.FIFOQueue` or `tf.queue.RandomShuffleQueue`.
          num_readers: an integer, the number of instances of reader_class to create.
          reader_kwargs: an optional dict of kwargs to create the readers.
          end_of_input_check: an optional `EndOfInputCheck`: when the readers run out of
            files, the common queue is closed only after they are found to have read what
            it expects (else the queue runner fails with InvalidArgumentError saying what
            they read). The readers are then configured by one read call only.
          record_check: an optional function (keys, records) -> records, applied to each
            batch of records (1-D tensors) a reader reads, before the common queue: e.g.
            `tfexample_decoder.checked_records`.

        Raises:
          TypeError: if `common_queue.dtypes` is not [tf.string, tf.string].
        """
        if len(common_queue.dtypes) != 2:
            raise TypeError('common_queue.dtypes must be [tf.string, tf.string]')
        for dtype in common_queue.dtypes:
            if not dtype.is_compatible_with(tf.string):
                raise TypeError('common_queue.dtypes must be [tf.string, tf.string]')
        reader_kwargs = reader_kwargs or {}
        self._readers = [reader_class(**reader_kwargs) for _ in range(num_readers)]
        self._common_queue = common_queue
        if end_of_input_check is not None and not all(
                hasattr(reader, 'num_records_produced') for reader in self._readers):
            LOGGER.warning('the readers made by %s do not count what they read '
                           '(num_records_produced): the end of the input is not checked',
                           record_checks.reader_name(reader_class))
            end_of_input_check = None
        self._end_of_input_check = end_of_input_check
        self._record_check = record_check
        self._configured = False

    @property
    def num_readers(self) -> int:
        return len(self._readers)

    @property
    def common_queue(self) -> Queue:
        return self._common_queue

    def read(self, queue: Queue, name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
        """Returns the next record (key, value) produced by the readers.

        The reader instances are all configured to `read()` from the filenames in `queue`
        and to enqueue into the common queue; a queue runner doing that is added to the
        QUEUE_RUNNERS collection. This returns the next record dequeued from the common queue.

        Args:
          queue: a queue or a mutable string tensor representing a handle to a queue, with
            string work items (file names).
          name: a name for the operation (optional).

        Returns:
          The next record, a (key, value) pair of string tensors.
        """
        self._configure_readers_by(queue)
        return self._common_queue.dequeue(name=name)

    def read_up_to(self, queue: Queue, num_records: Union[int, Tensor],
                   name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
        """Returns up to `num_records` (key, value) pairs produced by the readers.

        It may return fewer than `num_records` even before the last batch. Not every kind of
        common queue supports `dequeue_up_to`; those that do not raise
        `tf.errors.UnimplementedError`.

        Args:
          queue: a queue or a mutable string tensor representing a handle to a queue, with
            string work items.
          num_records: the number of records to read.
          name: a name for the operation (optional).

        Returns:
          A tuple (keys, values) of 1-D string tensors.
        """
        self._configure_readers_by(queue)
        return self._common_queue.dequeue_up_to(num_records, name)

    def read_many(self, queue: Queue, num_records: Union[int, Tensor],
                  name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
        """Returns exactly `num_records` (key, value) pairs produced by the readers.

        Unlike `read_up_to`, a final remainder of fewer than `num_records` records is
        never returned: once the readers are done, the next call raises OutOfRangeError.

        Args:
          queue: a queue or a mutable string tensor representing a handle to a queue, with
            string work items.
          num_records: the number of records to read.
          name: a name for the operation (optional).

        Returns:
          A tuple (keys, values) of 1-D string tensors of length `num_records`.
        """
        self._configure_readers_by(queue)
        return self._common_queue.dequeue_many(num_records, name)

    def _configure_readers_by(self, queue):
        require_graph_mode('ParallelReader.read')
        enqueue_ops = [self._enqueue_records_of(reader, queue) for reader in self._readers]
        if self._end_of_input_check is None:
            tf.compat.v1.train.add_queue_runner(
                tf.compat.v1.train.QueueRunner(self._common_queue, enqueue_ops))
        elif self._configured:
            raise ValueError('A ParallelReader with an end-of-input check is read through one '
                             'read, read_up_to or read_many call; use the tensors it returned')
        else:
            _add_checked_runners(self._common_queue, enqueue_ops, self._end_of_input_check,
                                 self.num_records_produced)
        self._configured = True

    def _enqueue_records_of(self, reader, queue):
        if hasattr(reader, 'read_up_to'):
            return self._common_queue.enqueue_many(
                _checked_records(self._record_check,
                                 *reader.read_up_to(queue, RECORDS_PER_READ)))
        # A duck-typed reader with only read().
        keys, records = _checked_records(self._record_check, *[
            tf.expand_dims(tensor, 0) for tensor in reader.read(queue)])
        return self._common_queue.enqueue_many([keys, records])

    def num_records_produced(self, name: Optional[str] = None) -> Tensor:
        """Returns the number of records this reader has produced, an int64 tensor."""
        return tf.add_n([r.num_records_produced() for r in self._readers], name=name)

    def num_work_units_completed(self, name: Optional[str] = None) -> Tensor:
        """Returns the number of work units (files) finished processing, an int64 tensor."""
        return tf.add_n([r.num_work_units_completed() for r in self._readers], name=name)


def parallel_read(data_sources: DataSources, reader_class: ReaderClass,
                  num_epochs: Optional[int] = None, num_readers: int = 4,
                  reader_kwargs: Optional[Dict[str, Any]] = None, shuffle: bool = True,
                  dtypes: Optional[Sequence[DType]] = None, capacity: int = 256,
                  min_after_dequeue: int = 128, seed: Optional[int] = None,
                  scope: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """Reads multiple records in parallel from `data_sources` using `num_readers` readers.

    If `shuffle` is True the common queue is a RandomShuffleQueue, otherwise a FIFOQueue.

    Args:
      data_sources: a file, a glob, or a list/tuple of either, e.g. '/path/to/train*'.
      reader_class: a `tf.compat.v1.ReaderBase` subclass, e.g. TFRecordReader.
      num_epochs: the number of times each data source is read; None cycles forever. A
        number creates a local variable: run `tf.compat.v1.local_variables_initializer()`.
      num_readers: an integer, the number of readers to create.
      reader_kwargs: an optional dict of kwargs for the reader.
      shuffle: whether to shuffle the files and the records.
      dtypes: the types of the common queue's components; defaults to
        [tf.string, tf.string] for (key, value).
      capacity: the capacity of the common queue.
      min_after_dequeue: the minimum number of records in the common queue after a dequeue,
        which makes for a good shuffle.
      seed: a seed for the shuffling.
      scope: an optional name scope for the ops.

    Returns:
      key, value: a (key, value) pair of tensors from the data sources.

    Raises:
      ValueError: if no data files are found.
      TFRecordError: a TFRecord data file is damaged.
      RuntimeError: under eager execution.
    """
    require_graph_mode('parallel_read')
    with tf.compat.v1.name_scope(scope, 'parallel_read'):
        reader, filename_queue = make_parallel_reader(
            data_sources, reader_class, num_epochs=num_epochs, num_readers=num_readers,
            reader_kwargs=reader_kwargs, shuffle=shuffle, dtypes=dtypes, capacity=capacity,
            min_after_dequeue=min_after_dequeue, seed=seed)
        return reader.read(filename_queue)


def make_parallel_reader(data_sources: DataSources, reader_class: ReaderClass,
                         num_epochs: Optional[int] = None, num_readers: int = 4,
                         reader_kwargs: Optional[Dict[str, Any]] = None, shuffle: bool = True,
                         dtypes: Optional[Sequence[DType]] = None, capacity: int = 256,
                         min_after_dequeue: int = 128, seed: Optional[int] = None,
                         num_samples: Optional[int] = None, skip_corrupt: bool = False,
                         record_check: Optional[Callable[[Tensor, Tensor], Tensor]] = None,
                         num_workers: int = 1, worker_index: int = 0
                         ) -> Tuple[Any, Optional[Queue]]:
    """The ParallelReader and filename queue of `parallel_read`, for reading several records
    per step (`reader.read_up_to(filename_queue, n)`); the arguments are `parallel_read`'s,
    and:

      num_samples: optional; the records an epoch holds. With `num_epochs`, input that ends
        having read another number is an error.
      skip_corrupt: see below.
      record_check: see `ParallelReader`.
      num_workers, worker_index: read only this worker's part of the data files, or of their
        records when there are fewer files than workers (`slimdata.workers`).

    With `skip_corrupt=True` (TFRecord files only), tf.data reads the files into the common
    queue in place of `num_readers` TensorFlow readers (tf.data can go on past a damaged
    record, a TensorFlow reader cannot): a damaged file is read up to its damage, and each
    epoch's skipped records are counted and reported in a warning of the `slimdata` logger
    (`slimdata.record_checks`). The reader returned then reads from the common queue alone,
    and the filename queue is None.

    Returns:
      (reader, filename_queue): a `ParallelReader` and the queue of its data files.

    Raises:
      ValueError: if no data files are found, or `skip_corrupt` is asked of another reader.
      TFRecordError: a TFRecord data file is damaged (and `skip_corrupt` is False).
      RuntimeError: under eager execution.
    """
    require_graph_mode('make_parallel_reader')
    source = record_checks.record_source(
        _read_files(data_sources), reader_class, reader_kwargs, num_samples, skip_corrupt,
        num_workers, worker_index, num_epochs)
    dtypes = dtypes or [tf.string, tf.string]
    # Readers give scalar keys and values. Saying so lets read_up_to and read_many dequeue
    # several at once (tf_slim's shapeless queue refused both).
    shapes: List[List[int]] = [[]] * len(dtypes)
    with _private_state():
        if shuffle:
            common_queue = tf.queue.RandomShuffleQueue(
                capacity=capacity, min_after_dequeue=min_after_dequeue, dtypes=dtypes,
                shapes=shapes, seed=seed, name='common_queue')
        else:
            common_queue = tf.queue.FIFOQueue(capacity=capacity, dtypes=dtypes, shapes=shapes,
                                              name='common_queue')
        _refuse_a_parameter_server(common_queue.queue_ref.device)
        tf.compat.v1.summary.scalar(
            'fraction_of_%d_full' % capacity,
            tf.cast(common_queue.size(), tf.float32) * (1. / capacity))
        if skip_corrupt or source.share is not None:
            records = source.counted_records(shuffle, num_epochs, num_readers, seed)
            return _DatasetFedReader(records, common_queue, record_check), None
        # The epoch counter stays with the queue it feeds (see _refuse_a_parameter_server).
        with tf.compat.v1.colocate_with(common_queue.queue_ref):
            filename_queue = tf.compat.v1.train.string_input_producer(
                source.data_files, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                name='filenames')
        reader = ParallelReader(reader_class, common_queue, num_readers=num_readers,
                                reader_kwargs=reader_kwargs,
                                end_of_input_check=EndOfInputCheck.of(source, num_epochs),
                                record_check=record_check)
    return reader, filename_queue


def single_pass_read(data_sources: DataSources, reader_class: ReaderClass,
                     reader_kwargs: Optional[Dict[str, Any]] = None,
                     scope: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """Reads the data sources sequentially with one reader, in a single pass.

    Args:
      data_sources: a file, a glob, or a list/tuple of either.
      reader_class: a `tf.compat.v1.ReaderBase` subclass, e.g. TFRecordReader.
      reader_kwargs: an optional dict of kwargs for the reader.
      scope: an optional name scope for the ops.

    Returns:
      key, value: a (key, value) pair of tensors from the data sources.

    Raises:
      ValueError: if no data files are found.
      TFRecordError: a TFRecord data file is damaged.
      RuntimeError: under eager execution.
    """
    require_graph_mode('single_pass_read')
    source = record_checks.record_source(_read_files(data_sources), reader_class, reader_kwargs)
    with tf.compat.v1.name_scope(scope, 'single_pass_read'), _private_state():
        reader = reader_class(**(reader_kwargs or {}))
        # A reader that is no TensorFlow reader has no op to keep the state with: a no-op made
        # here is placed as the reader's ops are.
        anchor = getattr(reader, 'reader_ref', None)
        anchor = tf.no_op(name='reader') if anchor is None else anchor
        _refuse_a_parameter_server(anchor.device)
        # The epoch counter stays with the reader (see _refuse_a_parameter_server).
        with tf.compat.v1.colocate_with(anchor):
            filename_queue = tf.compat.v1.train.string_input_producer(
                source.data_files, num_epochs=1, shuffle=False, capacity=1, name='filenames')
        return reader.read(filename_queue)


def _private_state() -> Any:
    """A context whose stateful ops are made in a resource container of their own.

    TensorFlow shares a variable between every graph that places one of the same name on the
    same device (queues and readers are private to their graph already). With a container of
    its own, a pipeline's epoch counter stays its own even where the pipelines of several
    workers meet on one device.
    """
    # (Letters, digits, dashes and dots: what TensorFlow takes in a container name.)
    return tf.compat.v1.container(f'slimdata-pipeline-{uuid.uuid4().hex}')


def _refuse_a_parameter_server(device: str) -> None:
    """Raises a ValueError saying where to build a pipeline whose ops go to a parameter server.

    Where the pipeline's ops go, its state follows: `replica_device_setter` places every
    variable on a parameter server, local ones too (it places by op type), and the other ops
    on the worker, so the pipelines colocate their epoch counter with their own queue or
    reader (TensorFlow's SyncReplicasOptimizer keeps its local step on the worker the same
    way). Only a pipeline whose queue itself is placed on a parameter server cannot work: the
    files would be read there, and every worker's pipeline would share its device.

    Args:
      device: the device of the pipeline's queue or reader, as the graph's device scopes set it.
    """
    if tf.DeviceSpec.from_string(device).job == PARAMETER_SERVER_JOB:
        raise ValueError(
            f'the input pipeline is being built on {device}, a parameter server, whose devices '
            'every worker shares (and where the files would be read): build it on the worker '
            'that reads, e.g. under tf.compat.v1.device(tf.compat.v1.train.'
            "replica_device_setter(worker_device='/job:worker/task:%d' % task_index, "
            "cluster=...)), tf.compat.v1.device('/job:worker/task:%d' % task_index) or "
            "models/research/slim's deploy_config.inputs_device()")


@dataclasses.dataclass(frozen=True)
class EndOfInputCheck:
    """What the readers of a pipeline with `num_epochs` must have read when they run out.

    Attributes:
      num_epochs: the passes over the files.
      records_per_epoch: the records the data files held when the pipeline was built, or None
        when they were not counted (a reader other than TensorFlow's TFRecord reader).
      num_files: the data files.
      num_samples: the records an epoch holds by the dataset's description, or None.
    """
    num_epochs: int
    records_per_epoch: Optional[int]
    num_files: int
    num_samples: Optional[int] = None

    @classmethod
    def of(cls, source: record_checks.RecordSource,
           num_epochs: Optional[int]) -> Optional['EndOfInputCheck']:
        """The check of a pipeline reading `source`; None when there is nothing to check."""
        if not num_epochs or (source.checks is None and source.num_samples is None):
            return None
        return cls(num_epochs, source.records_per_epoch, len(source.data_files),
                   source.num_samples)

    def failure(self, records_read: Tensor) -> Tuple[Tensor, Tensor]:
        """(passes, message): a bool tensor, and what to say when it is False."""
        read = [f'the input ended after {self.num_epochs} epochs and ',
                tf.strings.as_string(records_read)]
        if self.records_per_epoch is not None:
            return self._against_the_files(records_read, self.records_per_epoch, read)
        if self.num_samples is not None:
            return self._against_num_samples(records_read, self.num_samples, read)
        raise ValueError('an EndOfInputCheck needs records_per_epoch or num_samples')

    def _against_the_files(self, records_read, records_per_epoch, read):
        passes = tf.equal(records_read, self.num_epochs * records_per_epoch)
        problem = record_checks.num_samples_mismatch(records_per_epoch, self.num_samples)
        if problem is not None:
            passes = tf.constant(False)
        held = (f' records; the {self.num_files} data files held {records_per_epoch} '
                'records per epoch when the pipeline was built')
        hint = (f', and {problem}' if problem else
                ' (did a file change since? `slimdata verify` checks them)')
        return passes, tf.strings.join(read + [held, hint])

    def _against_num_samples(self, records_read, num_samples, read):
        """For another reader than TensorFlow's TFRecord reader, whose files are not counted."""
        said = (f' records; num_samples says {num_samples} records per epoch (is a file '
                'missing, listed twice, or num_samples wrong?)')
        return (tf.equal(records_read, self.num_epochs * num_samples),
                tf.strings.join(read + [said]))


def _add_checked_runners(common_queue, enqueue_ops, check, count_records_read):
    """Queue runners that fill `common_queue` by `enqueue_ops`, and close it once the readers
    ran out of work and `check` passes for the count that `count_records_read()` makes then.

    TensorFlow's QueueRunner closes the queue when its last thread runs out of work, and
    ignores errors of its close op. Here the readers' runner only signals that it is done
    (a `done` queue); a second runner waits for that signal, checks, and closes the common
    queue. A failed check is an error of that runner: with a Coordinator (QueueSession, or
    any loop that joins its threads) it stops the pipeline before the consumer can see a
    normal end, and `join` raises it. On a stop, both runners' cancel ops close their queues.
    """
    done = tf.queue.FIFOQueue(1, [tf.int32], shapes=[[]], name='readers_done')
    with tf.control_dependencies([done.enqueue(0)]):
        signal_done = done.close()
    tf.compat.v1.train.add_queue_runner(tf.compat.v1.train.QueueRunner(
        common_queue, enqueue_ops, close_op=signal_done,
        cancel_op=common_queue.close(cancel_pending_enqueues=True)))
    with tf.control_dependencies([done.dequeue()]):  # the count is made after the readers end
        passes, message = check.failure(count_records_read())
        assertion = tf.debugging.Assert(passes, [message])
    with tf.control_dependencies([assertion]):
        close_when_checked = common_queue.close()
    tf.compat.v1.train.add_queue_runner(tf.compat.v1.train.QueueRunner(
        common_queue, [close_when_checked], close_op=common_queue.close(),
        cancel_op=tf.group(common_queue.close(cancel_pending_enqueues=True),
                           done.close(cancel_pending_enqueues=True))))


class _DatasetFedReader:
    """The reading side of a ParallelReader whose common queue tf.data fills (skip_corrupt, or
    a worker's share of the records of fewer files than workers).

    One queue runner moves the batches (keys, records, indices) of `records`
    (`RecordSource.counted_records`) into the common queue, and closes it when `records`
    ends. The `queue` arguments of the read methods are ignored: there is no filename queue.
    """

    def __init__(self, records, common_queue, record_check=None):
        self._records = records
        self._common_queue = common_queue
        self._record_check = record_check
        self._configured = False

    @property
    def common_queue(self):
        return self._common_queue

    def read(self, queue=None, name=None):
        self._configure()
        return self._common_queue.dequeue(name=name)

    def read_up_to(self, queue, num_records, name=None):
        self._configure()
        return self._common_queue.dequeue_up_to(num_records, name)

    def read_many(self, queue, num_records, name=None):
        self._configure()
        return self._common_queue.dequeue_many(num_records, name)

    def _configure(self):
        if self._configured:
            return
        keys, values, _ = tf.compat.v1.data.make_one_shot_iterator(self._records).get_next()
        tf.compat.v1.train.add_queue_runner(tf.compat.v1.train.QueueRunner(
            self._common_queue,
            [self._common_queue.enqueue_many(
                _checked_records(self._record_check, keys, values))]))
        self._configured = True


def _checked_records(record_check, keys, records):
    """(keys, records), the records passed through `record_check` if there is one."""
    return keys, (records if record_check is None else record_check(keys, records))


def _read_files(data_sources):
    """`get_data_files`, each file also added to the graph's DATA_FILES_COLLECTION."""
    data_files = get_data_files(data_sources)
    for path in data_files:
        tf.compat.v1.add_to_collection(DATA_FILES_COLLECTION, path)
    return data_files


def get_data_files(data_sources: DataSources) -> List[str]:
    """Returns the data files of `data_sources`.

    Args:
      data_sources: a file, a glob (with *, ? or [), or a list/tuple of either, e.g.
        '/path/to/train*'. Paths go through `tf.io.gfile`, so gs:// and other registered
        file systems work.

    Returns:
      A list of data files; each glob's matches are sorted by name (tf_slim kept the
      file system's order, which differs between machines).

    Raises:
      ValueError: if no data files are found.
    """
    data_files: List[str]
    if isinstance(data_sources, (list, tuple)):
        data_files = []
        for source in data_sources:
            data_files += get_data_files(source)
    elif any(character in data_sources for character in _GLOB_CHARACTERS):
        # Sorted: gfile returns file-system order, and shuffle=False should read shards in
        # name order on every machine.
        data_files = sorted(tf.io.gfile.glob(data_sources))
    else:
        data_files = [str(data_sources)]
    if not data_files:
        raise ValueError('No data files found in %s' % (data_sources,))
    return data_files
