"""`matplotlib.use(backend)` as matplotlib 2 ran it, in files written for Python 2.

Matplotlib 2.x (the last for Python 2) defined `use(arg, warn=True, force=False)`: after pyplot
was imported, or where the backend could not start, it warned and went on. Matplotlib 3 made
`force=True` the default, so the same call now raises ImportError: a script that names 'TkAgg'
dies on a machine without a display (TensorFlow 2.21 imports pyplot itself, so every such call
now switches backends). In a Python 2 file, `use(...)` without `force` gets `force=False`,
matplotlib 3's spelling of what matplotlib 2 did; its `warn` argument, which matplotlib 3.3
removed, is dropped.
"""

import ast
import re

import libcst as cst

from slimdata.port.edits import CHANGED, Context, PortTransformer, code_of
from slimdata.port.facts import MatchedLines, names_bound_to, node_lines, words_pattern
from slimdata.port.qualified import last_name

_USE = frozenset(('use',))


class MatplotlibUsePass(PortTransformer):
    """Gives `matplotlib.use(...)` matplotlib 2's `force=False` (see the module docstring)."""

    NAME = 'matplotlib use'
    TRIGGER = re.compile(r'\bmatplotlib\b')
    # Its work is at the calls of `use` (under any name an import binds to it).
    FILTERS_STATEMENTS = True
    STATEMENTS = re.compile(r'\buse\b')

    @classmethod
    def work_lines(cls, tree: ast.Module, code: str, context: Context) -> MatchedLines:
        """The lines of the calls of `use` (under the names `names_bound_to` it): not those of
        a word `use` in a comment or docstring."""
        names = names_bound_to(_USE, tree, code, context.star_imported)
        return node_lines(tree, code, (ast.Call,), lambda call: last_name(call.func) in names,
                          re.compile(words_pattern(names)))

    @classmethod
    def has_work(cls, code: str, context: Context) -> bool:
        return context.python_2 and super().has_work(code, context)

    def visit_Module(self, node: cst.Module) -> bool:
        return self.context.python_2  # the trigger only saves time: Python 2 files alone

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if self.qualified_name(original.func) != 'matplotlib.use':
            return updated
        keywords = {argument.keyword.value for argument in updated.args if argument.keyword}
        if 'force' in keywords or len(updated.args) > 2:
            return updated  # the caller chose (positional force: use(name, warn, force))
        arguments = [argument for argument in updated.args
                     if not (argument.keyword and argument.keyword.value == 'warn')]
        arguments = arguments[:1]  # a second positional argument is matplotlib 2's warn
        arguments.append(cst.Arg(keyword=cst.Name('force'), value=cst.Name('False'),
                                 equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(''),
                                                       whitespace_after=cst.SimpleWhitespace(''))))
        self.note(CHANGED, original, f'{code_of(original)} -> force=False (matplotlib 2 warned '
                                     'where a backend could not start; matplotlib 3 raises)')
        return updated.with_changes(args=arguments)
