"""The converters agree: one set of common options, one meaning for each.

`--split A B` on every KIND; one default shard count (by size, TensorFlow Datasets' rule);
`--processes` (and the old `--workers`, which still works and says it is deprecated); `-q`
before or after the command; hidden files skipped and counted; voc-seg takes the same three
source folders as voc.
"""

import json
import os
import shutil
import subprocess
import sys
import warnings

import pytest

from slimdata import cli
from slimdata.datasets import classification, synthetic
from slimdata.records import dataset_info, writer
from test_cifar import make_cifar10, make_cifar100
from test_classification import build_mnist
from test_coco import build_coco2017
from test_imagenet import make_ilsvrc
from test_segmentation import build_ade20k, build_cityscapes

MiB = 1 << 20


@pytest.fixture(scope='module')
def trees(tmp_path_factory):
    base = tmp_path_factory.mktemp('trees')
    synthetic.make_image_folder(str(base / 'shapes'), num_classes=2, images_per_class=3,
                                image_size=16)
    build_mnist(str(base / 'mnist'), num_train=4, num_test=2)
    make_cifar10(base / 'cifar10', rows_per_batch=2)
    make_cifar100(base / 'cifar100', rows=2)
    make_ilsvrc(base / 'imagenet')
    synthetic.make_voc_tree(str(base / 'voc' / 'VOCdevkit'), num_images=4,
                            image_size=(48, 32), splits={'train': 0.5, 'val': 0.5})
    synthetic.make_voc_seg_tree(str(base / 'seg' / 'VOCdevkit'), num_images=4,
                                image_size=(48, 32), num_classes=6,
                                splits={'train': 0.5, 'val': 0.5})
    build_coco2017(base / 'coco', 'train2017')
    build_coco2017(base / 'coco', 'val2017')
    build_cityscapes(str(base / 'cityscapes'), 'train', ['aachen'], per_city=1)
    build_cityscapes(str(base / 'cityscapes'), 'val', ['bonn'], per_city=1)
    build_ade20k(str(base / 'ade20k'), 'training', 1)
    build_ade20k(str(base / 'ade20k'), 'validation', 1)
    return base


#: KIND: (its tree, its own options, --split asked for, the splits written).
SPLITS = {
    'image-folder': ('shapes', ['--validation-ratio', '0.5'], ['validation'], ['validation']),
    'mnist-idx': ('mnist', [], ['test'], ['test']),
    'cifar10': ('cifar10', ['--validation-ratio', '0.5'], ['validation', 'test'],
                ['validation', 'test']),
    'cifar100': ('cifar100', [], ['train', 'test'], ['train', 'test']),
    'imagenet': ('imagenet', [], ['validation'], ['validation']),
    'voc': ('voc', ['--year', '2007'], ['train', 'val'], ['train', 'val']),
    'coco': ('coco', [], ['val2017'], ['val2017']),
    'voc-seg': ('seg', ['--num-classes', '6'], ['val'], ['val']),
    'cityscapes': ('cityscapes', [], ['val', 'train'], ['val_fine', 'train_fine']),
    'ade20k': ('ade20k', [], ['val'], ['val']),
}


@pytest.mark.parametrize('kind', sorted(SPLITS))
def test_every_converter_takes_the_splits_to_write(trees, tmp_path, kind, capsys):
    tree, options, asked, written = SPLITS[kind]
    out = tmp_path / 'out'
    assert cli.main(['convert', kind, str(trees / tree), str(out), '--split', *asked, '-q',
                     *options]) == 0
    info = dataset_info.read_dataset_info(str(out))
    assert sorted(dataset_info.split_sizes(info)) == sorted(written)
    capsys.readouterr()
    # A split the source does not hold: one error line naming it, a usage error (exit 2).
    assert cli.main(['convert', kind, str(trees / tree), str(tmp_path / 'other'), '--split',
                     'nope', '-q', *options]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f'slimdata convert {kind}: error: ') and "'nope'" in error


@pytest.mark.parametrize('given', ['VOCdevkit/VOC2012', 'VOCdevkit', '.'])
def test_voc_seg_takes_the_folders_voc_takes(trees, tmp_path, given, capsys):
    src = trees / 'seg' / given
    assert cli.main(['convert', 'voc-seg', str(src), str(tmp_path / 'out'), '--split', 'train',
                     '--num-classes', '6']) == 0
    printed = capsys.readouterr()
    assert 'train: 2 records' in printed.out
    assert str(trees / 'seg' / 'VOCdevkit' / 'VOC2012') in printed.err


def test_voc_and_voc_seg_refuse_a_folder_of_neither_alike(tmp_path, capsys):
    for kind, year in (('voc', '2007'), ('voc-seg', '2012')):
        assert cli.main(['convert', kind, str(tmp_path), str(tmp_path / 'out'), '--year', year,
                         '--split', 'train']) == 1
        error = capsys.readouterr().err.strip().splitlines()[-1]
        assert f'{tmp_path} is not a Pascal VOC {year} tree' in error
        assert os.path.join(str(tmp_path), 'VOCdevkit', f'VOC{year}') in error


