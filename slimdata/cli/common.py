"""What the command modules share: the usage error, path expansion, common options."""

import argparse
from typing import List, Sequence

from slimdata.records import tfrecord

COMPRESSION_CHOICES = ('auto', 'none', 'gzip', 'zlib')
# Progress bars appear only when a run takes longer than this (seconds) and stderr is a TTY.
PROGRESS_DELAY = 2.0


class CommandLineError(Exception):
    """A usage problem: reported in one line, exit status 2."""


def add_compression_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--compression', choices=COMPRESSION_CHOICES, default='auto',
                        help='how the files are compressed (default: auto, detected from '
                             "each file's first bytes)")


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f'expected a whole number of at least 1, got {text!r}')
    return int(text)


def expand(paths: Sequence[str]) -> List[str]:
    """The record files that command-line paths name; a usage error if they name none."""
    try:
        return tfrecord.expand_paths(paths)
    except ValueError as error:
        raise CommandLineError(str(error)) from error


def megabytes(num_bytes: int) -> str:
    return f'{num_bytes / 1e6:.1f} MB'
