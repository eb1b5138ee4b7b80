"""Ports a repository of old TF-Slim / TF1 code: `slimdata port SRC [DST]` (see slimdata.port).

With DST, the tree is copied there and the copy ported; without, SRC is ported in place and
the original of every changed file saved in a backup folder first. Ends with the report: every
change by file and line, and every line not ported with the reason. Exit status 0 when the run
went through (lines not ported included), 1 when a file could not be read, parsed or written,
2 for a usage error (SRC missing, DST not empty, a backup of an earlier run in the way).
"""

import argparse
import json
import sys

from slimdata import progress
from slimdata.cli import common


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
                        help='a new folder for the ported copy (default: port SRC in place)')
    parser.add_argument('--backup-dir', metavar='DIR',
                        help='in place: where the originals of changed files go (default: '
                             'SRC.port-backup beside SRC)')
    parser.add_argument('--dry-run', action='store_true', help='report only; write nothing')
    parser.add_argument('--tf-upgrade', choices=('safety', 'default', 'off'), default='safety',
                        help="how TensorFlow's tf_upgrade_v2 ports TF1 calls: safety (default) "
                             'imports tensorflow.compat.v1 as tf, so every TF1 call keeps its '
                             'meaning; default renames each call to its TF2 name where '
                             'TensorFlow judges it safe; off leaves TF1 calls as they are')
    parser.add_argument('--json', metavar='FILE', help='also write the report as JSON to FILE')
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from slimdata.port import tree, upgrade_v2
    tf_upgrade = None if args.tf_upgrade == 'off' else args.tf_upgrade.upper()
    try:
        report = tree.port_tree(args.source, args.destination, backup=args.backup_dir,
                                dry_run=args.dry_run, tf_upgrade=tf_upgrade)
    except tree.PortError as error:
        raise common.CommandLineError(str(error)) from error
    except (upgrade_v2.UpgradeError, OSError) as error:
        print(f'slimdata port: error: {error}', file=sys.stderr)
        return 1
    progress.result(report.format().rstrip('\n'))
    if args.json:
        with open(args.json, 'w', encoding='utf-8') as stream:
            json.dump(report.as_dict(), stream, indent=1)
    return 1 if report.problems else 0
