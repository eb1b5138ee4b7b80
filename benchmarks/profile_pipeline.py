"""Where slimdata's graph pipeline spends its time, per example, on each record set.

Runs (each in a fresh process, as benchmarks/bench_pipeline.py does) the slimdata pipeline cut
after each of its stages, every cut batched with tf.compat.v1.train.batch and run by sess.run:

  slimdata:read        parallel_read: the filename queue, the readers, the common queue
  slimdata:parse       + parse_single_example of the features the items use
  slimdata:decode      DatasetDataProvider.get: + the Image handler's decode
  slimdata:preprocess  + the user's preprocessing (resize to 300x300 for VOC-like)
  slimdata             + prefetch_queue: the whole pipeline

and beside them: `limit` (the decode ops alone, on bytes in memory), `tfdata:read` (the
records alone, read by tf.data: what reading costs in any API), `queue_handoff` (a
constant through train.batch: one enqueue run per example by a queue-runner thread) and
`session_run` (one sess.run per batch, no queue). For each it prints examples/s, the cores the
process used, the wall and the CPU microseconds per example (CPU = cores / examples/s, all
threads), and for the stages the CPU microseconds each adds to the one before: the per-example
cost of parsing, decoding, resizing, and the prefetch queue's hand-off.

    .venv/bin/python benchmarks/profile_pipeline.py [--sets voc] [--runs 1] [--seconds 5]
"""

import sys
from typing import Any, Dict, List, Optional, Sequence

import bench_pipeline
import pipelines
import record_sets

STAGES = tuple(f'slimdata:{stage}' for stage in pipelines.SLIMDATA_STAGES[:-1]) + ('slimdata',)
PROBES = ('limit', 'tfdata:read', 'queue_handoff', 'session_run')


def per_example(summary: Dict[str, Any]) -> Dict[str, float]:
    """Wall and CPU microseconds per example of a pipeline's summary."""
    return {'wall_us': 1e6 / summary['median'], 'cpu_us': summary['cpu_us_per_example']}


def format_profile(summaries: Dict[str, Dict[str, Any]]) -> str:
    """A markdown table: each stage and probe, its rates and per-example costs."""
    lines = ['| pipeline | ex/s | cores | wall us/ex | CPU us/ex | + CPU us/ex |',
             '|---|---|---|---|---|---|']
    previous_cpu: Optional[float] = None
    for name, summary in summaries.items():
        if 'median' not in summary:
            lines.append(f'| {name} | FAILED: {summary["error"]} | | | | |')
            continue
        cost = per_example(summary)
        added = ''
        if name in STAGES and previous_cpu is not None:
            added = f'{cost["cpu_us"] - previous_cpu:+.1f}'
        if name in STAGES:
            previous_cpu = cost['cpu_us']
        lines.append(f'| {name} | {summary["median"]:.0f} | {summary["cores"]:.2f} | '
                     f'{cost["wall_us"]:.1f} | {cost["cpu_us"]:.1f} | {added} |')
    return '\n'.join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # The benchmark's options, with these pipelines and one run unless asked otherwise.
    args = bench_pipeline.parse_args(['--pipelines', ','.join(STAGES + PROBES),
                                      '--runs', '1'] + argv,
                                     description=__doc__.split('\n\n')[0])
    report: List[str] = []
    for set_name in args.sets:
        record_sets.ensure_record_set(record_sets.RECORD_SETS[set_name], args.records)
        runs = bench_pipeline.run_set(set_name, args.pipelines, args, bench_pipeline.log_progress)
        summaries = {name: bench_pipeline.summarise(results) for name, results in runs.items()}
        report += [f'### {record_sets.RECORD_SETS[set_name].describe()}', '',
                   format_profile(summaries), '']
        print('\n'.join(report[-4:]), flush=True)
    print(f'session_run: the per-call cost of sess.run is its CPU us/ex x {args.batch_size} '
          '(one call per batch).')
    return 0


if __name__ == '__main__':
    sys.exit(main())
