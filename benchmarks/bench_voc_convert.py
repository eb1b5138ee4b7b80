"""Pascal VOC converter throughput against the limit of reading its input files.

Builds a VOC-like tree (JPEGs of VOC's typical 500x375 size, an XML with a few objects each,
ImageSets/Main/trainval.txt) in a temporary folder, then prints images/s of

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

_CLASSES = pascalvoc.CLASS_NAMES[1:]


def build_tree(root: str, num_images: int, width: int, height: int, objects: int) -> int:
    """Writes a VOC2007-like tree under `root`; returns the total bytes of its files."""
    import numpy as np
    from PIL import Image
    voc = os.path.join(root, 'VOCdevkit', 'VOC2007')
    for folder in ('Annotations', 'JPEGImages', os.path.join('ImageSets', 'Main')):
        os.makedirs(os.path.join(voc, folder))
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:height, 0:width]
    total_bytes = 0
    ids = [f'{i:06d}' for i in range(num_images)]
    for i, image_id in enumerate(ids):
        # A smooth scene plus noise: JPEG sizes like VOC's photos (tens of kB), not a flat
        # image that compresses to nothing.
        scene = (x * (1 + i % 5) + y * (1 + i % 3)) % 256
        pixels = np.clip(scene[..., None] + rng.normal(0, 12, (height, width, 3)), 0, 255)
        jpeg_path = os.path.join(voc, 'JPEGImages', image_id + '.jpg')
        Image.fromarray(pixels.astype(np.uint8)).save(jpeg_path, 'JPEG', quality=85)
        boxes = []
        for k in range(objects):
            x0, y0 = rng.integers(1, width // 2), rng.integers(1, height // 2)
            x1, y1 = rng.integers(x0 + 10, width + 1), rng.integers(y0 + 10, height + 1)
            boxes.append(
                f'  <object><name>{_CLASSES[(i + k) % len(_CLASSES)]}</name><pose>Left</pose>'
                f'<truncated>{k % 2}</truncated><difficult>0</difficult><bndbox>'
                f'<xmin>{x0}</xmin><ymin>{y0}</ymin><xmax>{x1}</xmax><ymax>{y1}</ymax>'
                '</bndbox></object>\n')
        xml = (f'<annotation>\n  <folder>VOC2007</folder>\n  <filename>{image_id}.jpg'
               f'</filename>\n  <size><width>{width}</width><height>{height}</height>'
               f'<depth>3</depth></size>\n{"".join(boxes)}</annotation>\n')
        with open(os.path.join(voc, 'Annotations', image_id + '.xml'), 'w') as f:
            f.write(xml)
        total_bytes += os.path.getsize(jpeg_path) + len(xml)
    with open(os.path.join(voc, 'ImageSets', 'Main', 'trainval.txt'), 'w') as f:
        f.write(''.join(image_id + '\n' for image_id in ids))
    return total_bytes


def read_all(root: str) -> float:
    """Seconds to read every listed image's XML and JPEG once (the converter's input)."""
    voc = os.path.join(root, 'VOCdevkit', 'VOC2007')
    start = time.perf_counter()
    with open(os.path.join(voc, 'ImageSets', 'Main', 'trainval.txt'), 'rb') as f:
        ids = f.read().decode().split()
    for image_id in ids:
        for path in (os.path.join(voc, 'Annotations', image_id + '.xml'),
                     os.path.join(voc, 'JPEGImages', image_id + '.jpg')):
            with open(path, 'rb') as f:
                f.read()
    return time.perf_counter() - start


def _cpu_seconds() -> float:
    """CPU time of this process and its waited-for children (the pool's workers)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def convert_once(root: str, output_dir: str, workers: int) -> Tuple[float, float]:
    """(wall seconds, CPU seconds) of one full conversion into an empty folder.

    The CPU seconds include the workers' start-up; on a machine shared with other jobs they
    say what the conversion costs when the wall time says mostly how busy the machine was.
    """
    start, start_cpu = time.perf_counter(), _cpu_seconds()
    with contextlib.redirect_stderr(io.StringIO()):  # the progress bar and summary line
        pascalvoc.convert(root, output_dir, '2007', 'trainval', num_shards=4, workers=workers)
    return time.perf_counter() - start, _cpu_seconds() - start_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--images', type=int, default=300)
    parser.add_argument('--width', type=int, default=500)
    parser.add_argument('--height', type=int, default=375)
    parser.add_argument('--objects', type=int, default=3, help='objects per image')
    parser.add_argument('--workers', type=int, nargs='+', default=[1, 2])
    parser.add_argument('--runs', type=int, default=5, help='runs per measurement (median)')
    args = parser.parse_args()

    from slimdata._tf import tf  # noqa: F401  (one-time import, kept out of the timings)

    with tempfile.TemporaryDirectory() as root:
        total_bytes = build_tree(root, args.images, args.width, args.height, args.objects)
        print(f'{args.images} images {args.width}x{args.height}, {args.objects} objects each, '
              f'{total_bytes / args.images / 1e3:.1f} kB per image (JPEG + XML)')
        read_all(root)  # warm the page cache
        limit = args.images / statistics.median(read_all(root) for _ in range(args.runs))
        print(f'{"read limit":>22}: {limit:9.0f} images/s')
        for workers in args.workers:
            runs = [convert_once(root, os.path.join(root, f'out-{workers}-{run}'), workers)
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
