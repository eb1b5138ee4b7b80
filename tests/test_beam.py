"""Conversion on Apache Beam (DirectRunner): the same records as the local writer.

Every converter runs as a Beam pipeline through the same per-example code; its shards are
compared byte for byte with the local writer's, its dataset_info.json too (the counts, sizes
and CRCs the pipeline computed), and `slimdata verify` passes on them.
"""

import os

import numpy as np
import pytest

from slimdata import cli
from slimdata.datasets import segmentation, synthetic
from slimdata.records import dataset_info

pytest.importorskip('apache_beam')

BEAM = ['--runner', 'DirectRunner']


def folder_bytes(folder):
    return {name: open(os.path.join(folder, name), 'rb').read()
            for name in sorted(os.listdir(folder))}


@pytest.fixture(scope='module')
def sources(tmp_path_factory):
    base = tmp_path_factory.mktemp('sources')
    synthetic.make_image_folder(str(base / 'shapes'), num_classes=3, images_per_class=5,
                                image_size=16)
    synthetic.make_voc_tree(str(base / 'voc'), num_images=9, image_size=(64, 48),
                            splits={'trainval': 1.0})
    synthetic.make_voc_seg_tree(str(base / 'seg'), num_images=7, image_size=(40, 30),
                                num_classes=6, splits={'train': 0.6, 'val': 0.4})
    mnist = base / 'mnist'
    mnist.mkdir()
    rng = np.random.default_rng(0)
    for prefix, count in (('train', 12), ('t10k', 5)):
        (mnist / f'{prefix}-images-idx3-ubyte').write_bytes(
            (2051).to_bytes(4, 'big') + b''.join(n.to_bytes(4, 'big') for n in (count, 28, 28))
            + rng.integers(0, 256, count * 784, dtype=np.uint8).tobytes())
        (mnist / f'{prefix}-labels-idx1-ubyte').write_bytes(
            (2049).to_bytes(4, 'big') + count.to_bytes(4, 'big')
            + rng.integers(0, 10, count, dtype=np.uint8).tobytes())
    from test_cifar import make_cifar10
    from test_imagenet import add_boxes, make_ilsvrc
    make_cifar10(base / 'cifar10', rows_per_batch=2)
    add_boxes(base / 'imagenet', make_ilsvrc(base / 'imagenet'))
    return base


CONVERSIONS = {
    'image-folder': lambda base: ['image-folder', str(base / 'shapes'), '--validation-ratio',
                                 '0.2', '--shards', '2'],
    'mnist-idx': lambda base: ['mnist-idx', str(base / 'mnist'), '--shards', '2'],
    'cifar10': lambda base: ['cifar10', str(base / 'cifar10'), '--shards', '2'],
    'imagenet': lambda base: ['imagenet', str(base / 'imagenet'), '--bounding-boxes',
                              str(base / 'imagenet' / 'bboxes'), '--shards', '2'],
    'voc': lambda base: ['voc', str(base / 'voc'), '--year', '2007', '--split', 'trainval',
                         '--shards', '3'],
    'voc-seg': lambda base: ['voc-seg', str(base / 'seg' / 'VOC2012'), '--num-classes', '6',
                             '--shards', '2'],
}


@pytest.mark.slow
@pytest.mark.parametrize('kind', sorted(CONVERSIONS))
def test_a_beam_conversion_writes_the_local_writers_bytes(tmp_path, sources, kind, capsys):
    arguments = CONVERSIONS[kind](sources)
    local, beam = tmp_path / 'local', tmp_path / 'beam'
    assert cli.main(['convert', *arguments[:2], str(local), *arguments[2:]]) == 0
    assert cli.main(['convert', *arguments[:2], str(beam), *arguments[2:], *BEAM]) == 0
    assert 'to a Beam pipeline (--runner=DirectRunner)' in capsys.readouterr().err
    assert folder_bytes(beam) == folder_bytes(local)  # dataset_info.json included
    assert cli.main(['verify', '--decode', str(beam)]) == 0


@pytest.mark.slow
@pytest.mark.parametrize('convert, build', [
    (segmentation.convert_cityscapes, 'cityscapes'),
    (segmentation.convert_ade20k, 'ade20k'),
])
def test_the_python_api_takes_beam_options_too(tmp_path, convert, build):
    from test_segmentation import build_ade20k, build_cityscapes
    root = tmp_path / 'src'
    if build == 'cityscapes':
        build_cityscapes(str(root), 'train', ['aachen', 'bochum'])
        split = 'train'
    else:
        build_ade20k(str(root), 'training', 5)
        split = 'train'
    local = convert(str(root), str(tmp_path / 'local'), split, num_shards=2)
    beam = convert(str(root), str(tmp_path / 'beam'), split, num_shards=2,
                   beam_options=['--runner=DirectRunner'])
    assert [summary.shards for summary in beam.values()] == \
        [summary.shards for summary in local.values()]
    assert folder_bytes(tmp_path / 'beam') == folder_bytes(tmp_path / 'local')


@pytest.mark.slow
def test_a_beam_rerun_reuses_what_it_wrote_and_refuses_other_input(tmp_path, sources, capsys):
    arguments = CONVERSIONS['voc'](sources)
    out = tmp_path / 'out'
    command = ['convert', *arguments[:2], str(out), *arguments[2:], *BEAM]
    assert cli.main(command) == 0
    before = folder_bytes(out)
    assert cli.main(command) == 0
    assert 'all reused' in capsys.readouterr().out
    assert folder_bytes(out) == before
    assert cli.main(command + ['--seed', '7']) == 1
    assert 'seed 0 -> 7' in capsys.readouterr().err
    info = dataset_info.read_dataset_info(str(out))
    assert info['splits']['trainval']['num_examples'] == 9


def test_pipeline_options_without_a_runner_are_a_usage_error(tmp_path, sources, capsys):
    with pytest.raises(SystemExit) as raised:
        cli.main(['convert', *CONVERSIONS['voc'](sources)[:2], str(tmp_path / 'o'), '--year',
                  '2007', '--split', 'trainval', '--', '--project=p'])
    assert raised.value.code == 2
    assert 'are Beam pipeline options' in capsys.readouterr().err
