"""The `slimdata` command line: one module per command.

    slimdata count   PATH...          records per file, and the total
    slimdata verify  PATH...          every record's CRCs, and the counts in dataset_info.json
    slimdata inspect FILE [-n N]      the features of the first records, and a keys_to_features
    slimdata index   PATH...          DALI / `tfrecord`-package index files
    slimdata convert KIND SRC OUT     raw data -> sharded TFRecords + dataset_info.json
                                      (KIND: image-folder, mnist-idx, voc, voc-seg,
                                      cityscapes, ade20k; `slimdata convert KIND --help`)
    slimdata patch-tf-slim install|uninstall|status
                                      a start-up hook that patches unedited tf_slim code

PATH is a file, a folder (see `slimdata.records.tfrecord.expand_paths` for which of its files
are taken) or a glob.

Each command is a module `slimdata.cli.<command>` with `register(commands, selected)`, which
adds its sub-parser (and, when `selected`, i.e. when it is the command being run, whatever is
costly to load, such as the converters' own options), and the `run(args) -> int` it sets as
the parser's default. Modules import nothing heavy at import time: `count`, `verify` and
`index` never import TensorFlow.

Exit status: 0 when all is well, 1 when a file has a problem, 2 for a usage error (such as a
path that matches nothing).
"""

import argparse
import importlib
import sys
from typing import Optional, Sequence

from slimdata import __version__
from slimdata.cli.common import CommandLineError

#: The commands, in the order `slimdata --help` lists them; each is `slimdata.cli.<name>`
#: (`patch_tf_slim` is the command `patch-tf-slim`).
COMMANDS = ('count', 'verify', 'inspect', 'index', 'convert', 'patch_tf_slim')


def build_parser(selected: Optional[str] = None) -> argparse.ArgumentParser:
    """The argument parser; the command named `selected` registers its costly parts too."""
    parser = argparse.ArgumentParser(
        prog='slimdata', description='TFRecord tools and dataset converters of slimdata '
                                     '(the TF-Slim data layer on modern TensorFlow).')
    parser.add_argument('--version', action='version', version=f'slimdata {__version__}')
    commands = parser.add_subparsers(dest='command', required=True, metavar='COMMAND')
    for name in COMMANDS:
        importlib.import_module(f'slimdata.cli.{name}').register(commands, name == selected)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs one command; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(selected=argv[0] if argv else None).parse_args(argv)
    try:
        return args.run(args)
    except CommandLineError as error:
        print(f'slimdata {args.command}: error: {error}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f'slimdata {args.command}: interrupted', file=sys.stderr)
        return 130
