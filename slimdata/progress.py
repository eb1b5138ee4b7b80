"""The one progress display of slimdata: converters, `verify` and the training scripts use it.

On a terminal it is a tqdm bar. On a pipe or a file (a CI log, `| tee log`), a bar's frames
would drown the log, so it writes a plain line at most every tenth of the work or every 30
seconds, and one at the end::

    pascalvoc_2007 trainval: 10% (501/5011 ex) in 1.2 s
    ...
    pascalvoc_2007 trainval: done, 5011 ex in 11.8 s (425 ex/s)

`configure(quiet=True)` (the command line's `--quiet`) turns every display off; messages
passed to `Progress.write` still appear then, since they report problems. Messages go
through the display so that they never land inside a bar.
"""

import os
import sys
import time
from typing import Any, Optional, TextIO

from tqdm import tqdm

#: Plain-line mode: a line at least every this many seconds, and every tenth of the total,
#: but never two within MIN_LINE_SECONDS (short work shows its final line only).
LINE_SECONDS = 30.0
LINE_FRACTION = 0.1
MIN_LINE_SECONDS = 1.0

_settings = {'quiet': False}


def configure(quiet: bool = False) -> None:
    """Sets how every later display behaves (the command line's `--quiet`)."""
    _settings['quiet'] = quiet


def is_quiet() -> bool:
    return _settings['quiet']


class Progress:
    """Counts work done toward a total and shows it where it suits the output stream.

    Args:
      total: the amount of work (items, bytes), or None if unknown.
      desc: what is being done, the start of every line.
      unit: the unit of `total` ('ex', 'B', 'files', ...).
      stream: where to show it; stderr by default.
      unit_scale: show large counts as k/M/G (for bytes).
      delay: a terminal bar appears only after this many seconds (short work shows none).
      initial: work already done (a training run resumed from a checkpoint).
    """

    def __init__(self, total: Optional[float], desc: str, unit: str = 'ex',
                 stream: Optional[TextIO] = None, unit_scale: bool = False,
                 delay: float = 0.0, initial: float = 0):
        self.total = total
        self.desc = desc
        self.unit = unit
        self.count = initial
        self._postfix = ''
        self._stream = stream or sys.stderr
        self._unit_scale = unit_scale
        self._started = time.perf_counter()
        self._bar = None
        self._lines = not _is_terminal(self._stream)
        self._quiet = is_quiet()
        self._next_line_count = self._line_step()
        self._next_line_time = self._started + LINE_SECONDS
        self._last_line = self._started
        if not self._quiet and not self._lines:
            # Bytes in binary units named as such: tqdm's 'iB' with 1024 shows KiB, MiB, GiB,
            # the units of format_bytes (the plain lines and every summary).
            binary = unit_scale and unit == 'B'
            self._bar = tqdm(total=total, desc=desc, unit='iB' if binary else unit,
                             file=self._stream, unit_scale=unit_scale,
                             unit_divisor=1024 if binary else 1000,
                             delay=delay, dynamic_ncols=True, initial=initial,
                             disable=None)  # only on a terminal: tqdm checks it again

    def _line_step(self) -> float:
        return self.total * LINE_FRACTION if self.total else float('inf')

    def update(self, amount: float = 1) -> None:
        """Adds `amount` of work done."""
        if not amount:
            return
        self.count += amount
        if self._bar is not None:
            self._bar.update(amount)
        elif self._lines and not self._quiet:
            now = time.perf_counter()
            due = self.count >= self._next_line_count or now >= self._next_line_time
            if due and now - self._last_line >= MIN_LINE_SECONDS:
                self._print(self._status(now))
                self._next_line_count = self.count + self._line_step()
                self._next_line_time = now + LINE_SECONDS
                self._last_line = now

    def set_postfix(self, **values: Any) -> None:
        """Figures shown after the count (a loss), on the bar or at the end of each line."""
        if self._bar is not None:
            self._bar.set_postfix(values)
        self._postfix = ', '.join(f'{name}={value}' for name, value in values.items())

    def write(self, message: str) -> None:
        """Shows a message above the bar (or as a line), even when quiet."""
        if self._bar is not None:
            self._bar.write(message, file=self._stream)
        else:
            self._print(message)

    def close(self, stopped: bool = False) -> None:
        """Ends the display: closes the bar, or writes the final line.

        Args:
          stopped: the work ended early (an error, Ctrl-C): the final line says how far it
            got, never "done".
        """
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._lines and not self._quiet and stopped:
            seconds = time.perf_counter() - self._started
            total = f' of {self._amount(self.total)}' if self.total else ''
            self._print(f'{self.desc}: stopped after {self._amount(self.count)}{total} in '
                        f'{seconds:.1f} s')
        elif self._lines and not self._quiet and self.count:
            seconds = time.perf_counter() - self._started
            rate = self.count / seconds if seconds > 0 else 0
            postfix = f', {self._postfix}' if self._postfix else ''
            self._print(f'{self.desc}: done, {self._amount(self.count)} in {seconds:.1f} s '
                        f'({self._amount(rate)}/s){postfix}')
        self._lines = False

    def _status(self, now: float) -> str:
        if not self.total:
            done = self._amount(self.count)
        elif self._unit_scale:
            done = (f'{100 * self.count / self.total:.0f}% ({self._amount(self.count)} of '
                    f'{self._amount(self.total)})')
        else:
            done = (f'{100 * self.count / self.total:.0f}% '
                    f'({self.count:,}/{self.total:,} {self.unit})')
        postfix = f', {self._postfix}' if self._postfix else ''
        return f'{self.desc}: {done} in {now - self._started:.1f} s{postfix}'

    def _amount(self, value: float) -> str:
        if self._unit_scale and self.unit == 'B':
            return format_bytes(value)
        if self._unit_scale:
            for prefix in ('', 'k', 'M', 'G', 'T'):
                if value < 1000 or prefix == 'T':
                    return f'{value:.1f} {prefix}{self.unit}'
                value /= 1000
        return f'{value:,.0f} {self.unit}'

    def _print(self, message: str) -> None:
        print(message, file=self._stream, flush=True)

    def __enter__(self) -> 'Progress':
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        if exc_type is not None and issubclass(exc_type, BrokenPipeError):
            self._quiet = True  # the reader of the output went away: nothing more to say
        self.close(stopped=exc_type is not None)