# ----------------------------------------------------------------------------------------------
# One default shard count: by size

@pytest.mark.parametrize('num_bytes, num_items, expected', [
    (0, 10, 1),                          # nothing: one shard
    (127 * MiB, 5000, 1),                # under 128 MiB: shards could not hold 64 MiB each
    (130 * MiB, 5000, 2),                # two of 65 MiB
    (450 * MiB, 5011, 4),                # VOC2007 trainval: 4 of 112 MiB (8 would be 56 MiB)
    (6400 * MiB, 50000, 64),             # ImageNet validation: 64 of 100 MiB
    (140_000 * MiB, 1_281_167, 1024),    # ImageNet train: 1024 of 137 MiB, as slim's
    (2_000_000 * MiB, 10_000_000, 2048),  # beyond 1024 shards of 1 GiB: multiples of 1024
    (200 * MiB, 3, 2),                   # never more shards than records
    (200 * MiB, 1, 1),
])
def test_the_default_shard_count_follows_the_size(num_bytes, num_items, expected):
    count = writer.shards_for_size(num_bytes, num_items)
    assert count == expected
    shard_bytes = (num_bytes + 16 * num_items) / count
    if count > 1 and count < num_items:  # every shard within the bounds the rule promises
        assert writer.MIN_SHARD_BYTES <= shard_bytes <= writer.MAX_SHARD_BYTES


def _encode_index(index):
    from slimdata.records.example import serialize_example
    return serialize_example({'index': index})


