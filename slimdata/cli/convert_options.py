"""The options of `slimdata convert KIND`, and the converter keyword arguments they give.

Every KIND takes the same common options, with the same meaning (docs/converters.md):

    SRC OUT                     the source folder, the output folder
    --split SPLIT [SPLIT ...]   the splits to write (default: the KIND's usual ones)
    --shards N                  shards per split (default: by size, 64 MiB to 1 GiB each)
    --processes N               processes that read, check and encode (default: 1)
    --seed, --overwrite, --runner, --check-images, --follow-symlinks, --max-file-size,
    --max-image-pixels

and a few of its own. `add_arguments(kind, parser)` declares them; `keywords(kind, args)`
turns the parsed options into the keyword arguments of `slimdata.datasets.<module>.
convert_<kind>(SRC, OUT, **keywords)`. `--workers` is the deprecated old name of
`--processes` (hidden; it still works, and says so).

This module imports the converters' modules (for their choices: layouts, years, policies), so
`slimdata.cli.convert` imports it only when `convert` is the command being run.
"""

import argparse
import textwrap
from typing import Any, Callable, Dict, List, NamedTuple, Optional

from slimdata.cli import common
from slimdata.datasets import cifar, classification, coco, detection, pascalvoc, segmentation
from slimdata.records import fs, images


class KindOptions(NamedTuple):
    """One KIND's own part: its description, what SRC is, its splits, its options.

    Attributes:
      description: the help page's text.
      source_help: what SRC is.
      split_help: what --split names.
      default_splits: --split's default; None writes every split the source holds, and
        `required` makes --split required.
      add_own: adds the KIND's own options to its parser.
      own_keywords: the converter keyword arguments of those options.
    """
    description: str
    source_help: str
    split_help: str
    default_splits: Optional[List[str]]
    add_own: Callable[[argparse.ArgumentParser], None]
    own_keywords: Callable[[argparse.Namespace], Dict[str, Any]]
    required_split: bool = False


def add_arguments(kind: str, parser: argparse.ArgumentParser) -> None:
    """Adds SRC, OUT, the common options and KIND's own ones to `parser`."""
    own = KINDS[kind]
    # The help page keeps the layout drawings' lines; a description of one paragraph is
    # wrapped here.
    parser.description = (own.description if '\n' in own.description
                          else textwrap.fill(own.description, 79))
    parser.add_argument('src', metavar='SRC', type=common.existing_source, help=own.source_help)
    parser.add_argument('output_dir', metavar='OUT',
                        help='the folder for the shards, dataset_info.json and labels.txt '
                             '(created if needed; a gs:// URL works too)')
    default = ('every split SRC holds' if own.default_splits is None
               else ' '.join(own.default_splits))
    parser.add_argument('--split', dest='splits', nargs='+', metavar='SPLIT',
                        required=own.required_split, default=own.default_splits,
                        help=f'the splits to write, one or several: {own.split_help}'
                             + ('' if own.required_split else f' (default: {default})'))
    own.add_own(parser)
    _add_common_options(parser)


def keywords(kind: str, args: argparse.Namespace) -> Dict[str, Any]:
    """The keyword arguments of `convert_<kind>(args.src, args.output_dir, ...)`."""
    return {'splits': args.splits, 'num_shards': args.num_shards,
            'processes': args.processes, 'seed': args.seed, 'overwrite': args.overwrite,
            'beam_options': _beam_options(args), 'follow_symlinks': args.follow_symlinks,
            'max_file_bytes': args.max_file_size, 'check_images': args.check_images,
            'max_image_pixels': args.max_image_pixels, **KINDS[kind].own_keywords(args)}


