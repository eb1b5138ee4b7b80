"""`slimdata convert KIND SRC OUT`: the converters from the command line, then `verify`."""

import numpy as np
from PIL import Image

from slimdata import cli
from slimdata.datasets import dataset_factory


def _class_folders(root, per_class=4):
    rng = np.random.RandomState(0)
    for name in ('cat', 'dog'):
        (root / name).mkdir(parents=True)
        for i in range(per_class):
            Image.fromarray(rng.randint(0, 256, (8, 6, 3), dtype=np.uint8)).save(
                root / name / f'{i}.png')


def test_convert_image_folder_then_verify_and_read(tmp_path, capsys):
    _class_folders(tmp_path / 'src')
    out = tmp_path / 'out'
    status = cli.main(['convert', 'image-folder', str(tmp_path / 'src'), str(out),
                       '--validation-ratio', '0.25', '--shards', '2'])
    assert status == 0
    assert cli.main(['verify', str(out)]) == 0
    printed = capsys.readouterr().out
    assert '8' in printed  # the records verified: 6 train + 2 validation
    train = dataset_factory.get_dataset('image_folder', 'train', str(out))
    validation = dataset_factory.get_dataset('image_folder', 'validation', str(out))
    assert (train.num_samples, validation.num_samples) == (6, 2)
    assert train.labels_to_names == {0: 'cat', 1: 'dog'}


def test_convert_error_names_the_file_and_exits_1(tmp_path, capsys):
    _class_folders(tmp_path / 'src', per_class=2)
    broken = tmp_path / 'src' / 'cat' / 'broken.png'
    broken.write_bytes(b'\x89PNG\r\n\x1a\nnot really')
    out = tmp_path / 'out'
    arguments = ['convert', 'image-folder', str(tmp_path / 'src'), str(out),
                 '--validation-ratio', '0.4', '--seed', '3', '--shards', '3']
    assert cli.main(arguments) == 1
    stderr = capsys.readouterr().err
    # The split that failed is never said to be done: where it stopped, then the error.
    assert 'image_folder validation: stopped after ' in stderr
    assert 'image_folder validation: done' not in stderr
    error, left = stderr.strip().splitlines()[-2:]
    assert error.startswith('slimdata convert image-folder: error: ')
    assert f'{broken} is not a readable PNG' in error
    # What stopped, and what is left: the split the error stopped, and how to finish it.
    assert left.startswith("slimdata convert image-folder: stopped; left incomplete, as "
                           f"{out / 'dataset_info.json'} records: split 'validation' (")
    # Bad input stops every run alike: the line never says the same command would finish it.
    assert 'fix what the error names, then run the command again' in left
    assert 'same command' not in left
    # No partial file; the split is recorded as incomplete, so verify says so.
    assert not [p for p in out.iterdir() if '.tmp' in p.name]
    assert cli.main(['verify', str(out)]) == 1
    assert "split 'validation' is incomplete" in capsys.readouterr().out  # train was done
    # Fixed, the same command finishes the split: verify passes, and all 5 images are read.
    Image.new('RGB', (8, 6)).save(broken)
    assert cli.main(arguments) == 0
    assert cli.main(['verify', str(out)]) == 0
    train = dataset_factory.get_dataset('image_folder', 'train', str(out))
    validation = dataset_factory.get_dataset('image_folder', 'validation', str(out))
    assert train.num_samples + validation.num_samples == 5
