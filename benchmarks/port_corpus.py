"""`slimdata port` on real repositories, end to end: port, their converter, training, eval.

    python benchmarks/port_corpus.py --work /tmp/corpus SNAPSHOT_DIR... [--markdown]

Each SNAPSHOT_DIR is a checkout fetched by hand (not in CI, never in this repository) of a
repository this script recognises by its files (`RECIPES`):

- SSD-Tensorflow (balancap): `tf_convert_data.py` + `train_ssd_network.py`;
- models/research/slim, contrib era or tf_slim era: `train_image_classifier.py`;
- deeplab: `research/deeplab/train.py` with `research/slim` beside it;
- attention_ocr: `python/train.py` + `python/datasets/fsns.py`;
- the Object Detection API: `research/object_detection/legacy/train.py`;
- MeasureDetector (a vendored OD API trained through `tf.estimator`, its `model_main.py`):
  `MeasureDetector/create_tf_record_from_individual_json_files.py` +
  `research/object_detection/model_main.py`;
- written for Python 2: pixel_link and seglink (dengdan's text detectors, each with the
  `pylib` submodule, which a fetch does not bring: place dengdan/pylib at the commit the
  repository pins in SNAPSHOT/pylib), `train_pixel_link.py` / `train_seglink.py` +
  `pylib/src/util`; TextBoxes-TensorFlow (2017): `Train.py` + `datasets/data2record.py`;
- written for `tf.estimator`: tf-estimator-example (joe-antognini, 2018, Python 2, MNIST):
  `convert_to_records.py` + `trainer.py`.

For each: `slimdata port SNAPSHOT WORK/NAME/ported` (with no hand edit, ever), a small
synthetic tree in the dataset's published layout (written here with numpy and Pillow, not by
slimdata), the repository's own converter on it, a few training steps of its own training
script, and its own evaluation where it has one. Every step runs in a subprocess with a
timeout; downloads are given their files locally (pre-placed archives, or a loopback HTTP
proxy serving them from disk), and any other network access is pointed at a closed loopback
port. Prints one row per step: exit status, seconds, and the evidence of success (a
checkpoint of the last step, the records written, the metric printed).

What the repositories need beyond slimdata's own dependencies, on the PYTHONPATH of this
command: attention_ocr, `tf-keras` (its LSTM cell, `slimdata.contrib.rnn`); deeplab 2024,
`tf-keras` installed when it is ported (Keras 2 as `tf.keras`, `slimdata.port.entry`); the Object
Detection API, `grpcio-tools` (protoc, its install step) and `lxml` (its converter);
MeasureDetector, the same with `contextlib2` (its converter), `matplotlib` and `scipy`;
pixel_link and seglink, `opencv-python-headless`, `matplotlib` and `setproctitle` (pylib's
imports) and Cython (pixel_link's `pyximport`); TextBoxes-TensorFlow, `scipy`,
`opencv-python-headless` and `scikit-image`.

A slim repository is also trained on a local ps + 2 workers cluster, on the flowers records its
own converter wrote, by `benchmarks/cluster_slim.py` (its `run_cluster_training`).
"""

import argparse
import dataclasses
import gzip
import http.server
import importlib.util
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np
from PIL import Image

HERE = pathlib.Path(__file__).resolve().parent
STEP_TIMEOUT = 900  # seconds; a hang guard (a starved input queue waits forever), not a measure
VOC_CLASSES = ('aeroplane', 'bicycle', 'bird', 'boat', 'bottle', 'bus', 'car', 'cat', 'chair',
               'cow', 'diningtable', 'dog', 'horse', 'motorbike', 'person', 'pottedplant',
               'sheep', 'sofa', 'train', 'tvmonitor')


@dataclasses.dataclass
class Row:
    """One line of the table: a step of a repository's run."""
    repository: str
    step: str
    status: str
    seconds: float
    result: str


# -- running steps -------------------------------------------------------------------------------

def _environment(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    env = dict(os.environ)
    env.update({'TF_CPP_MIN_LOG_LEVEL': '2', 'CUDA_VISIBLE_DEVICES': '',
                # No network: anything not served below fails at once on a closed port.
                'http_proxy': 'http://127.0.0.1:9', 'https_proxy': 'http://127.0.0.1:9',
                'HTTP_PROXY': 'http://127.0.0.1:9', 'HTTPS_PROXY': 'http://127.0.0.1:9',
                'PYTHONDONTWRITEBYTECODE': '1'})
    for key, value in (extra or {}).items():
        if key == 'PYTHONPATH' and env.get(key):
            value = f'{value}{os.pathsep}{env[key]}'  # the caller's (extra packages) stay
        env[key] = value
    return env


def run_step(rows: List[Row], repository: str, step: str, argv: Sequence[str],
             cwd: pathlib.Path, log: pathlib.Path, check: Callable[[str], str],
             env: Optional[Dict[str, str]] = None, timeout: float = STEP_TIMEOUT) -> bool:
    """Runs `argv` in `cwd`, logs its output to `log`, and adds its row; True if it passed.

    `check(output)` returns the evidence of success, or raises ValueError saying what is
    missing.
    """
    started = time.monotonic()
    try:
        done = subprocess.run(list(argv), cwd=cwd, env=_environment(env), capture_output=True,
                              text=True, timeout=timeout, check=False)
        output, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as expired:
        output, code = f'{expired.stdout or ""}{expired.stderr or ""}', None
    seconds = time.monotonic() - started
    log.write_text(f'$ {" ".join(argv)}\n(in {cwd})\n{output}', encoding='utf-8')
    if code != 0:
        status = 'timeout' if code is None else f'exit {code}'
        rows.append(Row(repository, step, status, seconds, _last_error(output)))
        return False
    try:
        evidence = check(output)
    except ValueError as error:
        rows.append(Row(repository, step, 'exit 0, no result', seconds, str(error)))
        return False
    rows.append(Row(repository, step, 'exit 0', seconds, evidence))
    return True


def _last_error(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    # The exception's line, dotted names included; TensorFlow's "Graph execution error:"
    # says nothing: the error it wraps is logged above it.
    errors = [line for line in lines if re.match(r'^[\w.]*(Error|Exception)\b', line.strip())
              and not line.rstrip().endswith('Graph execution error:')]
    return (errors or lines or ['(no output)'])[-1].strip()[:200]


def checkpoint(folder: pathlib.Path, step: int) -> Callable[[str], str]:
    def check(_output: str) -> str:
        index = folder / f'model.ckpt-{step}.index'
        if not index.exists():
            raise ValueError(f'no {index.name} in {folder}')
        return f'{index.name} written'
    return check


def records(folder: pathlib.Path, pattern: str) -> Callable[[str], str]:
    def check(_output: str) -> str:
        import tensorflow as tf
        files = sorted(folder.glob(pattern))
        count = sum(1 for name in files for _ in tf.data.TFRecordDataset(str(name)))
        if not count:
            raise ValueError(f'no records in {folder}/{pattern}')
        return f'{count} records in {len(files)} files'
    return check


def printed(pattern: str, what: str) -> Callable[[str], str]:
    def check(output: str) -> str:
        found = re.findall(pattern, output)
        if not found:
            raise ValueError(f'{what} not printed')
        return f'{what}: {found[-1]}'
    return check


# -- porting -------------------------------------------------------------------------------------

def port(rows: List[Row], repository: str, source: pathlib.Path, work: pathlib.Path) -> bool:
    ported = work / 'ported'
    report = work / 'port.json'

    def check(output: str) -> str:
        data = json.loads(report.read_text())
        speed = re.findall(r'porting: done, ([\d,]+) lines in ([\d.]+) s \(([\d,]+) lines/s\)',
                           output)
        notes = [note for file in data['files'] for note in file['notes']]
        changed = sum(1 for file in data['files'] if file['changed'])
        count = {kind: sum(1 for note in notes if note['kind'] == kind)
                 for kind in ('changed', 'not ported', 'to check')}
        return (f"{data['files_scanned']} files, {changed} changed, {count['changed']} changes, "
                f"{count['not ported']} not ported, {count['to check']} to check, "
                f"{len(data['problems'])} problems"
                + (f'; {speed[-1][0]} lines, passes {speed[-1][1]} s ({speed[-1][2]} lines/s)'
                   if speed else ''))
    return run_step(rows, repository, 'slimdata port', [
        sys.executable, '-m', 'slimdata', 'port', str(source), str(ported), '--json',
        str(report)], work, work / 'port.log', check, timeout=4 * STEP_TIMEOUT)


# -- synthetic data in published layouts ---------------------------------------------------------

def _image(rng: np.random.Generator, height: int, width: int) -> Image.Image:
    return Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8))


