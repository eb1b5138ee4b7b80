"""Python 2's integer division kept: `a / b` floors where both operands are integers.

In a Python 2 file (`Context.python_2`) without `from __future__ import division`, `/` of two
integers floored (`batch_size / num_clones` feeding a queue's dequeue count: in Python 3 it is
`2.0`, and TensorFlow refuses a float count). For each `/` and `/=`:

- both operands certainly integers (int literals, `len(...)`, `int(...)`, and `+ - * // %`
  of such): `//`;
- either certainly a float (a float literal, `float(...)`): left, `/` means the same;
- otherwise `slimdata.contrib.py2.old_div(a, b)`, Python 2's rule decided when the code runs
  (floor for Python ints, numpy integer arrays and TF integer tensors), reported.
"""

import ast
import re
from typing import Optional, Tuple, Union

import libcst as cst
from libcst.helpers import ensure_type

from slimdata.port.edits import (
    CHANGED,
    NOT_PORTED,
    Context,
    PortTransformer,
    code_of,
)
from slimdata.port.facts import MatchedLines, node_lines

_FUTURE_DIVISION = re.compile(r'^[ \t]*from[ \t]+__future__[ \t]+import[^\n]*\bdivision\b',
                              re.MULTILINE)
_INTEGER_CALLS = frozenset(('len', 'int', 'ord'))
_FLOAT_CALLS = frozenset(('float',))
_INTEGER_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)
HELPER = 'from slimdata.contrib.py2 import old_div'


def _kind(node: cst.BaseExpression) -> Optional[str]:
    """'int' or 'float' when `node`'s type is certain from its text, else None."""
    if isinstance(node, cst.Integer):
        return 'int'
    if isinstance(node, cst.Float):
        return 'float'
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _kind(node.expression)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        if node.func.value in _INTEGER_CALLS:
            return 'int'
        if node.func.value in _FLOAT_CALLS:
            return 'float'
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _INTEGER_OPERATORS):
        kinds = {_kind(node.left), _kind(node.right)}
        if kinds == {'int'}:
            return 'int'
        if 'float' in kinds:
            return 'float'
    return None


def _keeps_python_2_division(code: str, context: Context) -> bool:
    return context.python_2 and not _FUTURE_DIVISION.search(code)


_SLASH = re.compile('/')


def _division_lines(tree: ast.Module, code: str) -> MatchedLines:
    """The lines of the `/` and `/=` of `tree`, Python's tree of `code`, but those of a float
    literal (`x / 255.`), which the pass leaves (`_kind`)."""
    return node_lines(tree, code, (ast.BinOp, ast.AugAssign), lambda node: (
        isinstance(node.op, ast.Div) and not any(map(_float_literal, _operands(node)))), _SLASH)


def _operands(node: Union[ast.BinOp, ast.AugAssign]) -> Tuple[ast.expr, ast.expr]:
    return (node.left, node.right) if isinstance(node, ast.BinOp) else (node.target, node.value)


def _float_literal(node: ast.expr) -> bool:
    """A float literal, signed or not."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is float


class DivisionPass(PortTransformer):
    """Keeps Python 2's `/` of integers (see the module docstring)."""

    NAME = 'division'
    TRIGGER = _SLASH
    # Its work is all in the statements holding a division (by Python's tree: not a `/` of a
    # comment or a path); it needs nothing of the others.
    FILTERS_STATEMENTS = True

    @classmethod
    def has_work(cls, code: str, context: Context) -> bool:
        """A Python 2 file with a `/` that divides (`work_lines`: a `/` of a path or a
        comment is no work)."""
        return _keeps_python_2_division(code, context) and super().has_work(code, context)

    @classmethod
    def work_lines(cls, tree: ast.Module, code: str, context: Context) -> MatchedLines:
        return _division_lines(tree, code)

    def visit_Module(self, node: cst.Module) -> bool:
        return _keeps_python_2_division(self.source, self.context)

    def leave_BinaryOperation(self, original: cst.BinaryOperation,
                              updated: cst.BinaryOperation) -> cst.BaseExpression:
        if not isinstance(original.operator, cst.Divide):
            return updated
        kinds = (_kind(original.left), _kind(original.right))
        if 'float' in kinds:
            return updated
        if kinds == ('int', 'int'):
            self.note(CHANGED, original, f'{code_of(original)} -> //: Python 2\'s / of '
                                         'integers floors')
            divide = ensure_type(updated.operator, cst.Divide)
            return updated.with_changes(operator=cst.FloorDivide(
                whitespace_before=divide.whitespace_before,
                whitespace_after=divide.whitespace_after))
        return self._old_div(original, f'{code_of(original)} -> old_div(...)', '/',
                             updated.left, updated.right)

    def leave_AugAssign(self, original: cst.AugAssign,
                        updated: cst.AugAssign) -> cst.BaseSmallStatement:
        if not isinstance(original.operator, cst.DivideAssign):
            return updated
        if 'float' in (_kind(original.target), _kind(original.value)):
            return updated
        if not isinstance(original.target, (cst.Name, cst.Attribute)):
            # `x[f()] /= y` written as `x[f()] = old_div(x[f()], y)` would call f twice.
            self.note(NOT_PORTED, original, f'{code_of(original).strip()}: Python 2\'s /= '
                                            'floored integers; write //= if both are')
            return updated
        change = f'{code_of(original).strip()} -> {code_of(original.target)} = old_div(...)'
        return cst.Assign(targets=[cst.AssignTarget(updated.target)],
                          value=self._old_div(original, change, '/=', updated.target,
                                              updated.value))

    def _old_div(self, original: cst.CSTNode, change: str, operator: str,
                 left: cst.BaseExpression, right: cst.BaseExpression) -> cst.Call:
        """`old_div(left, right)` for the `operator` of `original`, its import needed and the
        `change` noted: whether the operands are integers is known only when the code runs."""
        self.need_import(HELPER)
        self.note(CHANGED, original, f'{change}: Python 2\'s {operator} floored integers (ints, '
                                     'numpy and TF integer tensors); which these operands are '
                                     'is decided when it runs')
        return cst.Call(func=cst.Name('old_div'), args=[
            cst.Arg(left, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(' '))),
            cst.Arg(right)])
