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
    (tmp_path / 'src' / 'cat' / 'broken.png').write_bytes(b'\x89PNG\r\n\x1a\nnot really')
    status = cli.main(['convert', 'image-folder', str(tmp_path / 'src'), str(tmp_path / 'out'),
                       '--validation-ratio', '0.5'])
    assert status == 1
    assert 'broken.png' in capsys.readouterr().err
    # Shards completed before the failure stay (a re-run resumes); none is partial.
    assert not [p for p in (tmp_path / 'out').iterdir() if '.tmp' in p.name]
    if list((tmp_path / 'out').glob('*.tfrecord')):
        assert cli.main(['verify', str(tmp_path / 'out')]) == 0
