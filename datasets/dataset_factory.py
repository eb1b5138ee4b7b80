"""A factory that maps dataset names to their descriptors, as in models/research/slim.

    dataset = dataset_factory.get_dataset('pascalvoc_2007', 'test', '/data/voc2007')
    provider = slim.dataset_data_provider.DatasetDataProvider(dataset)
"""

import functools
import os
from typing import Any, Callable, Dict, Optional

from slimdata.dataset import Dataset
from slimdata.datasets import classification, detection_dataset, imagenet, pascalvoc, segmentation
from slimdata.records import fs


def _by_name(module, name: str) -> Callable[..., Dataset]:
    return functools.partial(module.get_split, name)


def _voc_year(year: str) -> Callable[..., Dataset]:
    return functools.partial(pascalvoc.get_split, year=year)


#: name -> get_split(split_name, dataset_dir, file_pattern=None, reader=None)
DATASETS_MAP: Dict[str, Callable[..., Dataset]] = {
    'mnist': _by_name(classification, 'mnist'),
    'cifar10': _by_name(classification, 'cifar10'),
    'cifar100': _by_name(classification, 'cifar100'),
    'flowers': _by_name(classification, 'flowers'),
    'imagenet': imagenet.get_split,
    'image_folder': _by_name(classification, 'image_folder'),
    'pascalvoc_2007': _voc_year('2007'),
    'pascalvoc_2012': _voc_year('2012'),
    'detection': detection_dataset.get_split,
    'pascal_voc_seg': _by_name(segmentation, 'pascal_voc_seg'),
    'cityscapes': _by_name(segmentation, 'cityscapes'),
    'ade20k': _by_name(segmentation, 'ade20k'),
}


def get_dataset(name: str, split_name: str, dataset_dir: str,
                file_pattern: Optional[str] = None, reader: Optional[Any] = None) -> Dataset:
    """Given a dataset name and a split name, returns the Dataset.

    Args:
      name: the dataset's name, one of `DATASETS_MAP`.
      split_name: the split, e.g. 'train' or 'test'.
      dataset_dir: the folder of the shards (and `dataset_info.json`).
      file_pattern: a pattern with one `%s` for the split, to match the shard files; the
        default matches slimdata's converters (`<split>-*.tfrecord`).
      reader: a `tf.compat.v1.ReaderBase` subclass; defaults to TFRecordReader.

    Returns:
      A `slimdata.dataset.Dataset`.

    Raises:
      ValueError: if the dataset `name` or `split_name` is unknown (listing the known ones).
      FileNotFoundError: if `dataset_dir` does not exist (and `file_pattern` is not absolute).
    """
    if name not in DATASETS_MAP:
        raise ValueError(f'Name of dataset unknown {name!r}; known datasets: '
                         f'{sorted(DATASETS_MAP)}')
    if not (file_pattern and os.path.isabs(file_pattern)) and not fs.isdir(dataset_dir):
        raise FileNotFoundError(f'{dataset_dir}: no such folder (the dataset_dir of {name!r}, '
                                f'split {split_name!r}): give the folder the converter wrote')
    return DATASETS_MAP[name](split_name, dataset_dir, file_pattern=file_pattern,
                              reader=reader)
