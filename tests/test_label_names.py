"""Label names that cannot be a line of labels.txt are refused, naming them (issue 28 item 5):
a class folder or a CIFAR meta name with a newline, a carriage return or an ESC. Before, the
conversion ended with exit 0 and a labels.txt that slimdata's own `read_labels_file`
refused. Names that are fine (spaces, accents, a colon) still convert, and labels.txt reads
back as the folder names.
"""

import pickle

import pytest

from slimdata import cli
from slimdata.datasets import cifar, classification
from slimdata.records import dataset_info
from test_cifar import make_cifar10
from test_cli_convert import _class_folders


@pytest.mark.parametrize('bad, char', [('two\nlines', '\n'), ('carriage\r', '\r'),
                                       ('red\x1b[31m', '\x1b'), ('next\x85line', '\x85')])
def test_a_class_folder_with_a_control_character_is_refused_naming_it(tmp_path, capsys, bad,
                                                                      char):
    _class_folders(tmp_path / 'src', per_class=1)
    (tmp_path / 'src' / 'cat').rename(tmp_path / 'src' / bad)
    status = cli.main(['convert', 'image-folder', str(tmp_path / 'src'), str(tmp_path / 'out')])
    assert status == 1
    [line] = [line for line in capsys.readouterr().err.splitlines() if 'error' in line]
    assert line == (f'slimdata convert image-folder: error: {str(tmp_path / "src" / bad)!r}: '
                    f'the class folder name {bad!r} holds the control character {char!r} '
                    f'(U+{ord(char):04X}); a label name is one line of labels.txt, shown on '
                    'terminals: rename it')
    assert not (tmp_path / 'out' / 'labels.txt').exists()


def test_a_cifar_class_name_with_a_newline_is_refused_naming_it(tmp_path):
    make_cifar10(tmp_path / 'src', rows_per_batch=1)
    meta = tmp_path / 'src' / 'cifar-10-batches-py' / 'batches.meta'
    content = pickle.loads(meta.read_bytes())
    content[b'label_names'][3] = b'cat\nfish'
    meta.write_bytes(pickle.dumps(content))
    with pytest.raises(ValueError, match=r"the class name label_names\[3\] 'cat\\nfish' holds "
                                         r"the control character '\\n'") as raised:
        cifar.convert_cifar10(str(tmp_path / 'src'), str(tmp_path / 'out'))
    assert str(meta) in str(raised.value)


def test_printable_names_still_convert_and_read_back(tmp_path):
    _class_folders(tmp_path / 'src', per_class=1)
    (tmp_path / 'src' / 'cat').rename(tmp_path / 'src' / 'chat noir: été')
    classification.convert_image_folder(str(tmp_path / 'src'), str(tmp_path / 'out'),
                                        validation_ratio=0)
    assert dataset_info.read_labels_file(str(tmp_path / 'out')) == {0: 'chat noir: été',
                                                                    1: 'dog'}
