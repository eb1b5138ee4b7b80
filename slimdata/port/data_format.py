"""A channels-first layout chosen for a whole program: kept on a GPU, channels-last on a CPU.

TensorFlow's CPU kernels of convolution and pooling take channels-last only, so a TF1 program
that fixed its layout as 'NCHW' for the GPUs it trained on stops at its first step on a CPU
(balancap/SSD-Tensorflow's `DATA_FORMAT = 'NCHW'`). Where the code names its layout once, it
reads that name everywhere else (`if data_format == 'NCHW'`), and the layout can be chosen when
it runs (`slimdata.contrib.data_format`):

- `data_format = 'NCHW'` (a name or attribute spelled data_format, in any case), a parameter
  `data_format='NCHW'`, a `data_format` flag's default ->
  `data_format_for_this_machine('NCHW')`: 'NCHW' where TensorFlow sees a GPU, else 'NHWC';
  'channels_first' and 'NCDHW' likewise;
- another 'NCHW' given as a call's `data_format=` is reported: it runs on a GPU only (the code
  around it may assume the layout, so it is not changed).
"""

import ast
import re
from typing import Iterator, Optional, TypeGuard

import libcst as cst

from slimdata.contrib.data_format import CHANNELS_LAST
from slimdata.port.edits import (
    CHANGED,
    NOT_PORTED,
    Context,
    PortTransformer,
    argument_at,
    callee_name,
    code_of,
)
from slimdata.port.facts import MatchedLines, hinted_nodes, lines_of_nodes
from slimdata.port.flags import default_argument

HELPER = 'from slimdata.contrib.data_format import data_format_for_this_machine'
_HELPER_NAME = 'data_format_for_this_machine'


def _channels_first(node: Optional[cst.BaseExpression]) -> TypeGuard[cst.SimpleString]:
    """Whether `node` is a string literal of a channels-first layout ('NCHW')."""
    return isinstance(node, cst.SimpleString) and node.evaluated_value in CHANNELS_LAST


def _names_the_layout(name: str) -> bool:
    return name.lower().replace('-', '_') == 'data_format'


def _target_names_the_layout(target: cst.BaseExpression) -> bool:
    """`data_format`, `DATA_FORMAT`, `self.data_format`."""
    name = target.attr if isinstance(target, cst.Attribute) else target
    return isinstance(name, cst.Name) and _names_the_layout(name.value)


def _flag_name(call: cst.Call) -> Optional[str]:
    """The name a `DEFINE_string(name, ...)` call defines, when a literal."""
    argument = argument_at(call, 0, 'name')
    value = argument.value if argument is not None else None
    name = value.evaluated_value if isinstance(value, cst.SimpleString) else None
    return name if isinstance(name, str) else None


def _layout_slots(node: ast.AST) -> Iterator[ast.expr]:
    """The values of `node` (Python's tree) the pass may change or report when a layout's
    literal: an assignment's value, a parameter's default, a call's argument (not, say, the
    operand of `data_format == 'NCHW'`)."""
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        yield node.value
    elif isinstance(node, ast.arguments):
        yield from (default for default in (*node.defaults, *node.kw_defaults)
                    if default is not None)
    elif isinstance(node, ast.Call):
        yield from node.args
        yield from (keyword.value for keyword in node.keywords)


class DataFormatPass(PortTransformer):
    """Chooses a program's channels-first layout when it runs (see the module docstring)."""

    NAME = 'data format'
    TRIGGER = re.compile(r'\b(?:' + '|'.join(CHANNELS_LAST) + r')\b')
    FILTERS_STATEMENTS = True

    @classmethod
    def work_lines(cls, tree: ast.Module, code: str, context: Context) -> MatchedLines:
        """The lines of the channels-first literals in `_layout_slots`."""
        return lines_of_nodes(value for node in hinted_nodes(tree, code, cls.TRIGGER)
                              for value in _layout_slots(node)
                              if isinstance(value, ast.Constant) and value.value in CHANNELS_LAST)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        if not _channels_first(updated.value):
            return updated
        named = next((target.target for target in updated.targets
                      if _target_names_the_layout(target.target)), None)
        if named is None:
            return updated
        return updated.with_changes(value=self._for_this_machine(original, code_of(named),
                                                                 updated.value))

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign) -> cst.AnnAssign:
        if _channels_first(updated.value) and _target_names_the_layout(updated.target):
            return updated.with_changes(value=self._for_this_machine(
                original, code_of(updated.target), updated.value))
        return updated

    def leave_Param(self, original: cst.Param, updated: cst.Param) -> cst.Param:
        if _channels_first(updated.default) and _names_the_layout(updated.name.value):
            return updated.with_changes(default=self._for_this_machine(
                original, f'parameter {updated.name.value}', updated.default))
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if (callee_name(original) == 'DEFINE_string'
                and _names_the_layout(_flag_name(original) or '')):
            default = default_argument(updated)
            if default is not None and _channels_first(default.value):
                new = self._for_this_machine(original, 'flag data_format', default.value)
                return updated.with_changes(args=[
                    argument.with_changes(value=new) if argument is default else argument
                    for argument in updated.args])
            return updated
        for argument in original.args:
            if (argument.keyword and _names_the_layout(argument.keyword.value)
                    and _channels_first(argument.value)):
                self.note(NOT_PORTED, original, f'data_format={code_of(argument.value)}: '
                                                "TensorFlow's CPU convolution and pooling take "
                                                'channels-last only, so this runs on a GPU only')
        return updated

    def _for_this_machine(self, original: cst.CSTNode, named: str, layout: cst.SimpleString
                          ) -> cst.Call:
        """`data_format_for_this_machine(layout)` for the layout `named` (noted)."""
        self.need_import(HELPER)
        self.note(CHANGED, original, f"{named} {code_of(layout)} -> "
                                     f"{_HELPER_NAME}({code_of(layout)}): "
                                     f"{CHANNELS_LAST[str(layout.evaluated_value)]!r} where "
                                     "TensorFlow sees no GPU (its CPU convolution and pooling "
                                     'take channels-last only)')
        return cst.Call(func=cst.Name(_HELPER_NAME), args=[cst.Arg(layout)])
