"""A detection dataset of the user's own classes, converted by the real VOC converter.

`custom_voc_tree` writes a synthetic VOC tree whose objects are renamed to classes of the
user's (`CLASSES`: each keeps its synthetic shape and colour, so a small SSD learns them);
`convert_custom` converts it with those classes (`slimdata convert voc --classes`), which
records them in `dataset_info.json`. `annotations` reads the tree's XML back with this
module's own parsing, the independent expectation of what the records hold.
"""

import os
import xml.etree.ElementTree as ElementTree
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from slimdata.datasets import pascalvoc, synthetic
from slimdata.records.writer import WriteSummary

#: The synthetic classes kept, by the user's name for them (in label order, from 1).
CLASSES = {'mask': 'aeroplane', 'helmet': 'bicycle', 'glove': 'bird'}
NAMES = tuple(CLASSES)
LABELS_TO_NAMES = {0: 'none', **{label: name for label, name in enumerate(NAMES, 1)}}


class Annotation(NamedTuple):
    """One object of an XML annotation, in the records' terms."""
    label: int
    box: Tuple[float, float, float, float]     # ymin, xmin, ymax, xmax normalised
    difficult: int
    truncated: int


def custom_voc_tree(root: str, num_images: int, image_size: Tuple[int, int] = (160, 120),
                    splits: Optional[Dict[str, float]] = None, seed: int = 0) -> str:
    """A synthetic VOC2007 tree under `root` with the objects of `CLASSES` renamed to the
    user's names and the others' annotations removed (they stay in the images, unlabelled).

    Returns the VOC2007 folder.
    """
    voc_folder = synthetic.make_voc_tree(root, num_images=num_images, image_size=image_size,
                                         splits=splits or {'train': 0.75, 'val': 0.25},
                                         seed=seed)
    renamed = {voc: mine for mine, voc in CLASSES.items()}
    annotations_dir = os.path.join(voc_folder, 'Annotations')
    for name in os.listdir(annotations_dir):
        path = os.path.join(annotations_dir, name)
        tree = ElementTree.parse(path)
        root_element = tree.getroot()
        for element in root_element.findall('object'):
            voc_name = element.findtext('name')
            if voc_name in renamed:
                element.find('name').text = renamed[voc_name]
            else:
                root_element.remove(element)
        tree.write(path, encoding='utf-8')
    return voc_folder


def split_ids(voc_folder: str, split: str) -> List[str]:
    with open(os.path.join(voc_folder, 'ImageSets', 'Main', f'{split}.txt')) as f:
        return f.read().split()


def annotations(voc_folder: str, image_id: str) -> List[Annotation]:
    """The objects of an image's XML, labelled by `NAMES` and normalised as VOC's 1-based
    pixel coordinates are: (v - 1) / size."""
    root = ElementTree.parse(os.path.join(voc_folder, 'Annotations', f'{image_id}.xml'))
    width = int(root.findtext('size/width'))
    height = int(root.findtext('size/height'))
    objects = []
    for element in root.findall('object'):
        box = {field: float(element.findtext(f'bndbox/{field}')) - 1
               for field in ('ymin', 'xmin', 'ymax', 'xmax')}
        objects.append(Annotation(
            NAMES.index(element.findtext('name')) + 1,
            (box['ymin'] / height, box['xmin'] / width, box['ymax'] / height,
             box['xmax'] / width),
            int(element.findtext('difficult')), int(element.findtext('truncated'))))
    return objects


def convert_custom(voc_folder: str, output_dir: str, splits: Sequence[str],
                   layout: str = 'ssd') -> Dict[str, WriteSummary]:
    """Converts `splits` of the tree with the user's classes (`convert voc --classes`), in
    the list files' order (`seed=None`), which the tests compare records with."""
    return pascalvoc.convert_voc(voc_folder, output_dir, '2007', list(splits), num_shards=2,
                                 classes=','.join(NAMES), layout=layout, seed=None)
