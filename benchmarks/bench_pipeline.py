"""How fast slimdata feeds a graph-mode training loop, against the references, in one run.

For each record set (benchmarks/record_sets.py: VOC-like, MNIST-like, deeplab-like; generated
once into bench_out/records/) it measures the pipelines of benchmarks/pipelines.py (the
decode-only limit, eager tf.data plain and with vectorised parsing, tf_slim 1.1.0's queues,
slimdata's graph pipeline), batch 32, each run in a fresh process:

  warm-up    batches until at least --warmup seconds have passed and more examples than the
             queues can hold have gone through (so every queue has filled and drained);
  window     batches for at least --seconds, counting examples; the process's CPU time over
             the window / its wall time gives the cores used; its peak RSS is
             getrusage(RUSAGE_SELF).ru_maxrss.

Runs are interleaved (run 1 of every pipeline of a set, then run 2, ...) so that load drift
hits all alike, and the table quotes the median of --runs runs, its min-max, and its ratios to
the limit, to tf.data and to tf_slim (medians over medians). Tables are printed and written to
bench_out/bench_pipeline.{md,json} (and a timestamped copy under bench_out/history/).

Run from the repository root (or `make bench`):

    .venv/bin/python benchmarks/bench_pipeline.py [--sets voc,mnist,deeplab]
        [--pipelines limit,tfdata,...] [--runs 3] [--seconds 5] [--quick]
        [--common-queue-capacity 640]
"""

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

import pipelines
import record_sets

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUTPUT = os.path.join(REPOSITORY, 'bench_out')
#: The pipelines the ratios are quoted against (when they were run).
REFERENCES = ('limit', 'tfdata', 'tfdata_vectorised', 'tf_slim')
#: A worker that runs this much longer than its warm-up and window is stuck.
WORKER_SLACK_SECONDS = 180


# ----------------------------------------------------------------------------------------
# Measuring one pipeline (in the worker process)


def batch_length(shapes: pipelines.Shapes) -> int:
    """The number of examples of a batch: the leading dimension of its items."""
    return next(iter(shapes.values()))[0]


def cpu_seconds() -> float:
    """User + system CPU time of this process, all threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb() -> float:
    """The peak resident set size of this process so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(next_batch: pipelines.NextBatch, seconds: float, warmup_seconds: float,
            warmup_examples: int, clock: Callable[[], float] = time.perf_counter,
            cpu_clock: Callable[[], float] = cpu_seconds) -> Dict[str, float]:
    """Warms `next_batch` up, then times it over a window.

    Args:
      next_batch: produces one batch (its shapes).
      seconds: the least length of the timed window.
      warmup_seconds: the least length of the warm-up.
      warmup_examples: the least number of examples the warm-up consumes.
      clock, cpu_clock: wall and process CPU clocks, in seconds.

    Returns:
      examples_per_second, examples, seconds (of the window), cores (CPU seconds per wall
      second in the window), first_batch_seconds (the wait for the first batch),
      warmup_examples and warmup_seconds (as done).
    """
    start = clock()
    warmed = batch_length(next_batch())
    first_batch = clock() - start
    while clock() - start < warmup_seconds or warmed < warmup_examples:
        warmed += batch_length(next_batch())
    window_start, cpu_start = clock(), cpu_clock()
    examples = 0
    while True:
        examples += batch_length(next_batch())
        elapsed = clock() - window_start
        if elapsed >= seconds:
            break
    cores = (cpu_clock() - cpu_start) / elapsed
    return {'examples_per_second': examples / elapsed, 'examples': examples,
            'seconds': elapsed, 'cores': cores, 'first_batch_seconds': first_batch,
            'warmup_examples': warmed, 'warmup_seconds': window_start - start}


def record_set(name: str, records_root: str) -> pipelines.RecordSet:
    """The `pipelines.RecordSet` of the benchmark's set `name` under `records_root`."""
    spec = record_sets.RECORD_SETS[name]
    return pipelines.RecordSet(name, spec.dataset_name, spec.split,
                               os.path.join(records_root, name))


