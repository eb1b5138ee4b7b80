"""`random.sample(a_set, k)`: Python 3.11 takes sequences only; the set becomes a tuple.

Up to Python 3.10, `random.sample` accepted a set (deprecated in 3.9) and made it a tuple
itself, `tuple(population)`; 3.11 raises "Population must be a sequence" (MeasureDetector's
converter draws its validation split from `set(all_indices) - set(validation_indices)`). The
pass writes that same `tuple(...)` around the population, so the sample drawn from a seed is
the one Python 3.10 drew (Python's error message suggests `sorted()`, which draws others).

The population is taken as a set where that is certain from the expression itself: a `set()`
or `frozenset()` call, a set display or comprehension, `|` `&` `-` `^` with a set operand, a
set's `union` / `intersection` / `difference` / `symmetric_difference`, and a `keys()` or
`items()` view (views are sets too). A name bound to a set elsewhere is not followed; it is
left as it is.
"""

import re

import libcst as cst

from slimdata.port.edits import CHANGED, PortTransformer, code_of

_SET_CALLS = frozenset(('set', 'frozenset'))
_SET_METHODS = frozenset(('union', 'intersection', 'difference', 'symmetric_difference'))
_VIEW_METHODS = frozenset(('keys', 'items'))
_SET_OPERATORS = (cst.BitOr, cst.BitAnd, cst.Subtract, cst.BitXor)


def _is_set(node: cst.BaseExpression) -> bool:
    """Whether `node` is certainly a set (or a dict view) by its own form."""
    if isinstance(node, (cst.Set, cst.SetComp)):
        return True
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, _SET_OPERATORS) and (
            _is_set(node.left) or _is_set(node.right))
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Name):
        return func.value in _SET_CALLS
    if isinstance(func, cst.Attribute):
        return (func.attr.value in _VIEW_METHODS and not node.args) or (
            func.attr.value in _SET_METHODS and _is_set(func.value))
    return False


class RandomSamplePass(PortTransformer):
    """Makes a set given to `random.sample` a tuple (see the module docstring)."""

    NAME = 'random sample'
    TRIGGER = re.compile(r'\bsample\(')
    # Its work is at the calls of sample (under any name an import binds to it).
    FILTERS_STATEMENTS = True
    STATEMENTS = re.compile(r'\bsample\b')

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not original.args or self.qualified_name(original.func) != 'random.sample':
            return updated
        population = next((argument for argument in updated.args
                           if argument.keyword is None
                           or argument.keyword.value == 'population'), None)
        if population is None or not _is_set(population.value):
            return updated
        self.note(CHANGED, original, f'random.sample({code_of(population.value)}, ...): the set '
                                     '-> tuple(...) (Python 3.11 takes sequences only; 3.10 '
                                     'made the same tuple)')
        wrapped = population.with_changes(value=cst.Call(
            cst.Name('tuple'), [cst.Arg(population.value.with_changes(lpar=[], rpar=[]))]))
        return updated.with_changes(args=[wrapped if argument is population else argument
                                          for argument in updated.args])
