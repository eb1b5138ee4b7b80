"""What the command modules share: their parser, the usage error, path expansion."""

import argparse
import difflib
import json
import sys
from typing import Any, Callable, List, Optional, Sequence

from slimdata.records import tfrecord

COMPRESSION_CHOICES = ('auto', 'none', 'gzip', 'zlib')


class CommandLineError(Exception):
    """A usage problem: reported in one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """The parser of `slimdata` and, through add_subparsers, of every command and KIND: a
    mistyped choice (a command, a KIND, --layout ...) gets "did you mean" (argparse has it
    only from Python 3.14)."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is not None and value not in choices:
            close = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1)
            if close:
                listed = ', '.join(str(choice) for choice in choices)
                raise argparse.ArgumentError(
                    action, f'invalid choice: {value!r}; did you mean {close[0]!r}? '
                            f'(choose from {listed})')
        super()._check_value(action, value)


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


def add_output_options(parser: argparse.ArgumentParser, top_level: bool = False) -> None:
    """-q/--quiet and --verbose. They may come before the command or after it (`slimdata -q
    count ...`, `slimdata count -q ...`): the command's own copies have no default, so that
    they set the value only when given."""
    default = False if top_level else argparse.SUPPRESS
    parser.add_argument('-q', '--quiet', action='store_true', default=default,
                        help='no progress display and no informational lines (results and '
                             'errors still appear)')
    parser.add_argument('--verbose', action='store_true', default=default,
                        help="let TensorFlow print its own start-up log lines")


class _DeprecatedAlias(argparse.Action):
    """An old option name that still works: it sets its new name's value, and says so."""

    def __init__(self, option_strings: Sequence[str], dest: str, new: str, **kwargs: Any):
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: Optional[str] = None) -> None:
        print(f'{parser.prog}: note: {option_string} is deprecated, use {self.new} (it means '
              'the same)', file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_deprecated_alias(parser: argparse.ArgumentParser, old: str, new: str,
                         **kwargs: Any) -> None:
    """Adds `old` as a hidden option that sets `new`'s value with a one-line note on stderr."""
    parser.add_argument(old, dest=new.lstrip('-').replace('-', '_'), action=_DeprecatedAlias,
                        new=new, help=argparse.SUPPRESS, default=argparse.SUPPRESS, **kwargs)


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
