"""Real labelled datasets, end to end: convert, compare with the source, train (issue 26 item 7).

Each SNAPSHOT is a checkout of a public repository that holds a labelled dataset as a
labelling tool exported it (`DATASETS` lists the ones this was run on, with the commit and
the conversion). For each one this

  1. converts it with `slimdata convert` (voc / coco / yolo), into WORK/<name>/records;
  2. reads every record back with TensorFlow's own parser (`tf.io.parse_single_example`) and
     compares its boxes and class names with the source annotations read here by a parser
     independent of slimdata's converters: pycocotools for COCO, ElementTree over the XML
     for VOC, the label lines split here for YOLO. Records are matched to their source
     image by the image bytes (the converters store them unchanged). A record is equal when
     it has the same objects (class name and box within 1e-5, in any order), and its label
     ids are those dataset_info.json gives the names;
  3. trains `train_examples/train_ssd.py --dataset_name=detection` for a few steps on the
     first split (in a subprocess) and reads the loss at the start and at the end;

and prints a table (dataset, format, images, objects, classes, records equal to the source,
training steps and loss). Not in CI: the snapshots are fetched by hand, never committed:

    git clone <mirror or https://github.com/OWNER/NAME> /tmp/own_data/NAME   # for each
    .venv/bin/python benchmarks/own_data.py /tmp/own_data/MaskWearing_YOLOv5 \\
        /tmp/own_data/fruit_object_detection /tmp/own_data/detr-facemask-dataset --steps 20

pycocotools must be installed for a COCO snapshot (pip install pycocotools).
"""

import argparse
import collections
import contextlib
import dataclasses
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
#: (class name, (ymin, xmin, ymax, xmax) normalised)
Object = Tuple[str, Tuple[float, float, float, float]]
#: sha1 of an image's bytes -> the objects of each image with those bytes
Annotations = Dict[str, List[List[Object]]]
TOLERANCE = 1e-5  # boxes are stored as float32: 6e-8 relative


@dataclasses.dataclass(frozen=True)
class Dataset:
    """One real dataset: where it is published, and how it is converted and read here.

    Attributes:
      repo: the GitHub repository (owner/name) whose snapshot holds it.
      format: 'voc', 'coco' or 'yolo'.
      conversions: per run of `slimdata convert`, its arguments after the KIND, with {src}
        for the snapshot and {out} for the records folder.
      splits: split name -> what `read_source` reads for it (a folder or file below {src}).
      read_source: (snapshot, what) -> the annotations of that split, read independently.
    """
    repo: str
    format: str
    conversions: Sequence[Sequence[str]]
    splits: Dict[str, str]
    read_source: Callable[[str, str], Annotations]


# --- Independent readers of the sources -----------------------------------------------------------

def sha1_of(path: str) -> str:
    with open(path, 'rb') as f:
        return hashlib.sha1(f.read()).hexdigest()


def read_yolo(src: str, images_folder: str) -> Annotations:
    """A Roboflow YOLO split: each image's `../labels/<stem>.txt`, `class cx cy w h` lines
    (a longer line: polygon x y pairs, whose extent is the box), names from data.yaml."""
    import yaml
    with open(os.path.join(src, 'data.yaml')) as f:
        names = yaml.safe_load(f)['names']
    names = dict(enumerate(names)) if isinstance(names, list) else names
    folder = os.path.join(src, images_folder)
    annotations: Annotations = collections.defaultdict(list)
    for name in sorted(os.listdir(folder)):
        label = os.path.join(folder, '..', 'labels', os.path.splitext(name)[0] + '.txt')
        objects = []
        if os.path.exists(label):
            for line in open(label).read().splitlines():
                values = [float(value) for value in line.split()]
                if not values:
                    continue
                if len(values) == 5:
                    cx, cy, w, h = values[1:]
                    box = (cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2)
                else:
                    xs, ys = values[1::2], values[2::2]
                    box = (min(ys), min(xs), max(ys), max(xs))
                objects.append((names[int(values[0])], clipped(box)))
        annotations[sha1_of(os.path.join(folder, name))].append(objects)
    return annotations


