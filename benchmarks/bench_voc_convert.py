"""Pascal VOC converter throughput: per image, per worker count, local pool and Beam.

Builds (once, cached under bench_out/) a synthetic VOC2007 tree
(`slimdata.datasets.synthetic.make_voc_tree`: JPEGs of VOC's typical 500x375 size, an XML with
1-5 objects each, every image in trainval), then measures

  * the read limit: reading every XML and JPEG file once (page cache warm), nothing else;
  * the per-image cost in this process: `pascalvoc.encode_image` alone (read, check, parse,
    serialize), CPU microseconds per image, the best of several passes;
  * worker start-up: a spawned pool worker importing the converter (and whether it imported
    TensorFlow);
  * `pascalvoc.convert` with each worker count (and `--runner DirectRunner`), as a user
    runs it: its start-up (until the first image is done), its steady state (images/s and CPU
    microseconds per image of all its processes, between 10% and 90% of the images), and its
    total; then the speed-up of N workers over one in steady state and its efficiency
    (speed-up / N); and whether every worker count wrote the same bytes.

    .venv/bin/python benchmarks/bench_voc_convert.py --images 50000 --workers 1 2 --beam

The machines are shared: CPU microseconds per image move less with the load than images/s.
"""

import argparse
import concurrent.futures
import contextlib
import functools
import hashlib
import io
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Tuple

from slimdata import progress as progress_module
from slimdata.datasets import convert_utils, pascalvoc

_TICKS = os.sysconf('SC_CLK_TCK')


def build_tree(root: str, num_images: int, width: int, height: int,
               max_objects: int) -> Tuple[str, int, int]:
    """The synthetic VOC2007 folder under `root` (made when missing), its bytes of JPEG and
    XML, and its number of objects."""
    from slimdata.datasets import synthetic
    voc = os.path.join(root, 'VOCdevkit', 'VOC2007')
    done = os.path.join(root, 'complete')
    if not os.path.exists(done):
        shutil.rmtree(root, ignore_errors=True)
        synthetic.make_voc_tree(os.path.join(root, 'VOCdevkit'), '2007', num_images,
                                (width, height), max_objects, splits={'trainval': 1.0})
        open(done, 'w').close()
    total_bytes = num_objects = 0
    for folder in ('JPEGImages', 'Annotations'):
        for entry in os.scandir(os.path.join(voc, folder)):
            total_bytes += entry.stat().st_size
            if folder == 'Annotations':
                with open(entry.path, 'rb') as f:
                    num_objects += f.read().count(b'<object>')
    return voc, total_bytes, num_objects


def image_ids(voc: str) -> List[str]:
    with open(os.path.join(voc, 'ImageSets', 'Main', 'trainval.txt')) as f:
        return f.read().split()


def read_all(voc: str) -> float:
    """Seconds to read every listed image's XML and JPEG once (the converter's input),
    unbuffered as the converter reads them."""
    start = time.perf_counter()
    for image_id in image_ids(voc):
        for path in pascalvoc.source_paths(voc, image_id):
            with open(path, 'rb', buffering=0) as f:
                f.read()
    return time.perf_counter() - start


def encode_cost(voc: str, passes: int, sample: int = 2000) -> float:
    """CPU microseconds of `encode_image` per image in this process, the best of `passes`."""
    ids = image_ids(voc)[:sample]
    list_file = os.path.join(voc, 'ImageSets', 'Main', 'trainval.txt')
    encode = functools.partial(pascalvoc.encode_image, voc_folder=voc, list_file=list_file,
                               policy=convert_utils.SourcePolicy(voc))
    best = float('inf')
    for _ in range(passes):
        start = time.process_time()
        for image_id in ids:
            encode(image_id)
        best = min(best, time.process_time() - start)
    return best / len(ids) * 1e6


_IMPORT_CONVERTER = ('import sys, time; start = time.process_time(); '
                     'import slimdata.datasets.pascalvoc; '
                     'print(time.process_time() - start, "tensorflow" in sys.modules)')


def worker_start_up() -> Tuple[float, float, bool]:
    """(seconds until a spawned pool worker answers; CPU seconds a fresh interpreter spends
    importing what a worker imports, the converter's module; whether that imported
    TensorFlow). (This script's own workers would import it with the script itself.)"""
    start = time.perf_counter()
    context = multiprocessing.get_context('spawn')
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        pool.submit(os.getpid).result()
        answered = time.perf_counter() - start
    fresh = subprocess.run([sys.executable, '-c', _IMPORT_CONVERTER], capture_output=True,
                           text=True, check=True)
    seconds, imported_tf = fresh.stdout.split()
    return answered, float(seconds), imported_tf == 'True'


def _session_cpu() -> float:
    """CPU seconds of this process and of its live children (the pool's workers)."""
    total = time.process_time()
    me = str(os.getpid())
    for entry in os.listdir('/proc'):
        if not entry.isdigit() or entry == me:
            continue
        try:
            with open(f'/proc/{entry}/stat') as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:  # the parent pid
            total += (int(fields[11]) + int(fields[12])) / _TICKS  # utime + stime
    return total


class Sampler:
    """Records (wall time, images done, CPU seconds) at progress updates, at most every
    SAMPLE_SECONDS (reading /proc costs more than an image)."""

    SAMPLE_SECONDS = 0.2

    def __init__(self):
        self.samples: List[Tuple[float, float, float]] = []
        self._update = progress_module.Progress.update

    def __enter__(self) -> 'Sampler':
        sampler = self

        def update(display, amount=1):
            sampler._update(display, amount)
            now = time.perf_counter()
            if not sampler.samples or now - sampler.samples[-1][0] >= sampler.SAMPLE_SECONDS:
                sampler.samples.append((now, display.count, _session_cpu()))

        progress_module.Progress.update = update
        return self

    def __exit__(self, *exc_info) -> None:
        progress_module.Progress.update = self._update


