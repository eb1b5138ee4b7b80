"""What the command modules share: their parser, the usage error, path expansion."""

import argparse
import json
from typing import Any, List, Sequence

from slimdata.records import tfrecord

COMPRESSION_CHOICES = ('auto', 'none', 'gzip', 'zlib')
# Progress bars appear only when a run takes longer than this (seconds) and stderr is a TTY.
PROGRESS_DELAY = 2.0


class CommandLineError(Exception):
    """A usage problem: reported in one line, exit status 2."""


def command_parser(commands: argparse._SubParsersAction, name: str, summary: str,
                   description: str = '', examples: Sequence[str] = ()
                   ) -> argparse.ArgumentParser:
    """A command's parser: its one-line summary, a description, examples, and the options
    every command has (--quiet, --verbose)."""
    parser = commands.add_parser(
        name, help=summary, description=description or summary[0].upper() + summary[1:] + '.',
        epilog='examples:\n' + '\n'.join(f'  {example}' for example in examples)
        if examples else None, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_output_options(parser)
    return parser


def add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('-q', '--quiet', action='store_true',
                        help='no progress display and no informational lines (results and '
                             'errors still appear)')
    parser.add_argument('--verbose', action='store_true',
                        help="let TensorFlow print its own start-up log lines")


def add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--json', action='store_true',
                        help='print the result as one JSON object on stdout (for CI)')


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, sort_keys=True))


def existing_path(text: str) -> str:
    """An argparse type: a path (local or URL) that exists; "does not exist" otherwise."""
    from slimdata.records import fs
    if not fs.exists(text):
        raise argparse.ArgumentTypeError(f'{text} does not exist')
    return text


def add_compression_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--compression', choices=COMPRESSION_CHOICES, default='auto',
                        help='how the files are compressed (default: auto, detected from '
                             "each file's first bytes)")


def expand(paths: Sequence[str]) -> List[str]:
    """The record files that command-line paths name; a usage error if they name none."""
    try:
        return tfrecord.expand_paths(paths)
    except ValueError as error:
        raise CommandLineError(str(error)) from error


def megabytes(num_bytes: int) -> str:
    return f'{num_bytes / 1e6:.1f} MB'


# ----------------------------------------------------------------------------------------------
# Argument types: argparse names the flag and exits 2 when one refuses a value

def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f'expected a whole number of at least 1, got {text!r}')
    return value


def label_value(text: str) -> int:
    """An argparse type: a value an 8-bit label map can hold, 0 to 255."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 255:
        raise argparse.ArgumentTypeError(f'expected a label value from 0 to 255, got {text!r}')
    return value


def ratio(text: str) -> float:
    """An argparse type: a number in [0, 1)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f'expected a number from 0 to below 1, got {text!r}')
    return value


_BYTE_UNITS = {'': 1, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}


def byte_size(text: str) -> int:
    """An argparse type: bytes, with an optional K/M/G/T suffix (powers of 1024)."""
    number, unit = text.strip().upper().rstrip('B'), ''
    if number and number[-1] in _BYTE_UNITS:
        number, unit = number[:-1], number[-1]
    try:
        value = int(float(number) * _BYTE_UNITS[unit])
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f'expected a size such as 1G, 512M or 1000000, got '
                                         f'{text!r}')
    return value