def read_voc(src: str, folder: str) -> Annotations:
    """labelImg's VOC XMLs (`<folder>/*.xml`), each beside the image its `<filename>` names;
    VOC boxes are 1-based pixel coordinates, normalised here as (v - 1) / size by the
    image's real size (labelImg may write `<size>` 0 x 0)."""
    annotations: Annotations = collections.defaultdict(list)
    for xml_path in sorted(glob.glob(os.path.join(src, folder, '*.xml'))):
        root = xml.etree.ElementTree.parse(xml_path).getroot()
        filename = root.findtext('filename')
        image = os.path.join(os.path.dirname(xml_path), filename)
        width, height = Image.open(image).size
        objects = []
        for element in root.iter('object'):
            box = element.find('bndbox')
            xmin, ymin, xmax, ymax = (float(box.findtext(tag)) - 1
                                      for tag in ('xmin', 'ymin', 'xmax', 'ymax'))
            objects.append((element.findtext('name').strip(),
                            clipped((ymin / height, xmin / width, ymax / height,
                                     xmax / width))))
        annotations[sha1_of(image)].append(objects)
    return annotations


def read_coco(src: str, files: str) -> Annotations:
    """A COCO JSON read by pycocotools (`files` is 'annotations.json:images_folder'); boxes
    [x, y, w, h] in pixels of the image's size; crowd annotations left out (as the OD API's
    create_coco_tf_record.py and slimdata by default)."""
    from pycocotools.coco import COCO
    json_file, images_folder = files.split(':')
    with contextlib.redirect_stdout(sys.stderr):  # its progress lines, off the table
        coco = COCO(os.path.join(src, json_file))
    annotations: Annotations = collections.defaultdict(list)
    for image_id in sorted(coco.getImgIds()):
        info = coco.loadImgs(image_id)[0]
        path = os.path.join(src, images_folder, info['file_name'])
        width, height = Image.open(path).size
        objects = []
        for annotation in coco.loadAnns(coco.getAnnIds(imgIds=image_id, iscrowd=False)):
            x, y, w, h = annotation['bbox']
            name = coco.loadCats(annotation['category_id'])[0]['name']
            objects.append((name, clipped((y / height, x / width, (y + h) / height,
                                           (x + w) / width))))
        annotations[sha1_of(path)].append(objects)
    return annotations


def clipped(box: Sequence[float]) -> Tuple[float, float, float, float]:
    """A box clipped into [0, 1], as the converters' default on_bad_box='clip' stores it."""
    ymin, xmin, ymax, xmax = (min(max(value, 0.0), 1.0) for value in box)
    return ymin, xmin, ymax, xmax


# --- Records read back with TensorFlow ------------------------------------------------------------

def read_records(out: str, split: str) -> Tuple[Dict[str, List[Tuple[List[Object], List[int]]]],
                                                 Dict[int, str]]:
    """sha1 of each record's image -> its (objects, label ids), and dataset_info.json's
    labels_to_names."""
    from slimdata._tf import tf
    spec = {f'image/object/bbox/{field}': tf.io.VarLenFeature(tf.float32)
            for field in ('ymin', 'xmin', 'ymax', 'xmax')}
    spec['image/object/bbox/label'] = tf.io.VarLenFeature(tf.int64)
    spec['image/object/bbox/label_text'] = tf.io.VarLenFeature(tf.string)
    spec['image/encoded'] = tf.io.FixedLenFeature([], tf.string)
    records: Dict[str, List[Tuple[List[Object], List[int]]]] = collections.defaultdict(list)
    files = sorted(glob.glob(os.path.join(out, f'{split}-*.tfrecord')))
    for serialized in tf.data.TFRecordDataset(files):
        parsed = tf.io.parse_single_example(serialized, spec)
        dense = {key: tf.sparse.to_dense(value).numpy() for key, value in parsed.items()
                 if key != 'image/encoded'}
        boxes = np.stack([dense[f'image/object/bbox/{field}']
                          for field in ('ymin', 'xmin', 'ymax', 'xmax')], axis=-1)
        names = [text.decode() for text in dense['image/object/bbox/label_text']]
        objects = [(name, tuple(float(v) for v in box)) for name, box in zip(names, boxes)]
        digest = hashlib.sha1(parsed['image/encoded'].numpy()).hexdigest()
        records[digest].append((objects, [int(label) for label in
                                          dense['image/object/bbox/label']]))
    with open(os.path.join(out, 'dataset_info.json')) as f:
        labels_to_names = {int(label): name
                           for label, name in json.load(f)['labels_to_names'].items()}
    return records, labels_to_names


