"""A `str` literal where a `BytesList` needs bytes becomes a bytes literal.

`BytesList(value=['jpeg'])`, `bytes_feature('png')`: Python 2's str was bytes; Python 3's
protobuf refuses text ("expected bytes, str found"). ASCII literals only (their bytes are
certain).
"""

import ast
import re

import libcst as cst

from slimdata.port.edits import CHANGED, Context, PortTransformer, callee_name
from slimdata.port.facts import MatchedLines, node_lines
from slimdata.port.qualified import last_name

_BYTES_SINK_HELPER = re.compile(r'bytes(_list)?_feature$|BytesList$', re.IGNORECASE)


class BytesLiteralsPass(PortTransformer):
    """Makes the str literals given to a `BytesList` or bytes feature helper bytes literals."""

    NAME = 'bytes literals'
    TRIGGER = re.compile(r'(?i:bytes(_list)?_feature|byteslist)')
    FILTERS_STATEMENTS = True

    @classmethod
    def work_lines(cls, tree: ast.Module, code: str, context: Context) -> MatchedLines:
        """The lines of the calls of a bytes sink given a str literal (or a list of them):
        most are given a variable."""
        return node_lines(tree, code, (ast.Call,), _given_text, cls.TRIGGER)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not _BYTES_SINK_HELPER.search(callee_name(original)):
            return updated
        new_args = []
        for argument in updated.args:
            value = argument.value
            if isinstance(value, cst.List):
                value = value.with_changes(elements=[
                    element.with_changes(value=self._as_bytes(original, element.value))
                    for element in value.elements])
            else:
                value = self._as_bytes(original, value)
            new_args.append(argument.with_changes(value=value))
        return updated.with_changes(args=new_args)

    def _as_bytes(self, call: cst.Call, value: cst.BaseExpression) -> cst.BaseExpression:
        if (isinstance(value, cst.SimpleString) and 'b' not in value.prefix.lower()
                and value.evaluated_value.isascii()):
            self.note(CHANGED, call, f'{value.value} -> b{value.value} '
                                     f'({callee_name(call)} needs bytes)')
            return value.with_changes(value='b' + value.value)
        return value


def _given_text(call: ast.Call) -> bool:
    """Whether `call` (Python's tree) calls a bytes sink with an ASCII str literal, alone or
    in a list (what `leave_Call` may change)."""
    if not _BYTES_SINK_HELPER.search(last_name(call.func)):
        return False
    values = [*call.args, *(keyword.value for keyword in call.keywords)]
    values += [element for value in values if isinstance(value, ast.List)
               for element in value.elts]
    return any(isinstance(value, ast.Constant) and isinstance(value.value, str)
               and value.value.isascii() for value in values)
