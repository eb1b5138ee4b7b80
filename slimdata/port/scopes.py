"""TF1 scope calls with their values given by position: `tf.name_scope(name, [x, y])`.

TF1's `name_scope(name, default_name=None, values=None)` and `variable_scope(name_or_scope,
default_name=None, values=None)` put a second positional argument in `default_name`; old
code passed its list of input tensors there (`tf.name_scope(scope, [images])`, from the days
of `op_scope(values, name)`), which TF1 let pass and TensorFlow 2.21's `tf.compat.v1` checks
("default_name ... must be a string"). A list or tuple literal in that place becomes
`values=[...]`.

The calls are found on Python's tree, whatever their first argument (`scope or f(x)`), under
their own names or those imports bind them to (`from tensorflow import name_scope as ns`); the
pass walks only the statements holding them, and asks each call's qualified name.
"""

import ast
import re

import libcst as cst

from slimdata.port.edits import CHANGED, Context, code_of
from slimdata.port.facts import (
    MatchedLines,
    names_bound_to,
    node_lines,
    star_aliases,
    words_pattern,
)
from slimdata.port.patterns import found_in
from slimdata.port.qualified import last_name
from slimdata.port.spelling import SpellingAware

_SCOPES = frozenset(('tensorflow.name_scope', 'tensorflow.variable_scope'))
_SCOPE_FUNCTIONS = frozenset(name.rsplit('.', 1)[1] for name in _SCOPES)
_MENTIONED = re.compile(words_pattern(_SCOPE_FUNCTIONS))


def _values_call_lines(tree: ast.Module, code: str, context: Context) -> MatchedLines:
    """The lines of the calls of a scope function with a list or tuple literal second by
    position (the calls the pass may change; whether it is TensorFlow's, the pass asks)."""
    names = names_bound_to(_SCOPE_FUNCTIONS, tree, code, context.star_imported)
    return node_lines(tree, code, (ast.Call,), lambda node: (
        last_name(node.func) in names and len(node.args) >= 2
        and isinstance(node.args[1], (ast.List, ast.Tuple))),
        re.compile(words_pattern(names)))


class ScopeValuesPass(SpellingAware):
    """Gives `values=` its keyword in TF1 scope calls (see the module docstring)."""

    NAME = 'scope values'
    TRIGGER = _MENTIONED
    # Its work is all in the statements holding such a call (`work_lines`).
    FILTERS_STATEMENTS = True

    @classmethod
    def has_work(cls, code: str, context: Context) -> bool:
        """As any pass's (`work_lines`), but a file that calls a scope function only under a
        name from a star import names none: there its trigger is that name."""
        return ((found_in(cls.TRIGGER, code)
                 or bool(star_aliases(_SCOPE_FUNCTIONS, context.star_imported)))
                and cls.tree_shows_work(code, context))

    @classmethod
    def work_lines(cls, tree: ast.Module, code: str, context: Context) -> MatchedLines:
        return _values_call_lines(tree, code, context)

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not (len(original.args) >= 2 and original.args[1].keyword is None
                and not original.args[1].star
                and isinstance(original.args[1].value, (cst.List, cst.Tuple))
                and all(argument.keyword is not None for argument in original.args[2:])
                and self.qualified_name(original.func) in _SCOPES):
            return updated
        values = code_of(original.args[1].value)
        self.note(CHANGED, original, f'{code_of(original.func)}(name, {values}) -> values=: '
                                     'the second positional argument is default_name, which '
                                     'TensorFlow 2 checks is a string')
        arguments = list(updated.args)
        arguments[1] = arguments[1].with_changes(
            keyword=cst.Name('values'),
            equal=cst.AssignEqual(cst.SimpleWhitespace(''), cst.SimpleWhitespace('')))
        return updated.with_changes(args=arguments)