def same_objects(got: List[Object], expected: List[Object]) -> bool:
    """True when each expected object pairs with its own stored one (same name, box within
    TOLERANCE), in any order: sorting cannot pair them, as float32 can tie boxes that float64
    orders."""
    unpaired = list(got)
    for name, box in expected:
        match = next((i for i, (got_name, got_box) in enumerate(unpaired)
                      if got_name == name and np.allclose(got_box, box, atol=TOLERANCE)), None)
        if match is None:
            return False
        unpaired.pop(match)
    return not unpaired


@dataclasses.dataclass
class Comparison:
    """How one split's records compare with its source."""
    images: int = 0
    objects: int = 0
    records: int = 0
    equal: int = 0
    first_difference: str = ''


def compare(records: Dict[str, List[Tuple[List[Object], List[int]]]],
            labels_to_names: Dict[int, str], source: Annotations) -> Comparison:
    result = Comparison(images=sum(len(v) for v in source.values()),
                        objects=sum(len(o) for v in source.values() for o in v),
                        records=sum(len(v) for v in records.values()))
    for digest, entries in records.items():
        candidates = list(source.get(digest, []))
        for objects, labels in entries:
            names_agree = [labels_to_names.get(label) for label in labels] == \
                [name for name, _ in objects]
            match = next((i for i, expected in enumerate(candidates)
                          if same_objects(objects, expected)), None)
            if names_agree and match is not None:
                candidates.pop(match)
                result.equal += 1
            elif not result.first_difference:
                result.first_difference = (f'image sha1 {digest[:12]}: record {objects} '
                                           f'labels {labels}; source {candidates[:1]}')
    return result


# --- Conversion and training ----------------------------------------------------------------------

def run(command: List[str], log: str) -> Tuple[int, float]:
    """Runs `command`, its output into `log`; (exit status, seconds)."""
    started = time.perf_counter()
    with open(log, 'w') as f:
        status = subprocess.run(command, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT).returncode
    return status, time.perf_counter() - started


TRAIN = ('import json, sys\n'
         'sys.path.insert(0, "train_examples")\n'
         'import train_ssd\n'
         'figures = train_ssd.main(sys.argv[1:])\n'
         'print("FIGURES", json.dumps({k: v for k, v in figures.items() '
         'if isinstance(v, (int, float, str))}))\n')


def train(out: str, split: str, work: str, steps: int) -> str:
    """A few training steps on the records; 'steps, loss first -> last' or why not."""
    log = os.path.join(work, 'train.log')
    status, seconds = run([sys.executable, '-c', TRAIN, '--dataset_name=detection',
                           f'--dataset_dir={out}', f'--dataset_split_name={split}',
                           f'--train_dir={os.path.join(work, "train")}',
                           f'--max_number_of_steps={steps}', '--batch_size=4',
                           '--log_every_n_steps=1'], log)
    text = open(log).read()
    if status != 0:
        known = re.search(r"unknown 'detection'|invalid choice: 'detection'", text)
        return ('not run: train_ssd.py has no detection dataset yet' if known
                else f'failed (exit {status}), see {log}')
    figures = json.loads(text.rsplit('FIGURES ', 1)[1].splitlines()[0])
    first = figures.get('first_loss', figures.get('loss_start', '?'))
    last = figures.get('final_loss', figures.get('loss_end', '?'))
    return f'{figures.get("steps", steps)} steps, loss {first:.3g} -> {last:.3g} ({seconds:.0f} s)'


