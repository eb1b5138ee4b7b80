"""Ports a repository of old TF-Slim / TF1 code: `slimdata port SRC [DST]` (see slimdata.port).

With DST, the ported copy is built beside it and renamed DST when whole; without, SRC is
ported in place and the original of every changed file saved in a backup folder first (run
the same command again to finish a port that was interrupted). Ends with the report: every
change by file and line, and every line not ported with the reason. Exit status 0 when every
file was ported (lines not ported included), 1 when a file could not be read, parsed or
written (the others are ported), 2 for a usage error (SRC missing, DST not empty or a file,
an output that cannot be written, a backup of an earlier run in the way), checked before
anything is written.
"""

import argparse
import json
import os
import pathlib
import sys

from slimdata import progress, tensorflow_required
from slimdata.cli import common
from slimdata.records import fs


def register(commands: argparse._SubParsersAction, selected: bool) -> None:
    parser = common.command_parser(
        commands, 'port', 'port old TF-Slim / TF1 code to slimdata and TensorFlow 2 (a copy, '
                          'or in place with a backup)',
        __doc__,
        examples=['slimdata port SSD-Tensorflow/ SSD-Tensorflow-tf2/',
                  'slimdata port my_repo/ --dry-run',
                  'slimdata port my_repo/ --backup-dir /tmp/my_repo.originals'])
    parser.add_argument('source', metavar='SRC', type=common.existing_path,
                        help='the folder to port')
    parser.add_argument('destination', metavar='DST', nargs='?',
                        help='a new (or empty) folder for the ported copy (default: port SRC '
                             'in place)')
    parser.add_argument('--backup-dir', metavar='DIR',
                        help='in place: where the originals of changed files go (default: '
                             'SRC.port-backup beside SRC)')
    parser.add_argument('--dry-run', action='store_true', help='report only; write nothing')
    parser.add_argument('--tf-upgrade', choices=('safety', 'default', 'off'), default='safety',
                        help="how TensorFlow's tf_upgrade_v2 ports TF1 calls: safety (default) "
                             'imports tensorflow.compat.v1 as tf, so every TF1 call keeps its '
                             'meaning; default renames each call to its TF2 name where '
                             'TensorFlow judges it safe; off leaves TF1 calls as they are')
    parser.add_argument('--max-file-size', metavar='MB', type=_megabytes, default=1.0,
                        help='Python files larger than this are reported, not ported '
                             '(default: 1; the port takes some 25 kB of memory per line)')
    parser.add_argument('--json', metavar='FILE', help='also write the report as JSON to FILE')
    parser.set_defaults(run=run)


#: The largest --max-file-size: a 1 GiB file would take some 25 GB of syntax trees.
MAX_FILE_SIZE_MB = 1024


def _megabytes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= MAX_FILE_SIZE_MB:  # also refuses inf and nan
        raise argparse.ArgumentTypeError(
            f'{text} is not a number of megabytes above 0 and at most {MAX_FILE_SIZE_MB}')
    return value


def run(args: argparse.Namespace) -> int:
    from slimdata.port import tree, upgrade_v2
    if args.json is not None:
        _check_output_file(args.json)
    tf_upgrade = None if args.tf_upgrade == 'off' else args.tf_upgrade.upper()
    if tf_upgrade is not None:  # now, not after the other passes have run
        tensorflow_required.require("its TF1-call pass (TensorFlow's tf_upgrade_v2; "
                                    '--tf-upgrade off ports without it)')
    try:
        report = tree.port_tree(args.source, args.destination, backup=args.backup_dir,
                                dry_run=args.dry_run, tf_upgrade=tf_upgrade,
                                max_file_bytes=int(args.max_file_size * 2 ** 20))
    except tree.PortError as error:
        raise common.CommandLineError(str(error)) from error
    except (upgrade_v2.UpgradeError, OSError) as error:
        print(f'slimdata port: error: {error}', file=sys.stderr)
        return 1
    progress.result(report.format().rstrip('\n'))
    if args.json is not None:
        _write_json(args.json, report.as_dict())
    return 1 if report.problems else 0


def _check_output_file(path: str) -> None:
    """A usage error now, before any file is ported, if `path` cannot be written later."""
    target = pathlib.Path(path)
    folder = target.parent
    if not path or target.is_dir():
        raise common.CommandLineError(f'--json {path!r}: give the name of a file, not a folder')
    if not folder.is_dir():
        raise common.CommandLineError(f'--json {path}: the folder {folder} does not exist')
    if not os.access(folder, os.W_OK | os.X_OK) or (
            target.exists() and not os.access(target, os.W_OK)):
        raise common.CommandLineError(f'--json {path}: no permission to write it')


def _write_json(path: str, content: dict) -> None:
    """The JSON report, written whole or not at all (through slimdata's one I/O module)."""
    fs.write_text_atomic(path, json.dumps(content, indent=1))
