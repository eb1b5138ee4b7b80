"""Modules Python 3 replaced, imported under their old name from their successor.

- `contextlib2`, the Python 2 backport, which TF1-era code imports and seldom declares:
  Python 3's `contextlib` has its names (`ExitStack`, `suppress`, ...);
- `imp`, which Python 3.12 removed (deprecated since 3.4): `slimdata.contrib.imp` has what
  TF1-era code took from it (`load_source`, `load_dynamic`, `reload`, `new_module`), on
  `importlib`.

`import contextlib2` -> `import contextlib as contextlib2`, `from imp import reload` -> `from
slimdata.contrib.imp import reload`: the code using the names is left as it is. Changed when the
successor has every name the file takes from the module, else reported naming the first it
lacks; not where the tree holds a module of the old name (which the import may mean).
"""

import importlib
import re
from typing import Dict, NamedTuple, Set, Union

import libcst as cst
from libcst.helpers import ensure_type

from slimdata.port.edits import CHANGED, NO_BINDINGS, NOT_PORTED, PortTransformer, Visitor, code_of


class Successor(NamedTuple):
    module: str     # what the old module's names are imported from
    why: str        # the report's words
    otherwise: str  # what to do where the successor lacks a name


#: The old modules, by name.
SUCCESSORS: Dict[str, Successor] = {
    'contextlib2': Successor('contextlib', "Python 3's contextlib", 'install contextlib2'),
    'imp': Successor('slimdata.contrib.imp', 'Python 3.12 removed imp; slimdata.contrib.imp',
                     'use importlib (Python 3.12 removed imp)'),
}


class ModuleSuccessorsPass(PortTransformer):
    """Imports the modules of `SUCCESSORS` from their successors (see the module docstring)."""

    NAME = 'module successors'
    TRIGGER = re.compile(r'(?m:^[ \t]*(?:import|from)[ \t]+(?:' + '|'.join(SUCCESSORS)
                         + r')\b)')
    # Its work is at the imports (it reads the names used in its own walk, `_ModuleUses`).
    FILTERS_STATEMENTS = True
    BINDINGS = NO_BINDINGS

    def visit_Module(self, node: cst.Module) -> None:
        uses = _ModuleUses()
        node.visit(uses)
        self.names = uses.names

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        names = [code_of(alias.name) for alias in original.names]
        if (len(names) != 1 or names[0] not in SUCCESSORS or original.names[0].asname is not None
                or not self._lacks_nothing(original, names[0],
                                           self.names.get(names[0], set()))):
            return updated
        old = names[0]
        new = f'import {SUCCESSORS[old].module} as {old}'
        self.note(CHANGED, original, f'import {old} -> {new} ({SUCCESSORS[old].why} has every '
                                     'name used)')
        return ensure_type(cst.parse_statement(new + '\n'), cst.SimpleStatementLine).body[0]

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        old = code_of(original.module) if original.module and not original.relative else ''
        if old not in SUCCESSORS or isinstance(original.names, cst.ImportStar):
            return updated
        taken = {code_of(alias.name) for alias in original.names}
        if not self._lacks_nothing(original, old, taken):
            return updated
        new = SUCCESSORS[old].module
        module = cst.parse_expression(new)
        assert isinstance(module, (cst.Name, cst.Attribute)), new
        self.note(CHANGED, original, f'from {old} import ... -> from {new} import ... '
                                     f'({SUCCESSORS[old].why} has every name used)')
        return updated.with_changes(module=module)

    def _lacks_nothing(self, node: Union[cst.Import, cst.ImportFrom], old: str,
                       names: Set[str]) -> bool:
        """Whether the successor of `old` has every one of `names` (else a note says which
        it lacks), and no module of the tree is named `old`."""
        if any(path == f'{old}.py' or path.endswith((f'/{old}.py', f'{old}/__init__.py'))
               for path in self.context.paths):
            return False
        successor = SUCCESSORS[old]
        module = importlib.import_module(successor.module)
        missing = sorted(name for name in names if not hasattr(module, name))
        if missing:
            self.note(NOT_PORTED, node, f'{old}.{missing[0]} is not in {successor.module}, '
                                        f'the successor of {old}: {successor.otherwise}')
        return not missing


class _ModuleUses(Visitor):
    """The attributes a module takes from each module of `SUCCESSORS` (`imp.load_source` ->
    imp: {load_source})."""

    def __init__(self) -> None:
        super().__init__()
        self.names: Dict[str, Set[str]] = {}

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value in SUCCESSORS:
            self.names.setdefault(node.value.value, set()).add(node.attr.value)