def _add_common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--shards', '--num-shards', dest='num_shards',
                        type=common.positive_int, metavar='N',
                        help='TFRecord files per split (default: by size, as TensorFlow '
                             'Datasets chooses: a power of two that puts 64 MiB to 1 GiB in '
                             'each file; 1 for a split under 128 MiB)')
    parser.add_argument('--processes', type=common.positive_int, default=1, metavar='N',
                        help='processes that read, check and encode the source files, each '
                             'writing pieces of the shards (joined in order: the same bytes '
                             'for any number) (default: %(default)s)')
    common.add_deprecated_alias(parser, '--workers', '--processes', type=common.positive_int)
    parser.add_argument('--seed', type=int, default=0,
                        help='seed of the order of the examples in the shards (and of the '
                             'train/validation split, where there is one); the same seed gives '
                             'the same files (default: %(default)s)')
    parser.add_argument('--runner', metavar='BEAM_RUNNER',
                        help='write the shards with an Apache Beam pipeline on this runner '
                             '(DirectRunner, DataflowRunner, FlinkRunner, SparkRunner, ...) '
                             'instead of local processes; Beam pipeline options follow a '
                             "'--' at the end (needs pip install 'slimdata[beam]')")
    parser.add_argument('--overwrite', action='store_true',
                        help='replace splits already in OUT that came from other input or '
                             'options (without it such a re-run is refused; a re-run with the '
                             'same input reuses the complete shards and finishes the rest)')
    parser.add_argument('--check-images', choices=images.CHECK_MODES,
                        default=images.DEFAULT_CHECK,
                        help='structure: walk every image file to its end and check its size '
                             'against its header (fast); full: also decode every image '
                             '(default: %(default)s)')
    parser.add_argument('--follow-symlinks', action='store_true',
                        help='read files through symlinks that leave the source folder '
                             '(refused by default)')
    parser.add_argument('--max-file-size', type=common.byte_size, metavar='BYTES',
                        default=fs.DEFAULT_MAX_SOURCE_BYTES,
                        help='refuse source files larger than this (e.g. 512M, 2G; default: '
                             '1G)')
    parser.add_argument('--max-image-pixels', type=common.positive_int,
                        default=images.DEFAULT_MAX_PIXELS,
                        help='refuse images with more pixels than this (default: %(default)s)')
    common.add_output_options(parser)


def _beam_options(args: argparse.Namespace) -> Optional[List[str]]:
    """The Beam pipeline options of `--runner` and the flags after `--` (None: local)."""
    if args.runner is None:
        return None
    return [f'--runner={args.runner}', *getattr(args, 'pipeline_args', [])]


def _add_validation_ratio(parser: argparse.ArgumentParser, default: float,
                          default_meaning: str) -> None:
    parser.add_argument('--validation-ratio', type=common.ratio, default=default,
                        help='share of the training images held out as a validation split '
                             f'(default: %(default)s{default_meaning})')


# ----------------------------------------------------------------------------------------------
# Each KIND's own options

def _image_folder_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--layout', choices=classification.LAYOUTS, default='class_folders',
                        help='how labels are given (default: %(default)s)')
    _add_validation_ratio(parser, 0.1, '')
    _add_skip_non_images(parser, 'files that are not JPEG/PNG images', ' (hidden files such '
                         'as .DS_Store are always left out, and counted)')


def _image_folder_keywords(args: argparse.Namespace) -> Dict[str, Any]:
    return {'layout': args.layout, 'validation_ratio': args.validation_ratio,
            **_on_non_image_keywords(args)}


def _add_skip_non_images(parser: argparse.ArgumentParser, what: str, note: str = '') -> None:
    """--skip-non-images, of the KINDs that take any file of a folder as an image.

    Args:
      parser: the KIND's parser.
      what: the files it leaves out, for the help.
      note: the help's end, after "instead of stopping".
    """
    parser.add_argument('--skip-non-images', action='store_true',
                        help=f'leave out (and count) {what} instead of stopping{note}')


def _on_non_image_keywords(args: argparse.Namespace) -> Dict[str, Any]:
    """The converter keyword of `_add_skip_non_images`."""
    return {'on_non_image': 'skip' if args.skip_non_images else 'error'}


def _mnist_options(parser: argparse.ArgumentParser) -> None:
    _add_validation_ratio(parser, 0.0, ", MNIST's own train/test")


