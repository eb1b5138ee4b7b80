"""COCO JSON reading beside pycocotools, and the COCO converter's cost per image beside VOC's.

1. Reading the annotation file. Generates (once, cached under bench_out/) a JSON the size of
   COCO train2017's instances file (118,287 images, 860,001 annotations with polygons,
   about 450 MB), then reads it in a fresh subprocess per reader, one after the other, and
   reports each one's wall time, CPU time (user + system), CPU microseconds per image,
   images/s and peak resident memory:

     * pycocotools.coco.COCO(path): json.load and its indexes (the reference);
     * slimdata: `coco.read_coco_json` (the converter's reader: every image, annotation and
       category checked, kept in compact columns);
     * json.load alone (what any reader that loads the whole document pays);
     * ijson (C backend), one pass selecting "annotations.item" (a streaming parser reads one
       array per pass; a converter needs three).

2. The whole conversion per image: a synthetic VOC2007 tree (bench_voc_convert.build_tree)
   and the same images and boxes as a COCO JSON, each converted by its converter (1 process,
   the same shard count), CPU microseconds per image and images/s side by side.

    .venv/bin/python benchmarks/bench_coco.py [--images 118287 --annotations 860001]

The machines are shared: CPU time moves less with the load than wall time.
"""

import argparse
import contextlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import time
from typing import Callable, Dict, List, TextIO
from xml.etree import ElementTree

import numpy as np

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH_DIR)

#: Each reader, run as `python -c CODE PATH` in its own process.
READERS = {
    'pycocotools COCO()': 'from pycocotools.coco import COCO\nCOCO(sys.argv[1])',
    'slimdata read_coco_json': (
        'import os\n'
        'from slimdata.datasets import coco, convert_utils\n'
        'coco.read_coco_json(sys.argv[1], convert_utils.SourcePolicy(\n'
        '    os.path.dirname(sys.argv[1])))'),
    'json.load alone': 'import json\njson.load(open(sys.argv[1], "rb"))',
    'ijson, annotations only': (
        'import ijson\n'
        'for _ in ijson.items(open(sys.argv[1], "rb"), "annotations.item", use_float=True):\n'
        '    pass'),
}
#: Imports are kept out of the figures: the child times only the reading.
_TIMED = ('import sys, time, resource\n'
          '{imports}\n'
          'start, cpu = time.perf_counter(), time.process_time()\n'
          '{body}\n'
          'print(time.perf_counter() - start, time.process_time() - cpu,\n'
          '      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n')


def generate_json(path: str, num_images: int, num_annotations: int, seed: int = 0) -> None:
    """A COCO instances file shaped like train2017's: image entries with URLs and dates,
    annotations with a polygon of 6 to 60 points (about 54 numbers on average), area, iscrowd
    (1%), category ids 1..90 with COCO's gaps."""
    rng = np.random.default_rng(seed)
    categories = [c for c in range(1, 91) if c not in (12, 26, 29, 30, 45, 66, 68, 69, 71, 83)]
    polygons = [','.join(f'{v:.2f}' for v in rng.uniform(0, 600, 2 * points))
                for points in rng.integers(6, 48, 64)]
    temporary = path + '.tmp'
    with open(temporary, 'w') as f:
        f.write('{"info": {"description": "generated like COCO train2017"}, "licenses": [], '
                '"images": [')
        _write_array(f, num_images, lambda i: (
            f'{{"license": 3, "file_name": "{i + 1:012d}.jpg", "coco_url": '
            f'"http://images.cocodataset.org/train2017/{i + 1:012d}.jpg", "height": 480, '
            f'"width": 640, "date_captured": "2013-11-14 11:18:45", "flickr_url": '
            f'"http://farm9.staticflickr.com/8186/8119368305_4e622c8349_z.jpg", "id": {i + 1}}}'))
        f.write('], "annotations": [')
        boxes = rng.uniform(0, 300, (num_annotations, 4)).round(2)
        owners = rng.integers(1, num_images + 1, num_annotations)
        chosen = rng.integers(0, len(polygons), num_annotations)
        labels = rng.choice(categories, num_annotations)
        crowd = (rng.random(num_annotations) < 0.01).astype(int)
        _write_array(f, num_annotations, lambda i: (
            f'{{"segmentation": [[{polygons[chosen[i]]}]], "area": '
            f'{boxes[i, 2] * boxes[i, 3]:.4f}, "iscrowd": {crowd[i]}, "image_id": '
            f'{owners[i]}, "bbox": [{boxes[i, 0]},{boxes[i, 1]},{boxes[i, 2]},'
            f'{boxes[i, 3]}], "category_id": {labels[i]}, "id": {i + 1}}}'))
        f.write('], "categories": [' + ','.join(
            f'{{"supercategory": "thing", "id": {c}, "name": "class{c}"}}' for c in categories)
            + ']}')
    os.replace(temporary, path)


def _write_array(f: TextIO, count: int, entry: Callable[[int], str]) -> None:
    """Writes `entry(0)` .. `entry(count - 1)` to `f`, separated by commas, 10,000 at a time:
    the 860,001 annotations joined at once would hold the whole JSON in memory."""
    for start in range(0, count, 10_000):
        f.write(('' if start == 0 else ',') + ','.join(
            entry(i) for i in range(start, min(start + 10_000, count))))


def run_reader(code: str, path: str) -> Dict[str, float]:
    """Runs one reader in a fresh process: its wall and CPU seconds (reading only) and its
    peak resident memory (the whole process, imports included, as the kernel counts it)."""
    imports, body = _split_imports(code)
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([os.path.dirname(BENCH_DIR),
                                                        os.environ.get('PYTHONPATH', '')])}
    run = subprocess.run([sys.executable, '-c', _TIMED.format(imports=imports, body=body),
                          path], capture_output=True, text=True, env=env, check=True)
    wall, cpu, peak_kb = map(float, run.stdout.split()[-3:])
    return {'wall s': wall, 'cpu s': cpu, 'peak MB': peak_kb / 1024}


