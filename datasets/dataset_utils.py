"""What every dataset descriptor shares: split lookup, file patterns, sizes and labels.

Each descriptor module (one per dataset, as in models/research/slim/datasets) declares its
record layout and published constants and calls `make_dataset`; this module resolves the
files, reads `dataset_info.json` when the converter wrote one, and refuses, when the
descriptor is built, what would fail later inside TensorFlow: a folder that holds another
dataset, and a split the folder does not hold.
"""

import os
from typing import Any, Callable, Mapping, Optional, Sequence

from slimdata._tf import tf
from slimdata.dataset import Dataset
from slimdata.records import dataset_info
from slimdata.tfexample_decoder import TFExampleDecoder

#: The shard pattern every slimdata converter writes (docs/design.md, "The writer").
DEFAULT_FILE_PATTERN = '%s-*.tfrecord'


def make_dataset(name: str, split_name: str, dataset_dir: str,
                 keys_to_features: Mapping[str, Any],
                 items_to_handlers: Mapping[str, Any],
                 items_to_descriptions: Mapping[str, str],
                 published_split_sizes: Mapping[str, int],
                 published_labels_to_names: Optional[Mapping[int, str]] = None,
                 file_pattern: Optional[str] = None,
                 reader: Optional[Callable] = None,
                 reads: Optional[Sequence[str]] = None,
                 **extra: Any) -> Dataset:
    """Builds the `slimdata.dataset.Dataset` of one split of a dataset.

    Args:
      name: the dataset's name (used in error messages).
      split_name: the split to read, e.g. 'train'.
      dataset_dir: the folder that holds the shards (and `dataset_info.json`, if written).
      keys_to_features: the `tf.io` feature specs of the records.
      items_to_handlers: item name -> ItemHandler.
      items_to_descriptions: item name -> a description for users.
      published_split_sizes: split -> number of examples, used when the folder has no
        `dataset_info.json` (records converted by other tools); a folder with one holds
        the splits it records, and only those.
      published_labels_to_names: label id -> name, likewise the fallback (a folder with a
        `dataset_info.json` takes only the labels recorded there).
      file_pattern: a pattern with one `%s` for the split name, relative to `dataset_dir`
        (or absolute); defaults to `<split>-*.tfrecord`.
      reader: the reader class; defaults to `tf.compat.v1.TFRecordReader`.
      reads: the dataset names (as `dataset_info.json` records them) whose records this
        descriptor reads; defaults to `name` alone.
      **extra: further attributes of the Dataset (num_classes, ignore_label, ...): the
        published values; the `extra` recorded in `dataset_info.json` overrides them.

    Raises:
      ValueError: if the folder's `dataset_info.json` records another dataset, or records
        no (complete) split `split_name`; without one, if `split_name` is not published.
    """
    info = dataset_info.read_dataset_info(dataset_dir)
    split_sizes = dict(published_split_sizes)
    labels_to_names = dict(published_labels_to_names or {})
    if info is not None:
        _check_dataset_name(info, name, reads or (name,), dataset_dir)
        # What the converter recorded wins over every published constant: the folder may hold
        # a custom dataset in a published layout (other classes, another ignore_label), and
        # it holds the splits it records, not the published ones.
        split_sizes = dataset_info.split_sizes(info)
        labels_to_names = dataset_info.labels_to_names(info)
        extra = {**extra, **info.get('extra', {})}
    elif dataset_info.has_labels_file(dataset_dir):
        labels_to_names = dataset_info.read_labels_file(dataset_dir)
    if info is not None and split_name in dataset_info.incomplete_splits(info):
        entry = dataset_info.incomplete_splits(info)[split_name]
        raise ValueError(
            f'split {split_name!r} of {dataset_dir} is incomplete: its conversion is running '
            f'or was interrupted ({len(entry.get("shards", []))} shard(s) written). Run the '
            'converter again with the same options to finish it')
    if split_name not in split_sizes:
        if info is not None:
            raise ValueError(
                f'split name {split_name!r} was not recognized for dataset {name!r}: '
                f'{dataset_dir} holds the splits {sorted(split_sizes)} (as its '
                f'{dataset_info.DATASET_INFO_FILENAME} records them); convert {split_name!r} '
                'into it, or ask for one of those')
        raise ValueError(f'split name {split_name!r} was not recognized for dataset {name!r} '
                         f'in {dataset_dir}; known splits: {sorted(split_sizes)}')
    pattern = os.path.join(dataset_dir, (file_pattern or DEFAULT_FILE_PATTERN) % split_name)
    decoder = TFExampleDecoder(keys_to_features, items_to_handlers)
    return Dataset(data_sources=pattern,
                   reader=reader or tf.compat.v1.TFRecordReader,
                   decoder=decoder,
                   num_samples=split_sizes[split_name],
                   items_to_descriptions=dict(items_to_descriptions),
                   labels_to_names=labels_to_names,
                   **extra)



def _check_dataset_name(info: Mapping[str, Any], name: str, reads: Sequence[str],
                        dataset_dir: str) -> None:
    """Refuses a folder whose dataset_info.json records a dataset this descriptor does not
    read: its records have another layout (or shape), which would fail later, inside
    TensorFlow, naming neither the folder nor the dataset."""
    recorded = info.get('name')
    if recorded is not None and recorded not in reads:
        raise ValueError(
            f'{dataset_dir} holds the dataset {recorded!r} (as its '
            f'{dataset_info.DATASET_INFO_FILENAME} records it), not {name!r}: read it with '
            f'get_dataset({recorded!r}, ...), or point {name!r} at a folder of its own')