def _is_terminal(stream: TextIO) -> bool:
    """Whether `stream` is a terminal a bar can be drawn on: a tty that reports a width. A
    pseudo-terminal of width 0 (`script`, some IDE consoles and CI runners) would get empty
    bars, blank lines and no final line, so it gets the plain lines."""
    isatty = getattr(stream, 'isatty', None)
    if not (isatty and isatty()):
        return False
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return True  # a terminal-like stream without a descriptor: its width cannot be asked
    try:
        return os.get_terminal_size(descriptor).columns > 0
    except OSError:
        return False


def format_bytes(num_bytes: float) -> str:
    """A size in binary units with their IEC names (B, KiB, MiB, GiB, TiB: powers of 1024):
    the one form of every size slimdata shows, in progress lines, bars and summaries."""
    size = float(num_bytes)
    for unit in ('B', 'KiB', 'MiB', 'GiB'):
        if size < 1024:
            return f'{size:.0f} B' if unit == 'B' else f'{size:.1f} {unit}'
        size /= 1024
    return f'{size:.1f} TiB'


def plural(count: int, noun: str, plural_form: Optional[str] = None) -> str:
    """'1 file', '2 files', '1 entry' (with plural_form='entries'): counts in messages."""
    if count == 1:
        return f'{count:,} {noun}'
    return f'{count:,} {plural_form or noun + "s"}'


def info(message: str) -> None:
    """An informational line of a converter or tool (what it found, where it writes): one
    channel for all of them, stderr, beside the progress display; off when quiet."""
    if not is_quiet():
        print(message, file=sys.stderr, flush=True)


def result(message: str) -> None:
    """A line of a command's result, on stdout; on a terminal it is written above any
    progress bar rather than through it."""
    tqdm.write(message, file=sys.stdout)
