"""The `slimdata` command line: one module per command.

    slimdata count   PATH...          records per file, and the total
    slimdata verify  PATH...          every record's CRCs, and the counts in dataset_info.json
    slimdata inspect FILE [-n N]      the features of the first records, and a keys_to_features
    slimdata index   PATH...          DALI / `tfrecord`-package index files
    slimdata show    PATH... [-n N]   a PNG contact sheet of the first records (labels, boxes,
                                      class masks drawn)
    slimdata convert KIND SRC OUT     raw data -> sharded TFRecords + dataset_info.json
                                      (KIND: image-folder, mnist-idx, cifar10, cifar100,
                                      imagenet, voc, voc-seg, cityscapes, ade20k, all with
                                      the same common options; `slimdata convert KIND --help`)
    slimdata port    SRC [DST]        port old TF-Slim / TF1 code (a copy, or in place with a
                                      backup) and report every change and what is left
    slimdata patch-tf-slim install|uninstall|status
                                      a start-up hook that patches unedited tf_slim code

PATH is a file, a folder (see `slimdata.records.tfrecord.expand_paths` for which of its files
are taken) or a glob.

Each command is a module `slimdata.cli.<command>` with `register(commands, selected)`, which
adds its sub-parser (and, when `selected`, i.e. when it is the command being run, whatever is
costly to load, such as the converters' own options), and the `run(args) -> int` it sets as
the parser's default. Modules import nothing heavy at import time: `count`, `verify`,
`index`, `inspect`, `show` and `convert` never import TensorFlow. `-q` and `--verbose` may
come before the command or after it.

Exit status: 0 when all is well, 1 when a file has a problem, 2 for a usage error (such as a
path that matches nothing), 130 after Ctrl-C, and 128 + the signal's number after SIGTERM
(143) or SIGHUP (129), which are handled alike: the command stops, removes its temporary
files, and says so in one line. When the output is a pipe whose reader has gone (`slimdata
count ... | head -1`), the command ends quietly, as Unix tools do, with status 141
(128 + SIGPIPE).
"""

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
from typing import Iterator, List, Optional, Sequence, Tuple

from slimdata import progress
from slimdata.cli import common
from slimdata.cli.common import CommandLineError
from slimdata.version import __version__

#: The commands, in the order `slimdata --help` lists them; each is `slimdata.cli.<name>`
#: (`patch_tf_slim` is the command `patch-tf-slim`).
COMMANDS = ('count', 'verify', 'inspect', 'index', 'show', 'convert', 'port', 'patch_tf_slim')


def build_parser(selected: Optional[str] = None) -> argparse.ArgumentParser:
    """The argument parser; the command named `selected` registers its costly parts too."""
    parser = common.Parser(
        prog='slimdata', description='TFRecord tools and dataset converters of slimdata '
                                     '(the TF-Slim data layer on modern TensorFlow).',
        epilog='examples:\n'
               '  slimdata convert voc VOCdevkit/ out/voc2007 --year 2007 --split trainval\n'
               '  slimdata verify out/voc2007\n'
               '  slimdata show out/voc2007 -o voc.png\n'
               '  slimdata COMMAND --help',
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--version', action='version', version=f'slimdata {__version__}')
    common.add_output_options(parser, top_level=True)
    commands = parser.add_subparsers(dest='command', required=True, metavar='COMMAND')
    for name in COMMANDS:
        importlib.import_module(f'slimdata.cli.{name}').register(commands, name == selected)
    return parser


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: raised in the main thread, so the command stops as after
    Ctrl-C (a BaseException, so that no `except Exception` swallows it)."""

    def __init__(self, signal_number: int):
        super().__init__(signal.Signals(signal_number).name)
        self.signal_number = signal_number


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs one command; returns the exit status."""
    try:
        try:
            return _run(sys.argv[1:] if argv is None else list(argv))
        finally:
            # A closed pipe shows here, not in the interpreter's last flush, where it would
            # print a traceback (--help and usage errors leave through SystemExit).
            sys.stdout.flush()
    except BrokenPipeError:
        return _end_on_closed_pipe()


def _run(argv: List[str]) -> int:
    _escape_unprintable_output()
    argv, pipeline_args = _split_pipeline_args(argv)
    parser = build_parser(selected=_command_of(argv))
    args = parser.parse_args(argv)
    args.pipeline_args = pipeline_args
    if pipeline_args and getattr(args, 'runner', None) is None:
        parser.error(f'options after -- ({" ".join(pipeline_args)}) are Beam pipeline '
                     'options, for `slimdata convert ... --runner RUNNER -- OPTIONS`')
    if not getattr(args, 'verbose', False):
        # TensorFlow's C++ start-up lines (oneDNN, CPU features, absl) are noise to the user
        # of a command line tool; the user's own settings win. oneDNN's graph rewrites change
        # no result here: the commands run no models.
        os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
        os.environ.setdefault('TF_ENABLE_ONEDNN_OPTS', '0')
    quiet_before = progress.is_quiet()  # main() may run in a program that goes on after it
    progress.configure(quiet=getattr(args, 'quiet', False))
    try:
        with _terminate_like_interrupt():
            return args.run(args)
    except CommandLineError as error:
        print(f'slimdata {args.command}: error: {error}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f'slimdata {args.command}: interrupted', file=sys.stderr)
        return 130
    except Terminated as stop:
        print(f'slimdata {args.command}: terminated ({stop})', file=sys.stderr)
        return 128 + stop.signal_number
    finally:
        progress.configure(quiet=quiet_before)


def _command_of(argv: Sequence[str]) -> Optional[str]:
    """The command named in `argv`: its first word that is not an option (-q, --verbose
    may come first)."""
    return next((word for word in argv if not word.startswith('-')), None)


def _end_on_closed_pipe() -> int:
    """The reader of stdout (or stderr) went away (`| head -1`): stop without a traceback.

    What is still buffered for the closed pipe is dropped: both streams are pointed at
    /dev/null, so that neither the interpreter's final flush nor a later message fails again.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):
            pass  # a stream without a file descriptor (replaced by a caller): nothing to do
    os.close(devnull)
    return 128 + signal.SIGPIPE


def _split_pipeline_args(argv: Sequence[str]) -> Tuple[List[str], List[str]]:
    """(our arguments, the Beam pipeline options after a `--`)."""
    if '--' not in argv:
        return list(argv), []
    position = list(argv).index('--')
    return list(argv[:position]), list(argv[position + 1:])


def _escape_unprintable_output() -> None:
    """File names that are not UTF-8 reach Python as surrogates, which a strict stdout cannot
    print: show them escaped (`\\udce9`) instead of failing on them."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, 'reconfigure', None)
        if reconfigure is not None:
            reconfigure(errors='backslashreplace')


@contextlib.contextmanager
def _terminate_like_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise `Terminated` (in the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_terminated(signal_number: int, frame) -> None:
        raise Terminated(signal_number)

    previous = {number: signal.signal(number, raise_terminated)
                for number in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
