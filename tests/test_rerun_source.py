"""A re-run of `slimdata convert` is the same command however SRC is typed, and the Python
converters give the same bytes as the command line by default (issue 28 item 4); folders
that change the input under the converter's feet (item 9).

Expected outcomes are the converters' own: a re-run of a complete conversion reuses every
shard and rewrites none (the shards' bytes and modification times stay); the bytes the
command line writes are compared with those the Python function writes.
"""

import os

import pytest

from slimdata import cli
from slimdata.datasets import pascalvoc, synthetic


def shards(folder):
    return {name: ((folder / name).read_bytes(), (folder / name).stat().st_mtime_ns)
            for name in sorted(os.listdir(folder)) if name.endswith('.tfrecord')}


@pytest.fixture(scope='module')
def voc(tmp_path_factory):
    base = tmp_path_factory.mktemp('voc')
    synthetic.make_voc_tree(str(base / 'voc' / 'base'), num_images=4, image_size=(48, 32),
                            splits={'trainval': 1.0})
    return base


def convert_voc(src, out):
    return cli.main(['convert', 'voc', src, str(out), '--year', '2007', '--split', 'trainval',
                     '--shards', '2'])


@pytest.mark.parametrize('spelling', ['voc/base/', './voc/base', 'absolute', 'other folder'])
def test_a_rerun_with_another_spelling_of_src_reuses_every_shard(voc, tmp_path, monkeypatch,
                                                                capsys, spelling):
    monkeypatch.chdir(voc)
    out = tmp_path / 'out'
    assert convert_voc('voc/base', out) == 0
    written = shards(out)
    capsys.readouterr()
    if spelling == 'absolute':
        spelling = str(voc / 'voc' / 'base')
    elif spelling == 'other folder':
        monkeypatch.chdir(voc / 'voc')
        spelling = 'base'
    assert convert_voc(spelling, out) == 0, capsys.readouterr().err
    assert shards(out) == written


def test_the_python_converter_and_the_command_line_write_the_same_bytes(voc, tmp_path):
    src = str(voc / 'voc' / 'base')
    pascalvoc.convert_voc(src, str(tmp_path / 'python'), '2007', 'trainval', num_shards=2)
    assert convert_voc(src, tmp_path / 'cli') == 0
    python = {name: data for name, (data, _) in shards(tmp_path / 'python').items()}
    assert python == {name: data for name, (data, _) in shards(tmp_path / 'cli').items()}