def _validation_ratio_keywords(args: argparse.Namespace) -> Dict[str, Any]:
    return {'validation_ratio': args.validation_ratio}


def _cifar_options(parser: argparse.ArgumentParser) -> None:
    _add_validation_ratio(parser, 0.0, ', the published train/test')


def _cifar100_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--label-mode', choices=cifar.LABEL_MODES, default='fine',
                        help='fine: the 100 classes; coarse: the 20 superclasses '
                             '(default: %(default)s)')
    _cifar_options(parser)


def _cifar100_keywords(args: argparse.Namespace) -> Dict[str, Any]:
    return {'label_mode': args.label_mode, 'validation_ratio': args.validation_ratio}


def _add_on_bad_box(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--on-bad-box', choices=detection.BAD_BOX_POLICIES, default='clip',
                        help='a box crossing the image edge is clipped, its object dropped, '
                             'or the conversion stops (default: %(default)s); a box entirely '
                             'outside the image or inverted is dropped (or stops it, with '
                             'error). Every one is counted in the summary')


def _imagenet_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--bounding-boxes', metavar='DIR', type=common.existing_source,
                        help='the ILSVRC bounding-box XMLs (any folders below DIR), matched to '
                             'images by name')
    parser.add_argument('--synsets', metavar='FILE', type=common.existing_source,
                        help='the synsets in label order (default: SRC/'
                             'imagenet_lsvrc_2015_synsets.txt if present, else the sorted '
                             'train/ folder names)')
    parser.add_argument('--metadata', metavar='FILE', type=common.existing_source,
                        help='<synset><TAB><text> lines (default: SRC/imagenet_metadata.txt '
                             'if present, else the text is the synset)')
    parser.add_argument('--validation-labels', metavar='FILE', type=common.existing_source,
                        help='the synset of each flat validation image, one per line '
                             '(default: SRC/imagenet_2012_validation_synset_labels.txt)')
    _add_on_bad_box(parser)


def _imagenet_keywords(args: argparse.Namespace) -> Dict[str, Any]:
    return {'bounding_boxes': args.bounding_boxes, 'synsets_file': args.synsets,
            'metadata_file': args.metadata, 'validation_labels_file': args.validation_labels,
            'on_bad_box': args.on_bad_box}


def add_detection_options(parser: argparse.ArgumentParser, default_classes: str) -> None:
    """--classes, --layout and --on-unknown-class, shared by the detection KINDs.

    Args:
      parser: the KIND's parser.
      default_classes: what --classes defaults to, for the help ('VOC's 20', 'required').
    """
    parser.add_argument('--classes', metavar='SPEC',
                        help='the classes, label 1 first: a comma list (mask,no-mask), a file '
                             '(one name a line, a labels.txt, or an OD API label_map.pbtxt, '
                             'whose ids are kept), or auto (the sorted names the annotations '
                             f'hold, printed) (default: {default_classes})')
    parser.add_argument('--layout', choices=detection.LAYOUTS, default='ssd',
                        help="the record layout: ssd (SSD-Tensorflow's keys, label 0 the "
                             "background) or od-api (the Object Detection API's keys, with "
                             'label_map.pbtxt beside the shards) (default: %(default)s)')
    parser.add_argument('--on-unknown-class', choices=detection.ON_UNKNOWN_CLASS,
                        default='error',
                        help='an object whose class is not among --classes stops the '
                             'conversion (error, the default) or is left out and counted '
                             '(skip)')


def detection_keywords(args: argparse.Namespace) -> Dict[str, Any]:
    """The converter keywords of `add_detection_options`."""
    return {'classes': args.classes, 'layout': args.layout,
            'on_unknown_class': args.on_unknown_class}


