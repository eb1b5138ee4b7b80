"""`slimdata index PATH...`: DALI / PyPI `tfrecord` index files (no TensorFlow)."""

import argparse
import collections
import os
from typing import Sequence

from slimdata import progress
from slimdata.cli import common
from slimdata.records import fs, tfrecord


def register(commands: argparse._SubParsersAction, selected: bool) -> None:
    parser = common.command_parser(
        commands, 'index', 'write DALI / tfrecord-package index files (<file>.idx)',
        'Write the index file of each uncompressed TFRecord file, one line "offset size" per '
        "record, as NVIDIA DALI's tfrecord2idx and the PyPI tfrecord package's write them.",
        examples=['slimdata index out/voc2007',
                  'slimdata index out/voc2007 --output-dir out/voc2007_idx'])
    parser.add_argument('paths', nargs='+', metavar='PATH', help='files, folders or globs')
    parser.add_argument('--output-dir', metavar='DIR',
                        help='write the index files here instead of beside the records')
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    files = common.expand(args.paths)
    if args.output_dir:
        _refuse_shared_basenames(files, args.output_dir)
        fs.makedirs(args.output_dir)
    failed = 0
    for path in files:
        try:
            written = tfrecord.write_index(path,
                                           tfrecord.default_index_path(path, args.output_dir))
        except (ValueError, OSError) as error:  # TFRecordError is a ValueError
            progress.error(error)
            failed += 1
            continue
        print(progress.printable(f'{path} -> {written}'))
    return 1 if failed else 0


def _refuse_shared_basenames(files: Sequence[str], output_dir: str) -> None:
    """Index files in one folder are named after the records' basenames: two inputs with the
    same basename would write the same index file, the second over the first."""
    by_name = collections.defaultdict(list)
    for path in files:
        by_name[os.path.basename(path)].append(path)
    shared = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    if shared:
        name, paths = next(iter(sorted(shared.items())))
        raise common.CommandLineError(
            f'{len(paths)} inputs are named {name} ({", ".join(paths)}): their index files '
            f'would both be {os.path.join(output_dir, name + tfrecord.INDEX_SUFFIX)}; index '
            'them into separate folders, or beside the records (without --output-dir)')