def _split_imports(code: str):
    lines = code.split('\n')
    imports = [line for line in lines if line.startswith(('import ', 'from '))]
    return '\n'.join(imports), '\n'.join(line for line in lines if line not in imports)


def reading(path: str, num_images: int, runs: int) -> None:
    size = os.path.getsize(path)
    print(f'{path}: {size / 1e6:.0f} MB, {num_images:,} images')
    print(f'{"reader":>26} {"wall s":>7} {"CPU s":>7} {"CPU us/image":>12} {"images/s":>9} '
          f'{"peak MB":>8}')
    for name, code in READERS.items():
        module = code.split()[1]  # the reader's first import
        if importlib.util.find_spec(module.split('.')[0]) is None:
            print(f'{name:>26} (not installed: pip install {module.split(".")[0]})')
            continue
        best = min((run_reader(code, path) for _ in range(runs)), key=lambda r: r['cpu s'])
        print(f'{name:>26} {best["wall s"]:7.1f} {best["cpu s"]:7.1f} '
              f'{best["cpu s"] / num_images * 1e6:12.0f} {num_images / best["wall s"]:9.0f} '
              f'{best["peak MB"]:8.0f}')


# --- The whole conversion, beside VOC's ------------------------------------------------------

def coco_from_voc(voc: str, json_path: str) -> None:
    """The VOC tree's trainval images and boxes as a COCO instances file (file names relative
    to JPEGImages/, VOC's 1-based inclusive corners as COCO's [x, y, w, h])."""
    from slimdata.datasets import pascalvoc
    names = pascalvoc.CLASS_NAMES[1:]
    images, annotations = [], []
    with open(os.path.join(voc, 'ImageSets', 'Main', 'trainval.txt')) as f:
        ids = f.read().split()
    for number, image_id in enumerate(ids, 1):
        root = ElementTree.parse(os.path.join(voc, 'Annotations', image_id + '.xml')).getroot()
        images.append({'id': number, 'file_name': image_id + '.jpg',
                       'width': int(root.findtext('size/width')),
                       'height': int(root.findtext('size/height'))})
        for obj in root.findall('object'):
            xmin, ymin, xmax, ymax = (float(obj.findtext(f'bndbox/{k}')) - 1
                                      for k in ('xmin', 'ymin', 'xmax', 'ymax'))
            annotations.append({'id': len(annotations) + 1, 'image_id': number,
                                'category_id': names.index(obj.findtext('name')) + 1,
                                'bbox': [xmin, ymin, xmax - xmin, ymax - ymin], 'iscrowd': 0})
    with open(json_path, 'w') as f:
        json.dump({'images': images, 'annotations': annotations,
                   'categories': [{'id': i, 'name': n} for i, n in enumerate(names, 1)]}, f)


def convert_cost(convert, num_images: int, output_dir: str, runs: int) -> Dict[str, float]:
    """The best of `runs` conversions into an empty folder: CPU us per image, images/s."""
    best: Dict[str, float] = {}
    for _ in range(runs):
        shutil.rmtree(output_dir, ignore_errors=True)
        start, cpu = time.perf_counter(), time.process_time()
        convert(output_dir)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        if not best or cpu < best['cpu s']:
            best = {'cpu s': cpu, 'wall s': wall}
    return {'CPU us/image': best['cpu s'] / num_images * 1e6,
            'images/s': num_images / best['wall s']}


def conversion(output: str, num_images: int, runs: int) -> None:
    import bench_voc_convert

    from slimdata.datasets import coco, pascalvoc
    voc, _, num_objects = bench_voc_convert.build_tree(
        os.path.join(output, f'voc_{num_images}_500x375'), num_images, 500, 375, 5)
    json_path = os.path.join(voc, 'instances_trainval.json')
    if not os.path.exists(json_path):
        coco_from_voc(voc, json_path)
    images = os.path.join(voc, 'JPEGImages')
    converters = {
        'voc': lambda out: pascalvoc.convert_voc(voc, out, '2007', 'trainval', num_shards=4,
                                                 seed=0),
        'coco': lambda out: coco.convert_coco(json_path, out, 'trainval', images=images,
                                              num_shards=4, seed=0),
    }
    print(f'\nwhole conversion, 1 process: {num_images:,} images 500x375, '
          f'{num_objects / num_images:.1f} objects each')
    for name, convert in converters.items():
        with contextlib.redirect_stderr(io.StringIO()):
            figures = convert_cost(convert, num_images, os.path.join(output, f'{name}_out'),
                                   runs)
        print(f'{name:>6}: {figures["CPU us/image"]:6.0f} CPU us per image, '
              f'{figures["images/s"]:6.0f} images/s')


def main(argv: List[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--images', type=int, default=118_287)
    parser.add_argument('--annotations', type=int, default=860_001)
    parser.add_argument('--convert-images', type=int, default=2000,
                        help='images of the whole-conversion comparison')
    parser.add_argument('--runs', type=int, default=1, help='runs per reader (the best)')
    parser.add_argument('--output', default='bench_out',
                        help='where generated sources are kept (default: %(default)s)')
    args = parser.parse_args(argv)
    os.makedirs(args.output, exist_ok=True)
    path = os.path.join(args.output, f'coco_{args.images}_{args.annotations}.json')
    if not os.path.exists(path):
        generate_json(path, args.images, args.annotations)
    reading(path, args.images, args.runs)
    conversion(args.output, args.convert_images, args.runs)
    print(f'load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs')


if __name__ == '__main__':
    main(sys.argv[1:])
