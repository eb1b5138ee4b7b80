"""The local driver of the writer: shards written in this process, or by a pool of worker
processes that each write pieces of shards (`slimdata.records.shards`).

With one worker everything runs in this process, a shard at a time. With more, the work is
handed out in pieces: at least `PIECES_PER_WORKER` per worker in all (several per shard when
there are few shards), so that no worker idles while others finish big shards, and the start
of the pool is shared over many small tasks. Workers write each piece to a temporary file;
this process joins a shard's pieces, in order, as soon as they are all done (inside the
kernel: no copy here), and hands the shard on. Only small results cross between processes.

Workers use the spawn start method (TensorFlow must never be forked) and import only the
encode function's module (no TensorFlow). They ignore Ctrl-C and SIGTERM: this process stops
them (they give up their piece at the next item) and removes every temporary. A worker whose
parent died, even by SIGKILL, removes its temporary and exits within `_ORPHAN_POLL_SECONDS`.
"""

import collections
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Dict, List, MutableSequence, Optional, Sequence, Tuple

from slimdata.progress import Progress
from slimdata.records import fs, shards
from slimdata.records.shards import Piece, PieceResult, ShardJob

#: Pieces per worker, at least, when a pool writes: enough that the last pieces are small
#: beside the whole, few enough that each is many items.
PIECES_PER_WORKER = 4

_PROGRESS_SECONDS = 0.1     # how often the progress display shows what the workers have done
_ORPHAN_POLL_SECONDS = 0.2  # how often a worker checks that its parent still lives

#: Called with each shard as it is complete (its temporary written and synced), in order.
ShardDone = Callable[[ShardJob, PieceResult], None]


def run_jobs(jobs: List[ShardJob], encode: Callable, split: str, processes: int,
             progress: Progress, shard_done: ShardDone) -> None:
    """Writes every job's temporary file; calls `shard_done` for each, in shard order.

    Args:
      processes: 1 writes in this process; more start a pool of that many worker processes.

    On any error (or Ctrl-C) the temporaries of shards not yet done are removed.
    """
    if min(processes, sum(len(job.items) for job in jobs)) > 1:
        _run_in_pool(jobs, encode, split, processes, progress, shard_done)
        return
    for job in jobs:  # no pool to start: its start-up would cost more than it saves
        [piece] = shards.cut_into_pieces([job], 1)
        shard_done(job, shards.write_piece(piece, job.path, encode, split, progress.update))


