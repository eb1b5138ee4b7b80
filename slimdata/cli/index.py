"""`slimdata index PATH...`: DALI / PyPI `tfrecord` index files (no TensorFlow)."""

import argparse
import os
import sys

from slimdata.cli import common
from slimdata.records import tfrecord


def register(commands: argparse._SubParsersAction, selected: bool) -> None:
    parser = commands.add_parser(
        'index', help='write DALI / tfrecord-package index files (<file>.idx)')
    parser.add_argument('paths', nargs='+', metavar='PATH', help='files, folders or globs')
    parser.add_argument('--output-dir', metavar='DIR',
                        help='write the index files here instead of beside the records')
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    files = common.expand(args.paths)
    if args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
    failed = 0
    for path in files:
        try:
            written = tfrecord.write_index(path,
                                           tfrecord.default_index_path(path, args.output_dir))
        except (ValueError, OSError) as error:  # TFRecordError is a ValueError
            print(f'error: {error}', file=sys.stderr)
            failed += 1
            continue
        print(f'{path} -> {written}')
    return 1 if failed else 0