def _voc_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--year', choices=pascalvoc.YEARS,
                        help='the VOC edition: SRC holds (or is) its VOC<year> folder. Leave '
                             'it out for a folder of your own (Annotations/ + JPEGImages/, '
                             'or XMLs beside their images)')
    parser.add_argument('--validation-ratio', type=common.ratio, default=None,
                        help='for a folder without ImageSets/Main: the share of the images '
                             'held out as the validation split (default: 0.1)')
    _add_on_bad_box(parser)
    add_detection_options(parser, "VOC's 20 classes")


def _voc_keywords(args: argparse.Namespace) -> Dict[str, Any]:
    return {'year': args.year, 'on_bad_box': args.on_bad_box,
            'validation_ratio': args.validation_ratio, **detection_keywords(args)}


def _coco_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--images', metavar='DIR', type=common.existing_path,
                        help='with a JSON file as SRC: the folder its file names are relative '
                             "to (default: the JSON's folder)")
    _add_on_bad_box(parser)
    parser.add_argument('--on-crowd', choices=coco.ON_CROWD, default='skip',
                        help='crowd regions (iscrowd 1) are left out and counted (skip, the '
                             'default, as the OD API trains) or kept as ordinary objects '
                             '(keep)')
    add_detection_options(parser, "the JSON's categories, in id order")


def _coco_keywords(args: argparse.Namespace) -> Dict[str, Any]:
    return {'images': args.images, 'on_bad_box': args.on_bad_box, 'on_crowd': args.on_crowd,
            **detection_keywords(args)}


def _add_on_bad_label(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--on-bad-label', choices=segmentation.ON_BAD_LABEL_CHOICES,
                        default='error',
                        help='label values neither < num_classes nor ignore_label: error '
                             '(default) or store them as ignore_label and count them')


def _on_bad_label_keywords(args: argparse.Namespace) -> Dict[str, Any]:
    return {'on_bad_label': args.on_bad_label}


def _voc_seg_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--year', choices=pascalvoc.YEARS, default='2012',
                        help='the VOC edition whose VOC<year> folder SRC holds (or is) '
                             '(default: %(default)s, as deeplab)')
    parser.add_argument('--label-dir', default=None,
                        help='label PNG folder, relative to the VOC folder or absolute '
                             '(default: SegmentationClassRaw if present, else '
                             'SegmentationClass)')
    parser.add_argument('--num-classes', type=common.positive_int, default=None,
                        help='for a custom dataset in the VOC layout (default: 21, or the '
                             'number of --classes)')
    parser.add_argument('--classes', metavar='SPEC',
                        help="for a custom dataset: its classes' names, pixel value 0 first, "
                             'as a comma list (background,road,car) or a file (one name a '
                             'line, or a labels.txt): into labels.txt, dataset_info.json and '
                             "slimdata show's legend")
    parser.add_argument('--ignore-label', type=common.label_value, default=None,
                        help='for a custom dataset in the VOC layout (default: 255)')
    _add_on_bad_label(parser)


def _voc_seg_keywords(args: argparse.Namespace) -> Dict[str, Any]:
    return {'year': args.year, 'label_dir': args.label_dir, 'num_classes': args.num_classes,
            'ignore_label': args.ignore_label, 'on_bad_label': args.on_bad_label,
            'classes': args.classes}


def _yolo_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--data', metavar='FILE', type=common.existing_path,
                        help='the data.yaml with the class names (`names`) and the split '
                             'folders (train/val/test) (default: SRC/data.yaml, or the one '
                             '*.yaml in SRC)')
    parser.add_argument('--names', metavar='FILE', type=common.existing_path,
                        help='a names file instead: one class name a line, line i naming '
                             "class id i (darknet's obj.names, labelImg's classes.txt)")
    _add_skip_non_images(parser, 'images that are not JPEG or PNG (WebP, BMP, ...)')
    _add_on_bad_box(parser)
    add_detection_options(parser, "data.yaml's names, in class-id order")


def _yolo_keywords(args: argparse.Namespace) -> Dict[str, Any]:
    return {'data_yaml': args.data, 'names_file': args.names, 'on_bad_box': args.on_bad_box,
            **_on_non_image_keywords(args), **detection_keywords(args)}


