"""Python 2's implicit relative imports of sibling modules, made explicit.

In a package (a folder with `__init__.py`), `import fsns` beside `fsns.py` took the sibling
first in Python 2, so the meaning is kept (not under `from __future__ import absolute_import`,
which turned that off). In `__init__.py`, `from . import fsns`; in another module, which may
also run as a script from its folder (where the sibling is top-level), `if __package__: from .
import fsns` / `else: import fsns`.
"""

import re
from typing import Optional

import libcst as cst

from slimdata.port.edits import CHANGED, NO_BINDINGS, Context, PortTransformer, code_of

_TOP_IMPORT = re.compile(r'^[ \t]*(?:import|from)[ \t]+(\w+)', re.MULTILINE)


def _sibling(folder: str, other: str) -> str:
    """The module name `other` (a path) is importable as from `folder`, if it is in it."""
    parent, _, name = other.rpartition('/')
    if parent == folder and name.endswith('.py') and name != '__init__.py':
        return name[:-3]
    grand, _, package = parent.rpartition('/')
    if name == '__init__.py' and grand == folder and parent and parent != folder:
        return package
    return ''


def _in_package(path: str, paths: frozenset) -> bool:
    folder, _, _ = path.rpartition('/')
    return f'{folder}/__init__.py'.lstrip('/') in paths and path.endswith('.py')


class RelativeImportsPass(PortTransformer):
    """Makes Python 2's implicit relative imports of siblings explicit."""

    NAME = 'relative imports'
    # Its work is at the imports, and at the statements holding them (their guards).
    STATEMENTS_ONLY = True
    FILTERS_STATEMENTS = True
    STATEMENTS = re.compile(r'(?m:^[ \t]*(?:import|from)\b)')
    BINDINGS = NO_BINDINGS

    @classmethod
    def has_work(cls, code: str, context: Context) -> bool:
        """Whether `code` imports a module beside it by a plain name (no word of the text
        names that: the tree does)."""
        if not _in_package(context.path, context.paths):
            return False
        folder, _, _ = context.path.rpartition('/')
        names = set(_TOP_IMPORT.findall(code))
        return any(_sibling(folder, other) in names for other in context.paths)

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        folder, _, name = context.path.rpartition('/')
        in_package = _in_package(context.path, context.paths)
        # The modules `import X` meant in Python 2 in a package's module: its siblings.
        self.siblings = frozenset(_sibling(folder, other) for other in context.paths
                                  if in_package and _sibling(folder, other))
        self.package_init = name == '__init__.py'
        self.guard_depth = 0  # in an except block or an `if __package__:`: left alone

    def visit_Module(self, node: cst.Module) -> None:
        if 'absolute_import' in self.source:
            self.siblings = frozenset()  # `from __future__ import absolute_import`: no guess

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine):
        relative = self._relative_import(original)
        if relative is None:
            return updated
        old = code_of(original.body[0])
        self.note(CHANGED, original, f'{old} -> {relative} (a sibling module: an implicit '
                                     'relative import of Python 2)')
        if self.package_init:
            code = relative
        else:
            # A module of a package may also run as a script from its folder, where the
            # sibling is a top-level module: both work (and an ImportError inside the sibling
            # is not taken for its absence, as a try/except would).
            code = f'if __package__:\n    {relative}\nelse:\n    {old}'
        return cst.parse_statement(code + '\n').with_changes(
            leading_lines=original.leading_lines)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self.guard_depth += 1

    def leave_ExceptHandler(self, original: cst.ExceptHandler,
                            updated: cst.ExceptHandler) -> cst.ExceptHandler:
        self.guard_depth -= 1
        return updated

    def visit_If(self, node: cst.If) -> None:
        if code_of(node.test) == '__package__':
            self.guard_depth += 1

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.BaseStatement:
        if code_of(original.test) == '__package__':
            self.guard_depth -= 1
        return updated

    def _relative_import(self, line: cst.SimpleStatementLine) -> Optional[str]:
        """The explicit relative form of a one-statement line importing siblings, or None
        (also under `if __package__:`, which this pass writes, or in an except block)."""
        if not self.siblings or len(line.body) != 1 or self.guard_depth:
            return None
        statement = line.body[0]
        if isinstance(statement, cst.Import):
            if all(code_of(alias.name) in self.siblings for alias in statement.names):
                return 'from . import ' + ', '.join(code_of(alias).rstrip(', ')
                                                    for alias in statement.names)
        elif (isinstance(statement, cst.ImportFrom) and not statement.relative
              and statement.module is not None
              and code_of(statement.module).split('.')[0] in self.siblings):
            return 'from .' + code_of(statement)[len('from '):]
        return None
