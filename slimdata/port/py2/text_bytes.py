"""Python 2's str was bytes: where that shows in a Python 2 file after 2to3.

- A value given to a `BytesList` or a `*bytes*_feature` helper that may be text (a name, an
  attribute, a call such as `'%s' % x` or `os.path.basename(path)`) becomes
  `to_bytes(value)` (`slimdata.contrib.py2`): str encoded as UTF-8, as Python 2 stored it, and
  bytes as they are; protobuf refuses text in Python 3 ("expected bytes, str found"). Literals
  are the bytes literals pass's; values that are bytes already (`b'...'`, `.encode(...)`,
  `.read()`, `.tobytes()`, `.tostring()`, `.SerializeToString()`) are left.
- A string literal holding bytes above 0x7f by escapes (`'\\xef\\xbb\\xbf'`, a BOM; `'\\xff\\xd8'`,
  a JPEG's magic number) compared with something (`==`, `in`, `startswith`, `replace`, ...) or
  given to a function (pixel_link's `util.str.remove_all(line, '\\xef\\xbb\\xbf')`, which
  compares inside) was bytes in Python 2 and is text in Python 3: whether the other side is
  bytes or text now cannot be read from the code, so each is reported. But for the UTF-8 byte
  order mark given to a function (a substring to remove, split on, look for): it becomes
  `'\\ufeff'`, the one character it is in text Python 3 decoded (text mode's UTF-8), which
  is right for text; for bytes neither literal was (str and bytes do not mix in Python 3), so
  nothing right is lost. Compared with `==` (`data[:3] == ...`), the code counts bytes: reported.
"""

import re
from typing import Union

import libcst as cst
from libcst.metadata import ParentNodeProvider

from slimdata.port.edits import (
    CHANGED,
    NO_BINDINGS,
    NOT_PORTED,
    Context,
    PortTransformer,
    callee_name,
)

_SINK = re.compile(r'bytes(_list)?_feature$|BytesList$', re.IGNORECASE)
_BYTES_ALREADY = frozenset(('encode', 'read', 'tobytes', 'tostring', 'SerializeToString',
                            'to_bytes'))
_HIGH_ESCAPE = re.compile(r'\\x[89a-fA-F][0-9a-fA-F]')
_UTF8_BOM = re.compile(r'\\xef\\xbb\\xbf', re.IGNORECASE)
HELPER = 'from slimdata.contrib.py2 import to_bytes'


def _is_bytes_already(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return True  # literals: the bytes literals pass's (b'...' stays)
    if isinstance(node, cst.Call):
        return callee_name(node) in _BYTES_ALREADY
    return False


class TextBytesPass(PortTransformer):
    """Python 2's str-as-bytes in a Python 2 file (see the module docstring)."""

    NAME = 'text and bytes'
    TRIGGER = re.compile(r'(?i:bytes(_list)?_feature|byteslist)|' + _HIGH_ESCAPE.pattern)
    # Its work is in the calls and literals its trigger matches, each in its statement.
    FILTERS_STATEMENTS = True
    BINDINGS = NO_BINDINGS

    @classmethod
    def has_work(cls, code: str, context: Context) -> bool:
        return context.python_2 and super().has_work(code, context)

    def visit_Module(self, node: cst.Module) -> bool:
        return self.context.python_2  # the trigger only saves time: Python 2 files alone

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not _SINK.search(callee_name(original)):
            return updated
        changed = False
        arguments = []
        for argument in updated.args:
            value = argument.value
            if isinstance(value, (cst.List, cst.Tuple)):
                elements = [element.with_changes(value=self._encoded(element.value))
                            for element in value.elements]
                new: cst.BaseExpression = value.with_changes(elements=elements)
            else:
                new = self._encoded(value)
            changed = changed or new is not value
            arguments.append(argument.with_changes(value=new))
        if not changed:
            return updated
        self.need_import(HELPER)
        self.note(CHANGED, original, f'{callee_name(original)}(...): to_bytes(...) around what '
                                     'may be text (Python 2 stored a str as its bytes; UTF-8)')
        return updated.with_changes(args=arguments)

    def _encoded(self, value: cst.BaseExpression) -> cst.BaseExpression:
        if _is_bytes_already(value) or isinstance(value, (cst.Integer, cst.Float)):
            return value
        return cst.Call(func=cst.Name('to_bytes'), args=[cst.Arg(value)])

    def leave_SimpleString(self, original: cst.SimpleString,
                           updated: cst.SimpleString) -> cst.SimpleString:
        if 'b' in original.prefix.lower() or 'r' in original.prefix.lower() or not (
                _HIGH_ESCAPE.search(original.value) and self._compared(original)):
            return updated
        if _UTF8_BOM.fullmatch(original.raw_value) and self._argument(original):
            self.note(CHANGED, original, f"{original.value} -> '\\ufeff': the UTF-8 byte order "
                                         'mark as Python 2 held it in a str, given to a '
                                         'function, is one character in text Python 3 decoded '
                                         f'(a bytes value needs b{original.value})')
            return updated.with_changes(
                value=f'{original.prefix}{original.quote}\\ufeff{original.quote}')
        self.note(NOT_PORTED, original, f'{original.value} was bytes in Python 2 and is text in '
                                        f'Python 3: compare bytes with b{original.value}, or '
                                        'text with the characters it decodes to')
        return updated

    def _argument(self, node: cst.CSTNode) -> bool:
        return isinstance(self.get_metadata(ParentNodeProvider, node, None), cst.Arg)

    def _compared(self, node: cst.CSTNode) -> bool:
        parent: Union[cst.CSTNode, None] = self.get_metadata(ParentNodeProvider, node, None)
        if isinstance(parent, (cst.ComparisonTarget, cst.Comparison)):
            return True
        if isinstance(parent, cst.Arg):
            # Any call, not only str's methods: a helper compares inside (the bytes sinks
            # have made their literals bytes literals before this pass).
            call = self.get_metadata(ParentNodeProvider, parent, None)
            return isinstance(call, cst.Call)
        return False
