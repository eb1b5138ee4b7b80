"""`slimdata show PATH...`: a PNG contact sheet of the first records (no TensorFlow)."""

import argparse
import sys

from slimdata import progress
from slimdata.cli import common
from slimdata.records import fs

DEFAULT_OUTPUT = 'show.png'


def register(commands: argparse._SubParsersAction, selected: bool) -> None:
    parser = common.command_parser(
        commands, 'show',
        'draw the first records (images with labels, boxes, class masks) as a PNG contact '
        'sheet',
        'Draws the first records of a dataset folder, record files or a glob as a PNG contact '
        'sheet: classification images with their label names, detection boxes with their '
        'labels (difficult ones dashed), segmentation images mixed with their class map in '
        "the Pascal VOC palette. Reads slimdata's layouts and those of slim, SSD-Tensorflow, "
        'deeplab and the Object Detection API.',
        examples=['slimdata show out/voc2007 --split trainval -n 8 -o voc.png',
                  'slimdata show out/voc_seg --split val -o seg.png'])
    parser.add_argument('paths', nargs='+', metavar='PATH',
                        help='a dataset folder, record files, or globs')
    parser.add_argument('-n', '--num-records', type=common.positive_int, default=16,
                        metavar='N', help='how many records to draw (default: 16)')
    parser.add_argument('--split', metavar='S',
                        help="the split of a dataset folder to draw (default: the first one "
                             "its dataset_info.json lists; without one, the files whose name "
                             "holds S)")
    parser.add_argument('-o', '--output', default=DEFAULT_OUTPUT, metavar='FILE.png',
                        help=f'where to write the PNG (default: {DEFAULT_OUTPUT})')
    parser.add_argument('--columns', type=common.positive_int, metavar='C',
                        help='cells per row (default: about the square root of N)')
    parser.add_argument('--size', type=common.positive_int, metavar='PIXELS',
                        help='the longest side of each drawn image: larger images are reduced '
                             'to it (default: 256); images under 128 pixels are enlarged')
    common.add_compression_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from slimdata import show  # Pillow's drawing modules load only for this command

    if not args.output.lower().endswith('.png'):
        raise common.CommandLineError(f'-o {args.output}: the contact sheet is a PNG; give a '
                                      'name ending in .png')
    for path in args.paths:
        if not any(char in path for char in '*?[') and not fs.exists(path):
            raise common.CommandLineError(f'{path} does not exist')
    try:
        sheet = show.contact_sheet(args.paths, args.num_records, args.split, args.columns,
                                   args.size or show.MAX_SIDE, args.compression)
        fs.write_bytes_atomic(args.output, sheet.png_bytes())
    except show.SelectionError as error:
        raise common.CommandLineError(str(error)) from error
    except (ValueError, OSError) as error:  # TFRecordError, AnnotationError are ValueErrors
        print(f'error: {error}', file=sys.stderr)
        return 1
    drawn = len(sheet.cells)
    fewer = f' (of {args.num_records} asked: all there are)' if drawn < args.num_records else ''
    progress.result(f'wrote {args.output}: {drawn} records{fewer} of {sheet.title}, '
                    f'{sheet.image.width}x{sheet.image.height} pixels')
    return 0
