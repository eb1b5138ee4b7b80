"""`import contextlib2` (the Python 2 backport) -> `import contextlib as contextlib2`.

TF1-era code imports it and seldom declares it; Python 3's `contextlib` has its names
(`ExitStack`, `suppress`, ...). Changed when every name the file takes from it is there, else
reported.
"""

import contextlib
import re
from typing import Set

import libcst as cst
from libcst.helpers import ensure_type

from slimdata.port.edits import CHANGED, NOT_PORTED, PortTransformer, code_of


class ContextlibBackportPass(PortTransformer):
    """Replaces the contextlib2 backport by Python 3's contextlib where it has every name."""

    NAME = 'contextlib2'
    TRIGGER = re.compile(r'\bcontextlib2\b')

    def visit_Module(self, node: cst.Module) -> None:
        uses = _BackportUses()
        node.visit(uses)
        self.names = uses.names

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        names = [code_of(alias.name) for alias in original.names]
        if names != ['contextlib2'] or original.names[0].asname is not None:
            return updated
        missing = sorted(name for name in self.names if not hasattr(contextlib, name))
        if missing:
            self.note(NOT_PORTED, original, f'contextlib2.{missing[0]} is not in Python 3\'s '
                                            'contextlib: install contextlib2')
            return updated
        self.note(CHANGED, original, 'import contextlib2 -> import contextlib as contextlib2 '
                                     "(Python 3's contextlib has every name used)")
        return ensure_type(cst.parse_statement('import contextlib as contextlib2\n'),
                           cst.SimpleStatementLine).body[0]


class _BackportUses(cst.CSTVisitor):
    """The attributes a module takes from `contextlib2` (`contextlib2.ExitStack` -> ExitStack)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: Set[str] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == 'contextlib2':
            self.names.add(node.attr.value)
