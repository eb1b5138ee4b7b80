"""The Apache Beam driver of the writer: the same shards, written by a Beam pipeline.

`write_dataset(..., beam_options=['--runner=DataflowRunner', '--project=...', ...])` plans
and checks a conversion as always (fingerprints, reuse, refusals), then hands the shards to
write to a pipeline instead of the local process pool. The pipeline runs the same per-example
code (`slimdata.records.shards.write_items`: the converter's `encode`, the TFRecord framing)
on pieces of shards, and joins each shard's pieces in order, so its shards are byte for byte
those of the local driver::

    piece numbers --Create--> encode and frame a piece --GroupByKey(shard)--> join, write

Only piece numbers travel in the job graph: the pieces (their items) are staged in a file in
a folder beside the output (`.slimdata-beam-<split>-<pid>/`), which the workers read once
each, so a list of a million paths does not outgrow a runner's limit on job graphs. Shards
are written to the same temporary names as by the local driver and renamed, recorded and
summarised by this process once the pipeline has finished: `dataset_info.json` holds the
counts, sizes and CRCs the pipeline computed. Beam may run a step twice (a retried bundle):
writing a shard's temporary is idempotent.

The workers of a distributed runner (Dataflow, Flink, Spark) need slimdata installed
(Dataflow: `--setup_file`, `--requirements_file` or a container image) and must reach the
source files and the output folder (`gs://...`).

Apache Beam is an optional extra (`pip install slimdata[beam]`), imported only here.
"""

import json
import os
import pickle
from typing import Any, Callable, Dict, Iterable, List, Sequence, Tuple

from crc32c import crc32c

from slimdata import progress
from slimdata.records import fs, shards
from slimdata.records.shards import Piece, PieceResult, ShardJob
from slimdata.records.tfrecord import TFRecordWriter

#: Items per piece: enough that a piece amortises a bundle's overhead, few enough that a
#: split of a few thousand images still spreads over many workers.
ITEMS_PER_PIECE = 64

_STAGING_PREFIX = '.slimdata-beam-'


def import_beam() -> Any:
    """The `apache_beam` module, or ImportError saying how to install it."""
    try:
        import apache_beam
    except ModuleNotFoundError as error:
        if error.name != 'apache_beam':
            raise
        raise ImportError('writing with a Beam runner needs Apache Beam: pip install '
                          "'slimdata[beam]' (or apache-beam)") from error
    return apache_beam


def run_jobs(jobs: List[ShardJob], encode: Callable, split: str, beam_options: Sequence[str],
             shard_done: Callable[[ShardJob, PieceResult], None]) -> None:
    """Writes every job's temporary with a Beam pipeline; then calls `shard_done` for each,
    in shard order. On any error the temporaries and the staging folder are removed."""
    beam = import_beam()
    from apache_beam.options.pipeline_options import PipelineOptions
    output_dir = os.path.dirname(jobs[0].path)
    staging = os.path.join(output_dir, f'{_STAGING_PREFIX}{split}-{os.getpid()}')
    pieces = _pieces(jobs)
    progress.info(f'{split}: {progress.plural(len(jobs), "shard")} in '
                  f'{progress.plural(len(pieces), "piece")} to a Beam pipeline '
                  f'({" ".join(beam_options)})')
    fs.makedirs(staging)
    try:
        fs.write_bytes_atomic(os.path.join(staging, 'pieces.pkl'), pickle.dumps(pieces))
        options = PipelineOptions(_in_process_direct_runner(beam_options))
        with beam.Pipeline(options=options) as pipeline:
            _ = (pipeline
                 | 'Pieces' >> beam.Create(range(len(pieces)))
                 | 'Encode' >> beam.Map(_encode_piece, staging, encode, split)
                 | 'ByShard' >> beam.GroupByKey()
                 | 'Write' >> beam.Map(_write_shard, staging, [job.temporary for job in jobs],
                                       [job.path for job in jobs]))
        for position, job in enumerate(jobs):
            shard_done(job, _read_result(staging, position))
    except BaseException:
        for job in jobs:
            fs.remove(job.temporary)
        raise
    finally:
        remove_staging(staging)


