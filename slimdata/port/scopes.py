"""TF1 scope calls with their values given by position: `tf.name_scope(name, [x, y])`.

TF1's `name_scope(name, default_name=None, values=None)` and `variable_scope(name_or_scope,
default_name=None, values=None)` put a second positional argument in `default_name`; old
code passed its list of input tensors there (`tf.name_scope(scope, [images])`, from the days
of `op_scope(values, name)`), which TF1 let pass and TensorFlow 2.21's `tf.compat.v1` checks
("default_name ... must be a string"). A list or tuple literal in that place becomes
`values=[...]`.
"""

import re

import libcst as cst

from slimdata.port.edits import CHANGED, code_of
from slimdata.port.spelling import SpellingAware

_SCOPES = frozenset(('tensorflow.name_scope', 'tensorflow.variable_scope'))


class ScopeValuesPass(SpellingAware):
    """Gives `values=` its keyword in TF1 scope calls (see the module docstring)."""

    NAME = 'scope values'
    TRIGGER = re.compile(r'\b(?:name|variable)_scope\([^()\[]*,\s*[\[(]')
    FILTERS_STATEMENTS = True
    BINDINGS = re.compile(r'\b(?:name|variable)_scope\b')

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
