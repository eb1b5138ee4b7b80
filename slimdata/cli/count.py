"""`slimdata count PATH...`: the records of each file and the total (no TensorFlow)."""

import argparse
import sys

from slimdata.cli import common
from slimdata.records import tfrecord


def register(commands: argparse._SubParsersAction, selected: bool) -> None:
    parser = commands.add_parser('count', help='count the records of TFRecord files')
    parser.add_argument('paths', nargs='+', metavar='PATH', help='files, folders or globs')
    common.add_compression_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    total, failed = 0, 0
    for path in common.expand(args.paths):
        try:
            num_records = tfrecord.count_records(path, args.compression)
        except (ValueError, OSError) as error:  # TFRecordError is a ValueError
            print(f'error: {error}', file=sys.stderr)
            failed += 1
            continue
        total += num_records
        print(f'{num_records:>12}  {path}')
    print(f'{total:>12}  total' + (f' ({failed} file(s) could not be counted)' if failed else ''))
    return 1 if failed else 0