def convert_once(voc: str, output_dir: str, workers: int, beam: bool,
                 num_shards: int) -> Dict[str, float]:
    """One conversion into an empty folder: start-up, steady state and total figures."""
    images = len(image_ids(voc))
    shutil.rmtree(output_dir, ignore_errors=True)
    start, start_cpu = time.perf_counter(), _session_cpu()
    # The CPU of workers that have ended: os.times counts children that were waited for.
    children_before = os.times().children_user + os.times().children_system
    with Sampler() as sampler, contextlib.redirect_stderr(io.StringIO()):
        pascalvoc.convert_voc(voc, output_dir, '2007', 'trainval', num_shards=num_shards,
                              processes=workers, seed=0,
                              beam_options=['--runner=DirectRunner'] if beam else None)
    wall = time.perf_counter() - start
    cpu = (time.process_time() - start_cpu + os.times().children_user
           + os.times().children_system - children_before)
    figures = {'total images/s': images / wall, 'total CPU us/image': cpu / images * 1e6}
    samples = [(t, n, c) for t, n, c in sampler.samples if 0.1 * images <= n <= 0.9 * images]
    first = next((t for t, n, _ in sampler.samples if n > 0), None)
    if first is not None:
        figures['start-up s'] = first - start
    if len(samples) >= 2 and samples[-1][1] > samples[0][1]:
        (t0, n0, c0), (t1, n1, c1) = samples[0], samples[-1]
        figures['steady images/s'] = (n1 - n0) / (t1 - t0)
        figures['steady CPU us/image'] = (c1 - c0) / (n1 - n0) * 1e6
    return figures


def shard_digests(folder: str) -> Dict[str, str]:
    return {name: hashlib.sha256(open(os.path.join(folder, name), 'rb').read()).hexdigest()
            for name in sorted(os.listdir(folder)) if name.endswith('.tfrecord')}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--images', type=int, default=2000)
    parser.add_argument('--width', type=int, default=500)
    parser.add_argument('--height', type=int, default=375)
    parser.add_argument('--max-objects', type=int, default=5,
                        help='1 to this many objects per image, about 3 on average with the '
                             'default (fewer where they would overlap much)')
    parser.add_argument('--workers', type=int, nargs='+', default=[1, 2])
    parser.add_argument('--beam', action='store_true',
                        help='also convert with --runner DirectRunner (needs slimdata[beam])')
    parser.add_argument('--shards', type=int, default=16)
    parser.add_argument('--runs', type=int, default=3, help='runs per measurement (median)')
    parser.add_argument('--output', default='bench_out',
                        help='where the tree is kept between runs (default: %(default)s)')
    args = parser.parse_args()

    from slimdata._tf import tf  # noqa: F401  (one-time import, kept out of the timings)

    root = os.path.join(args.output, f'voc_{args.images}_{args.width}x{args.height}')
    voc, total_bytes, num_objects = build_tree(root, args.images, args.width, args.height,
                                               args.max_objects)
    print(f'{args.images} images {args.width}x{args.height}, '
          f'{num_objects / args.images:.1f} objects each on average, '
          f'{total_bytes / args.images / 1e3:.1f} kB per image (JPEG + XML)')
    read_all(voc)  # warm the page cache
    limit = args.images / min(read_all(voc) for _ in range(args.runs))
    print(f'read limit: {limit:,.0f} images/s')
    print(f'encode_image in this process: {encode_cost(voc, 5):.0f} CPU us per image '
          '(best of 5 passes over 2,000 images)')
    answered, import_seconds, imported_tf = worker_start_up()
    print(f'worker start-up: {answered:.2f} s until a spawned pool worker answers; importing '
          f'the converter takes {import_seconds:.2f} CPU s in a fresh interpreter; TensorFlow '
          f'imported: {imported_tf}')
    modes = [(f'{workers} worker(s)', workers, False) for workers in args.workers]
    if args.beam:
        modes.append(('Beam DirectRunner', 1, True))
    results, digests = {}, {}
    for label, workers, beam in modes:
        output = os.path.join(args.output, 'voc_out')
        runs = []
        for _ in range(args.runs):
            runs.append(convert_once(voc, output, workers, beam, args.shards))
        digests[label] = shard_digests(output)
        results[label] = {key: statistics.median(run[key] for run in runs if key in run)
                          for key in runs[0]}
        figures = results[label]
        print(f'{label:>18}: ' + ', '.join(f'{key} {value:,.1f}' if 's' == key[-1] else
                                          f'{key} {value:,.0f}' for key, value in
                                          figures.items()))
    one = results.get('1 worker(s)', {}).get('steady images/s')
    for label, figures in results.items():
        workers = int(label.split()[0]) if label[0].isdigit() else 1
        if one and workers > 1 and 'steady images/s' in figures:
            speed_up = figures['steady images/s'] / one
            print(f'{label}: {speed_up:.2f}x one worker in steady state, efficiency '
                  f'{speed_up / workers:.2f}')
    print(f'every mode wrote the same bytes: {len(set(map(str, digests.values()))) == 1}')
    print(f'load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs')


if __name__ == '__main__':
    main()
