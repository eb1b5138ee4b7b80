"""The resource-variables pass: checks of a variable's op type that also accept `VarHandleOp`.

TF1 code finds variables in a graph by their op's type: models/research/slim's model_deploy
(and deeplab's and the Object Detection API's copies) places an op on a parameter server when
`node_def.op.startswith('Variable')`, SSD-Tensorflow's when `node_def.op == 'Variable'`, and
`tf.train.replica_device_setter(ps_ops=[...])` takes a list of op types. Those are the
reference variables' types (`Variable`, `VariableV2`). The entry pass turns resource variables
on (`slimdata.port.entry`), whose op is `VarHandleOp`: such a check misses every variable, and
a model trained on a cluster keeps its variables on the workers (found training ported slim
on a parameter server and 2 workers, benchmarks/cluster_slim.py).

The pass makes exactly these checks accept `VarHandleOp` as well, where the object compared is
an `.op` or `.type` attribute (a NodeDef's op, an Operation's type) or the list is a list of op
types:

- `x.op.startswith('Variable')` -> `x.op.startswith(('Variable', 'VarHandleOp'))`;
- `x.op == 'Variable'` -> `x.op in ('Variable', 'VarHandleOp')` (`!=` -> `not in`);
- a list, tuple or set of strings naming `Variable` or `VariableV2` and not `VarHandleOp`,
  that is compared with `x.op` / `x.type` by `in`, passed as `ps_ops=`, or holds
  `'VariableV2'` (a name no other kind of list holds) gets `'VarHandleOp'` appended.
"""

import re
from typing import List, Optional, Union

import libcst as cst

from slimdata.port.edits import CHANGED, NO_BINDINGS, PortTransformer, code_of

RESOURCE_OP = 'VarHandleOp'
_REFERENCE_OPS = frozenset(('Variable', 'VariableV2'))
_OP_TYPE_ATTRIBUTES = frozenset(('op', 'type'))
_WHY = (f"accepts '{RESOURCE_OP}' too: with resource variables (turned on where the script "
        'starts) a variable\'s op is a VarHandleOp, which this check by op type would miss')

_Sequence = Union[cst.List, cst.Tuple, cst.Set]


def _string(node: cst.CSTNode) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _is_op_type(node: cst.CSTNode) -> bool:
    """Whether `node` is an `.op` / `.type` attribute (a NodeDef's op, an Operation's type)."""
    return isinstance(node, cst.Attribute) and node.attr.value in _OP_TYPE_ATTRIBUTES


def _quote(node: cst.CSTNode) -> str:
    """The quote of a string literal (the port writes its new strings in the file's quotes)."""
    return node.quote if isinstance(node, cst.SimpleString) else "'"


def _op_types(node: cst.CSTNode) -> Optional[List[str]]:
    """The strings of a list/tuple/set literal made only of strings, else None."""
    if not isinstance(node, (cst.List, cst.Tuple, cst.Set)) or not node.elements:
        return None
    values = []
    for element in node.elements:
        value = _string(element.value) if isinstance(element, cst.Element) else None
        if value is None:
            return None
        values.append(value)
    return values


def _misses_resource_op(values: Optional[List[str]]) -> bool:
    return (values is not None and bool(_REFERENCE_OPS.intersection(values))
            and RESOURCE_OP not in values)


def _with_resource_op(node: cst.BaseExpression) -> cst.BaseExpression:
    """`node`, a literal `_op_types` accepted, with 'VarHandleOp' appended, in the quotes of its
    last string."""
    assert isinstance(node, (cst.List, cst.Tuple, cst.Set)), '_op_types accepted it'
    elements = list(node.elements)
    last = elements[-1]
    quote = _quote(last.value)
    added = cst.Element(cst.SimpleString(f'{quote}{RESOURCE_OP}{quote}'), comma=last.comma)
    elements[-1] = last.with_changes(
        comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(' ')))
    return node.with_changes(elements=[*elements, added])


class ResourceVariablesPass(PortTransformer):
    """Makes checks of a variable's op type accept `VarHandleOp` (resource variables)."""

    NAME = 'resource variables'
    TRIGGER = re.compile('|'.join(rf'[\'"]{op}[\'"]' for op in sorted(_REFERENCE_OPS)))
    FILTERS_STATEMENTS = True  # its checks are the literals it matches
    BINDINGS = NO_BINDINGS

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        func = updated.func
        if (isinstance(func, cst.Attribute) and func.attr.value == 'startswith'
                and _is_op_type(func.value) and len(updated.args) == 1
                and updated.args[0].keyword is None):
            argument = updated.args[0].value
            prefix = _string(argument)
            if prefix in _REFERENCE_OPS:
                quote = _quote(argument)
                self.note(CHANGED, original, _WHY)
                return updated.with_changes(args=[updated.args[0].with_changes(
                    value=cst.parse_expression(
                        f'({quote}{prefix}{quote}, {quote}{RESOURCE_OP}{quote})'))])
            if _misses_resource_op(_op_types(argument)):
                self.note(CHANGED, original, _WHY)
                return updated.with_changes(args=[updated.args[0].with_changes(
                    value=_with_resource_op(argument))])
        return self._ps_ops_argument(original, updated)

    def _ps_ops_argument(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        arguments = list(updated.args)
        for index, argument in enumerate(arguments):
            if (argument.keyword is not None and argument.keyword.value == 'ps_ops'
                    and _misses_resource_op(_op_types(argument.value))):
                self.note(CHANGED, original, _WHY)
                arguments[index] = argument.with_changes(value=_with_resource_op(argument.value))
                return updated.with_changes(args=arguments)
        return updated

    def leave_Comparison(self, original: cst.Comparison,
                         updated: cst.Comparison) -> cst.BaseExpression:
        if len(updated.comparisons) != 1:
            return updated
        target = updated.comparisons[0]
        operator, right = target.operator, target.comparator
        if not _is_op_type(updated.left):
            return updated
        if isinstance(operator, (cst.Equal, cst.NotEqual)) and _string(right) in _REFERENCE_OPS:
            membership = 'in' if isinstance(operator, cst.Equal) else 'not in'
            quote = _quote(right)
            self.note(CHANGED, original, _WHY)
            return cst.parse_expression(
                f'{code_of(updated.left)} {membership} '
                f'({quote}{_string(right)}{quote}, {quote}{RESOURCE_OP}{quote})')
        if (isinstance(operator, (cst.In, cst.NotIn))
                and _misses_resource_op(_op_types(right))):
            self.note(CHANGED, original, _WHY)
            return updated.with_changes(
                comparisons=[target.with_changes(comparator=_with_resource_op(right))])
        return updated

    def leave_List(self, original: cst.List, updated: cst.List) -> cst.BaseExpression:
        return self._holding_variable_v2(original, updated)

    def leave_Tuple(self, original: cst.Tuple, updated: cst.Tuple) -> cst.BaseExpression:
        return self._holding_variable_v2(original, updated)

    def leave_Set(self, original: cst.Set, updated: cst.Set) -> cst.BaseExpression:
        return self._holding_variable_v2(original, updated)

    def _holding_variable_v2(self, original: _Sequence,
                             updated: _Sequence) -> cst.BaseExpression:
        """A literal holding 'VariableV2' lists op types wherever it is (a module constant)."""
        values = _op_types(updated)
        if values is None or 'VariableV2' not in values or not _misses_resource_op(values):
            return updated
        self.note(CHANGED, original, _WHY)
        return _with_resource_op(updated)
