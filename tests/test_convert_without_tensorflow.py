"""`slimdata convert` never imports TensorFlow: not in its own process, not in its worker
processes, not on Beam's workers.

TensorFlow costs a converter seconds and half a gigabyte per process before the first image,
for nothing: records are serialized with the protobuf library, the schema recorded in
dataset_info.json is declared without TensorFlow. Each conversion here runs in a subprocess
with a start-up hook (tests/import_watch/) that every Python process of the run loads: it
notes each process, and any that looks for `tensorflow`.
"""

import os
import subprocess
import sys

import pytest

from source_layouts import build_every_layout

WATCH_HOOK = os.path.join(os.path.dirname(__file__), 'import_watch')
HANG = 300  # a hang guard only

#: One conversion of every KIND: its source tree (built by `trees`) and its options.
CONVERSIONS = {
    'image-folder': ('shapes', ['--validation-ratio', '0.25']),
    'mnist-idx': ('mnist', []),
    'cifar10': ('cifar10', []),
    'cifar100': ('cifar100', []),
    'imagenet': ('imagenet', []),
    'voc': ('voc', ['--year', '2007', '--split', 'trainval']),
    'coco': ('coco', []),
    'voc-seg': ('seg', ['--split', 'train', '--num-classes', '6']),
    'cityscapes': ('cityscapes', ['--split', 'train']),
    'ade20k': ('ade20k', ['--split', 'train']),
    'yolo': ('yolo', ['--split', 'train']),
}


@pytest.fixture(scope='module')
def trees(tmp_path_factory):
    # 8 images: Beam's default 0.1 validation ratio leaves one in the validation split.
    return build_every_layout(tmp_path_factory.mktemp('trees'), images_per_class=4)


def watched(command, watch):
    """Runs `command` with the import watch; returns (the run, processes seen, the stacks of
    those that looked for tensorflow)."""
    env = {**os.environ, 'SLIMDATA_TEST_IMPORT_WATCH': str(watch),
           'PYTHONPATH': os.pathsep.join([WATCH_HOOK, os.environ.get('PYTHONPATH', '')])}
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=HANG)
    names = os.listdir(watch)
    stacks = [(watch / name).read_text() for name in names if name.startswith('tensorflow-')]
    return run, sum(name.startswith('process-') for name in names), stacks


def test_the_watch_sees_a_process_that_looks_for_tensorflow(tmp_path):
    run, processes, stacks = watched(
        [sys.executable, '-c', 'import importlib.util; importlib.util.find_spec("tensorflow")'],
        tmp_path)
    assert run.returncode == 0 and processes == 1 and len(stacks) == 1


def test_no_converter_imports_tensorflow_in_its_process(trees, tmp_path):
    """Every KIND, one after the other in one interpreter: sys.modules after each."""
    conversions = [(kind, str(trees / tree), str(tmp_path / kind), options)
                   for kind, (tree, options) in CONVERSIONS.items()]
    code = ('import sys\n'
            'from slimdata import cli\n'
            f'for kind, src, out, options in {conversions!r}:\n'
            '    status = cli.main(["convert", kind, src, out, "-q", *options])\n'
            '    print(kind, status, "tensorflow" in sys.modules)\n')
    (tmp_path / 'watch').mkdir()
    run, _, stacks = watched([sys.executable, '-c', code], tmp_path / 'watch')
    assert run.returncode == 0, run.stderr
    checked = [line for line in run.stdout.splitlines() if line.split(' ')[0] in CONVERSIONS]
    assert checked == [f'{kind} 0 False' for kind in CONVERSIONS]
    assert stacks == []


def test_worker_processes_import_no_tensorflow(trees, tmp_path):
    (tmp_path / 'watch').mkdir()
    run, processes, stacks = watched(
        [sys.executable, '-m', 'slimdata', 'convert', 'voc', str(trees / 'voc'),
         str(tmp_path / 'out'), '--year', '2007', '--split', 'trainval', '--processes', '2',
         '--shards', '2'], tmp_path / 'watch')
    assert run.returncode == 0, run.stderr
    assert processes >= 3  # the command and its two worker processes
    assert stacks == []


@pytest.mark.slow
def test_beam_workers_import_no_tensorflow(trees, tmp_path):
    """Beam's DirectRunner with two worker processes (its SDK harnesses), as a cluster's
    workers run the same per-example code."""
    (tmp_path / 'watch').mkdir()
    run, processes, stacks = watched(
        [sys.executable, '-m', 'slimdata', 'convert', 'image-folder', str(trees / 'shapes'),
         str(tmp_path / 'out'), '--shards', '2', '--runner', 'DirectRunner', '--',
         '--direct_running_mode=multi_processing', '--direct_num_workers=2'],
        tmp_path / 'watch')
    assert run.returncode == 0, run.stderr
    assert 'to a Beam pipeline' in run.stderr
    assert processes >= 3  # the command and Beam's two SDK worker processes
    assert stacks == []
