"""The `detection` descriptor (datasets/detection_dataset.py), pascalvoc's descriptors on a
folder of the user's classes, and `slimdata show` drawing those classes.

The folders are written as the detection converters write them (tests/detection_folders.py);
what is read back is compared with the source XML, parsed there independently.
"""

import os
import shutil

import numpy as np
import pytest

import detection_folders
from conftest import drain
from slimdata import cli, show, slim
from slimdata._tf import tf
from slimdata.datasets import dataset_factory, pascalvoc, synthetic
from slimdata.records import dataset_info


@pytest.fixture(scope='module')
def custom(tmp_path_factory):
    """(the VOC tree of the user's classes, its records: 'train' and 'val')."""
    root = tmp_path_factory.mktemp('custom')
    voc_folder = detection_folders.custom_voc_tree(str(root / 'VOCdevkit'), num_images=12,
                                                   image_size=(64, 48), seed=5)
    records = str(root / 'records')
    detection_folders.convert_custom(voc_folder, records, ['train', 'val'])
    return voc_folder, records


def test_classes_num_classes_and_sizes_come_from_the_folder(custom):
    voc_folder, records = custom
    for split in ('train', 'val'):
        dataset = dataset_factory.get_dataset('detection', split, records)
        assert dataset.num_samples == len(detection_folders.split_ids(voc_folder, split))
        assert dataset.num_classes == 4
        assert dataset.labels_to_names == {0: 'none', 1: 'mask', 2: 'helmet', 3: 'glove'}
        assert dataset.classes == ['mask', 'helmet', 'glove'] and dataset.layout == 'ssd'
        assert dataset.data_sources.endswith(f'{split}-*.tfrecord')


def test_the_provider_reads_the_source_objects(custom, graph):
    voc_folder, records = custom
    dataset = dataset_factory.get_dataset('detection', 'val', records)
    provider = slim.dataset_data_provider.DatasetDataProvider(dataset, shuffle=False,
                                                              num_epochs=1)
    read = drain(provider.get(['shape', 'object/label', 'object/bbox', 'object/difficult']))
    expected = [detection_folders.annotations(voc_folder, image_id)
                for image_id in detection_folders.split_ids(voc_folder, 'val')]
    # One reader, no shuffling: the shards in order hold the list's ids in order.
    assert len(read) == len(expected)
    for (shape, labels, boxes, difficult), objects in zip(read, expected):
        assert shape.tolist() == [48, 64, 3]
        assert labels.tolist() == [o.label for o in objects]
        np.testing.assert_allclose(boxes.reshape(-1, 4), [o.box for o in objects] or
                                   np.zeros((0, 4)), atol=1e-6)
        assert difficult.tolist() == [o.difficult for o in objects]


def test_pascalvoc_descriptors_take_the_classes_of_the_folder(custom):
    """A VOC tree converted with the user's classes: not VOC's 21."""
    _, records = custom
    assert dataset_info.read_dataset_info(records)['name'] == 'pascalvoc_2007'
    dataset = dataset_factory.get_dataset('pascalvoc_2007', 'val', records)
    assert dataset.num_classes == 4
    assert dataset.labels_to_names == detection_folders.LABELS_TO_NAMES


def test_the_od_api_layout_is_refused_naming_what_reads_it(tmp_path, custom):
    voc_folder, _ = custom
    folder = str(tmp_path / 'od')
    detection_folders.convert_custom(voc_folder, folder, ['val'], layout='od-api')
    for name in ('detection', 'pascalvoc_2007'):
        with pytest.raises(ValueError) as raised:
            dataset_factory.get_dataset(name, 'val', folder)
        message = str(raised.value)
        assert message.startswith(f'{folder} (its dataset_info.json) holds detection records '
                                  "in the 'od-api' layout, which the Object Detection API's "
                                  'decoder')
        assert 'TfExampleDecoder' in message and '--layout ssd' in message


def test_folders_that_are_not_detection_records_are_refused(tmp_path):
    with pytest.raises(ValueError, match=f'{tmp_path} has no dataset_info.json.*'
                                         "get_dataset\\('pascalvoc_2007'"):
        dataset_factory.get_dataset('detection', 'train', str(tmp_path))
    dataset_info.write_dataset_info(
        str(tmp_path), 'flowers', {'train': [{'file': 'train-00000-of-00001.tfrecord',
                                              'num_records': 3}]})
    with pytest.raises(ValueError, match="holds the dataset 'flowers', not detection records: "
                                         "read it with get_dataset\\('flowers'"):
        dataset_factory.get_dataset('detection', 'train', str(tmp_path))


