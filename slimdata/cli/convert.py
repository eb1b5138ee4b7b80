"""`slimdata convert KIND SRC OUT`: raw data -> sharded TFRecords + dataset_info.json.

The converters live in `slimdata.datasets`; their modules (and their options) are loaded only
when `convert` is the command being run, and none imports TensorFlow before SRC is checked.
"""

import argparse
import functools
import importlib
import sys
from typing import Dict, NamedTuple

from slimdata import progress
from slimdata.cli import common


class Converter(NamedTuple):
    """A `slimdata convert KIND`: its module in slimdata.datasets, that module's add-arguments
    and run functions, a one-line summary and an example."""
    module: str
    add_arguments: str
    run: str
    summary: str
    example: str


CONVERTERS: Dict[str, Converter] = {
    'image-folder': Converter(
        'classification', 'add_image_folder_arguments', 'run_image_folder',
        'a folder of labelled JPEG/PNG images -> slim classification records',
        'slimdata convert image-folder flower_photos/ out/flowers --validation-ratio 0.1'),
    'mnist-idx': Converter(
        'classification', 'add_mnist_arguments', 'run_mnist',
        "MNIST's idx files (.gz or not) -> slim classification records",
        'slimdata convert mnist-idx mnist_idx/ out/mnist'),
    'cifar10': Converter(
        'cifar', 'add_cifar10_arguments', 'run_cifar10',
        "CIFAR-10's python pickle batches -> slim classification records",
        'slimdata convert cifar10 cifar-10-batches-py/ out/cifar10'),
    'cifar100': Converter(
        'cifar', 'add_cifar100_arguments', 'run_cifar100',
        "CIFAR-100's python pickle batches -> slim classification records",
        'slimdata convert cifar100 cifar-100-python/ out/cifar100 --label-mode fine'),
    'imagenet': Converter(
        'imagenet', 'add_convert_arguments', 'run_convert',
        "ImageNet's ILSVRC-2012 tree -> slim's build_imagenet_data.py records",
        'slimdata convert imagenet ILSVRC2012/ out/imagenet --bounding-boxes bboxes/'),
    'voc': Converter(
        'pascalvoc', 'add_convert_arguments', 'run_convert',
        "a Pascal VOC 2007/2012 split -> detection records (SSD-Tensorflow's layout)",
        'slimdata convert voc VOCdevkit/ out/voc2007 --year 2007 --split trainval'),
    'voc-seg': Converter(
        'segmentation', 'add_voc_seg_arguments', 'run_voc_seg',
        "a VOC2012 segmentation tree -> deeplab records",
        'slimdata convert voc-seg VOCdevkit/VOC2012 out/voc_seg --split train val'),
    'cityscapes': Converter(
        'segmentation', 'add_cityscapes_arguments', 'run_cityscapes',
        'a Cityscapes tree (fine, train ids) -> deeplab records',
        'slimdata convert cityscapes cityscapes/ out/cityscapes --split train val'),
    'ade20k': Converter(
        'segmentation', 'add_ade20k_arguments', 'run_ade20k',
        'the ADE20K scene-parsing tree -> deeplab records',
        'slimdata convert ade20k ADEChallengeData2016/ out/ade20k'),
}


def register(commands: argparse._SubParsersAction, selected: bool) -> None:
    parser = common.command_parser(
        commands, 'convert', 'convert raw data to sharded TFRecords with dataset_info.json',
        'Convert a dataset in its published layout to sharded TFRecords in the layout old '
        'code reads, with dataset_info.json and labels.txt beside them. `slimdata convert KIND '
        '--help` says which source layout each KIND expects.',
        examples=[converter.example for converter in CONVERTERS.values()])
    kinds = parser.add_subparsers(dest='kind', required=True, metavar='KIND')
    for kind, converter in CONVERTERS.items():
        kind_parser = kinds.add_parser(kind, help=converter.summary,
                                       epilog=f'example:\n  {converter.example}',
                                       formatter_class=argparse.RawDescriptionHelpFormatter)
        if selected:
            module = importlib.import_module(f'slimdata.datasets.{converter.module}')
            getattr(module, converter.add_arguments)(kind_parser)
            common.add_output_options(kind_parser)
            kind_parser.set_defaults(run=functools.partial(run, getattr(module, converter.run)))


def run(converter, args: argparse.Namespace) -> int:
    """Runs a dataset converter; bad input is one line naming the file, exit status 1.

    ValueError: bad input or a refused re-run (the converters' errors, which name the file);
    OSError: an I/O error naming the file (a full disk); RuntimeError: another conversion
    writes into the folder, or a worker process died.
    """
    try:
        converter(args)
    except (ValueError, OSError, RuntimeError) as error:
        print(f'slimdata convert {args.kind}: error: {error}', file=sys.stderr)
        return 1
    progress.result(f'\nthe records are in {args.output_dir} (with dataset_info.json); next: '
                    f'slimdata verify {args.output_dir}')
    return 0