def _in_process_direct_runner(beam_options: Sequence[str]) -> List[str]:
    """The options, with Beam's DirectRunner run in this process (its FnApiRunner).

    Beam's DirectRunner first tries its Prism runner, which it downloads from GitHub (on a
    machine without the network that fails, after a wait) and which leaves temporary folders
    in /tmp on every run; for the pipelines here it then runs the FnApiRunner anyway.
    """
    return ['--runner=FnApiRunner' if option in ('--runner=DirectRunner',
                                                   '--runner=directrunner') else option
            for option in beam_options]


def _pieces(jobs: Sequence[ShardJob]) -> List[Piece]:
    largest = max(len(job.items) for job in jobs)
    return shards.cut_into_pieces(jobs, max(1, -(-largest // ITEMS_PER_PIECE)))


_STAGED: Dict[str, List[Piece]] = {}  # in a worker: the pieces of each staging folder, read once


def _staged_pieces(staging: str) -> List[Piece]:
    if staging not in _STAGED:
        _STAGED[staging] = pickle.loads(fs.read_bytes(os.path.join(staging, 'pieces.pkl')))
    return _STAGED[staging]


class _Buffer:
    """The file object a TFRecordWriter writes a piece into: bytes in memory."""

    def __init__(self):
        self.parts: List[bytes] = []

    def write(self, data) -> None:
        self.parts.append(bytes(data))

    def flush(self) -> None:
        pass


def _encode_piece(position: int, staging: str, encode: Callable,
                  split: str) -> Tuple[int, Tuple[int, bytes, PieceResult]]:
    """A Beam step: encodes and frames one piece; keyed by its shard."""
    piece = _staged_pieces(staging)[position]
    buffer = _Buffer()
    with TFRecordWriter(buffer) as writer:
        result = shards.write_items(writer, piece.items, encode, split, lambda: None)
    result.num_bytes, result.crc32c = writer.bytes_written, writer.crc32c
    return piece.shard, (piece.number, b''.join(buffer.parts), result)


def _write_shard(keyed: Tuple[int, Iterable[Tuple[int, bytes, PieceResult]]], staging: str,
                 temporaries: Sequence[str], paths: Sequence[str]) -> None:
    """A Beam step: joins a shard's pieces in order into its temporary (idempotent) and
    stages its result."""
    shard, pieces = keyed
    joined = PieceResult()
    with fs.open_write(temporaries[shard], 1 << 20) as file:
        for _, data, result in sorted(pieces, key=lambda piece: piece[0]):
            file.write(data)
            joined.extend(result)
            joined.crc32c = crc32c(data, joined.crc32c)
        file.sync()
    fs.write_text_atomic(os.path.join(staging, f'{shard:05d}.json'), json.dumps({
        'file': os.path.basename(paths[shard]), 'num_records': joined.num_records,
        'num_bytes': joined.num_bytes, 'crc32c': joined.crc32c,
        'skipped': joined.skipped, 'notes': joined.notes, 'counts': joined.counts}))


def _read_result(staging: str, shard: int) -> PieceResult:
    path = os.path.join(staging, f'{shard:05d}.json')
    if not fs.exists(path):
        raise RuntimeError(f'the Beam pipeline ended without writing shard {shard} ({path} is '
                           'missing): see the runner\'s log')
    staged = json.loads(fs.read_bytes(path))
    return PieceResult(staged['num_records'], staged['num_bytes'], staged['crc32c'],
                       [tuple(pair) for pair in staged['skipped']],
                       [tuple(pair) for pair in staged['notes']], staged['counts'])


def remove_staging(staging: str) -> None:
    """Removes a staging folder (and what is in it)."""
    if fs.isdir(staging):
        for name in fs.listdir(staging):
            fs.remove(os.path.join(staging, name))
        fs.remove_folder(staging)