def pieces_per_shard(num_jobs: int, processes: int, path: str) -> int:
    """How many pieces each shard is cut into (1: shards are the tasks)."""
    if fs.is_url(path):
        return 1  # joining pieces needs a local file system
    return max(1, -(-PIECES_PER_WORKER * processes // num_jobs))


def _run_in_pool(jobs: List[ShardJob], encode: Callable, split: str, processes: int,
                 progress: Progress, shard_done: ShardDone) -> None:
    """Writes the shards' pieces in worker processes and joins them here, in shard order.

    A failing piece leaves exactly the shards before it (as when writing in this process).
    """
    pieces = shards.cut_into_pieces(jobs, pieces_per_shard(len(jobs), processes, jobs[0].path))
    by_shard = collections.defaultdict(list)
    for piece in pieces:
        by_shard[piece.shard].append(piece)
    context = multiprocessing.get_context('spawn')
    items_done = context.RawArray('q', len(pieces))  # per piece, set by the worker writing it
    stop = context.RawValue('b', 0)  # 1: workers abandon their pieces
    executor = ProcessPoolExecutor(max_workers=min(processes, len(pieces)), mp_context=context,
                                   initializer=_init_worker,
                                   initargs=(items_done, stop, os.getpid()))
    done: Dict[int, PieceResult] = {}  # by piece position, while its shard is incomplete
    joined = set()
    try:
        futures = [executor.submit(_write_piece_in_worker, piece, jobs[piece.shard].path,
                                   encode, split, position)
                   for position, piece in enumerate(pieces)]
        shown = 0  # items shown on the progress display so far
        for position, future in enumerate(futures):
            while not wait([future], timeout=_PROGRESS_SECONDS).done:
                shown = _show_progress(progress, items_done, shown)
            piece = pieces[position]
            done[position] = _pool_result(future, split, pieces[position:], jobs)
            if piece.number == len(by_shard[piece.shard]) - 1:  # the shard's last piece
                first = position - piece.number
                results = [done.pop(index) for index in range(first, position + 1)]
                job = jobs[piece.shard]
                result = (results[0] if len(results) == 1 else
                          shards.join_pieces(by_shard[piece.shard], results, job))
                joined.add(piece.shard)
                shard_done(job, result)
        _show_progress(progress, items_done, shown)
    except BaseException:
        stop.value = 1
        progress.write(f'{split}: stopping the workers and removing temporary files')
        executor.shutdown(wait=True, cancel_futures=True)
        for piece in pieces:
            if piece.shard not in joined:
                fs.remove(piece.temporary)
        for position, job in enumerate(jobs):
            if position not in joined:
                fs.remove(job.temporary)
        raise
    executor.shutdown(wait=True)


def _show_progress(progress: Progress, items_done: Sequence[int], shown: int) -> int:
    done = sum(items_done)
    progress.update(done - shown)
    return done


def _pool_result(future: Future, split: str, unfinished: List[Piece],
                 jobs: List[ShardJob]) -> PieceResult:
    """The future's piece result; a worker's death becomes a RuntimeError naming the shards."""
    try:
        return future.result()
    except BrokenProcessPool as error:
        # A worker was killed (out of memory?) or crashed in native code while writing one
        # of the unfinished pieces.
        first, last = unfinished[0], unfinished[-1]
        raise RuntimeError(
            f'split {split!r}: a worker process died while writing '
            f'{os.path.basename(jobs[first.shard].path)} to '
            f'{os.path.basename(jobs[last.shard].path)} (items {first.items[0][0]} to '
            f'{last.items[-1][0]}); run with processes=1 (--processes 1) to find the failing '
            'item') from error


class _Stopped(Exception):
    """A worker abandons its piece: the parent stopped the run (an error elsewhere, Ctrl-C)."""


# In a pool worker: (items_done, stop) shared with the parent, and the temporary file being
# written (removed if the parent dies).
_worker_shared: Optional[Tuple[MutableSequence[int], Any]] = None
_worker_temporary: List[str] = []


def _init_worker(items_done: MutableSequence[int], stop: Any, parent_pid: int) -> None:
    global _worker_shared
    _worker_shared = (items_done, stop)
    # Ctrl-C and SIGTERM reach the whole process group; only the parent acts on them (it
    # stops the workers and removes the temporary files).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=_exit_when_orphaned, args=(parent_pid,), daemon=True,
                     name='slimdata-orphan-watch').start()


def _exit_when_orphaned(parent_pid: int) -> None:
    """Ends this worker, removing its temporary file, once its parent is gone (however it
    died, SIGKILL included: the worker is then re-parented)."""
    while os.getppid() == parent_pid:
        time.sleep(_ORPHAN_POLL_SECONDS)
    for path in list(_worker_temporary):
        try:
            fs.remove(path)
        except OSError:
            pass  # exiting anyway; a later run removes stale temporaries
    os._exit(1)


def _write_piece_in_worker(piece: Piece, shard_path: str, encode: Callable, split: str,
                           position: int) -> PieceResult:
    """Runs in a pool worker: writes one piece, counting items where the parent sees them."""
    if _worker_shared is None:
        raise RuntimeError('_write_piece_in_worker runs in a pool started with _init_worker')
    items_done, stop = _worker_shared

    def item_done() -> None:
        items_done[position] += 1
        if stop.value:
            raise _Stopped(piece.temporary)

    if stop.value:
        raise _Stopped(piece.temporary)
    _worker_temporary[:] = [piece.temporary]
    try:
        return shards.write_piece(piece, shard_path, encode, split, item_done)
    finally:
        _worker_temporary.clear()