def test_a_conversion_without_a_shard_count_takes_it_from_the_size(tmp_path, capsys):
    """1000 items that stand for 300 MiB of source files: 4 shards of 75 MiB."""
    source = writer.SplitSource('train', list(range(1000)), _encode_index,
                                size_of=lambda item: 300 * MiB // 1000)
    summary = writer.write_dataset(str(tmp_path), [source])['train']
    assert len(summary.shards) == 4
    assert 'train: 4 shards for about 300.0 MiB of source data' in capsys.readouterr().err


def test_the_default_counts_the_source_files_of_the_items(tmp_path):
    """Without size_of, a split is as large as its items' files."""
    files = []
    for index in range(3):
        path = tmp_path / f'{index}.bin'
        with open(path, 'wb') as stream:
            stream.truncate(50 * MiB)  # sparse: 150 MiB in all, nothing on disk
        files.append(str(path))
    source = writer.SplitSource('train', files, _encode_index_of_path,
                                files_of=lambda path: [path])
    summary = writer.write_dataset(str(tmp_path / 'out'), [source])['train']
    assert len(summary.shards) == 2  # 150 MiB: 2 shards of 75 MiB


def _encode_index_of_path(path):
    return _encode_index(int(os.path.basename(path)[0]))


def test_converters_default_to_the_rule_and_take_a_count(trees, tmp_path):
    for shards, expected in ((None, 1), (2, 2)):
        out = tmp_path / f'out{shards}'
        summaries = classification.convert_image_folder(
            str(trees / 'shapes'), str(out), validation_ratio=0, num_shards=shards)
        assert len(summaries['train'].shards) == expected


# ----------------------------------------------------------------------------------------------
# --processes, and the old --workers

def test_processes_and_the_deprecated_workers_write_the_same(trees, tmp_path):
    runs = {}
    for flag in ('--processes', '--workers'):
        out = tmp_path / flag.strip('-')
        runs[flag] = subprocess.run(
            [sys.executable, '-m', 'slimdata', 'convert', 'image-folder', str(trees / 'shapes'),
             str(out), '--validation-ratio', '0', '--shards', '2', flag, '2'],
            capture_output=True, text=True, timeout=300)
        assert runs[flag].returncode == 0, runs[flag].stderr
    assert 'deprecated' not in runs['--processes'].stderr
    assert ('slimdata convert image-folder: note: --workers is deprecated, use --processes (it '
            'means the same)') in runs['--workers'].stderr
    for name in ('train-00000-of-00002.tfrecord', 'train-00001-of-00002.tfrecord'):
        assert (tmp_path / 'processes' / name).read_bytes() == \
            (tmp_path / 'workers' / name).read_bytes()
    help_page = subprocess.run([sys.executable, '-m', 'slimdata', 'convert', 'voc', '--help'],
                               capture_output=True, text=True, timeout=300).stdout
    assert '--processes' in help_page and '--workers' not in help_page


def test_the_api_takes_processes_and_warns_on_workers(trees, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        summaries = classification.convert_image_folder(
            str(trees / 'shapes'), str(tmp_path / 'out'), validation_ratio=0, workers=1)
    assert summaries['train'].num_records == 6
    assert [str(warning.message) for warning in caught
            if warning.category is DeprecationWarning] == [
        'convert_image_folder(workers=...) is deprecated: the argument is now called '
        'processes=']
    with pytest.raises(TypeError, match='both workers= and processes='):
        classification.convert_image_folder(str(trees / 'shapes'), str(tmp_path / 'x'),
                                            workers=1, processes=1)


# ----------------------------------------------------------------------------------------------
# -q before and after the command

@pytest.mark.parametrize('position', ['before', 'between', 'after'])
def test_quiet_goes_before_or_after_the_command(trees, tmp_path, position):
    argv = ['convert', 'image-folder', str(trees / 'shapes'), str(tmp_path / 'out'),
            '--validation-ratio', '0']
    argv = {'before': ['-q', *argv], 'between': [argv[0], '-q', *argv[1:]],
            'after': [*argv, '-q']}[position]
    run = subprocess.run([sys.executable, '-m', 'slimdata', *argv], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and run.stderr == ''
    assert 'train: 6 records' in run.stdout


def test_without_quiet_the_progress_shows(trees, tmp_path):
    run = subprocess.run([sys.executable, '-m', 'slimdata', 'convert', 'image-folder',
                          str(trees / 'shapes'), str(tmp_path / 'out'), '--validation-ratio',
                          '0'], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and 'image_folder train: done, 6 ex' in run.stderr


# ----------------------------------------------------------------------------------------------
# Hidden files

def test_hidden_files_and_folders_are_skipped_and_counted(trees, tmp_path, capsys):
    src = tmp_path / 'shapes'
    shutil.copytree(trees / 'shapes', src)
    first_class = sorted(path for path in src.iterdir())[0]
    (first_class / '.DS_Store').write_bytes(b'\0\0\0\1Bud1')
    (src / '.DS_Store').write_bytes(b'\0\0\0\1Bud1')
    (src / '.ipynb_checkpoints').mkdir()  # not a class
    (src / '.ipynb_checkpoints' / 'x.png').write_bytes(b'not read')
    assert cli.main(['convert', 'image-folder', str(src), str(tmp_path / 'out'),
                     '--validation-ratio', '0']) == 0
    printed = capsys.readouterr().out
    assert "skipped 3 items:\n    hidden files and folders (names starting with '.'): 3" in \
        printed
    assert str(first_class / '.DS_Store') in printed
    info = dataset_info.read_dataset_info(str(tmp_path / 'out'))
    assert info['extra']['num_classes'] == 2 and dataset_info.split_sizes(info) == {'train': 6}


# ----------------------------------------------------------------------------------------------
# verify --json: problems as fields

def test_verify_json_gives_each_problem_as_fields(trees, tmp_path):
    out = tmp_path / 'out'
    assert cli.main(['convert', 'image-folder', str(trees / 'shapes'), str(out),
                     '--validation-ratio', '0', '--shards', '2', '-q']) == 0
    first, second = sorted(out.glob('train-*.tfrecord'))
    data = bytearray(second.read_bytes())
    length = int.from_bytes(data[:8], 'little')
    data[12 + length + 4 + 20] ^= 1  # a byte of the second record's data
    second.write_bytes(bytes(data))
    first.unlink()
    run = subprocess.run([sys.executable, '-m', 'slimdata', 'verify', '--json', str(out)],
                         capture_output=True, text=True, timeout=300)
    report = json.loads(run.stdout)
    assert run.returncode == 1 and report['ok'] is False
    by_kind = {problem['kind']: problem for problem in report['problems']}
    assert sorted(by_kind) == ['damaged-record', 'missing-shard']
    damaged = by_kind['damaged-record']
    assert (damaged['file'], damaged['record'], damaged['offset'], damaged['key']) == (
        str(second), 1, 12 + length + 4, None)
    assert damaged['message'].startswith(f'{second}: record 1 at byte offset {16 + length}')
    assert by_kind['missing-shard']['file'] == str(first)
    assert by_kind['missing-shard']['record'] is None
    [second_report] = report['files']
    assert second_report['problems'] == [damaged]


# ----------------------------------------------------------------------------------------------
# The schema converters record without TensorFlow

@pytest.mark.parametrize('module', ['classification', 'imagenet', 'pascalvoc', 'segmentation'])
def test_the_recorded_schema_is_what_the_tensorflow_specs_say(module):
    """Converters record FEATURES, declared without TensorFlow; the descriptors build their
    tf.io specs from it. Described back from those specs, it is the same, field for field
    (so folders converted before, which recorded the specs' description, re-run alike)."""
    import importlib
    datasets_module = importlib.import_module(f'slimdata.datasets.{module}')
    specs = datasets_module.keys_to_features()
    assert dataset_info.keys_to_features_to_json(specs) == \
        dataset_info.keys_to_features_to_json(datasets_module.FEATURES)
    assert type(specs['image/encoded']).__name__ == 'FixedLenFeature'