def test_a_folder_without_num_classes_or_the_split_is_refused(tmp_path, custom):
    _, records = custom
    with pytest.raises(ValueError, match=f"split name 'test' was not recognized for dataset "
                                         f"'detection': {records} holds the splits "
                                         r"\['train', 'val'\]"):
        dataset_factory.get_dataset('detection', 'test', records)
    dataset_info.write_dataset_info(
        str(tmp_path), 'my_objects', {'train': [{'file': 'train-00000-of-00001.tfrecord',
                                                 'num_records': 3}]}, extra={'layout': 'ssd'})
    with pytest.raises(ValueError, match='records no extra.num_classes'):
        dataset_factory.get_dataset('detection', 'train', str(tmp_path))


def test_older_voc_folders_are_in_the_ssd_layout(tmp_path):
    dataset_info.write_dataset_info(
        str(tmp_path), 'pascalvoc_2012', {'train': [{'file': 'train-00000-of-00001.tfrecord',
                                                     'num_records': 5}]},
        extra={'num_classes': 21})
    dataset = dataset_factory.get_dataset('detection', 'train', str(tmp_path))
    assert (dataset.num_samples, dataset.num_classes) == (5, 21)


def test_a_folder_without_year_of_vocs_own_classes(tmp_path):
    """A VOC folder without ImageSets, converted without --year or --classes: the dataset
    `detection`, VOC's 20 classes, no layout recorded (as VOC folders never had one)."""
    voc_folder = synthetic.make_voc_tree(str(tmp_path / 'src'), num_images=8,
                                         image_size=(48, 32))
    shutil.rmtree(os.path.join(voc_folder, 'ImageSets'))
    folder = str(tmp_path / 'records')
    summaries = pascalvoc.convert_voc(voc_folder, folder, None, validation_ratio=0.25)
    info = dataset_info.read_dataset_info(folder)
    assert (info['name'], info['extra']) == ('detection', {'num_classes': 21})
    for split, summary in summaries.items():
        dataset = dataset_factory.get_dataset('detection', split, folder)
        assert dataset.num_samples == summary.num_records
        assert dataset.num_classes == 21 and dataset.labels_to_names == pascalvoc.LABELS_TO_NAMES
    assert sorted(summaries) == ['train', 'validation']


def test_show_draws_the_users_class_names(custom, tmp_path, capsys):
    """The legend and every box's tag name the user's classes, from dataset_info.json, and
    from labels.txt alone as well."""
    voc_folder, records = custom
    sheet = show.contact_sheet([records], split='val')
    ids = detection_folders.split_ids(voc_folder, 'val')[:len(sheet.cells)]
    expected = [[detection_folders.LABELS_TO_NAMES[o.label] + (' (difficult)' if o.difficult
                                                                 else '')
                 for o in detection_folders.annotations(voc_folder, image_id)]
                for image_id in ids]
    assert [[box.text for box in cell.boxes] for cell in sheet.cells] == expected
    present = sorted({o.label for image_id in ids
                      for o in detection_folders.annotations(voc_folder, image_id)})
    assert [entry.text for entry in sheet.legend if entry.style == 'box'] == [
        f'{detection_folders.LABELS_TO_NAMES[label]} ({label})' for label in present]
    status = cli.main(['show', records, '--split', 'val', '-o', str(tmp_path / 'sheet.png')])
    assert status == 0 and (tmp_path / 'sheet.png').stat().st_size > 0
    capsys.readouterr()


def test_show_names_classes_from_labels_txt_without_dataset_info(custom, tmp_path):
    voc_folder, records = custom
    folder = tmp_path / 'copy'
    folder.mkdir()
    for shard in tf.io.gfile.glob(f'{records}/val-*.tfrecord'):
        tf.io.gfile.copy(shard, str(folder / shard.rsplit('/', 1)[1]))
    (folder / 'labels.txt').write_text('1:maske\n2:helm\n3:handschuh\n')
    sheet = show.contact_sheet([str(folder)])
    names = {1: 'maske', 2: 'helm', 3: 'handschuh'}
    shown = {box.text.replace(' (difficult)', '') for cell in sheet.cells for box in cell.boxes}
    assert shown and shown <= set(names.values())
