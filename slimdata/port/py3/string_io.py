"""`import StringIO` / `import cStringIO` (Python 2) holding bytes -> `from io import BytesIO`.

When every `StringIO.StringIO(...)` of the file is certainly bytes - its value is opened as an
image (`PIL.Image.open(StringIO.StringIO(data))`) or it is bound to a name that a
`.save(name, ...)` (PIL's, numpy's) writes into in the same function - the import becomes
`from io import BytesIO` and the calls `BytesIO(...)`; otherwise each use is reported
(`io.StringIO` holds text, `io.BytesIO` bytes).
"""

import re
from typing import Dict, List, Set, Tuple, TypeGuard

import libcst as cst
from libcst.helpers import ensure_type

from slimdata.port.edits import CHANGED, NOT_PORTED, Visitor, code_of
from slimdata.port.spelling import SpellingAware


class StringIOPass(SpellingAware):
    """Makes Python 2's StringIO of image bytes `io.BytesIO` (see the module docstring)."""

    NAME = 'StringIO'
    TRIGGER = re.compile(r'(?m:^[ \t]*import[ \t]+c?StringIO\b)')

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)
        self.uses = _StringIOUses(self)
        node.visit(self.uses)
        # Bytes certain for every use (and the name free): the module is io.BytesIO.
        self.bytes_io = (bool(self.uses.calls) and 'BytesIO' not in self.source
                         and all(self.uses.calls.values()))

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        names = [code_of(alias.name) for alias in original.names]
        if (names not in (['StringIO'], ['cStringIO']) or original.names[0].asname is not None
                or not self.uses.calls):
            return updated
        if not self.bytes_io:
            self.note(NOT_PORTED, original, f'import {names[0]} (Python 2): io.StringIO holds '
                                            'text, io.BytesIO bytes; which one each use needs '
                                            'is not certain')
            return updated
        self.note(CHANGED, original, f'import {names[0]} -> from io import BytesIO (every use '
                                     'holds bytes: an image saved or opened)')
        return ensure_type(cst.parse_statement('from io import BytesIO\n'),
                           cst.SimpleStatementLine).body[0]

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self.bytes_io or original not in self.uses.calls:
            return updated
        self.note(CHANGED, original, f'{code_of(original.func)}(...) -> BytesIO(...)')
        return updated.with_changes(func=cst.Name('BytesIO'))


class _StringIOUses(Visitor):
    """Each `StringIO.StringIO(...)` / `cStringIO.StringIO(...)` call, and whether it certainly
    holds bytes: opened by `PIL.Image.open`, or bound to a name that `.save(name, ...)` writes
    into in the same function."""

    def __init__(self, string_io_pass: StringIOPass) -> None:
        super().__init__()
        self.string_io_pass = string_io_pass
        self.calls: Dict[cst.Call, bool] = {}
        self.scopes: List[Tuple[Dict[str, List[cst.Call]], Set[str]]] = []

    def visit_Module(self, node: cst.Module) -> None:
        self.scopes.append(({}, set()))

    def leave_Module(self, original: cst.Module) -> None:
        self._close_scope()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(({}, set()))  # bound: name -> its StringIO calls; saved into

    def leave_FunctionDef(self, original: cst.FunctionDef) -> None:
        self._close_scope()

    def _close_scope(self) -> None:
        bound, saved = self.scopes.pop()
        for name, calls in bound.items():
            for call in calls:
                self.calls[call] = self.calls[call] or name in saved

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        if isinstance(target, cst.Name) and _is_string_io(node.value):
            self.scopes[-1][0].setdefault(target.value, []).append(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        if _is_string_io(node):
            self.calls.setdefault(node, False)
        func = node.func
        if not (isinstance(func, cst.Attribute) and node.args):
            return
        first = node.args[0].value
        if func.attr.value == 'save' and isinstance(first, cst.Name):
            self.scopes[-1][1].add(first.value)
        elif (func.attr.value == 'open' and _is_string_io(first)
              and self.string_io_pass.qualified_name(func) == 'PIL.Image.open'):
            self.calls[first] = True


def _is_string_io(node: cst.CSTNode) -> TypeGuard[cst.Call]:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == 'StringIO' and isinstance(node.func.value, cst.Name)
            and node.func.value.value in ('StringIO', 'cStringIO'))