_VOC_TREE = """\
SRC is the VOC<year> folder, the VOCdevkit root, or the folder holding VOCdevkit/:

  VOCdevkit/
    VOC{year}/
"""

KINDS: Dict[str, KindOptions] = {
    'image-folder': KindOptions(
        'Convert a folder of labelled JPEG/PNG images to slim classification TFRecords (train '
        'and validation splits). Layouts: class_folders = SRC/<class>/<image> (classes sorted '
        'by name get ids 0..n-1); labelled_filenames = SRC/<name>_<label>.<ext> (an integer '
        'label is the id; otherwise labels are class names, sorted into ids). Hidden files '
        'and folders (.DS_Store) are left out and counted in the summary.',
        'the folder of images', 'train, validation (with --validation-ratio above 0)', None,
        _image_folder_options, _image_folder_keywords),
    'mnist-idx': KindOptions(
        'Convert MNIST idx files to slim classification TFRecords (train and test splits, '
        'digits stored as PNG). Expects SRC with train-images-idx3-ubyte, '
        'train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each '
        'optionally gzipped (.gz).',
        'the folder of the idx files',
        'train, test, validation (with --validation-ratio above 0)', None, _mnist_options,
        _validation_ratio_keywords),
    'cifar10': KindOptions(
        'Convert the cifar10 "python version" pickle batches to slim classification '
        "TFRecords (32x32 PNGs; train and test splits), the records of models/research/slim's "
        'download_and_convert_cifar10.py. SRC: cifar-10-batches-py/ (or the folder holding '
        'it) with data_batch_1 ... data_batch_5, test_batch and batches.meta. Only numbers, '
        'containers and numpy arrays whose bytes are in the file are unpickled.',
        'the cifar-10-batches-py folder (or its parent)',
        'train, test, validation (with --validation-ratio above 0)', None, _cifar_options,
        _validation_ratio_keywords),
    'cifar100': KindOptions(
        'Convert the cifar100 "python version" pickle batches to slim classification '
        'TFRecords (32x32 PNGs; train and test splits). SRC: cifar-100-python/ (or the folder '
        'holding it) with train, test and meta. Only numbers, containers and numpy arrays '
        'whose bytes are in the file are unpickled.',
        'the cifar-100-python folder (or its parent)',
        'train, test, validation (with --validation-ratio above 0)', None, _cifar100_options,
        _cifar100_keywords),
    'imagenet': KindOptions(
        """\
Convert ImageNet (ILSVRC-2012) to TFRecords in the layout of models/research/slim's
build_imagenet_data.py (labels 1..1000, 0 is the background; synset and text; boxes).

SRC holds:
  train/<synset>/<name>.JPEG
  validation/<name>.JPEG (or val/), flat, with
  imagenet_2012_validation_synset_labels.txt   one synset per image, in sorted name order
    (or validation/<synset>/<name>.JPEG, as preprocess_imagenet_validation_data.py leaves it)
  imagenet_lsvrc_2015_synsets.txt   optional: label = line + 1 (default: sorted train/ folders)
  imagenet_metadata.txt             optional: <synset><TAB><text>

Image files are stored unchanged (today's TensorFlow decodes the PNG and CMYK JPEGs that
build_imagenet_data.py re-encoded). By size, the train split gets 1024 shards and the
validation split 64.
""",
        'the folder of train/ and validation/', 'train, validation', None, _imagenet_options,
        _imagenet_keywords),
    'voc': KindOptions(
        f"""\
Converts Pascal VOC annotations to TFRecords in SSD-Tensorflow's layout (or the OD API's,
--layout od-api), with VOC's 20 classes or your own (--classes).

{_VOC_TREE.format(year=2007)}      Annotations/<id>.xml       one XML per image (VOC format)
      JPEGImages/<id>.jpg        the images, copied into the records unchanged
      ImageSets/Main/<split>.txt the image ids of each split, one per line

Only the ids listed in ImageSets/Main/<split>.txt are converted. Without --year, SRC is a
folder of your own: Annotations/ + JPEGImages/ (a .jpg, .jpeg or .png per XML), with or
without ImageSets/Main, or a flat folder of images with their XMLs beside them; without
lists, the images are split into train and validation by --validation-ratio.
""",
        'the VOC tree or folder (see above)',
        'lists in ImageSets/Main, e.g. train, val, trainval, test (required with lists); '
        'without lists: train, validation', None,
        _voc_options, _voc_keywords),
    'coco': KindOptions(
        """\
Converts COCO detection JSON (boxes) to TFRecords in SSD-Tensorflow's layout (or the OD
API's, --layout od-api). SRC is one of:

  SRC/annotations/instances_<split>.json   COCO 2017: images in SRC/<split>/ (or
                                           SRC/images/<split>/)
  SRC/<split>/_annotations.coco.json       an export (Roboflow): images beside the JSON
  a JSON file                              images in --images DIR (default: its folder);
                                           name its one split with --split

Boxes are [x, y, width, height] in pixels, normalised by the image's real size. Labels are
the categories in id order (1..N; the OD API layout keeps COCO's ids), or --classes.
""",
        'a COCO 2017 folder, an export folder, or a JSON file (see above)',
        'the instances_<split>.json or <split>/ folders (a JSON file: its one split)', None,
        _coco_options, _coco_keywords),
    'voc-seg': KindOptions(
        f"""\
Convert a Pascal VOC segmentation tree (deeplab's: VOC2012) to deeplab TFRecords.

{_VOC_TREE.format(year=2012)}      ImageSets/Segmentation/<split>.txt  image ids, one per line
      JPEGImages/<id>.jpg                 the images, stored unchanged
      SegmentationClassRaw/<id>.png       class indices, or
      SegmentationClass/<id>.png          palette PNGs (indices are read, not colours)
""",
        'the VOC tree (see above)', 'lists in ImageSets/Segmentation, e.g. train, val',
        ['train', 'val'], _voc_seg_options, _voc_seg_keywords),
    'cityscapes': KindOptions(
        'Convert a Cityscapes tree (fine annotations) to deeplab TFRecords. Expects SRC with '
        'leftImg8bit/<split>/<city>/*_leftImg8bit.png and '
        "gtFine/<split>/<city>/*_gtFine_labelTrainIds.png (made by cityscapesscripts' "
        'createTrainIdLabelImgs). Splits train/val/test are written as '
        'train_fine/val_fine/test_fine.',
        'the Cityscapes folder holding leftImg8bit/ and gtFine/',
        'split folders: train, val, test', ['train', 'val'], _add_on_bad_label,
        _on_bad_label_keywords),
    'ade20k': KindOptions(
        'Convert the ADE20K scene-parsing tree to deeplab TFRecords. Expects SRC = '
        'ADEChallengeData2016 with images/{training,validation}/*.jpg and '
        'annotations/{training,validation}/*.png (class indices 0-150, 0 = ignore).',
        'the ADEChallengeData2016 folder',
        'train (images/training), val (images/validation)', ['train', 'val'],
        _add_on_bad_label, _on_bad_label_keywords),
    'yolo': KindOptions(
        """\
Convert a YOLO dataset (Ultralytics, Roboflow: one text file of `class x y w h` lines per
image, normalised) to detection TFRecords, SSD-Tensorflow's layout or the OD API's.

SRC is either layout, with the class names in SRC/data.yaml (or --data, --names):
  <split>/images/*.jpg  <split>/labels/*.txt    Roboflow's export
  images/<split>/*.jpg  labels/<split>/*.txt    Ultralytics'

data.yaml's train/val/test keys name the splits (else the folder names). An empty label
file is an image without objects; an image without a label file is background only
(counted). Polygon lines (class x1 y1 x2 y2 ...) become their bounding box (counted).
""",
        'the YOLO dataset folder (see above)',
        "data.yaml's keys (train, val, test), else the split folders' names", None,
        _yolo_options, _yolo_keywords),
}
