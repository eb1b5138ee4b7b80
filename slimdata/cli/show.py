"""`slimdata show PATH...`: a PNG contact sheet of the first records (no TensorFlow).

Exit status: 0 when every record asked is drawn (an image over `--max-pixels` is drawn as a
marked cell with a warning: the data is not at fault); 1 when a record cannot be read (the
sheet is still written, the record's cell marked, and each such record named on stderr) or
a file is not a TFRecord file; 2 for a usage error, including numbers (`-n`, `--columns`,
`--size`) that could make a sheet of more than `show.MAX_SHEET_PIXELS` pixels.
"""

import argparse

from slimdata import progress
from slimdata.cli import common
from slimdata.records import fs, images

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
        'deeplab and the Object Detection API. A record that cannot be drawn is drawn as a '
        'marked cell and named on stderr.',
        examples=['slimdata show out/voc2007 --split trainval -n 8 -o voc.png',
                  'slimdata show out/voc_seg --split val -o seg.png'])
    parser.add_argument('paths', nargs='+', metavar='PATH',
                        help='a dataset folder, record files, or globs')
    parser.add_argument('-n', '--num-records', type=common.positive_int, default=16,
                        metavar='N', help='how many records to draw (default: 16)')
    parser.add_argument('--split', metavar='S',
                        help="the split of a dataset folder to draw (default: train, else "
                             "the first split whose name starts with train, such as trainval, "
                             "else the first its dataset_info.json lists; the result line says "
                             "which and names the others; in a folder without one, the files "
                             "whose name holds S: by default train, else all)")
    parser.add_argument('-o', '--output', default=DEFAULT_OUTPUT, metavar='FILE.png',
                        help=f'where to write the PNG (default: {DEFAULT_OUTPUT})')
    parser.add_argument('--columns', type=common.positive_int, metavar='C',
                        help='cells per row, at most N (default: about the square root of N)')
    parser.add_argument('--size', type=common.positive_int, metavar='PIXELS',
                        help='the longest side of each drawn image: larger images are reduced '
                             'to it (default: 256); images under 128 pixels are enlarged')
    parser.add_argument('--max-pixels', type=common.positive_int, metavar='P',
                        help='the most pixels decoded for one image (a JPEG counted at the '
                             'reduced size it is decoded at); larger images are drawn as marked '
                             'cells (default: 50000000, at most '
                             f'{images.DEFAULT_MAX_PIXELS}, what Pillow opens)')
    common.add_compression_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from slimdata import show  # Pillow's drawing modules load only for this command

    if not args.output.lower().endswith('.png'):
        raise common.CommandLineError(f'-o {args.output}: the contact sheet is a PNG; give a '
                                      'name ending in .png')
    max_pixels = args.max_pixels or show.DEFAULT_MAX_PIXELS
    if max_pixels > images.DEFAULT_MAX_PIXELS:
        raise common.CommandLineError(f'--max-pixels {max_pixels}: at most '
                                      f'{images.DEFAULT_MAX_PIXELS}, the most Pillow opens')
    for path in args.paths:
        if not any(char in path for char in '*?[') and not fs.exists(path):
            raise common.CommandLineError(f'{path} does not exist')
    try:
        sheet = show.contact_sheet(args.paths, args.num_records, args.split, args.columns,
                                   args.size or show.MAX_SIDE, args.compression, max_pixels)
        fs.write_bytes_atomic(args.output, sheet.png_bytes())
    except (show.SelectionError, show.SheetTooLarge) as error:
        raise common.CommandLineError(str(error)) from error
    except (ValueError, OSError) as error:  # a TFRecordError is a ValueError
        progress.error(error)
        return 1
    for problem in sheet.problems:
        label = 'error' if problem.kind == show.UNREADABLE else 'warning'
        progress.error(f'{problem.message}; its cell is marked', label)
    cells = len(sheet.cells)
    fewer = f' (of {args.num_records} asked: all there are)' if cells < args.num_records else ''
    progress.result(f'wrote {args.output}: {cells} records{fewer} of {sheet.title}, '
                    f'{sheet.image.width}x{sheet.image.height} pixels{_not_drawn(sheet)}')
    return 1 if any(problem.kind == show.UNREADABLE for problem in sheet.problems) else 0


def _not_drawn(sheet) -> str:
    """'' or '; 2 not drawn, marked (1 too large, 1 unreadable)'."""
    kinds = [problem.kind for problem in sheet.problems]
    if not kinds:
        return ''
    counts = ', '.join(f'{kinds.count(kind)} {kind}' for kind in dict.fromkeys(kinds))
    return f'; {len(kinds)} not drawn, marked ({counts})'