def snapshot_commit(src: str) -> str:
    try:
        return subprocess.run(['git', '-C', src, 'rev-parse', 'HEAD'], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return 'unknown'


def bench(name: str, dataset: Dataset, src: str, work_root: str, steps: int) -> Dict[str, str]:
    work = os.path.join(work_root, name)
    out = os.path.join(work, 'records')
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    row = {'dataset': name, 'repo': dataset.repo, 'commit': snapshot_commit(src)[:12],
           'format': dataset.format}
    convert_seconds = 0.0
    for index, arguments in enumerate(dataset.conversions):
        log = os.path.join(work, f'convert{index}.log')
        status, seconds = run([sys.executable, '-m', 'slimdata', 'convert', dataset.format,
                               *(a.format(src=src, out=out) for a in arguments)], log)
        convert_seconds += seconds
        if status != 0:
            row['error'] = f'conversion failed: {open(log).read().strip().splitlines()[-1]}'
            return row
    # Splits cut from one folder (--validation-ratio) share its annotations: counted once.
    sources = {what: dataset.read_source(src, what) for what in set(dataset.splits.values())}
    totals = Comparison(images=sum(len(v) for s in sources.values() for v in s.values()),
                        objects=sum(len(o) for s in sources.values() for v in s.values()
                                    for o in v))
    classes = set()
    for split, what in dataset.splits.items():
        records, labels_to_names = read_records(out, split)
        result = compare(records, labels_to_names, sources[what])
        classes.update(name for label, name in labels_to_names.items() if label)
        totals.records += result.records
        totals.equal += result.equal
        totals.first_difference = totals.first_difference or result.first_difference
    row.update(images=str(totals.images), objects=str(totals.objects),
               classes=str(len(classes)), splits=' '.join(dataset.splits),
               equal=f'{totals.equal}/{totals.records}',
               convert=f'{convert_seconds:.1f} s',
               training=train(out, next(iter(dataset.splits)), work, steps))
    if totals.first_difference:
        row['first difference'] = totals.first_difference
    return row


DATASETS: Dict[str, Dataset] = {
    'MaskWearing_YOLOv5': Dataset(
        'jsansao/MaskWearing_YOLOv5', 'yolo', [['{src}', '{out}', '--skip-non-images']],
        {'train': 'train/images', 'val': 'valid/images'}, read_yolo),
    'fruit_object_detection': Dataset(
        'duhee01/fruit_object_detection', 'voc',
        [['{src}/train_zip/train', '{out}', '--classes', 'auto']],   # 10% held out
        {'train': 'train_zip/train', 'validation': 'train_zip/train'}, read_voc),
    'detr-facemask-dataset': Dataset(
        'iniakunhuda/detr-facemask-dataset', 'coco',
        [['{src}/annotations/custom_train.json', '{out}', '--images', '{src}/train2017',
          '--split', 'train'],
         ['{src}/annotations/custom_val.json', '{out}', '--images', '{src}/val2017',
          '--split', 'val']],
        {'train': 'annotations/custom_train.json:train2017',
         'val': 'annotations/custom_val.json:val2017'}, read_coco),
}

# --- Speed: the YOLO converter beside the VOC converter, on the same images ----------------------

def yolo_tree_from_voc(voc_folder: str, root: str) -> List[str]:
    """Writes a Roboflow-layout YOLO tree whose images are the VOC tree's JPEGs (hard links)
    and whose labels are its XML boxes; returns the image ids."""
    from slimdata.datasets import pascalvoc
    images, labels = os.path.join(root, 'train', 'images'), os.path.join(root, 'train', 'labels')
    os.makedirs(images)
    os.makedirs(labels)
    names = pascalvoc.CLASS_NAMES[1:]
    with open(os.path.join(root, 'data.yaml'), 'w') as f:
        f.write(f'names: {list(names)!r}\n')
    ids = sorted(name[:-4] for name in os.listdir(os.path.join(voc_folder, 'Annotations')))
    for image_id in ids:
        jpeg = os.path.join(voc_folder, 'JPEGImages', image_id + '.jpg')
        os.link(jpeg, os.path.join(images, image_id + '.jpg'))
        width, height = Image.open(jpeg).size
        lines = []
        annotation = xml.etree.ElementTree.parse(
            os.path.join(voc_folder, 'Annotations', image_id + '.xml')).getroot()
        for element in annotation.iter('object'):
            box = element.find('bndbox')
            xmin, ymin, xmax, ymax = (float(box.findtext(tag)) - 1
                                      for tag in ('xmin', 'ymin', 'xmax', 'ymax'))
            lines.append(f'{names.index(element.findtext("name"))} '
                         f'{(xmin + xmax) / 2 / width:.6f} {(ymin + ymax) / 2 / height:.6f} '
                         f'{(xmax - xmin) / width:.6f} {(ymax - ymin) / height:.6f}\n')
        with open(os.path.join(labels, image_id + '.txt'), 'w') as f:
            f.write(''.join(lines))
    return ids


def cpu_us_per_image(encode: Callable[[str], object], ids: Sequence[str], passes: int = 3
                     ) -> float:
    """The best of `passes` passes over `ids` (page cache warm): process CPU µs per image."""
    best = float('inf')
    for _ in range(passes):
        started = time.process_time()
        for image_id in ids:
            encode(image_id)
        best = min(best, (time.process_time() - started) / len(ids) * 1e6)
    return best


def speed(work_root: str, num_images: int) -> str:
    """`yolo.encode_item` beside `pascalvoc.encode_image` on the same synthetic VOC images
    (500x375 JPEGs, 1-6 objects): CPU µs per image of each, in this process, side by side."""
    from slimdata.datasets import convert_utils, detection, pascalvoc, synthetic, yolo
    root = os.path.join(work_root, 'speed')
    shutil.rmtree(root, ignore_errors=True)
    voc = synthetic.make_voc_tree(os.path.join(root, 'voc'), num_images=num_images,
                                  splits={'trainval': 1.0})
    ids = yolo_tree_from_voc(voc, os.path.join(root, 'yolo'))
    list_file = os.path.join(voc, 'ImageSets', 'Main', 'trainval.txt')
    voc_policy = convert_utils.SourcePolicy(voc)
    yolo_policy = convert_utils.SourcePolicy(os.path.join(root, 'yolo'))
    names = dict(enumerate(pascalvoc.CLASS_NAMES[1:]))
    classes = detection.Classes.from_names(pascalvoc.CLASS_NAMES[1:])
    folder = os.path.join(root, 'yolo', 'train')

    def encode_yolo(image_id: str) -> object:
        return yolo.encode_item(
            (os.path.join(folder, 'images', image_id + '.jpg'),
             os.path.join(folder, 'labels', image_id + '.txt')), names, classes, 'ssd', 'clip',
            'error', os.path.join(folder, 'images'), yolo_policy)

    def encode_voc(image_id: str) -> object:
        return pascalvoc.encode_image(image_id, voc, list_file, policy=voc_policy)

    # Interleaved, so that both see the same machine load.
    voc_us, yolo_us = [], []
    for _ in range(3):
        voc_us.append(cpu_us_per_image(encode_voc, ids, passes=1))
        yolo_us.append(cpu_us_per_image(encode_yolo, ids, passes=1))
    return (f'speed, {len(ids)} synthetic VOC images (500x375 JPEG) as VOC and as YOLO, best of '
            f'3: voc {min(voc_us):.0f} CPU µs/image, yolo {min(yolo_us):.0f} CPU µs/image '
            f'(yolo/voc {min(yolo_us) / min(voc_us):.2f})')


COLUMNS = ('dataset', 'format', 'images', 'objects', 'classes', 'equal', 'convert', 'training')


def print_table(rows: List[Dict[str, str]]) -> None:
    """The table, as Markdown (docs/own-data.md holds it), then each row's details."""
    print('| ' + ' | '.join(COLUMNS) + ' |')
    print('|' + '|'.join('---' for _ in COLUMNS) + '|')
    for row in rows:
        print('| ' + ' | '.join(row.get(column, row.get('error', '') if column == 'equal'
                                         else '') for column in COLUMNS) + ' |')
    print()
    for row in rows:
        print(f'{row["dataset"]}: {row["repo"]} at {row["commit"]}'
              + ''.join(f'; {key}: {row[key]}' for key in ('splits', 'error',
                                                          'first difference') if key in row))


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('snapshots', nargs='*', metavar='SNAPSHOT',
                        help=f'checkouts of the repositories, named as in {list(DATASETS)}')
    parser.add_argument('--work', default='/tmp/own_data_work',
                        help='where the records and training runs go (default: %(default)s)')
    parser.add_argument('--steps', type=int, default=20, help='training steps per dataset')
    parser.add_argument('--speed', type=int, default=0, metavar='N',
                        help='also time the YOLO and VOC converters per image on N synthetic '
                             'images (0: not)')
    args = parser.parse_args(argv)
    if args.speed:
        print(speed(args.work, args.speed))
    rows = []
    for src in args.snapshots:
        name = os.path.basename(os.path.normpath(src))
        if name not in DATASETS:
            parser.error(f'{src}: unknown snapshot {name!r}; known: {list(DATASETS)}')
        rows.append(bench(name, DATASETS[name], os.path.abspath(src), args.work, args.steps))
        print(f'{name}: done', file=sys.stderr)
    if rows:
        print_table(rows)
    return 0 if all('error' not in row and row['equal'].split('/')[0] ==
                    row['equal'].split('/')[1] for row in rows) else 1


if __name__ == '__main__':
    sys.exit(main())
