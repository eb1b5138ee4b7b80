"""`slimdata convert KIND SRC OUT`: raw data -> sharded TFRecords + dataset_info.json.

Each KIND is the converter `slimdata.datasets.<module>.convert_<kind>` (the KIND with `_` for
`-`), called with SRC, OUT and the keyword arguments of its options
(`slimdata.cli.convert_options`). The converters' modules and options are loaded only when
`convert` is the command being run; no converter imports TensorFlow, in this process or in
its worker processes.
"""

import argparse
import functools
import importlib
import os
from typing import Dict, NamedTuple

from slimdata import progress
from slimdata.cli import Terminated, common


class Converter(NamedTuple):
    """A `slimdata convert KIND`: the module of `convert_<kind>` in slimdata.datasets, a
    one-line summary and an example."""
    module: str
    summary: str
    example: str


CONVERTERS: Dict[str, Converter] = {
    'image-folder': Converter(
        'classification', 'a folder of labelled JPEG/PNG images -> slim classification records',
        'slimdata convert image-folder flower_photos/ out/flowers --validation-ratio 0.1'),
    'mnist-idx': Converter(
        'classification', "MNIST's idx files (.gz or not) -> slim classification records",
        'slimdata convert mnist-idx mnist_idx/ out/mnist'),
    'cifar10': Converter(
        'cifar', "CIFAR-10's python pickle batches -> slim classification records",
        'slimdata convert cifar10 cifar-10-batches-py/ out/cifar10'),
    'cifar100': Converter(
        'cifar', "CIFAR-100's python pickle batches -> slim classification records",
        'slimdata convert cifar100 cifar-100-python/ out/cifar100 --label-mode fine'),
    'imagenet': Converter(
        'imagenet', "ImageNet's ILSVRC-2012 tree -> slim's build_imagenet_data.py records",
        'slimdata convert imagenet ILSVRC2012/ out/imagenet --bounding-boxes bboxes/'),
    'voc': Converter(
        'pascalvoc', "Pascal VOC 2007/2012 splits -> detection records (SSD-Tensorflow's "
                     'layout)',
        'slimdata convert voc VOCdevkit/ out/voc2007 --year 2007 --split trainval test'),
    'coco': Converter(
        'coco', 'COCO detection JSON (COCO 2017, exports, one file) -> detection records',
        'slimdata convert coco custom_train.json out/custom --images train_images/ '
        '--split train'),
    'voc-seg': Converter(
        'segmentation', 'a VOC2012 segmentation tree -> deeplab records',
        'slimdata convert voc-seg VOCdevkit/ out/voc_seg --split train val'),
    'cityscapes': Converter(
        'segmentation', 'a Cityscapes tree (fine, train ids) -> deeplab records',
        'slimdata convert cityscapes cityscapes/ out/cityscapes --split train val'),
    'ade20k': Converter(
        'segmentation', 'the ADE20K scene-parsing tree -> deeplab records',
        'slimdata convert ade20k ADEChallengeData2016/ out/ade20k'),
    'yolo': Converter(
        'yolo', 'a YOLO dataset (Ultralytics, Roboflow) with its data.yaml -> detection records',
        'slimdata convert yolo mask-wearing/ out/masks --split train val'),
}


def converter_function(kind: str) -> str:
    """The name of KIND's converter function: `convert_<kind>`, `-` written `_`."""
    return 'convert_' + kind.replace('-', '_')


