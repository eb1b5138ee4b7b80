"""The `detection` descriptor: any folder a detection converter wrote in SSD-Tensorflow's layout.

`slimdata convert voc | coco | yolo` write the records of the user's classes in one layout
(SSD-Tensorflow's, `pascalvoc.FEATURES`, the default `--layout ssd`) and record in
`dataset_info.json` what a descriptor needs: the classes (`labels_to_names`, 0 'none' the
background), `extra.num_classes` (the classes plus the background, as SSD networks count
them), `extra.classes`, `extra.layout` and the size of each split. So one descriptor reads
them all, whatever the source format and classes::

    dataset = dataset_factory.get_dataset('detection', 'train', '/data/my_records')
    dataset.num_classes, dataset.labels_to_names    # 3, {0: 'none', 1: 'mask', 2: 'no-mask'}
    provider = slim.dataset_data_provider.DatasetDataProvider(dataset)
    image, bboxes, labels = provider.get(['image', 'object/bbox', 'object/label'])

Nothing about the folder is assumed: a folder without `dataset_info.json`, one that holds
another kind of dataset, or records in the Object Detection API's layout (`--layout od-api`,
which the OD API's own decoder reads) is refused here, naming the folder and what reads it,
rather than failing later inside TensorFlow. A folder of VOC's own 20 classes records no
layout (`pascalvoc_2007`, `pascalvoc_2012`, or `detection` for a VOC folder converted without
`--year`), as VOC folders always have: it is in the SSD layout, and read too.
"""

from typing import Any, Mapping, Optional

from slimdata.dataset import Dataset
from slimdata.datasets import pascalvoc
from slimdata.records import dataset_info

NAME = 'detection'
#: The layout this descriptor reads, as `extra.layout` of dataset_info.json names it.
LAYOUT = 'ssd'
#: Datasets whose folders need not record `extra.layout` (VOC's own classes, in a VOC tree
#: or a folder converted without --year): they are in the SSD layout.
SSD_LAYOUT_DATASETS = ('pascalvoc_2007', 'pascalvoc_2012', NAME)

ITEMS_TO_DESCRIPTIONS = {
    **pascalvoc.ITEMS_TO_DESCRIPTIONS,
    'object/label': 'A list of labels, one per object: 1 ... num_classes - 1, named by '
                    'labels_to_names (0 is the background).',
}

#: What reads a layout this descriptor does not, for the message that refuses it.
_READERS = {
    'od-api': "the Object Detection API's decoder "
              '(object_detection.data_decoders.tf_example_decoder.TfExampleDecoder, with the '
              'label_map.pbtxt beside the records)',
}


def get_split(split_name: str, dataset_dir: str, file_pattern: Optional[str] = None,
              reader: Optional[Any] = None) -> Dataset:
    """Returns the `slimdata.dataset.Dataset` of one split of a converted detection folder.

    Args:
      split_name: the split, as converted (e.g. 'train', 'val').
      dataset_dir: the folder of the shards and `dataset_info.json`.
      file_pattern: a pattern with one `%s` for the split name; defaults to slimdata's
        `<split>-*.tfrecord`.
      reader: the reader class; defaults to `tf.compat.v1.TFRecordReader`.

    Returns:
      The Dataset, with `num_classes`, `labels_to_names`, `num_samples` and the other
      `extra` of `dataset_info.json` (`classes`, `layout`) as attributes; its items are
      pascalvoc's (see ITEMS_TO_DESCRIPTIONS).

    Raises:
      ValueError: naming the folder, if it has no `dataset_info.json`, holds no detection
        records in the SSD layout, records no `num_classes`, or holds no complete split
        `split_name`.
    """
    from slimdata.datasets import dataset_utils  # imports TensorFlow: only when called
    info = dataset_info.read_dataset_info(dataset_dir)
    if info is None:
        raise ValueError(
            f'{dataset_dir} has no {dataset_info.DATASET_INFO_FILENAME}: get_dataset('
            f'{NAME!r}, ...) takes the classes, num_classes and split sizes from the one '
            'slimdata convert voc, coco or yolo writes beside the records (records converted '
            "by SSD-Tensorflow's own script read with get_dataset('pascalvoc_2007', ...))")
    recorded = _check_detection_records(info, dataset_dir)
    if 'num_classes' not in info.get('extra', {}):
        raise ValueError(f'{dataset_dir}/{dataset_info.DATASET_INFO_FILENAME} records no '
                         'extra.num_classes (the classes plus the background); convert the '
                         'folder again with slimdata convert')
    return dataset_utils.make_dataset(
        name=NAME, split_name=split_name, dataset_dir=dataset_dir,
        keys_to_features=pascalvoc.keys_to_features(),
        items_to_handlers=pascalvoc.items_to_handlers(),
        items_to_descriptions=ITEMS_TO_DESCRIPTIONS, published_split_sizes={},
        file_pattern=file_pattern, reader=reader, reads=(recorded,))


def check_ssd_layout(info: Mapping[str, Any], dataset_dir: str) -> None:
    """Refuses a folder whose `dataset_info.json` (`info`) records a layout other than the
    SSD one (a folder that records none is in it: VOC's own, and every older folder).

    Raises:
      ValueError: naming the folder, its layout and what reads it.
    """
    layout = info.get('extra', {}).get('layout', LAYOUT)
    if layout == LAYOUT:
        return
    where = f'{dataset_dir} (its {dataset_info.DATASET_INFO_FILENAME})'
    if layout in _READERS:
        raise ValueError(
            f'{where} holds detection records in the {layout!r} layout, which '
            f'{_READERS[layout]} reads; slimdata\'s detection descriptors read the {LAYOUT!r} '
            f'layout (SSD-Tensorflow\'s): convert again with --layout {LAYOUT} into another '
            'folder')
    raise ValueError(f'{where} records the layout {layout!r}; slimdata\'s detection '
                     f'descriptors read the {LAYOUT!r} layout only')


def _check_detection_records(info: Mapping[str, Any], dataset_dir: str) -> str:
    """The dataset name `info` records, if the folder holds detection records in the SSD
    layout: a layout recorded by the detection converters, or a VOC folder's name."""
    check_ssd_layout(info, dataset_dir)
    recorded = info.get('name') or ''
    if 'layout' in info.get('extra', {}) or recorded in SSD_LAYOUT_DATASETS:
        return recorded
    raise ValueError(
        f'{dataset_dir} (its {dataset_info.DATASET_INFO_FILENAME}) holds the dataset '
        f'{recorded!r}, not detection records: read it with get_dataset({recorded!r}, ...), or '
        f'point {NAME!r} at a folder written by slimdata convert voc, coco or yolo')
