"""Pascal VOC converter throughput against the limit of reading its input files.

Builds a synthetic VOC2007 tree (`slimdata.datasets.synthetic.make_voc_tree`: JPEGs of VOC's
typical 500x375 size, an XML with 1-5 objects each, ImageSets/Main/trainval.txt) in a temporary
folder, then prints images/s of

  * read limit: reading every XML and JPEG file once (page cache warm), nothing else;
  * slimdata.datasets.pascalvoc.convert with 1 and 2 workers (parse, validate, serialize,
    frame and write the shards, dataset_info.json),

each the median of several runs, with the converter's ratio to the read limit::

    .venv/bin/python benchmarks/bench_voc_convert.py --images 300 --workers 1 2

TensorFlow is imported once before timing (the converter's parent process needs it for the
schema in dataset_info.json; a conversion pays that once, whatever its size). It, numpy and
Pillow are imported inside the functions that need them, not at the top: with workers, the
spawn start method re-imports this script in every worker, and the workers' start-up would
then include imports that `slimdata convert voc` does not make.
"""

import argparse
import contextlib
import io
import os
import statistics
import tempfile
import time
from typing import Tuple

from slimdata.datasets import pascalvoc

def build_tree(root: str, num_images: int, width: int, height: int,
               max_objects: int) -> Tuple[str, int, int]:
    """Writes a synthetic VOC2007 tree under `root/VOCdevkit` (`synthetic.make_voc_tree`,
    every image in trainval).

    Returns:
      (the VOC2007 folder, the total bytes of its JPEG and XML files, the number of objects).
    """
    from slimdata.datasets import synthetic
    voc = synthetic.make_voc_tree(os.path.join(root, 'VOCdevkit'), '2007', num_images,
                                  (width, height), max_objects, splits={'trainval': 1.0})
    total_bytes = num_objects = 0
    for folder in ('JPEGImages', 'Annotations'):
        for name in os.listdir(os.path.join(voc, folder)):
            with open(os.path.join(voc, folder, name), 'rb') as f:
                data = f.read()
            total_bytes += len(data)
            num_objects += data.count(b'<object>')
    return voc, total_bytes, num_objects


def read_all(voc: str) -> float:
    """Seconds to read every listed image's XML and JPEG once (the converter's input),
    unbuffered as the converter reads them."""
    start = time.perf_counter()
    with open(os.path.join(voc, 'ImageSets', 'Main', 'trainval.txt'), 'rb') as f:
        ids = f.read().decode().split()
    for image_id in ids:
        for path in (os.path.join(voc, 'Annotations', image_id + '.xml'),
                     os.path.join(voc, 'JPEGImages', image_id + '.jpg')):
            with open(path, 'rb', buffering=0) as f:
                f.read()
    return time.perf_counter() - start


def _cpu_seconds() -> float:
    """CPU time of this process and its waited-for children (the pool's workers)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def convert_once(voc: str, output_dir: str, workers: int) -> Tuple[float, float]:
    """(wall seconds, CPU seconds) of one full conversion into an empty folder.

    The CPU seconds include the workers' start-up; on a machine shared with other jobs they
    say what the conversion costs when the wall time says mostly how busy the machine was.
    """
    start, start_cpu = time.perf_counter(), _cpu_seconds()
    with contextlib.redirect_stderr(io.StringIO()):  # the progress bar and summary line
        pascalvoc.convert(voc, output_dir, '2007', 'trainval', num_shards=4, workers=workers)
    return time.perf_counter() - start, _cpu_seconds() - start_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--images', type=int, default=300)
    parser.add_argument('--width', type=int, default=500)
    parser.add_argument('--height', type=int, default=375)
    parser.add_argument('--max-objects', type=int, default=5,
                        help='1 to this many objects per image, about 3 on average with the '
                             'default (fewer where they would overlap much)')
    parser.add_argument('--workers', type=int, nargs='+', default=[1, 2])
    parser.add_argument('--runs', type=int, default=5, help='runs per measurement (median)')
    args = parser.parse_args()

    from slimdata._tf import tf  # noqa: F401  (one-time import, kept out of the timings)

    with tempfile.TemporaryDirectory() as root:
        voc, total_bytes, num_objects = build_tree(root, args.images, args.width, args.height,
                                                   args.max_objects)
        print(f'{args.images} images {args.width}x{args.height}, '
              f'{num_objects / args.images:.1f} objects each on average, '
              f'{total_bytes / args.images / 1e3:.1f} kB per image (JPEG + XML)')
        read_all(voc)  # warm the page cache
        limit = args.images / statistics.median(read_all(voc) for _ in range(args.runs))
        print(f'{"read limit":>22}: {limit:9.0f} images/s')
        for workers in args.workers:
            runs = [convert_once(voc, os.path.join(root, f'out-{workers}-{run}'), workers)
                    for run in range(args.runs)]
            rate = args.images / statistics.median(wall for wall, _ in runs)
            cpu_per_image = statistics.median(cpu for _, cpu in runs) / args.images
            print(f'{f"convert, {workers} worker(s)":>22}: {rate:9.0f} images/s  '
                  f'{rate / limit:.3f}x the read limit  '
                  f'({cpu_per_image * 1e6:.0f} CPU us per image, all processes)')
        print(f'load average during the runs: {os.getloadavg()[0]:.1f} on {os.cpu_count()} '
              'CPUs (other jobs slow the wall-clock rates)')


if __name__ == '__main__':
    main()
