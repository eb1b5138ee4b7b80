"""What the command modules share: their parser, the usage error, path expansion."""

import argparse
import json
from typing import Any, Callable, List, Sequence

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

def _bounded(parse: Callable[[str], Any], accept: Callable[[Any], bool],
             expected: str) -> Callable[[str], Any]:
    """An argparse type: `parse(text)` if `accept` takes it, else "expected <expected>"."""
    def check(text: str) -> Any:
        try:
            value = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'expected {expected}, got {text!r}') from None
        if not accept(value):
            raise argparse.ArgumentTypeError(f'expected {expected}, got {text!r}')
        return value
    return check


positive_int = _bounded(int, lambda value: value >= 1, 'a whole number of at least 1')
label_value = _bounded(int, lambda value: 0 <= value <= 255, 'a label value from 0 to 255')
ratio = _bounded(float, lambda value: 0 <= value < 1, 'a number from 0 to below 1')


_BYTE_UNITS = {'': 1, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}


def _parse_byte_size(text: str) -> int:
    number, unit = text.strip().upper().rstrip('B'), ''
    if number and number[-1] in _BYTE_UNITS:
        number, unit = number[:-1], number[-1]
    return int(float(number) * _BYTE_UNITS[unit])


#: An argparse type: bytes, with an optional K/M/G/T suffix (powers of 1024).
byte_size = _bounded(_parse_byte_size, lambda value: value >= 1,
                     'a size such as 1G, 512M or 1000000')
