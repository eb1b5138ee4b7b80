"""`slimdata convert KIND SRC OUT`: raw data -> sharded TFRecords + dataset_info.json.

The converters live in `slimdata.datasets`; their modules (and their options) are loaded only
when `convert` is the command being run.
"""

import argparse
import functools
import importlib
import sys

#: KIND -> (module in slimdata.datasets, its add-arguments and run functions).
CONVERTERS = {
    'image-folder': ('classification', 'add_image_folder_arguments', 'run_image_folder'),
    'mnist-idx': ('classification', 'add_mnist_arguments', 'run_mnist'),
    'voc': ('pascalvoc', 'add_convert_arguments', 'run_convert'),
    'voc-seg': ('segmentation', 'add_voc_seg_arguments', 'run_voc_seg'),
    'cityscapes': ('segmentation', 'add_cityscapes_arguments', 'run_cityscapes'),
    'ade20k': ('segmentation', 'add_ade20k_arguments', 'run_ade20k'),
}


def register(commands: argparse._SubParsersAction, selected: bool) -> None:
    parser = commands.add_parser(
        'convert', help='convert raw data (image folders, MNIST, VOC, deeplab trees) to '
                        'sharded TFRecords with dataset_info.json')
    kinds = parser.add_subparsers(dest='kind', required=True, metavar='KIND')
    for kind, (module_name, add_arguments, run_converter) in CONVERTERS.items():
        kind_parser = kinds.add_parser(kind, help=f'see `slimdata convert {kind} --help`')
        if selected:
            module = importlib.import_module(f'slimdata.datasets.{module_name}')
            getattr(module, add_arguments)(kind_parser)
            kind_parser.formatter_class = argparse.RawDescriptionHelpFormatter
            kind_parser.set_defaults(run=functools.partial(run, getattr(module, run_converter)))


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
    return 0
