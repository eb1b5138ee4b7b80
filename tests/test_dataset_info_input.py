"""`dataset_info.json` is input too (issue 28 items 7 and 11): shard entries that leave the
folder, JSON nested past the parser's depth, negative counts; a folder whose conversion was
interrupted before any shard; a dataset folder that does not exist.

Each case starts from a folder the image-folder converter wrote, with its dataset_info.json
edited as a hostile or careless user would. Before the fixes: `verify` said "no problems
found" with a shard entry `../victim.tfrecord`, `show` drew the outside file, nested JSON
gave a RecursionError traceback, a negative num_examples was accepted, `verify` of an
interrupted folder said only "No TFRecord files", and `get_dataset` of a missing folder
said the split name was not recognised.
"""

import json

import pytest

from conftest import write_with_tf
from slimdata import cli
from slimdata.datasets import dataset_factory
from slimdata.records import dataset_info


def edit_info(folder, change):
    path = folder / dataset_info.DATASET_INFO_FILENAME
    info = json.loads(path.read_text())
    change(info)
    path.write_text(json.dumps(info))
    return path


def error_lines(text):
    return [line for line in text.splitlines() if 'error' in line.split(':', 2)[-2:][0]
            or line.startswith(('error:', 'slimdata'))]


def run(capsys, *args):
    status = cli.main([str(arg) for arg in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize('outside', ['../victim.tfrecord', '/etc/passwd', 'sub/x.tfrecord'])
def test_a_shard_entry_outside_the_folder_is_a_problem_for_verify_and_refused_by_readers(
        folder, capsys, outside):
    write_with_tf(folder.parent / 'victim.tfrecord', [b'outside'])

    def plant(info):
        info['splits']['train']['shards'][1]['file'] = outside
    info_path = edit_info(folder, plant)
    expected = (f"{info_path}: split 'train': shard entry 1 names the file {outside!r}; a shard "
                'is a plain file name in the folder of dataset_info.json (no folder, no "..")')
    status, out, _ = run(capsys, 'verify', folder)
    assert status == 1 and f'  {expected}' in out.splitlines()
    status, _, err = run(capsys, 'show', folder, '-o', folder.parent / 'sheet.png')
    assert status == 1 and err.splitlines() == [f'error: {expected}']
    with pytest.raises(ValueError) as raised:
        dataset_factory.get_dataset('image_folder', 'train', str(folder))
    assert str(raised.value) == expected


def test_json_nested_100000_deep_is_one_error_line_everywhere(folder, converted, tmp_path,
                                                              capsys):
    info_path = folder / dataset_info.DATASET_INFO_FILENAME
    info_path.write_text('[' * 100_000 + ']' * 100_000)
    expected = (f'{info_path} is not a slimdata dataset_info.json: its JSON is nested too '
                'deeply to be read')
    for args in (['verify', folder], ['inspect', folder], ['show', folder, '-o',
                                                            tmp_path / 'sheet.png'],
                 ['convert', 'image-folder', converted.parent / 'src', folder,
                  '--validation-ratio', '0']):
        status, out, err = run(capsys, *args)
        assert status != 0, args
        assert 'Traceback' not in err and 'RecursionError' not in err
        assert expected in out + err, (args, out, err)
        assert len([line for line in (out + err).splitlines() if expected in line]) == 1
    with pytest.raises(ValueError, match='nested too deeply'):
        dataset_factory.get_dataset('image_folder', 'train', str(folder))


@pytest.mark.parametrize('where', ['num_examples', 'num_records'])
def test_a_negative_count_is_refused(folder, capsys, where):
    def negative(info):
        entry = info['splits']['train']
        (entry if where == 'num_examples' else entry['shards'][0])[where] = -3
    edit_info(folder, negative)
    status, out, _ = run(capsys, 'verify', folder)
    assert status == 1 and ('is not a count' in out or 'count (an integer, 0 or more)' in out)
    with pytest.raises(ValueError, match='0 or more'):
        dataset_factory.get_dataset('image_folder', 'train', str(folder))


def test_verify_of_a_folder_interrupted_before_any_shard_says_the_split_is_incomplete(
        tmp_path, capsys):
    out = tmp_path / 'out'
    out.mkdir()
    dataset_info.record_split(str(out), 'train', {'complete': False, 'num_examples': 0,
                                                  'shards': []})
    status, _, err = run(capsys, 'verify', out)
    assert status == 2
    assert ("marks split(s) 'train' incomplete: a conversion is running or was interrupted "
            'before it wrote a shard; run the same command again to finish it') in err


def test_get_dataset_of_a_folder_that_does_not_exist_says_so(tmp_path):
    missing = tmp_path / 'no_such_folder'
    with pytest.raises(FileNotFoundError, match=f'{missing}: no such folder'):
        dataset_factory.get_dataset('image_folder', 'train', str(missing))