def pipeline_options(args: argparse.Namespace) -> pipelines.PipelineOptions:
    """The pipelines' options from the command line (the common queue's min_after_dequeue
    is half its capacity, as models/research/slim's 20 x / 10 x batch)."""
    return pipelines.PipelineOptions(batch_size=args.batch_size,
                                     common_queue_capacity=args.common_queue_capacity,
                                     common_queue_min=args.common_queue_capacity // 2)


def run_worker(args: argparse.Namespace) -> None:
    """The worker: builds one pipeline, measures it, prints one JSON line on stdout."""
    set_name, pipeline_name = args._worker
    options = pipeline_options(args)
    with pipelines.PIPELINES[pipeline_name](record_set(set_name, args.records),
                                            options) as next_batch:
        result = measure(next_batch, args.seconds, args.warmup,
                         warmup_examples=options.buffered_examples)
    result['peak_rss_mb'] = peak_rss_mb()
    print(json.dumps(result), flush=True)


# ----------------------------------------------------------------------------------------
# Running the workers (in the parent process)


def worker_command(set_name: str, pipeline_name: str, args: argparse.Namespace) -> List[str]:
    """The command line of a worker measuring `pipeline_name` on `set_name`."""
    return [sys.executable, os.path.abspath(__file__), '--_worker', set_name, pipeline_name,
            '--records', args.records, '--seconds', str(args.seconds),
            '--warmup', str(args.warmup), '--batch-size', str(args.batch_size),
            '--common-queue-capacity', str(args.common_queue_capacity)]


def measure_in_fresh_process(set_name: str, pipeline_name: str,
                             args: argparse.Namespace) -> Dict[str, Any]:
    """Runs one worker; returns its measurement, or {'error': ...} if it failed."""
    env = {**os.environ, 'TF_CPP_MIN_LOG_LEVEL': '2'}
    timeout = args.warmup + args.seconds + WORKER_SLACK_SECONDS
    try:
        done = subprocess.run(worker_command(set_name, pipeline_name, args), env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {'error': f'no result after {timeout:.0f} s'}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {'error': f'exit code {done.returncode}: ' + _last_error_line(done.stderr),
                'stderr_tail': done.stderr[-3000:]}
    return json.loads(lines[-1])


def _last_error_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    errors = [line for line in lines if 'Error' in line or 'error' in line]
    return (errors or lines or ['(no output)'])[-1].strip()[:300]


def run_set(set_name: str, pipeline_names: Sequence[str], args: argparse.Namespace,
            log: Callable[[str], None]) -> Dict[str, List[Dict[str, Any]]]:
    """Measures every pipeline on one set, `args.runs` times, interleaved by run."""
    pipeline_names = [name for name in pipeline_names if pipelines.applies(name, set_name)]
    runs: Dict[str, List[Dict[str, Any]]] = {name: [] for name in pipeline_names}
    for run in range(args.runs):
        for name in pipeline_names:
            result = measure_in_fresh_process(set_name, name, args)
            runs[name].append(result)
            log(f'[{set_name} run {run + 1}/{args.runs}] {name}: {describe_result(result)}')
    return runs


def describe_result(result: Dict[str, Any]) -> str:
    """One log line for a worker's result."""
    if 'error' in result:
        return 'FAILED ' + result['error']
    return (f'{result["examples_per_second"]:.0f} ex/s, {result["cores"]:.2f} cores, '
            f'peak RSS {result["peak_rss_mb"]:.0f} MB, first batch after '
            f'{result["first_batch_seconds"]:.1f} s')


# ----------------------------------------------------------------------------------------
# Summaries and tables


def summarise(results: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """The median, min and max examples/s of a pipeline's runs, and the medians of its peak
    RSS, its cores used and its CPU microseconds per example (cores / examples/s: how much
    work an example costs, which other loads on the machine disturb less than examples/s).

    Failed runs are counted and left out; with none left the summary holds only the error.
    """
    good = [r for r in results if 'error' not in r]
    failed = len(results) - len(good)
    if not good:
        return {'failed': failed, 'error': results[-1]['error'] if results else 'not run'}
    rates = [r['examples_per_second'] for r in good]
    return {'median': statistics.median(rates), 'min': min(rates), 'max': max(rates),
            'peak_rss_mb': statistics.median(r['peak_rss_mb'] for r in good),
            'cores': statistics.median(r['cores'] for r in good),
            'cpu_us_per_example': statistics.median(r['cores'] * 1e6 / r['examples_per_second']
                                                    for r in good),
            'runs': len(good), 'failed': failed}


def ratios(summaries: Dict[str, Dict[str, Any]]) -> Dict[str, Dict[str, Optional[float]]]:
    """pipeline -> reference -> median / the reference's median (None if either failed)."""
    def ratio(name: str, reference: str) -> Optional[float]:
        if 'median' not in summaries[name] or 'median' not in summaries.get(reference, {}):
            return None
        return summaries[name]['median'] / summaries[reference]['median']
    return {name: {reference: ratio(name, reference) for reference in REFERENCES
                   if reference in summaries}
            for name in summaries}


def _format_ratio(value: Optional[float]) -> str:
    return '-' if value is None else f'{value:.2f}x'


def format_table(summaries: Dict[str, Dict[str, Any]]) -> str:
    """A markdown table of one set's summaries, with ratios to the references present."""
    references = [r for r in REFERENCES if r in summaries]
    header = (['pipeline', 'ex/s (median)', 'min-max'] + [f'x {r}' for r in references]
              + ['peak RSS MB', 'cores', 'CPU us/ex'])
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    table_ratios = ratios(summaries)
    for name, summary in summaries.items():
        if 'median' not in summary:
            cells = [name, 'FAILED', summary['error']] + [''] * (len(header) - 3)
        else:
            failed = f' ({summary["failed"]} failed)' if summary['failed'] else ''
            cells = ([name, f'{summary["median"]:.0f}',
                      f'{summary["min"]:.0f}-{summary["max"]:.0f}{failed}']
                     + [_format_ratio(table_ratios[name][r]) for r in references]
                     + [f'{summary["peak_rss_mb"]:.0f}', f'{summary["cores"]:.2f}',
                        f'{summary["cpu_us_per_example"]:.0f}'])
        lines.append('| ' + ' | '.join(cells) + ' |')
    return '\n'.join(lines)


def machine_description() -> Dict[str, Any]:
    """What the numbers were measured on."""
    from slimdata._tf import tf
    return {'cpu_count': os.cpu_count(), 'usable_cores': len(os.sched_getaffinity(0)),
            'load_average': os.getloadavg(), 'python': platform.python_version(),
            'tensorflow': tf.__version__, 'platform': platform.platform(),
            'date': datetime.datetime.now().isoformat(timespec='seconds')}


def format_report(results: Dict[str, Dict[str, Dict[str, Any]]], machine: Dict[str, Any],
                  args: argparse.Namespace) -> str:
    """The markdown report: the setup line, then a table per record set."""
    lines = [f'Machine: {machine["usable_cores"]} usable cores (cpu_count '
             f'{machine["cpu_count"]}), load average at start '
             f'{machine["load_average"][0]:.2f}; TensorFlow {machine["tensorflow"]}, Python '
             f'{machine["python"]}; {machine["date"]}.',
             f'Batch {args.batch_size}, common queue {args.common_queue_capacity} records; '
             f'median of {args.runs} run(s), each a fresh process; '
             f'warm-up >= {args.warmup:g} s, window >= {args.seconds:g} s.']
    for set_name, set_results in results.items():
        lines += ['', f'### {record_sets.RECORD_SETS[set_name].describe()}', '',
                  format_table(set_results['summaries'])]
    return '\n'.join(lines) + '\n'


def save(report: str, data: Dict[str, Any], output_dir: str) -> List[str]:
    """Writes the report and the data as the latest results and a timestamped copy."""
    stamp = datetime.datetime.now().strftime('%Y%m%d-%H%M%S')
    history = os.path.join(output_dir, 'history')
    os.makedirs(history, exist_ok=True)
    paths = []
    for folder, stem in ((output_dir, 'bench_pipeline'), (history, f'bench_pipeline-{stamp}')):
        for suffix, text in (('.md', report), ('.json', json.dumps(data, indent=2))):
            path = os.path.join(folder, stem + suffix)
            with open(path, 'w') as f:
                f.write(text)
            paths.append(path)
    return paths


# ----------------------------------------------------------------------------------------
# Command line


def _names(text: str, known: Sequence[str], what: str) -> List[str]:
    names = [name for name in text.split(',') if name]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise argparse.ArgumentTypeError(f'unknown {what} {unknown}; known: {list(known)}')
    return names


def parse_args(argv: Optional[Sequence[str]] = None,
               description: Optional[str] = None) -> argparse.Namespace:
    """The command line (see the module doc); --quick means 1 run and 2 s windows.
    `description` is what --help says the script does (profile_pipeline.py shares these
    options); by default this module's."""
    parser = argparse.ArgumentParser(description=description or __doc__.split('\n\n')[0])
    parser.add_argument('--sets', default=','.join(record_sets.RECORD_SETS),
                        type=lambda t: _names(t, list(record_sets.RECORD_SETS), 'sets'),
                        help='comma-separated record sets (default: all)')
    parser.add_argument('--pipelines', default=','.join(pipelines.BENCHMARK_PIPELINES),
                        type=lambda t: _names(t, list(pipelines.PIPELINES), 'pipelines'),
                        help='comma-separated pipelines (default: %(default)s)')
    parser.add_argument('--runs', type=int, default=3, help='runs per pipeline (median)')
    parser.add_argument('--seconds', type=float, default=5.0, help='timed window per run')
    parser.add_argument('--warmup', type=float, default=2.0, help='least warm-up per run')
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--common-queue-capacity', type=int,
                        default=pipelines.PipelineOptions.common_queue_capacity,
                        help='records the queue pipelines (and tfdata_shuffled) buffer for '
                             'shuffling (default: %(default)s, 20 x batch 32)')
    parser.add_argument('--quick', action='store_true',
                        help='for development: 1 run, 2 s windows, 1 s warm-up')
    parser.add_argument('--output', default=DEFAULT_OUTPUT,
                        help='where results go (default: bench_out/)')
    parser.add_argument('--records', default=None,
                        help='where the record sets are generated (default: OUTPUT/records)')
    parser.add_argument('--_worker', nargs=2, metavar=('SET', 'PIPELINE'),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.seconds, args.warmup = 1, 2.0, 1.0
    args.records = os.path.abspath(args.records or os.path.join(args.output, 'records'))
    return args


def log_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def benchmark(args: argparse.Namespace) -> Dict[str, Dict[str, Any]]:
    """Generates the sets if needed and measures them; logs each set's table when done."""
    for set_name in args.sets:
        record_sets.ensure_record_set(record_sets.RECORD_SETS[set_name], args.records)
    results = {}
    for set_name in args.sets:
        runs = run_set(set_name, args.pipelines, args, log_progress)
        summaries = {name: summarise(set_runs) for name, set_runs in runs.items()}
        results[set_name] = {'runs': runs, 'summaries': summaries}
        log_progress(f'\n### {record_sets.RECORD_SETS[set_name].describe()}\n\n'
                     f'{format_table(summaries)}\n')
    return results


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    if args._worker:
        run_worker(args)
        return 0
    started = time.perf_counter()
    machine = machine_description()
    results = benchmark(args)
    report = format_report(results, machine, args)
    data = {'machine': machine, 'options': {k: v for k, v in vars(args).items()
                                            if k != '_worker'},
            'results': results}
    print(report)
    for path in save(report, data, args.output):
        log_progress(f'wrote {path}')
    log_progress(f'{len(args.sets)} set(s) x {len(args.pipelines)} pipeline(s) x '
                 f'{args.runs} run(s) in {time.perf_counter() - started:.0f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
