"""The names pass's part for imports: import lines and module-level aliases rewritten.

An import (or a `NAME = tf.contrib.slim`-style alias at module level) whose module moved is
rewritten to import the successor under the same name, so the rest of the file is left as it
is. A contrib import without successor goes when nothing uses what it binds, else becomes a
stand-in from `slimdata.contrib.unavailable` (reported where a use of it is left).
"""

import ast
import re
from collections import Counter
from typing import Dict, Iterator, List, Optional, Set, Tuple, Union

import libcst as cst
from libcst.helpers import ensure_type
from libcst.metadata import ParentNodeProvider, ScopeProvider

from slimdata.contrib.unavailable import attribute_for, unportable_reason
from slimdata.port.edits import (
    CHANGED,
    IMPORT_WORD,
    NOT_PORTED,
    ImportRemover,
    Note,
    PortTransformer,
    Visitor,
    code_of,
    import_statement,
    root_name,
    statements_in,
)
from slimdata.port.installed import checked_successor, importable, is_module
from slimdata.port.spelling import Spelling, SpellingAware

_STAND_INS = 'slimdata.contrib.unavailable'


class ImportRewriting(SpellingAware):
    """Rewrites imports and module-level aliases to successors (a part of `NamesPass`).

    `rebound` holds the names whose import it rewrites (their uses are left as they are);
    `settle_stand_ins` ends the pass.
    """

    def __init__(self, context) -> None:
        super().__init__(context)
        self.rebound: Set[str] = set()
        self.stand_ins: Dict[str, Tuple[str, int]] = {}  # bound -> (contrib name, line)

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine):
        if len(original.body) != 1:
            return updated
        statement = original.body[0]
        if isinstance(statement, cst.ImportFrom):
            new_lines = self._port_import_from(statement)
        elif isinstance(statement, cst.Import):
            new_lines = self._port_import(statement)
        elif isinstance(statement, cst.Assign):
            new_lines = self._port_alias_assignment(original, statement)
        else:
            return updated
        if new_lines is None:
            return updated
        if not new_lines:
            return cst.RemovalSentinel.REMOVE
        lines = [cst.parse_statement(line + '\n') for line in new_lines]
        lines[0] = lines[0].with_changes(leading_lines=original.leading_lines)
        lines[-1] = lines[-1].with_changes(trailing_whitespace=original.trailing_whitespace)
        return cst.FlattenSentinel(lines)

    def _port_import_from(self, statement: cst.ImportFrom) -> Optional[List[str]]:
        if statement.relative or statement.module is None or isinstance(statement.names,
                                                                          cst.ImportStar):
            return None
        module = self.spelling.canonical(code_of(statement.module))
        kept, new_lines = [], []
        for alias in statement.names:
            name = code_of(alias.name)
            bound = alias.evaluated_alias or name
            target = checked_successor(f'{module}.{name}')
            if target is None:
                kept_line = self._unported_import(statement, f'{module}.{name}', bound)
                if kept_line is True:
                    kept.append(alias)
                elif kept_line:
                    new_lines.extend(kept_line)
                continue
            parent, _, last = importable(target).rpartition('.')
            new_lines.append(import_statement(parent, last, bound))
            self.note(CHANGED, statement, f'{module}.{name} -> {target}')
        if len(kept) == len(statement.names):
            return None
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            new_lines.insert(0, code_of(statement.with_changes(names=kept)).strip())
        return new_lines

    def _port_import(self, statement: cst.Import) -> Optional[List[str]]:
        kept, new_lines = [], []
        for alias in statement.names:
            name = self.spelling.canonical(code_of(alias.name))
            target = None if _is_own_import(alias) else checked_successor(name)
            bound = alias.evaluated_alias or name.split('.')[0]
            if target is None:
                kept_line = (self._unported_import(statement, name, bound)
                             if alias.asname else True)
                if kept_line is True:
                    kept.append(alias)
                elif kept_line:
                    new_lines.extend(kept_line)
                continue
            self.note(CHANGED, statement, f'{name} -> {target}')
            if alias.asname is None and '.' in name:
                # `import a.b.c` binds `a`; the uses of a.b.c are renamed where they are.
                new_lines.append(f'import {name.split(".")[0]}')
                continue
            parent, _, last = importable(target).rpartition('.')
            bound = alias.evaluated_alias or name
            new_lines.append(import_statement(parent, last, bound))
        if len(kept) == len(statement.names):
            return None
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            new_lines.insert(0, code_of(statement.with_changes(names=kept)).strip())
        return list(dict.fromkeys(new_lines))

    def _unported_import(self, statement: cst.CSTNode, name: str,
                         bound: str) -> Union[bool, List[str]]:
        """What becomes of the import of `name`, which has no successor: True keeps it.

        A contrib name cannot import on TensorFlow 2. Nothing in the file uses it: the import
        goes ([]). Something does: `bound` is imported from `slimdata.contrib.unavailable`, an
        `Unavailable` standing for it, which raises an ImportError naming it and the reason
        when the code reaches a use (a script whose only use is behind an option, such as
        slim's `--quantize_delay`, then runs), and the line is reported as not ported.
        """
        if not name.startswith('tensorflow.contrib') or self._guarded(statement):
            return True
        if self._unused(statement, bound):
            self.note(CHANGED, statement, f'removed the import of {name}: no successor, and '
                                          'nothing in the file uses it')
            return []
        self.stand_ins[bound] = (name, self.line_of(statement))
        return [import_statement(_STAND_INS, attribute_for(name), bound)]

    def _unused(self, statement: cst.CSTNode, bound: str) -> bool:
        """Whether nothing reads the name `bound` that the import `statement` binds (an
        attribute, a keyword or a parameter of the same name is not a use of it): Python's
        scope analysis, or where it cannot say, LibCST's (which visits the whole tree)."""
        read = (self.facts.binding_read(bound, self.line_of(statement))
                if self.facts is not None else None)
        if read is not None:
            return not read
        scope = self._resolved(ScopeProvider).get(statement)
        return scope is not None and not any(
            assignment.references for assignment in scope.assignments[bound]
            if assignment.node is statement)

    def _guarded(self, statement: cst.CSTNode) -> bool:
        """Whether `statement` is in a `try:` that handles its ImportError: the code already
        does without the contrib module on TensorFlow 2 (the OD API's `contrib_lookup`), so the
        import stays as it is."""
        node = self.get_metadata(ParentNodeProvider, statement, None)
        while node is not None and not isinstance(node, cst.Module):
            if isinstance(node, cst.Try) and any(
                    handler.type is None or re.search(r'\b(ImportError|ModuleNotFoundError|'
                                                      r'Exception|BaseException)\b',
                                                      code_of(handler.type))
                    for handler in node.handlers):
                return True
            node = self.get_metadata(ParentNodeProvider, node, None)
        return False

    def _port_alias_assignment(self, line: cst.SimpleStatementLine,
                               statement: cst.Assign) -> Optional[List[str]]:
        """`slim = tf.contrib.slim` at module level -> `from slimdata import slim` (any name
        with a successor: `arg_scope = tf.contrib.framework.arg_scope` -> an import too)."""
        target = self.alias_target(statement.value)
        if target is None:
            return None
        parent, _, last = importable(target).rpartition('.')
        # alias_target accepts only `NAME = value`
        bound = ensure_type(statement.targets[0].target, cst.Name).value
        self.note(CHANGED, line, f'{code_of(statement.value)} -> {target}')
        return [import_statement(parent, last, bound)]

    def alias_target(self, value: cst.BaseExpression) -> Optional[str]:
        """The successor of what `value` names if it is all of a module-level `NAME = value`."""
        assign = self.get_metadata(ParentNodeProvider, value)
        if not (isinstance(assign, cst.Assign) and assign.value is value
                and isinstance(value, cst.Attribute) and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)):
            return None
        line = self.get_metadata(ParentNodeProvider, assign)
        if (not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1
                or not isinstance(self.get_metadata(ParentNodeProvider, line), cst.Module)):
            return None
        name = self.qualified_name(value)
        target = checked_successor(name) if name else None
        root = root_name(value)
        if target is None or root is None or root.value in self.rebound or '.' not in target:
            return None
        if not is_module(importable(target).rpartition('.')[0]):
            return None  # an attribute of a class (`ModeKeys.TRAIN`) is not imported from it
        return target

    def settle_stand_ins(self, module: cst.Module) -> cst.Module:
        """Keeps the `Unavailable` stand-in of a contrib import only where a use of it is left
        (its other uses were ported to successors); reports it then, else removes it."""
        if not self.stand_ins:
            return module
        counter = _NameCounter()
        module.visit(counter)
        unused = set()
        for bound, (name, line) in self.stand_ins.items():
            if counter.uses[bound] > 1:  # the stand-in's own import is one
                reason = unportable_reason(name)
                self.notes.append(Note(NOT_PORTED, line, f'{name}: {reason} (its uses raise an '
                                                         'ImportError saying so)'))
            else:
                unused.add(bound)
                self.notes.append(Note(CHANGED, line, f'removed the import of {name}: every use '
                                                      'of it was ported'))
        return module.visit(_StandInRemover(unused)) if unused else module


