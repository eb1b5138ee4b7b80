"""dataset_factory maps every dataset name to its descriptor, and refuses unknown names."""

import json

import pytest

from slimdata.datasets import dataset_factory
from slimdata.records import dataset_info

# Published split sizes (models/research/slim, SSD-Tensorflow, deeplab), used when a folder
# has no dataset_info.json.
PUBLISHED = [
    ('mnist', 'train', 60000, 10), ('mnist', 'test', 10000, 10),
    ('cifar10', 'train', 50000, 10), ('cifar100', 'test', 10000, 100),
    ('flowers', 'validation', 350, 5),
    ('pascalvoc_2007', 'train', 5011, 21), ('pascalvoc_2007', 'test', 4952, 21),
    ('pascalvoc_2012', 'train', 17125, 21),
    ('pascal_voc_seg', 'train_aug', 10582, 21), ('pascal_voc_seg', 'val', 1449, 21),
    ('cityscapes', 'train_fine', 2975, 19), ('ade20k', 'train', 20210, 151),
]


@pytest.mark.parametrize('name, split, size, num_classes', PUBLISHED)
def test_published_sizes_without_dataset_info(name, split, size, num_classes, tmp_path):
    dataset = dataset_factory.get_dataset(name, split, str(tmp_path))
    assert dataset.num_samples == size
    assert dataset.num_classes == num_classes
    assert dataset.data_sources == str(tmp_path / f'{split}-*.tfrecord')


def test_dataset_info_overrides_published_sizes_and_labels(tmp_path):
    dataset_info.write_dataset_info(
        str(tmp_path), 'pascalvoc_2007',
        {'mini': [{'file': 'mini-00000-of-00001.tfrecord', 'num_records': 7}]},
        labels_to_names={0: 'none', 1: 'aeroplane'})
    dataset = dataset_factory.get_dataset('pascalvoc_2007', 'mini', str(tmp_path))
    assert dataset.num_samples == 7
    assert dataset.labels_to_names == {0: 'none', 1: 'aeroplane'}
    recorded = json.loads((tmp_path / 'dataset_info.json').read_text())
    assert recorded['splits']['mini']['num_examples'] == 7


def test_unknown_dataset_lists_the_known_ones(tmp_path):
    with pytest.raises(ValueError, match=r"'coco'.*'ade20k'.*'imagenet'.*'pascalvoc_2007'"):
        dataset_factory.get_dataset('coco', 'train', str(tmp_path))


def test_unknown_split_lists_the_known_ones(tmp_path):
    with pytest.raises(ValueError, match=r"'training'.*'mnist'.*\['test', 'train'\]"):
        dataset_factory.get_dataset('mnist', 'training', str(tmp_path))


#: What a descriptor needs recorded beyond splits and labels: the detection converters'
#: layout and number of classes (the `detection` descriptor has no published constants).
RECORDED_EXTRA = {'detection': {'layout': 'ssd', 'num_classes': 2}}


def test_every_name_has_a_descriptor_with_items(tmp_path):
    for name in dataset_factory.DATASETS_MAP:
        split = 'train_fine' if name == 'cityscapes' else 'train'
        (tmp_path / name).mkdir()
        dataset_info.write_dataset_info(
            str(tmp_path / name), name,
            {split: [{'file': f'{split}-00000-of-00001.tfrecord', 'num_records': 3}]},
            labels_to_names={0: 'cat', 1: 'dog'}, extra=RECORDED_EXTRA.get(name))
        dataset = dataset_factory.get_dataset(name, split, str(tmp_path / name))
        assert 'image' in dataset.decoder.list_items(), name
        assert dataset.num_samples == 3


def _converted(folder, name, splits):
    folder.mkdir()
    dataset_info.write_dataset_info(
        str(folder), name, {split: [{'file': f'{split}-00000-of-00001.tfrecord',
                                     'num_records': count}] for split, count in splits.items()})
    return str(folder)


def test_a_folder_of_another_dataset_is_refused_when_the_descriptor_is_built(tmp_path):
    """mnist's descriptor reshapes to 28x28x1: on CIFAR's records it would fail later, in a
    TensorFlow Reshape that names neither the folder nor the dataset."""
    folder = _converted(tmp_path / 'cifar', 'cifar10', {'train': 4})
    with pytest.raises(ValueError) as raised:
        dataset_factory.get_dataset('mnist', 'train', folder)
    assert str(raised.value) == (
        f"{folder} holds the dataset 'cifar10' (as its dataset_info.json records it), not "
        "'mnist': read it with get_dataset('cifar10', ...), or point 'mnist' at a folder of "
        'its own')
    with pytest.raises(ValueError, match="holds the dataset 'cifar10'"):
        dataset_factory.get_dataset('pascalvoc_2007', 'train', folder)
    assert dataset_factory.get_dataset('cifar10', 'train', folder).num_samples == 4


def test_descriptors_that_read_other_names(tmp_path):
    """flowers are converted by image-folder; image_folder reads any classification folder."""
    flowers = _converted(tmp_path / 'flowers', 'image_folder', {'train': 5})
    assert dataset_factory.get_dataset('flowers', 'train', flowers).num_samples == 5
    mnist = _converted(tmp_path / 'mnist', 'mnist', {'test': 3})
    assert dataset_factory.get_dataset('image_folder', 'test', mnist).num_samples == 3
    with pytest.raises(ValueError, match="holds the dataset 'mnist'"):
        dataset_factory.get_dataset('flowers', 'test', mnist)


def test_a_split_the_folder_does_not_hold_is_refused_naming_what_it_holds(tmp_path):
    """Only trainval converted: 'train' is SSD-Tensorflow's published split of 5011 images,
    which this folder does not hold (it would fail later: "No data files found")."""
    folder = _converted(tmp_path / 'voc', 'pascalvoc_2007', {'trainval': 7})
    with pytest.raises(ValueError) as raised:
        dataset_factory.get_dataset('pascalvoc_2007', 'train', folder)
    assert str(raised.value) == (
        f"split name 'train' was not recognized for dataset 'pascalvoc_2007': {folder} holds "
        "the splits ['trainval'] (as its dataset_info.json records them); convert 'train' into "
        'it, or ask for one of those')
    assert dataset_factory.get_dataset('pascalvoc_2007', 'trainval', folder).num_samples == 7
