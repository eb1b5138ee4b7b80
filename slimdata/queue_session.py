"""The queue-runner boilerplate of a graph-mode loop, done once and right.

Every TF1 input pipeline (`DatasetDataProvider`, `tf.compat.v1.train.batch`,
`prefetch_queue`) is fed by queue runners, and every loop that reads it needs the same steps,
which old code gets wrong in many small ways: initialise the global *and local* variables
(`num_epochs` is a local variable) and the lookup tables, start the queue runners under a
`Coordinator`, stop and join them when the loop ends or fails, and treat the `OutOfRangeError`
that ends the last epoch as the normal end of the loop rather than an error. `QueueSession`
does all of it::

    provider = slim.dataset_data_provider.DatasetDataProvider(
        dataset, num_epochs=1, shuffle=False)
    ...
    with QueueSession(init_fn=restore_checkpoint) as session:
        while True:                      # runs until the epoch is exhausted
            session.run(update_op)
    # here the epoch ended normally; session.epoch_ended is True

A stop requested through the coordinator (by another thread, or by a runner thread that failed)
closes the queues, and the block then sees an OutOfRangeError too; `QueueSession` tells the
two apart: after a stop, `epoch_ended` is False and `stopped` is True.

An error raised by a queue-runner thread (a corrupt record, a decode failure) reaches the loop
only as a cancelled dequeue; `QueueSession` re-raises the thread's own error instead, so the
message names the real cause. TensorFlow names a damaged record by its byte offset only
("corrupted record at 850"); `QueueSession` adds which of the graph's data files it is in.
"""

import os
import re
from typing import Any, Callable, List, Optional

from slimdata._tf import require_graph_mode, tf
from slimdata.parallel_reader import DATA_FILES_COLLECTION
from slimdata.records import tfrecord

_DAMAGED_RECORD = re.compile(r'(?:corrupted|truncated) record at (\d+)')


class QueueSession:
    """A `tf.compat.v1.Session` whose queue runners run for the duration of a `with` block.

    On entry it creates the session, runs the global and local variable initialisers and the
    table initialisers (`LookupTensor`'s vocabularies), calls
    `init_fn(session)` (for example to restore a checkpoint, which must come after the
    initialisers), and starts every queue runner of the graph under a `Coordinator`. On exit it
    stops and joins the runner threads. An `OutOfRangeError` raised in the block ends the block
    normally: it sets `epoch_ended` when the input's `num_epochs` were used up, and `stopped`
    when a stop had been requested through the coordinator before (the queues were closed
    before the input ran out).

    Args:
      target: the execution engine to connect to, as for `tf.compat.v1.Session`.
      graph: the graph to run; the default graph when `None`.
      config: a `tf.compat.v1.ConfigProto` for the session.
      init_fn: called with the raw `tf.compat.v1.Session` after the variables are initialised
        and before the queue runners start.
      stop_grace_period_secs: how long to wait for the runner threads to stop on exit before
        reporting them as stuck.
    """

    def __init__(self, target: str = '', graph: Optional[Any] = None,
                 config: Optional[Any] = None,
                 init_fn: Optional[Callable[[Any], None]] = None,
                 stop_grace_period_secs: float = 10.0):
        require_graph_mode('QueueSession')
        self._target = target
        self._graph = graph if graph is not None else tf.compat.v1.get_default_graph()
        self._config = config
        self._init_fn = init_fn
        self._stop_grace_period_secs = stop_grace_period_secs
        self._session: Any = None  # a tf.compat.v1.Session inside the `with` block
        self._coordinator: Any = None  # its tf.train.Coordinator
        self._threads: List[Any] = []
        self.epoch_ended = False
        self.stopped = False

    @property
    def session(self) -> Any:
        """The underlying `tf.compat.v1.Session` (valid inside the `with` block)."""
        if self._session is None:
            raise RuntimeError('QueueSession.session is only available inside its with block')
        return self._session

    @property
    def coordinator(self) -> Any:
        """The `tf.compat.v1.train.Coordinator` of the runner threads."""
        return self._coordinator

    def run(self, fetches: Any, feed_dict: Optional[dict] = None, options: Any = None,
            run_metadata: Any = None) -> Any:
        """`Session.run` on the underlying session."""
        return self.session.run(fetches, feed_dict=feed_dict, options=options,
                                run_metadata=run_metadata)

    def should_stop(self) -> bool:
        """True once a runner thread failed or a stop was requested."""
        return self._coordinator.should_stop()

    def __enter__(self) -> 'QueueSession':
        with self._graph.as_default():
            init_op = tf.group(tf.compat.v1.global_variables_initializer(),
                               tf.compat.v1.local_variables_initializer(),
                               tf.compat.v1.tables_initializer())
        self._session = tf.compat.v1.Session(self._target, graph=self._graph,
                                             config=self._config)
        try:
            self._session.run(init_op)
            if self._init_fn is not None:
                self._init_fn(self._session)
            self._coordinator = tf.compat.v1.train.Coordinator()
            self._threads = tf.compat.v1.train.start_queue_runners(
                self._session, coord=self._coordinator)
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(self, exc_type, exc, traceback) -> bool:
        # Asked before this exit's own stop request: was the block ended by a stop?
        self.stopped = self._coordinator.should_stop()
        try:
            # A runner thread's own error (stored by the coordinator) is re-raised by join();
            # it explains a cancelled dequeue in the block better than the dequeue error does.
            self._coordinator.request_stop()
            self._coordinator.join(self._threads,
                                   stop_grace_period_secs=self._stop_grace_period_secs)
        except tf.errors.DataLossError as error:
            raise _naming_the_damaged_file(error, self._graph) from error
        finally:
            self._close()
        out_of_range = exc_type is not None and issubclass(exc_type, tf.errors.OutOfRangeError)
        self.epoch_ended = out_of_range and not self.stopped
        return out_of_range

    def _close(self) -> None:
        self._session.close()
        self._session = None


def _naming_the_damaged_file(error: Any, graph: Any) -> Any:
    """`error` (a reader's DataLossError) with the files holding the damaged record added, and
    what slimdata's reader finds wrong there."""
    match = _DAMAGED_RECORD.search(error.message)
    if match is None:
        return error
    offset = int(match.group(1))
    candidates = sorted({path for path in graph.get_collection(DATA_FILES_COLLECTION)
                         if '://' not in path and os.path.isfile(path)
                         and os.path.getsize(path) > offset
                         and tfrecord.detect_compression(path) is None})
    damaged = [path for path in candidates if tfrecord.holds_damaged_record_at(path, offset)]
    if not damaged:
        return error
    where = '; '.join(f'{path} ({_first_problem(path)}; `slimdata verify FILE` lists every '
                      'problem of a file)' for path in damaged)
    return type(error)(error.node_def, error.op,
                       f'{error.message}\nThe damaged record (byte offset {offset}) is in: '
                       f'{where}')


def _first_problem(path: str) -> str:
    """The first problem slimdata's reader finds in a file: record, offset and reason."""
    result = tfrecord.verify_file(path)
    return f'record {result.error.record_index} at byte offset {result.error.offset}: ' \
        f'{result.error.reason}' if result.error else 'slimdata finds no problem now'