def register(commands: argparse._SubParsersAction, selected: bool) -> None:
    parser = common.command_parser(
        commands, 'convert', 'convert raw data to sharded TFRecords with dataset_info.json',
        'Convert a dataset in its published layout to sharded TFRecords in the layout old '
        'code reads, with dataset_info.json and labels.txt beside them. Every KIND takes '
        'the same common options (--split, --shards, --processes, --seed, --overwrite, '
        '--runner, ...); `slimdata convert KIND --help` says which source layout it expects.',
        examples=[converter.example for converter in CONVERTERS.values()])
    kinds = parser.add_subparsers(dest='kind', required=True, metavar='KIND')
    for kind, converter in CONVERTERS.items():
        kind_parser = kinds.add_parser(kind, help=converter.summary,
                                       epilog=f'example:\n  {converter.example}',
                                       formatter_class=argparse.RawDescriptionHelpFormatter)
        if selected:
            from slimdata.cli import convert_options
            convert_options.add_arguments(kind, kind_parser)
            kind_parser.set_defaults(run=functools.partial(run, kind))


def run(kind: str, args: argparse.Namespace) -> int:
    """Runs KIND's converter; bad input is one line naming the file, exit status 1; a split
    the source does not hold is a usage error (status 2), as for the other commands.

    ValueError: bad input or a refused re-run (the converters' errors, which name the file);
    OSError: an I/O error naming the file (a full disk); RuntimeError: another conversion
    writes into the folder, or a worker process died. After such an error, one more line says
    which splits are left incomplete, and how to finish them: after bad input (a ValueError),
    by fixing it first; after an I/O error, a dead worker, Ctrl-C, SIGTERM or SIGHUP, by the
    same command.
    """
    from slimdata.cli import convert_options
    from slimdata.datasets import convert_utils
    module = importlib.import_module(f'slimdata.datasets.{CONVERTERS[kind].module}')
    convert = getattr(module, converter_function(kind))
    try:
        summaries = convert(args.src, args.output_dir, **convert_options.keywords(kind, args))
    except BrokenPipeError:
        raise  # stderr was closed: the command line ends quietly
    except (KeyboardInterrupt, Terminated) as stop:
        left = what_is_left(args.output_dir, stop)
        if left:
            progress.error(left, f'slimdata convert {kind}')
        raise  # the command line says how it was stopped, with its exit status
    except convert_utils.UnknownSplitError as error:
        progress.error(error, f'slimdata convert {kind}: error')
        return 2  # a usage error: nothing was written
    except (ValueError, OSError, RuntimeError) as error:
        progress.error(error, f'slimdata convert {kind}: error')
        left = what_is_left(args.output_dir, error)
        if left:
            progress.error(left, f'slimdata convert {kind}')
        return 1
    for summary in summaries.values():
        progress.result(summary.format())
    if not progress.is_quiet():  # a hint, not a result: -q leaves the summaries alone
        progress.result(f'\nthe records are in {args.output_dir} (with dataset_info.json); '
                        f'next: slimdata verify {args.output_dir}')
    return 0


def what_is_left(output_dir: str, error: BaseException) -> str:
    """After a failed conversion: the splits of `output_dir` left incomplete, as its
    dataset_info.json records them, and how to finish them; '' when there are none (or the
    run was refused before it wrote anything)."""
    from slimdata.records import dataset_info, fs, writer
    if isinstance(error, (writer.RerunError, fs.FolderBusyError)):
        return ''  # refused before writing: the message says so
    try:
        info = dataset_info.read_dataset_info(output_dir)
    except (ValueError, OSError):
        return ''
    incomplete = dataset_info.incomplete_splits(info or {})
    if not incomplete:
        return ''
    described = []
    for split, entry in sorted(incomplete.items()):
        total = entry.get('fingerprint', {}).get('num_shards', '?')
        described.append(f'{split!r} ({len(entry.get("shards", []))} of {total} shards '
                         'written)')
    info_path = os.path.join(output_dir, dataset_info.DATASET_INFO_FILENAME)
    left = (f'stopped; left incomplete, as {info_path} records: split '
            f'{", ".join(described)}. Readers refuse an incomplete split; ')
    if isinstance(error, ValueError):
        # Bad input stops every run alike: the same command cannot finish it.
        return left + ('fix what the error names, then run the command again (the complete '
                       'shards are kept and reused; with other options, add --overwrite)')
    return left + ('run the same command again to finish it (the complete shards are kept '
                   'and reused)')
