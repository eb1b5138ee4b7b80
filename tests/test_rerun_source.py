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
from slimdata.records import dataset_info
from test_cli_convert import _class_folders


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


def image_folder(src, out, *options):
    return cli.main(['convert', 'image-folder', str(src), str(out), '--validation-ratio', '0',
                     *options])


@pytest.mark.parametrize('options', [[], ['--skip-non-images']])
def test_an_output_folder_inside_the_source_is_refused(tmp_path, capsys, options):
    _class_folders(tmp_path / 'src', per_class=1)
    out = tmp_path / 'src' / 'out'
    assert image_folder(tmp_path / 'src', out, *options) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f'slimdata convert image-folder: error: {out}: the output folder is inside the source '
        f'folder {tmp_path / "src"}, where the next run would read it as images (or as a '
        'class): write the records outside SRC')
    assert not out.exists()


def test_an_empty_class_folder_added_is_other_input_and_warned_of(tmp_path, capsys):
    _class_folders(tmp_path / 'src', per_class=1)
    out = tmp_path / 'out'
    assert image_folder(tmp_path / 'src', out) == 0
    (tmp_path / 'src' / 'zebra').mkdir()  # sorts last: no item's label changes
    capsys.readouterr()
    assert image_folder(tmp_path / 'src', out) == 1
    err = capsys.readouterr().err
    assert (f"image_folder: warning: 1 of the 3 classes of {tmp_path / 'src'} hold no images "
            "('zebra'); they are classes without examples, counted in num_classes") in err
    assert "class_names ['cat', 'dog'] -> ['cat', 'dog', 'zebra']" in err
    assert dataset_info.read_labels_file(str(out)) == {0: 'cat', 1: 'dog'}
