"""Opening files the Python 2 way: mode 'U' and the builtin `file()`.

- `open(path, 'rU')` (also 'U', 'Ur', 'rbU', ...; `io.open`, `codecs.open`, TensorFlow's
  `gfile` openers): Python 3.11 removed the mode's 'U' (universal newlines), which text mode
  has by default: the 'U' is dropped ('rbU' -> 'rb': binary mode never translated newlines);
- `file(path, ...)`, Python 2's builtin (where the file binds no `file` of its own) ->
  `open(path, ...)`, which takes the same arguments.
"""

import re

import libcst as cst

from slimdata.port.edits import (
    CHANGED,
    NO_BINDINGS,
    PortTransformer,
    callee_name,
    code_of,
    mode_argument,
    with_mode,
)

_OPENERS = frozenset(('open', 'FastGFile', 'GFile', 'Open'))
_U_LETTERS = re.compile(r'[rbt+]*U[rbt+]*')


class OpenModesPass(PortTransformer):
    """Drops mode 'U' and makes Python 2's `file()` `open()` (see the module docstring)."""

    NAME = 'open modes'
    TRIGGER = re.compile(r'''['"]''' + _U_LETTERS.pattern + r'''['"]|\bfile\(''')
    FILTERS_STATEMENTS = True  # its work is at the calls holding what its trigger matches
    BINDINGS = NO_BINDINGS

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        func = original.func
        if isinstance(func, cst.Name) and func.value == 'file' and not self.bindings(func):
            self.note(CHANGED, original, "file(...) -> open(...) (Python 2's builtin file is "
                                         'gone)')
            updated = updated.with_changes(func=cst.Name('open'))
        elif callee_name(original) not in _OPENERS:
            return updated
        mode = mode_argument(updated)
        if not (mode is not None and isinstance(mode.value, cst.SimpleString)
                and _U_LETTERS.fullmatch(mode.value.raw_value)):
            return updated
        text = mode.value.raw_value
        new_text = text.replace('U', '') or 'r'
        if new_text in ('b', 't', '+'):
            new_text = 'r' + new_text
        self.note(CHANGED, original, f'mode {text!r} -> {new_text!r} (Python 3.11 removed '
                                     f"'U'; text mode reads universal newlines) in "
                                     f'{code_of(original.func)}(...)')
        return with_mode(updated, new_text)
