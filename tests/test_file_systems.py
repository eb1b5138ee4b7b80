"""Every read and write goes through one file-system layer: a whole conversion, and the tools
after it, on TensorFlow's in-memory `ram://` file system (as on `gs://`)."""


import numpy as np
import pytest
from PIL import Image

from conftest import drain
from slimdata import cli
from slimdata.datasets import dataset_factory, synthetic
from slimdata.records import dataset_info, fs, tfrecord

OUT = 'ram://slimdata_file_systems/shapes'
INDEX = 'ram://slimdata_file_systems/index'


def test_convert_count_verify_index_and_read_back_on_ram(tmp_path, capsys):
    src = tmp_path / 'shapes'
    names = synthetic.make_image_folder(str(src), num_classes=2, images_per_class=4,
                                        image_size=12)
    assert cli.main(['convert', 'image-folder', str(src), OUT, '--validation-ratio', '0.25',
                     '--shards', '2']) == 0
    assert sorted(fs.listdir(OUT)) == [
        'dataset_info.json', 'labels.txt', 'train-00000-of-00002.tfrecord',
        'train-00001-of-00002.tfrecord', 'validation-00000-of-00002.tfrecord',
        'validation-00001-of-00002.tfrecord']
    assert dataset_info.read_labels_file(OUT) == dict(enumerate(names))
    capsys.readouterr()

    assert cli.main(['count', OUT]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split() == ['8', 'total']
    assert cli.main(['verify', '--decode', OUT]) == 0
    assert '8 images decoded' in capsys.readouterr().out
    # (Not OUT + '_index': TensorFlow's ram:// lists a folder by name prefix, so that would
    # show up inside OUT.)
    assert cli.main(['index', OUT, '--output-dir', INDEX]) == 0
    for path in tfrecord.expand_paths([OUT]):
        index = fs.read_bytes(f'{INDEX}/{path.rsplit("/", 1)[1]}.idx').decode()
        spans = [(offset, length + 16) for offset, length in tfrecord.iter_record_spans(path)]
        assert [tuple(map(int, line.split())) for line in index.splitlines()] == spans

    # Read back through a descriptor and the queue pipeline, against the source pixels.
    import tensorflow as tf

    from slimdata.dataset_data_provider import DatasetDataProvider
    sources = {np.asarray(Image.open(path)).tobytes(): label
               for label, name in enumerate(names) for path in sorted((src / name).iterdir())}
    read = {}
    for split in ('train', 'validation'):
        with tf.Graph().as_default():
            dataset = dataset_factory.get_dataset('image_folder', split, OUT)
            provider = DatasetDataProvider(dataset, shuffle=False, num_epochs=1)
            image, label = provider.get(['image', 'label'])
            for pixels, value in drain([image, label]):
                read[np.ascontiguousarray(pixels[..., 0]).tobytes()] = int(value)
    assert read == sources

    # A re-run reads the recorded shards back through the same layer, and reuses them.
    assert cli.main(['convert', 'image-folder', str(src), OUT, '--validation-ratio', '0.25',
                     '--shards', '2']) == 0
    assert 'all reused' in capsys.readouterr().out


def test_worker_processes_cannot_write_into_ram(tmp_path):
    from slimdata.records.writer import write_sharded
    with pytest.raises(ValueError, match='ram:// is TensorFlow\'s in-memory file system'):
        write_sharded(range(4), len, 'ram://slimdata_file_systems/w', 'train', 2, processes=2)


def test_a_source_file_behind_a_url_is_read_whole_and_bounded():
    import tensorflow as tf
    path = 'ram://sources/annotation.xml'
    content = bytes(range(256)) * 40
    with tf.io.gfile.GFile(path, 'wb') as file:
        file.write(content)
    assert fs.read_source(path) == content
    assert fs.read_source(path, head=4) == content[:4]
    with pytest.raises(fs.SourceError, match=f'{path} has 10,240 bytes or more'):
        fs.read_source(path, max_bytes=10_000)


@pytest.mark.parametrize('base', ['local', 'ram://slimdata_file_systems/tree'])
def test_remove_tree_removes_a_folder_with_what_is_in_it(tmp_path, base):
    folder = str(tmp_path / 'tree') if base == 'local' else base
    fs.makedirs(f'{folder}/sub')
    fs.write_bytes_atomic(f'{folder}/sub/a.bin', b'a')
    fs.write_bytes_atomic(f'{folder}/b.bin', b'b')
    fs.remove_tree(folder)
    assert not fs.exists(folder) and not fs.exists(f'{folder}/sub/a.bin')
    fs.remove_tree(folder)  # a missing folder is fine