def imported_names(port_pass: PortTransformer, module: cst.Module,
                   spelling: Spelling) -> Iterator[Tuple[cst.CSTNode, str, str, bool]]:
    """(import statement, name imported as the rules spell it, name it binds, whether the
    pass rewrites that import when the name has a successor) for each import of `module`,
    the pass `port_pass` runs on (which then knows their parents, for their lines)."""
    imports = (port_pass.facts.lines_of((ast.Import, ast.ImportFrom), text=IMPORT_WORD)
               if port_pass.facts is not None else None)
    for node in statements_in(port_pass, module, imports):
        if isinstance(node, cst.Import):
            for alias in node.names:
                name = code_of(alias.name)
                yield (node, spelling.canonical(name), alias.evaluated_alias or name.split('.')[0],
                       (alias.asname is not None or '.' not in name) and not _is_own_import(alias))
        elif isinstance(node, cst.ImportFrom) and not (
                node.relative or node.module is None or isinstance(node.names, cst.ImportStar)):
            module_name = spelling.canonical(code_of(node.module))
            for alias in node.names:
                name = code_of(alias.name)
                yield node, f'{module_name}.{name}', alias.evaluated_alias or name, True


def _is_own_import(alias: cst.ImportAlias) -> bool:
    """Whether `alias` is the bare `import tf_slim` the passes write for tf_slim's names: it is
    kept (its data names are renamed where used), so that a second port changes nothing."""
    return alias.asname is None and code_of(alias.name) == 'tf_slim'


class _NameCounter(Visitor):
    """Counts the Name nodes of each identifier that may read a variable: not an attribute's
    name (`config.quantize`), nor a keyword argument's (`build(quantize=False)`)."""

    def __init__(self) -> None:
        super().__init__()
        self.uses: Counter = Counter()

    def visit_Name(self, node: cst.Name) -> None:
        self.uses[node.value] += 1

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False


class _StandInRemover(ImportRemover):
    """Removes the stand-in imports (`from slimdata.contrib.unavailable import ...`) of
    unused names."""

    def __init__(self, unused: Set[str]) -> None:
        super().__init__()
        self.unused = unused

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        if (original.module is None or code_of(original.module) != _STAND_INS
                or isinstance(original.names, cst.ImportStar)):
            return updated
        bound = {alias.evaluated_alias or code_of(alias.name)
                 for alias in original.names}
        return cst.RemoveFromParent() if bound <= self.unused else updated
