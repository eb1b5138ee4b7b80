"""Flag definitions whose default is of another type than the flag, which absl refuses.

TF1's first `tf.app.flags` (argparse) kept any default; absl, behind `tf.app.flags` since
TF 1.5 and in TensorFlow 2's `tf.compat.v1.flags`, raises `IllegalFlagValueError` when the
script starts ("flag value must be a string, found <class 'bool'>"). For a literal default:

- `DEFINE_string(name, False, ...)` -> `None` (false as `False` was; absl takes None);
  `DEFINE_string(name, 5, ...)` -> `DEFINE_integer`, `DEFINE_string(name, 0.5, ...)` ->
  `DEFINE_float` (the type the code used it as); `DEFINE_string(name, True, ...)` is
  reported (no string is true the way True was in every use);
- `DEFINE_integer(name, 0.5, ...)` -> `DEFINE_float`.
"""

import ast
import re
from typing import Optional

import libcst as cst

from slimdata.port.edits import (
    CHANGED,
    NOT_PORTED,
    Context,
    PortTransformer,
    argument_at,
    callee_name,
    code_of,
)
from slimdata.port.facts import MatchedLines, node_lines

_DEFINE = re.compile(r'\bDEFINE_(?:string|integer)\b')


def default_argument(call: cst.Call) -> Optional[cst.Arg]:
    """The argument giving a `DEFINE_*` call's default (the second, or `default=`)."""
    return argument_at(call, 1, 'default')


#: The literal defaults of another type than each flag's (`bool` is an `int` too).
_OTHER_TYPES = {'DEFINE_string': (bool, int, float), 'DEFINE_integer': (float,)}


def _defined_with_another_type(node: ast.Call) -> bool:
    """Whether `node` (of Python's tree) defines a flag with a literal default of another
    type (those `leave_Call` changes or reports, and no others)."""
    definer = (node.func.attr if isinstance(node.func, ast.Attribute)
               else node.func.id if isinstance(node.func, ast.Name) else '')
    if definer not in _OTHER_TYPES:
        return False
    default = (node.args[1] if len(node.args) > 1 else next(
        (keyword.value for keyword in node.keywords if keyword.arg == 'default'), None))
    return (isinstance(default, ast.Constant)
            and isinstance(default.value, _OTHER_TYPES[definer]))


class FlagDefaultsPass(PortTransformer):
    """Makes a flag's literal default the flag's type (see the module docstring)."""

    NAME = 'flag defaults'
    TRIGGER = _DEFINE
    FILTERS_STATEMENTS = True

    @classmethod
    def work_lines(cls, tree: ast.Module, code: str, context: Context) -> MatchedLines:
        return node_lines(tree, code, (ast.Call,), _defined_with_another_type, _DEFINE)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        definer = callee_name(original)
        default = default_argument(updated)
        if definer not in ('DEFINE_string', 'DEFINE_integer') or default is None:
            return updated
        value = default.value
        literal = code_of(value)
        if definer == 'DEFINE_string' and literal == 'False':
            self.note(CHANGED, original, f'{definer} default False -> None (absl takes a '
                                         'string or None; both are false)')
            return updated.with_changes(args=[
                argument.with_changes(value=cst.Name('None')) if argument is default
                else argument for argument in updated.args])
        if definer == 'DEFINE_string' and literal == 'True':
            self.note(NOT_PORTED, original, f'{definer} with default True: absl refuses it '
                                            '(a string or None); give the string the code '
                                            'expects')
            return updated
        new_definer = ('DEFINE_integer' if isinstance(value, cst.Integer) and definer ==
                       'DEFINE_string' else 'DEFINE_float' if isinstance(value, cst.Float)
                       else None)
        if new_definer is None:
            return updated
        self.note(CHANGED, original, f'{definer} with default {literal} -> {new_definer} (absl '
                                     "refuses a default of another type than the flag's)")
        new_name = cst.Name(new_definer)
        return updated.with_changes(func=updated.func.with_changes(attr=new_name)
                                    if isinstance(updated.func, cst.Attribute) else new_name)
