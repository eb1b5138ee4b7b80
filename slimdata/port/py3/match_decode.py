"""`.decode(...)` on a group of a match of a str pattern is dropped.

`m.group(2).decode('utf-8')`, where `m` is only ever bound to `PATTERN.match(line)` /
`re.match(r'...', line)` and `PATTERN` only to `re.compile(r'...')`: in Python 2 the line was
bytes; in Python 3 a str pattern matches only str, whose groups are text with no `decode`, so
the call is dropped. Any other binding of either name leaves it as it is.
"""

import functools
import re
from typing import Callable, Dict

import libcst as cst
from libcst.helpers import ensure_type
from libcst.metadata import Assignment

from slimdata.port.edits import CHANGED, NO_BINDINGS, Visitor, code_of
from slimdata.port.spelling import SpellingAware

_MATCHERS = frozenset(('match', 'search', 'fullmatch'))


def _is_text_literal(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.SimpleString) and 'b' not in node.prefix.lower()


class MatchDecodePass(SpellingAware):
    """Drops `.decode()` of a str pattern's match group (see the module docstring)."""

    NAME = 'match decode'
    TRIGGER = re.compile(r'\A(?=.*\.group\()(?=.*\.decode\()', re.DOTALL)
    # Its work is at `m.group(...).decode(...)` (the assignments it reads, it reads itself).
    FILTERS_STATEMENTS = True
    STATEMENTS = re.compile(r'\.decode\(')
    BINDINGS = NO_BINDINGS

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)
        self.module = node

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self._decodes_text(original):
            return updated
        group = ensure_type(original.func, cst.Attribute).value
        self.note(CHANGED, original, f'{code_of(original)} -> {code_of(group)}: a str '
                                     "pattern's match is text in Python 3 (a str has no "
                                     'decode)')
        return ensure_type(updated.func, cst.Attribute).value

    def _decodes_text(self, call: cst.Call) -> bool:
        """Whether `call` is `NAME.group(...).decode(...)` with NAME only ever a match of a str
        pattern."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == 'decode'
                and isinstance(func.value, cst.Call)
                and isinstance(func.value.func, cst.Attribute)
                and func.value.func.attr.value == 'group'
                and isinstance(func.value.func.value, cst.Name)):
            return False
        return self._only_bound_to(func.value.func.value, self._is_text_match)

    def _only_bound_to(self, name: cst.Name, is_value: Callable[[cst.BaseExpression], bool]
                       ) -> bool:
        """Whether every binding of `name` where it is used is `name = value` with
        `is_value(value)` (a parameter, loop variable, import or other binding: False)."""
        bindings = self.bindings(name)
        return bool(bindings) and all(
            isinstance(binding, Assignment) and isinstance(binding.node, cst.Name)
            and binding.node in self.assigned
            and is_value(self.assigned[binding.node]) for binding in bindings)

    @functools.cached_property
    def assigned(self) -> Dict[cst.Name, cst.BaseExpression]:
        """The module's simple assignments, found once a `decode` asks (few files have one)."""
        assignments = _SimpleAssignments()
        self.module.visit(assignments)
        return assignments.values

    def _is_text_match(self, value: cst.BaseExpression) -> bool:
        """`re.match(r'...', s)` (search, fullmatch) or `PATTERN.match(s)` with PATTERN only
        ever a compiled str pattern."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in _MATCHERS and value.args):
            return False
        if self.qualified_name(value.func) == f're.{value.func.attr.value}':
            return _is_text_literal(value.args[0].value)
        pattern = value.func.value
        return isinstance(pattern, cst.Name) and self._only_bound_to(pattern,
                                                                     self._is_text_pattern)

    def _is_text_pattern(self, value: cst.BaseExpression) -> bool:
        return (isinstance(value, cst.Call) and bool(value.args)
                and self.qualified_name(value.func) == 're.compile'
                and _is_text_literal(value.args[0].value))


class _SimpleAssignments(Visitor):
    """The value of every `NAME = value` (one target), by the target's Name node."""

    def __init__(self) -> None:
        super().__init__()
        self.values: Dict[cst.Name, cst.BaseExpression] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.values[node.targets[0].target] = node.value