def voc_detection_tree(root: pathlib.Path, count: int, rng: np.random.Generator) -> None:
    """Pascal VOC: JPEGImages/*.jpg, Annotations/*.xml (boxes), ImageSets/Main/*.txt (the
    split, and aeroplane_{train,val}.txt, which the OD API's converter lists images by)."""
    for folder in ('JPEGImages', 'Annotations', 'ImageSets/Main'):
        (root / folder).mkdir(parents=True, exist_ok=True)
    names = [f'{2008_000000 + index:06d}' for index in range(count)]
    for name in names:
        height, width = int(rng.integers(120, 200)), int(rng.integers(150, 260))
        _image(rng, height, width).save(root / 'JPEGImages' / f'{name}.jpg', quality=90)
        objects = []
        for _ in range(int(rng.integers(1, 3))):
            x0, y0 = int(rng.integers(1, width // 2)), int(rng.integers(1, height // 2))
            x1, y1 = int(rng.integers(x0 + 10, width)), int(rng.integers(y0 + 10, height))
            objects.append(
                f'<object><name>{rng.choice(VOC_CLASSES)}</name><pose>Unspecified</pose>'
                '<truncated>0</truncated><difficult>0</difficult><bndbox>'
                f'<xmin>{x0}</xmin><ymin>{y0}</ymin><xmax>{x1}</xmax><ymax>{y1}</ymax>'
                '</bndbox></object>')
        (root / 'Annotations' / f'{name}.xml').write_text(
            f'<annotation><folder>{root.name}</folder><filename>{name}.jpg</filename><size>'
            f'<width>{width}</width><height>{height}</height><depth>3</depth></size>'
            f'<segmented>0</segmented>{"".join(objects)}</annotation>')
    (root / 'ImageSets/Main/trainval.txt').write_text('\n'.join(names) + '\n')
    half = count // 2
    for split, part in (('train', names[:half]), ('val', names[half:])):
        (root / f'ImageSets/Main/aeroplane_{split}.txt').write_text(
            ''.join(f'{name}  1\n' for name in part))


def voc_segmentation_tree(root: pathlib.Path, rng: np.random.Generator,
                          splits: Sequence = (('train', 1464), ('val', 1449))) -> None:
    """Pascal VOC 2012 segmentation: JPEGImages, SegmentationClass (palette PNGs, 255 = the
    border), ImageSets/Segmentation/{train,val}.txt, with the published split sizes (deeplab
    states them, and slimdata's reader checks an epoch against them)."""
    for folder in ('JPEGImages', 'SegmentationClass', 'ImageSets/Segmentation'):
        (root / folder).mkdir(parents=True, exist_ok=True)
    palette = [value for index in range(256) for value in
               (index * 37 % 256, index * 91 % 256, index * 53 % 256)]
    start = 0
    for split, count in splits:
        names = [f'2007_{index:06d}' for index in range(start, start + count)]
        start += count
        for name in names:
            _image(rng, 48, 64).save(root / 'JPEGImages' / f'{name}.jpg', quality=90)
            label = rng.integers(0, 21, (48, 64), dtype=np.uint8)
            label[0, :] = 255
            png = Image.fromarray(label, mode='P')
            png.putpalette(palette)
            png.save(root / 'SegmentationClass' / f'{name}.png')
        (root / f'ImageSets/Segmentation/{split}.txt').write_text('\n'.join(names) + '\n')


def mnist_files(root: pathlib.Path, rng: np.random.Generator, train: int = 60000,
                test: int = 10000) -> None:
    """MNIST's four gzipped IDX files, as the converter would download them (slim's reads
    exactly 60,000 and 10,000 images; each here is black but for a random bright square)."""
    root.mkdir(parents=True, exist_ok=True)
    for prefix, count in (('train', train), ('t10k', test)):
        images = np.zeros((count, 28, 28), np.uint8)
        corners = rng.integers(0, 24, (count, 2))
        for image, (row, column) in zip(images, corners):
            image[row:row + 4, column:column + 4] = 255
        labels = rng.integers(0, 10, count, dtype=np.uint8)
        with gzip.open(root / f'{prefix}-images-idx3-ubyte.gz', 'wb') as stream:
            stream.write(np.array([2051, count, 28, 28], '>i4').tobytes() + images.tobytes())
        with gzip.open(root / f'{prefix}-labels-idx1-ubyte.gz', 'wb') as stream:
            stream.write(np.array([2049, count], '>i4').tobytes() + labels.tobytes())


def flowers_archive(path: pathlib.Path, rng: np.random.Generator, per_class: int = 80) -> None:
    """flower_photos.tgz: flower_photos/<class>/*.jpg for the five classes (slim's converter
    puts 350 images in validation and the rest in train)."""
    with tarfile.open(path, 'w:gz') as archive:
        for name in ('daisy', 'dandelion', 'roses', 'sunflowers', 'tulips'):
            for index in range(per_class):
                data = io.BytesIO()
                _image(rng, 80, 100).save(data, format='JPEG')
                info = tarfile.TarInfo(f'flower_photos/{name}/{index}.jpg')
                info.size = data.tell()
                data.seek(0)
                archive.addfile(info, data)


class _ArchiveProxy(http.server.BaseHTTPRequestHandler):
    """A loopback HTTP proxy that serves files of one folder by their name, whatever host
    the URL names (how a converter's hard-coded http:// download is given a local file)."""

    folder = pathlib.Path('.')

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        path = self.folder / self.path.rstrip('/').rsplit('/', 1)[-1]
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        self.send_response(200)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


def serve_folder(folder: pathlib.Path) -> http.server.ThreadingHTTPServer:
    handler = type('Handler', (_ArchiveProxy,), {'folder': folder})
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def unrelated_checkpoint(prefix: pathlib.Path) -> pathlib.Path:
    """A checkpoint of one variable no model has (deeplab 2018 requires
    --tf_initial_checkpoint; it then logs that there is nothing to restore)."""
    code = ('import tensorflow as tf\ntf.compat.v1.disable_eager_execution()\n'
            "v = tf.compat.v1.get_variable('unrelated', [1])\n"
            'with tf.compat.v1.Session() as s:\n'
            '    s.run(tf.compat.v1.global_variables_initializer())\n'
            f'    tf.compat.v1.train.Saver().save(s, {str(prefix)!r})\n')
    subprocess.run([sys.executable, '-c', code], check=True, env=_environment(),
                   capture_output=True)
    return prefix


# -- the recipes ---------------------------------------------------------------------------------

def ssd_tensorflow(rows: List[Row], name: str, ported: pathlib.Path, work: pathlib.Path,
                   steps: int) -> None:
    rng = np.random.default_rng(0)
    voc = work / 'VOC2007'
    voc_detection_tree(voc, 12, rng)
    (work / 'tfrecords').mkdir(exist_ok=True)  # the converter writes into an existing folder
    python = sys.executable
    for split in ('train', 'test'):
        if not run_step(rows, name, f'tf_convert_data.py ({split})', [
                python, 'tf_convert_data.py', '--dataset_name=pascalvoc',
                f'--dataset_dir={voc}/', f'--output_name=voc_2007_{split}',
                f'--output_dir={work / "tfrecords"}'], ported, work / f'convert_{split}.log',
                records(work / 'tfrecords', f'voc_2007_{split}_*.tfrecord')):
            return
    train = work / 'train'
    if not run_step(rows, name, f'train_ssd_network.py ssd_300_vgg, {steps} steps', [
            python, 'train_ssd_network.py', f'--dataset_dir={work / "tfrecords"}',
            '--dataset_name=pascalvoc_2007', '--dataset_split_name=train',
            '--model_name=ssd_300_vgg', '--batch_size=2', f'--max_number_of_steps={steps}',
            f'--train_dir={train}', '--save_interval_secs=6000', '--num_readers=1',
            '--num_preprocessing_threads=1'], ported, work / 'train.log',
            checkpoint(train, steps)):
        return
    run_step(rows, name, 'eval_ssd_network.py, 2 batches', [
        python, 'eval_ssd_network.py', f'--eval_dir={work / "eval"}',
        f'--dataset_dir={work / "tfrecords"}', '--dataset_name=pascalvoc_2007',
        '--dataset_split_name=test', '--model_name=ssd_300_vgg',
        f'--checkpoint_path={train}', '--batch_size=1', '--max_num_batches=2'],
        ported, work / 'eval.log', printed(r'AP_VOC07/mAP\S*\s*\[?([-\d.e]+)', 'mAP VOC07'))


SLIM_MODELS = (('lenet', 'mnist'), ('cifarnet', 'flowers'), ('mobilenet_v1', 'flowers'),
               ('inception_v1', 'flowers'), ('resnet_v1_50', 'flowers'),
               ('nasnet_mobile', 'flowers'))


def slim(rows: List[Row], name: str, ported: pathlib.Path, work: pathlib.Path,
         steps: int) -> None:
    rng = np.random.default_rng(1)
    data = {'mnist': work / 'mnist', 'flowers': work / 'flowers'}
    mnist_files(data['mnist'], rng)
    served = work / 'served'
    served.mkdir(exist_ok=True)
    flowers_archive(served / 'flower_photos.tgz', rng)
    server = serve_folder(served)
    proxy = {'http_proxy': f'http://127.0.0.1:{server.server_port}'}
    python = sys.executable
    try:
        for dataset, folder in data.items():
            if not run_step(rows, name, f'download_and_convert_data.py {dataset}', [
                    python, 'download_and_convert_data.py', f'--dataset_name={dataset}',
                    f'--dataset_dir={folder}'], ported, work / f'convert_{dataset}.log',
                    records(folder, f'{dataset}_*.tfrecord'), env=proxy):
                return
    finally:
        server.shutdown()
    for model, dataset in SLIM_MODELS:
        train = work / f'train_{model}'
        if not run_step(rows, name, f'train_image_classifier.py {model} ({dataset}), '
                                    f'{steps} steps', [
                python, 'train_image_classifier.py', f'--dataset_name={dataset}',
                '--dataset_split_name=train', f'--dataset_dir={data[dataset]}',
                f'--model_name={model}', '--batch_size=2', f'--max_number_of_steps={steps}',
                f'--train_dir={train}', '--clone_on_cpu=True', '--num_readers=1',
                '--num_preprocessing_threads=1', '--save_interval_secs=6000',
                '--log_every_n_steps=1'], ported, work / f'train_{model}.log',
                checkpoint(train, steps)):
            continue
        split = 'test' if dataset == 'mnist' else 'validation'
        run_step(rows, name, f'eval_image_classifier.py {model}, 2 batches', [
            python, 'eval_image_classifier.py', f'--dataset_name={dataset}',
            f'--dataset_split_name={split}', f'--dataset_dir={data[dataset]}',
            f'--model_name={model}', '--batch_size=2', '--max_num_batches=2',
            f'--checkpoint_path={train}', f'--eval_dir={work / ("eval_" + model)}'],
            ported, work / f'eval_{model}.log',
            printed(r'eval/Accuracy\[([\d.]+)\]', 'accuracy'))
    cluster_training(rows, name, ported, data['flowers'], work, steps)


def cluster_training(rows: List[Row], name: str, slim_dir: pathlib.Path,
                     dataset_dir: pathlib.Path, work: pathlib.Path, steps: int) -> None:
    """The hook for benchmarks/cluster_slim.py (ps + 2 workers on loopback), if present."""
    module_path = HERE / 'cluster_slim.py'
    if not module_path.exists():
        rows.append(Row(name, 'cluster (ps + 2 workers)', 'not run', 0.0,
                        'benchmarks/cluster_slim.py missing'))
        return
    spec = importlib.util.spec_from_file_location('cluster_slim', module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    started = time.monotonic()
    try:
        result = module.run_cluster_training(slim_dir, dataset_dir, work / 'cluster', steps)
    except Exception as error:  # noqa: BLE001 - any failure of the run is this row's result
        rows.append(Row(name, 'cluster (ps + 2 workers)', 'failed',
                        time.monotonic() - started, f'{type(error).__name__}: {error}'[:200]))
        return
    workers = '; '.join(
        f"{task}: exit {result[task]['exit']}, {result[task]['local_steps']} local steps"
        + (' (the known sync end)' if result[task]['known_sync_end'] else '')
        for task in ('worker0', 'worker1'))
    rows.append(Row(name, 'cluster (ps + 2 workers)', 'ok' if result['ok'] else 'not ok',
                    time.monotonic() - started,
                    f"lenet, chief's last checkpoint at step {result['global_step']}; {workers}"))


def deeplab(rows: List[Row], name: str, ported: pathlib.Path, work: pathlib.Path,
            steps: int) -> None:
    research = ported / 'research'
    env = {'PYTHONPATH': f'{research}{os.pathsep}{research / "slim"}'}
    rng = np.random.default_rng(2)
    voc = work / 'VOC2012'
    voc_segmentation_tree(voc, rng)
    python = sys.executable
    datasets = research / 'deeplab' / 'datasets'
    if not run_step(rows, name, 'remove_gt_colormap.py', [
            python, str(datasets / 'remove_gt_colormap.py'),
            f'--original_gt_folder={voc / "SegmentationClass"}',
            f'--output_dir={voc / "SegmentationClassRaw"}'], research, work / 'colormap.log',
            lambda _: f'{len(list((voc / "SegmentationClassRaw").glob("*.png")))} PNGs',
            env=env):
        return
    tfrecord = work / 'tfrecord'
    tfrecord.mkdir(exist_ok=True)
    if not run_step(rows, name, 'build_voc2012_data.py', [
            python, str(datasets / 'build_voc2012_data.py'),
            f'--image_folder={voc / "JPEGImages"}',
            f'--semantic_segmentation_folder={voc / "SegmentationClassRaw"}',
            f'--list_folder={voc / "ImageSets/Segmentation"}', '--image_format=jpg',
            f'--output_dir={tfrecord}'], research, work / 'convert.log',
            records(tfrecord, '*.tfrecord'), env=env):
        return
    train_py = (research / 'deeplab' / 'train.py').read_text()
    multi = "DEFINE_multi_integer('train_crop_size'" in train_py
    crop = ['--train_crop_size=65', '--train_crop_size=65'] if multi else [
        '--train_crop_size=65,65']
    initial = ([f'--tf_initial_checkpoint={unrelated_checkpoint(work / "unrelated.ckpt")}']
               if "mark_flag_as_required('tf_initial_checkpoint')" in train_py else [])
    train = work / 'train'
    if not run_step(rows, name, f'deeplab/train.py mobilenet_v2, {steps} steps', [
            python, str(research / 'deeplab' / 'train.py'), '--logtostderr',
            f'--training_number_of_steps={steps}', '--train_split=train',
            '--model_variant=mobilenet_v2', *crop, '--train_batch_size=2', '--num_clones=1',
            '--dataset=pascal_voc_seg', f'--dataset_dir={tfrecord}',
            f'--train_logdir={train}', '--save_interval_secs=6000', *initial],
            research, work / 'train.log', checkpoint(train, steps), env=env):
        return
    eval_crop = (['--eval_crop_size=65', '--eval_crop_size=65'] if multi
                 else ['--eval_crop_size=65,65'])
    run_step(rows, name, 'deeplab/eval.py, one evaluation', [
        python, str(research / 'deeplab' / 'eval.py'), '--logtostderr', '--eval_split=val',
        '--model_variant=mobilenet_v2', *eval_crop, f'--checkpoint_dir={train}',
        f'--eval_logdir={work / "eval"}', '--dataset=pascal_voc_seg',
        f'--dataset_dir={tfrecord}', '--max_number_of_evaluations=1'],
        research, work / 'eval.log', printed(r'miou_1\.0.*?\[([\d.]+)\]', 'mIoU'), env=env)


def fsns_tree(root: pathlib.Path, charset: pathlib.Path, rng: np.random.Generator,
              count: int = 8) -> None:
    """FSNS as attention_ocr reads it: charset_size=134.txt, {train,test}/<split>-00000-of-00001
    records of four 150x150 views side by side (a PNG), 37 class codes padded with the null
    code 133, the unpadded codes and the text."""
    import tensorflow as tf
    codes = {int(line.split('\t')[0]): line.split('\t')[1]
             for line in charset.read_text(encoding='utf-8').splitlines() if '\t' in line}
    letters = [code for code, char in codes.items() if char.isalpha()]
    (root).mkdir(parents=True, exist_ok=True)
    shutil.copy(charset, root / charset.name)
    for split in ('train', 'test'):
        (root / split).mkdir(exist_ok=True)
        with tf.io.TFRecordWriter(str(root / split / f'{split}-00000-of-00001')) as writer:
            for _ in range(count):
                text = [int(code) for code in rng.choice(letters, int(rng.integers(3, 9)))]
                png = io.BytesIO()
                _image(rng, 150, 600).save(png, format='PNG')
                feature = {
                    'image/encoded': [png.getvalue()], 'image/format': [b'PNG'],
                    'image/width': [600], 'image/orig_width': [600],
                    'image/class': text + [133] * (37 - len(text)),
                    'image/unpadded_class': text,
                    'image/text': [''.join(codes[code] for code in text).encode('utf-8')]}
                example = tf.train.Example(features=tf.train.Features(feature={
                    key: (tf.train.Feature(bytes_list=tf.train.BytesList(value=value))
                          if isinstance(value[0], bytes)
                          else tf.train.Feature(int64_list=tf.train.Int64List(value=value)))
                    for key, value in feature.items()}))
                writer.write(example.SerializeToString())


def attention_ocr(rows: List[Row], name: str, ported: pathlib.Path, work: pathlib.Path,
                  steps: int) -> None:
    python_dir = ported / 'python'
    data = work / 'fsns'
    fsns_tree(data, python_dir / 'datasets/testdata/fsns/charset_size=134.txt',
              np.random.default_rng(3))
    rows.append(Row(name, 'converter', 'none', 0.0, 'it has none (FSNS is downloaded as '
                                                    'records): 8 records per split written '
                                                    'here in its layout'))
    train = work / 'train'
    if not run_step(rows, name, f'train.py (attention, autoregression), {steps} steps', [
            sys.executable, 'train.py', f'--dataset_dir={data}', '--batch_size=2',
            f'--max_number_of_steps={steps}', f'--train_log_dir={train}',
            '--save_interval_secs=6000', '--save_summaries_secs=6000'], python_dir,
            work / 'train.log', checkpoint(train, steps)):
        return
    run_step(rows, name, 'eval.py, 2 batches', [
        sys.executable, 'eval.py', f'--dataset_dir={data}', '--split_name=test',
        '--batch_size=2', '--num_batches=2', f'--train_log_dir={train}',
        f'--eval_log_dir={work / "eval"}', '--number_of_steps=1'], python_dir,
        work / 'eval.log', printed(r'CharacterAccuracy.*?\[?([\d.]+)\]?', 'character accuracy'))


def _ssd_config(sample: str, records: pathlib.Path, label_map: pathlib.Path,
                steps: int) -> str:
    """The OD API's sample SSD config set up for the synthetic VOC records: 20 classes, batch
    2, `steps` steps, no fine-tune checkpoint, Pascal VOC metrics on 4 examples, one eval."""
    config = re.sub(r'num_classes: \d+', 'num_classes: 20', sample)
    config = re.sub(r'batch_size: \d+', 'batch_size: 2', config)
    config = re.sub(r'num_steps: \d+', f'num_steps: {steps}', config)
    config = re.sub(r'\s*(fine_tune_checkpoint|from_detection_checkpoint):.*', '', config)
    config = re.sub(r'metrics_set: "\w+"', 'metrics_set: "pascal_voc_detection_metrics"',
                    config)
    config = re.sub(r'num_examples: \d+', 'num_examples: 4\n  max_evals: 1', config)
    config = re.sub(r'\s*max_evals: \d+(?=[\s\S]*max_evals: 1)', '', config, count=1)
    paths = iter([records / 'pascal_train.record', label_map,
                  records / 'pascal_val.record', label_map])
    return re.sub(r'"PATH_TO_BE_CONFIGURED/[^"]*"', lambda _: f'"{next(paths)}"', config)


def _protoc(rows: List[Row], name: str, research: pathlib.Path, work: pathlib.Path,
            env: Dict[str, str]) -> bool:
    """The Object Detection API's install step: its protos compiled in place (grpcio-tools)."""
    protos = sorted(str(path.relative_to(research))
                    for path in (research / 'object_detection/protos').glob('*.proto'))
    return run_step(rows, name, 'protoc (its install step; grpcio-tools)', [
        sys.executable, '-m', 'grpc_tools.protoc', '-I.', '--python_out=.', *protos], research,
        work / 'protoc.log', lambda _: f'{len(protos)} protos compiled', env=env)


def object_detection(rows: List[Row], name: str, ported: pathlib.Path, work: pathlib.Path,
                     steps: int) -> None:
    research = ported / 'research'
    env = {'PYTHONPATH': f'{research}{os.pathsep}{research / "slim"}'}
    python = sys.executable
    if not _protoc(rows, name, research, work, env):
        return
    voc = work / 'VOCdevkit' / 'VOC2012'
    voc_detection_tree(voc, 12, np.random.default_rng(4))
    label_map = research / 'object_detection/data/pascal_label_map.pbtxt'
    for split in ('train', 'val'):
        if not run_step(rows, name, f'create_pascal_tf_record.py ({split})', [
                python, 'object_detection/dataset_tools/create_pascal_tf_record.py',
                f'--data_dir={voc.parent}', '--year=VOC2012', f'--set={split}',
                f'--output_path={work / f"pascal_{split}.record"}',
                f'--label_map_path={label_map}'], research, work / f'convert_{split}.log',
                records(work, f'pascal_{split}.record'), env=env):
            return
    config = work / 'ssd_mobilenet_v1_voc.config'
    config.write_text(_ssd_config(
        (research / 'object_detection/samples/configs/ssd_mobilenet_v1_pets.config').read_text(),
        work, label_map, steps))
    train = work / 'train'
    if not run_step(rows, name, f'legacy/train.py ssd_mobilenet_v1, {steps} steps', [
            python, 'object_detection/legacy/train.py', '--logtostderr',
            f'--train_dir={train}', f'--pipeline_config_path={config}'], research,
            work / 'train.log', checkpoint(train, steps), env=env):
        return
    run_step(rows, name, 'legacy/eval.py, one evaluation', [
        python, 'object_detection/legacy/eval.py', '--logtostderr', f'--checkpoint_dir={train}',
        f'--eval_dir={work / "eval"}', f'--pipeline_config_path={config}', '--run_once=True'],
        research, work / 'eval.log',
        printed(r'PascalBoxes_Precision/mAP@0.5IOU: ([-\d.e]+)', 'mAP@0.5'), env=env)



def measure_json_tree(root: pathlib.Path, count: int, rng: np.random.Generator) -> None:
    """MeasureDetector's own layout: one image and one JSON file of the same name per page
    (width, height, engraving, and lists of system_measures, stave_measures and staves as
    left/top/right/bottom pixels). Its converter refuses pages under 600x600, so these are
    a little larger."""
    root.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        height, width = int(rng.integers(600, 680)), int(rng.integers(640, 760))
        name = f'page-{index:02d}'
        _image(rng, height, width).save(root / f'{name}.jpg', quality=90)
        boxes: Dict[str, List[Dict[str, int]]] = {}
        for kind in ('system_measures', 'stave_measures', 'staves'):
            boxes[kind] = []
            for _ in range(int(rng.integers(1, 4))):
                left, top = int(rng.integers(0, width // 2)), int(rng.integers(0, height // 2))
                boxes[kind].append({'left': left, 'top': top,
                                    'right': int(rng.integers(left + 40, width)),
                                    'bottom': int(rng.integers(top + 40, height))})
        (root / f'{name}.json').write_text(json.dumps(
            {'width': width, 'height': height,
             'engraving': 'handwritten' if index % 2 else 'typeset', **boxes}))


def _measure_config(own: str, records: pathlib.Path, label_map: pathlib.Path, steps: int,
                    examples: int) -> str:
    """MeasureDetector's SSDLite config with its paths pointed at the records written here
    (its own point at MeasureDetector/data/muscima_pp/ and MeasureDetector/mapping.txt,
    relative to the repository's root), batch 2, `steps` steps, `examples` to evaluate."""
    config = own.replace('"MeasureDetector/data/muscima_pp/', f'"{records}/')
    config = config.replace('"MeasureDetector/mapping.txt"', f'"{label_map}"')
    config = re.sub(r'batch_size: \d+', 'batch_size: 2', config)
    config = re.sub(r'num_steps: \d+', f'num_steps: {steps}', config)
    return re.sub(r'num_examples: \d+', f'num_examples: {examples}', config)


def measure_detector(rows: List[Row], name: str, ported: pathlib.Path, work: pathlib.Path,
                     steps: int) -> None:
    """MeasureDetector (Max-Reger-Institut, 2019-2020): a vendored Object Detection API of TF
    1.13 and slim, trained through the OD API's Estimator program, `model_main.py`. Its README's
    steps: PYTHONPATH of the repository, research and research/slim; protoc; its converter of
    one JSON file per image (`create_tf_record_from_individual_json_files.py`, with its
    `mapping.txt`); `model_main.py` with its SSDLite config, which evaluates with COCO's
    metrics once training ends; then the evaluation alone (`--checkpoint_dir`, `--run_once`)."""
    research = ported / 'research'
    env = {'PYTHONPATH': os.pathsep.join(map(str, (ported, research, research / 'slim')))}
    python = sys.executable
    if not _protoc(rows, name, research, work, env):
        return
    pages = work / 'pages'
    measure_json_tree(pages, 20, np.random.default_rng(7))
    records_dir = work / 'records'
    source = ported / 'MeasureDetector'
    label_map = source / 'mapping.txt'
    if not run_step(rows, name, 'create_tf_record_from_individual_json_files.py', [
            python, 'create_tf_record_from_individual_json_files.py',
            f'--image_directory={pages}', f'--annotation_directory={pages}',
            f'--output_path_training_split={records_dir / "training.record"}',
            f'--output_path_validation_split={records_dir / "validation.record"}',
            f'--output_path_test_split={records_dir / "test.record"}', '--num_shards=1',
            f'--label_map_path={label_map}',
            '--included_classes=system_measures,stave_measures,staves'], source,
            work / 'convert.log', records(records_dir, '*.record-?????-of-00001'), env=env):
        return
    import tensorflow as tf
    examples = sum(1 for _ in tf.data.TFRecordDataset(
        str(records_dir / 'validation.record-00000-of-00001')))
    config = work / 'ssdlite_mobilenet_v2_muscima_pp.config'
    config.write_text(_measure_config(
        (source / 'configurations/muscima_pp_only/ssdlite_mobilenet_v2_muscima_pp.config')
        .read_text(), records_dir, label_map, steps, examples))
    train = work / 'train'
    coco_map = printed(r'Average Precision\s+\(AP\) @\[ IoU=0\.50:0\.95 \| area=\s*all \| '
                       r'maxDets=100 \] = ([-\d.]+)', 'COCO mAP')
    trained = run_step(
        rows, name, f'model_main.py ssdlite_mobilenet_v2, {steps} steps, train_and_evaluate', [
            python, 'object_detection/model_main.py', '--alsologtostderr',
            f'--pipeline_config_path={config}', f'--model_dir={train}',
            f'--num_train_steps={steps}'], research, work / 'train.log',
            lambda output: f'{checkpoint(train, steps)(output)}; {coco_map(output)}', env=env)
    # Its evaluation alone runs either way: with no checkpoint in --checkpoint_dir, the
    # Estimator evaluates the initialized model (as tf.estimator did).
    run_step(rows, name, 'model_main.py --checkpoint_dir --run_once, one evaluation'
                         + ('' if trained else ' (no checkpoint: the initialized model)'), [
        python, 'object_detection/model_main.py', '--alsologtostderr',
        f'--pipeline_config_path={config}', f'--model_dir={work / "eval"}',
        f'--checkpoint_dir={train}', '--run_once=True'], research, work / 'eval.log',
        coco_map, env=env)


def icdar2015_tree(root: pathlib.Path, rng: np.random.Generator,
                   splits: Sequence = (('training', 6), ('test', 4))) -> None:
    """ICDAR 2015 Challenge 4 as published: ch4_{training,test}_images/img_N.jpg and
    ch4_{training,test}_localization_transcription_gt/gt_img_N.txt, one quadrilateral a line
    (x1,y1,...,x4,y4,transcription; '###' for don't care), each file starting with a UTF-8
    byte order mark as the published ones do."""
    for split, count in splits:
        images = root / f'ch4_{split}_images'
        truth = root / f'ch4_{split}_localization_transcription_gt'
        images.mkdir(parents=True, exist_ok=True)
        truth.mkdir(parents=True, exist_ok=True)
        for index in range(1, count + 1):
            height, width = 96, 160
            _image(rng, height, width).save(images / f'img_{index}.jpg', quality=90)
            lines = []
            for word in range(int(rng.integers(1, 4))):
                x0, y0 = int(rng.integers(0, width - 40)), int(rng.integers(0, height - 20))
                x1, y1 = x0 + int(rng.integers(20, 40)), y0 + int(rng.integers(8, 20))
                text = '###' if word == 2 else f'word{word}'
                lines.append(f'{x0},{y0},{x1},{y0},{x1},{y1},{x0},{y1},{text}')
            (truth / f'gt_img_{index}.txt').write_bytes(
                b'\xef\xbb\xbf' + '\r\n'.join(lines).encode('utf-8') + b'\r\n')


def _text_detector(rows: List[Row], name: str, ported: pathlib.Path, work: pathlib.Path,
                   steps: int, script: str, records_folder: str, train_argv: Sequence[str],
                   test_script: str, test_argv: Sequence[str]) -> None:
    """pixel_link and seglink (dengdan's text detectors, with his pylib as the submodule
    `pylib`, on the PYTHONPATH as their README says): the ICDAR 2015 converter, whose paths
    are fixed under ~ (HOME is the work folder here), training, and the test script, which
    writes ICDAR's submission zip of the boxes it detects on the test images."""
    env = {'PYTHONPATH': f'{ported}{os.pathsep}{ported / "pylib" / "src"}', 'HOME': str(work)}
    challenge = work / 'dataset' / 'ICDAR2015' / 'Challenge4'
    icdar2015_tree(challenge, np.random.default_rng(5))
    converted = work / 'dataset' / records_folder / 'ICDAR'
    if not run_step(rows, name, 'datasets/icdar2015_to_tfrecords.py', [
            sys.executable, 'datasets/icdar2015_to_tfrecords.py'], ported,
            work / 'convert.log', records(converted, 'icdar2015_*.tfrecord'), env=env):
        return
    train = work / 'train'
    if not run_step(rows, name, f'{script}, {steps} steps', [
            sys.executable, script, f'--train_dir={train}', '--batch_size=2',
            f'--dataset_dir={converted}', '--dataset_name=icdar2015',
            '--dataset_split_name=train', f'--max_number_of_steps={steps}', *train_argv],
            ported, work / 'train.log', checkpoint(train, steps), env=env):
        return
    run_step(rows, name, f'{test_script} on the test images', [
        sys.executable, test_script, f'--checkpoint_path={train / f"model.ckpt-{steps}"}',
        f'--dataset_dir={challenge / "ch4_test_images"}', *test_argv], ported,
        work / 'test.log', printed(r'zip file created:\s*(\S+)', 'submission zip'), env=env)


def pixel_link(rows: List[Row], name: str, ported: pathlib.Path, work: pathlib.Path,
               steps: int) -> None:
    _text_detector(rows, name, ported, work, steps, 'train_pixel_link.py', 'pixel_link',
                   # scripts/train.sh's flags; its CKPT_PATH is unset: an empty checkpoint.
                   ['--train_image_width=128', '--train_image_height=128', '--num_gpus=1',
                    '--checkpoint_path=',
                    '--gpu_memory_fraction=-1', '--using_moving_average=1'],
                   'test_pixel_link.py', ['--eval_image_width=160', '--eval_image_height=96',
                                          '--gpu_memory_fraction=-1'])


def seglink(rows: List[Row], name: str, ported: pathlib.Path, work: pathlib.Path,
            steps: int) -> None:
    _text_detector(rows, name, ported, work, steps, 'train_seglink.py', 'SSD-tf',
                   ['--train_image_width=384', '--train_image_height=384', '--num_gpus=1',
                    '--gpu_memory_fraction=-1', '--train_with_ignored=0',
                    '--using_moving_average=0'],
                   'test_seglink.py', ['--eval_image_width=384', '--eval_image_height=384',
                                       '--gpu_memory_fraction=-1'])


def synthtext_tree(root: pathlib.Path, rng: np.random.Generator, count: int = 6) -> None:
    """SynthText as published: 1/*.jpg and gt.mat (MATLAB cells imnames, wordBB: 2 x 4 x
    words, or 2 x 4 for one word, charBB, txt), written with scipy.io."""
    import scipy.io
    (root / '1').mkdir(parents=True, exist_ok=True)
    names, words, chars, texts = [], [], [], []
    for index in range(count):
        height, width = 120, 160
        name = f'1/image_{index}.jpg'
        _image(rng, height, width).save(root / name, quality=90)
        count_words = int(rng.integers(1, 4))
        x0 = rng.uniform(0, width - 50, count_words)
        y0 = rng.uniform(0, height - 20, count_words)
        box = np.stack([np.stack([x0, x0 + 40, x0 + 40, x0]),
                        np.stack([y0, y0, y0 + 15, y0 + 15])])  # 2 x 4 x words
        names.append(np.array([name]))
        words.append(box[:, :, 0] if count_words == 1 else box)
        chars.append(box)
        texts.append(np.array(['word'] * count_words, dtype=object))
    cells = {}
    for key, values in (('imnames', names), ('wordBB', words), ('charBB', chars),
                        ('txt', texts)):
        cell = np.empty((1, count), dtype=object)
        for index, value in enumerate(values):
            cell[0, index] = value
        cells[key] = cell
    scipy.io.savemat(str(root / 'gt.mat'), cells)


def textboxes(rows: List[Row], name: str, ported: pathlib.Path, work: pathlib.Path,
              steps: int) -> None:
    """TextBoxes-TensorFlow (2017, on SSD-Tensorflow's code): datasets/data2record.py reads
    data/sythtext/gt.mat under the current folder and writes 1.tfrecord beside it; Train.py
    trains; it has no evaluation script."""
    env = {'PYTHONPATH': str(ported)}
    data = work / 'data' / 'sythtext'
    synthtext_tree(data, np.random.default_rng(6))
    if not run_step(rows, name, 'datasets/data2record.py', [
            sys.executable, str(ported / 'datasets' / 'data2record.py')], work,
            work / 'convert.log', records(data, '*.tfrecord'), env=env):
        return
    train = work / 'train'
    if not run_step(rows, name, f'Train.py, {steps} steps', [
            sys.executable, 'Train.py', f'--train_dir={train}', f'--dataset_dir={data}',
            '--batch_size=2', f'--max_number_of_steps={steps}', '--save_interval_secs=6000',
            '--save_summaries_secs=6000', '--num_readers=1',
            '--num_preprocessing_threads=1'], ported, work / 'train.log',
            checkpoint(train, steps), env=env):
        return
    rows.append(Row(name, 'eval', 'none', 0.0, 'it has no evaluation or test script'))


def summary(folder: pathlib.Path, tag: str) -> Callable[[str], str]:
    """The last value of `tag` in the event files of `folder` (an Estimator's evaluation
    writes its results there; its log says nothing below INFO)."""
    def check(_output: str) -> str:
        import tensorflow as tf
        found = [(event.step, value.simple_value)
                 for path in sorted(folder.glob('events.out.tfevents.*'))
                 for event in tf.compat.v1.train.summary_iterator(str(path))
                 for value in event.summary.value if value.tag == tag]
        if not found:
            raise ValueError(f'no {tag} in {folder}')
        step, value = max(found)
        return f'{tag} {value:.3f} at step {step}'
    return check


def _mnist_records(images: pathlib.Path, labels: pathlib.Path, path: pathlib.Path) -> None:
    """tf-estimator-example's records of MNIST's IDX files ('im': the 784 pixels as floats,
    'label'), written with TensorFlow's own writer."""
    import tensorflow as tf
    pixels = np.frombuffer(gzip.decompress(images.read_bytes())[16:], np.uint8)
    classes = np.frombuffer(gzip.decompress(labels.read_bytes())[8:], np.uint8)
    with tf.io.TFRecordWriter(str(path)) as writer:
        for image, label in zip(pixels.reshape(-1, 28 * 28).astype(float), classes):
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                'im': tf.train.Feature(float_list=tf.train.FloatList(value=image)),
                'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
            })).SerializeToString())


def tf_estimator_example(rows: List[Row], name: str, ported: pathlib.Path,
                         work: pathlib.Path, steps: int) -> None:
    """Its converter downloads MNIST's four files (served here from disk) and writes
    `train.tfrecords` and `test.tfrecords`; `trainer.py --mode=train` trains a small CNN with a
    tf.estimator.Estimator, `--mode=train_and_eval` evaluates on the training input (60,000
    examples, repeated) and on the test records, trains `--eval_freq` steps, and evaluates
    again (its `--mode=eval` waits for a checkpoint named `model`, which no Estimator writes).
    When its converter fails, training runs on records written here in its layout, and the
    step says so."""
    rng = np.random.default_rng(1)
    served, data = work / 'served', work / 'mnist'
    mnist_files(served, rng, train=64, test=32)
    data.mkdir()
    server = serve_folder(served)
    python = sys.executable
    try:
        converted = run_step(rows, name, 'convert_to_records.py (MNIST served from disk)', [
            python, 'convert_to_records.py', f'--data_dir={data}'], ported,
            work / 'convert.log', records(data, '*.tfrecords'),
            env={'http_proxy': f'http://127.0.0.1:{server.server_port}'})
    finally:
        server.shutdown()
    written_here = ''
    if not converted:
        for source, split in (('train', 'train'), ('t10k', 'test')):
            _mnist_records(served / f'{source}-images-idx3-ubyte.gz',
                           served / f'{source}-labels-idx1-ubyte.gz',
                           data / f'{split}.tfrecords')
        written_here = ' (on records written here: its converter failed)'
    model = work / 'model'
    # --learning_rate as its README gives it: the default 0.1 on raw 0-255 pixels diverges
    # (NaN loss) within a few steps.
    common = [python, 'trainer.py', '--batch_size=128', '--learning_rate=0.0001',
              '--shuffle_buffer_size=16',
              f'--train_file_pattern={data / "train.tfrecords"}',
              f'--eval_file_pattern={data / "test.tfrecords"}', f'--model_dir={model}']
    if not run_step(rows, name, f'trainer.py --mode=train, {steps} steps{written_here}', [
            *common, '--mode=train', f'--train_steps={steps}'], ported, work / 'train.log',
            checkpoint(model, steps)):
        return
    run_step(rows, name, f'trainer.py --mode=train_and_eval, {steps} steps more', [
        *common, '--mode=train_and_eval', f'--train_steps={steps}', f'--eval_freq={steps}'],
        ported, work / 'train_and_eval.log', summary(model / 'eval_test', 'accuracy'))


@dataclasses.dataclass
class Recipe:
    """How to recognise a repository (files relative to its root) and run it."""
    kind: str
    markers: Sequence[str]
    run: Callable


RECIPES = (
    Recipe('SSD-Tensorflow', ('tf_convert_data.py', 'train_ssd_network.py'), ssd_tensorflow),
    Recipe('models/research/slim', ('train_image_classifier.py',
                                    'datasets/download_and_convert_mnist.py'), slim),
    Recipe('deeplab', ('research/deeplab/train.py', 'research/slim/nets'), deeplab),
    # Before the Object Detection API's: it vendors one.
    Recipe('MeasureDetector (OD API model_main.py, tf.estimator)',
           ('MeasureDetector/create_tf_record_from_individual_json_files.py',
            'research/object_detection/model_main.py'), measure_detector),
    Recipe('Object Detection API (legacy/train.py)',
           ('research/object_detection/legacy/train.py',), object_detection),
    Recipe('attention_ocr', ('python/train.py', 'python/datasets/fsns.py'), attention_ocr),
    Recipe('pixel_link (Python 2)', ('train_pixel_link.py', 'pylib/src/util'), pixel_link),
    Recipe('seglink (Python 2)', ('train_seglink.py', 'pylib/src/util'), seglink),
    Recipe('TextBoxes-TensorFlow (Python 2)', ('Train.py', 'datasets/data2record.py'),
           textboxes),
    Recipe('tf-estimator-example (Python 2, tf.estimator)',
           ('convert_to_records.py', 'trainer.py'), tf_estimator_example),
)


#: Failures that are the repository's own (they fail on TF1 as well, or are Python 2 code), by
#: their message: the label of the row, and what no tool should fix, and why.
KNOWN_FAILURES = {
    "'str' object has no attribute 'decode'": (
        'Python 2 code',
        'attention_ocr (2019): datasets/fsns.py:82 read_charset decodes each line of a file it '
        "opened in text mode (`m.group(2).decode('utf-8')`, Python 2's str was bytes); in "
        'Python 3 the line is already text. Dropping the call is right only where the value '
        'is certainly text, which takes following it from the open through the regular '
        'expression (the 2024 copy dropped it by hand)'),
    'Can not convert a tuple into a Tensor or Operation': (
        'repository bug',
        "SSD-Tensorflow's own bug (balancap/SSD-Tensorflow#154, TF 1.4, 2017): "
        'eval_ssd_network.py passes eval_op=list(names_to_updates.values()), whose items '
        'are tuples of update ops (tf_extended metrics); slim.evaluation has required a flat '
        'list of ops since TF 1.4. Fixing it means changing their metric code, not a TF1 '
        'name'),
    'slice index -1 of dimension 0 out of bounds': (
        'repository bug',
        "TextBoxes-TensorFlow's own bug: nets/txtbox_300.py's ssd_losses takes val[-1] of "
        'tf.nn.top_k(k=n_neg), and n_neg is 0 when a feature map matches no box (its '
        'converter clips xmax/ymax to 1 pixel before normalising, so boxes are tiny); the same '
        'on TF 1.x'),
}


def _explain_known_failures(rows: List[Row]) -> None:
    for row in rows:
        for message, (label, explanation) in KNOWN_FAILURES.items():
            if row.status.startswith('exit') and row.status != 'exit 0' and (
                    message in row.result):
                row.status += f' ({label})'
                row.result += f' -- {explanation}'


def recognise(snapshot: pathlib.Path) -> Optional[Recipe]:
    return next((recipe for recipe in RECIPES
                 if all((snapshot / marker).exists() for marker in recipe.markers)), None)


def markdown(rows: List[Row]) -> str:
    lines = ['| repository | step | status | s | result |', '|---|---|---|---|---|']
    lines += [f'| {row.repository} | {row.step} | {row.status} | {row.seconds:.0f} | '
              f'{row.result.replace("|", "/")} |' for row in rows]
    return '\n'.join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('snapshots', nargs='+', type=pathlib.Path, metavar='SNAPSHOT_DIR')
    parser.add_argument('--work', type=pathlib.Path, required=True,
                        help='a folder for the ported copies, data and logs')
    parser.add_argument('--steps', type=int, default=3, help='training steps (default 3)')
    parser.add_argument('--markdown', action='store_true', help='print a markdown table')
    args = parser.parse_args(argv)
    rows: List[Row] = []
    for snapshot in args.snapshots:
        snapshot = snapshot.resolve()
        recipe = recognise(snapshot)
        name = f'{snapshot.name}'
        if recipe is None:
            rows.append(Row(name, 'recognise', 'skipped', 0.0, 'not a repository this '
                                                               'script knows'))
            continue
        name = f'{snapshot.name} ({recipe.kind})'
        work = (args.work / snapshot.name).resolve()
        if work.exists():
            shutil.rmtree(work)  # a converter finding old files would skip its work
        work.mkdir(parents=True)
        first = len(rows)
        if port(rows, name, snapshot, work):
            recipe.run(rows, name, work / 'ported', work, args.steps)
        # Each repository's rows as soon as it is done (a long run stopped keeps them).
        (work / 'rows.json').write_text(json.dumps([dataclasses.asdict(row)
                                                    for row in rows[first:]], indent=1))
        for row in rows[first:]:
            print(f'{row.repository}: {row.step}: {row.status}', file=sys.stderr)
    _explain_known_failures(rows)
    if args.markdown:
        print(markdown(rows))
    else:
        for row in rows:
            print(f'{row.repository:<40} {row.step:<55} {row.status:<18} {row.seconds:7.1f} s'
                  f'  {row.result}')
    return 0 if all(row.status in ('exit 0', 'ok', 'not run', 'none') or '(' in row.status
                    for row in rows) else 1


if __name__ == '__main__':
    sys.exit(main())
