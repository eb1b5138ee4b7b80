"""Renamed arguments keep working for a while, and say so.

When an argument of a public function gets a better name, calls that pass the old name go on
working, with a `DeprecationWarning` naming the new one, until the release notes say the old
name is gone::

    @renamed_argument('workers', 'processes')
    def convert_voc(src, output_dir, year, splits, processes=1): ...

    convert_voc(..., workers=4)   # works, and warns: use processes=

This module imports nothing of slimdata, so every layer may use it.
"""

import functools
import warnings
from typing import Any, Callable, TypeVar

F = TypeVar('F', bound=Callable[..., Any])


def renamed_argument(old: str, new: str) -> Callable[[F], F]:
    """A decorator: keyword `old=` is passed on as `new=`, with a DeprecationWarning.

    Raises:
      TypeError: (from the decorated function) when a call passes both names.
    """
    def decorate(function: F) -> F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if old in kwargs:
                if new in kwargs:
                    raise TypeError(f'{function.__name__}() got both {old}= and {new}=; '
                                    f'{old} is the old name of {new}: pass only {new}=')
                warnings.warn(f'{function.__name__}({old}=...) is deprecated: the argument '
                              f'is now called {new}=', DeprecationWarning, stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)
        return wrapper  # type: ignore[return-value]
    return decorate


def warn_renamed(old: str, new: str) -> None:
    """Warns that the function `old` (called by the caller's caller) is now `new`."""
    warnings.warn(f'{old} is deprecated: use {new}', DeprecationWarning, stacklevel=3)
