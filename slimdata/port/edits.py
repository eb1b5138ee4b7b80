"""What the porting passes share: their notes, a base transformer, and adding imports.

Each pass is a LibCST transformer: it edits the concrete syntax tree, so comments, blank lines
and formatting of everything it does not change survive byte for byte. A pass records a `Note`
for every change it makes and every line it could not port, with the line number of its input.
"""

import dataclasses
from typing import Iterable, List, Optional, Sequence, Tuple, Type

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider

CHANGED = 'changed'
NOT_PORTED = 'not ported'
TO_CHECK = 'to check'


@dataclasses.dataclass(frozen=True)
class Note:
    """One line of the report: `kind` (CHANGED, NOT_PORTED, TO_CHECK) at `line` of a file."""
    kind: str
    line: int
    message: str


class PortTransformer(cst.CSTTransformer):
    """A porting pass: records notes by line, and the import lines its edits need."""

    METADATA_DEPENDENCIES: Tuple = (PositionProvider, QualifiedNameProvider)

    def __init__(self) -> None:
        super().__init__()
        self.notes: List[Note] = []
        self.needed_imports: List[str] = []

    def line_of(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def note(self, kind: str, node: cst.CSTNode, message: str) -> None:
        self.notes.append(Note(kind, self.line_of(node), message))

    def need_import(self, line: str) -> None:
        if line not in self.needed_imports:
            self.needed_imports.append(line)

    def qualified_name(self, node: cst.CSTNode) -> Optional[str]:
        """The one qualified name of `node` through the file's imports, or None."""
        names = self.get_metadata(QualifiedNameProvider, node, set())
        return next(iter(names)).name if len(names) == 1 else None


def code_of(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def dotted(name: str) -> cst.BaseExpression:
    """The expression `a.b.c` for the dotted name 'a.b.c'."""
    return cst.parse_expression(name)


def root_name(node: cst.BaseExpression) -> Optional[cst.Name]:
    """The leftmost Name of an attribute chain (`tf` of `tf.contrib.slim`), or None."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node if isinstance(node, cst.Name) else None


def import_statement(module: str, name: str, bound: str) -> str:
    """`from module import name [as bound]` (or `import name [as bound]` with no module)."""
    alias = '' if bound == name else f' as {bound}'
    return f'from {module} import {name}{alias}' if module else f'import {name}{alias}'


def tensorflow_alias(module: cst.Module) -> Optional[str]:
    """The name a module-level `import tensorflow [as X]` binds, or None."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if code_of(alias.name) == 'tensorflow':
                        return alias.asname.name.value if alias.asname else 'tensorflow'
    return None


def _is_import(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine)
            and all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body))


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def add_imports(module: cst.Module, lines: Sequence[str]) -> cst.Module:
    """`module` with the import `lines` it lacks, at the end of its first run of imports.

    That is before any other statement (which may use them), after the docstring; the new
    imports are of installed packages, so they need nothing that runs before them.
    """
    present = {code_of(statement).strip() for statement in module.body if _is_import(statement)}
    missing = [line for line in lines if line not in present]
    if not missing:
        return module
    body = list(module.body)
    position = 1 if body and _is_docstring(body[0]) else 0
    while position < len(body) and _is_import(body[position]):
        position += 1
    new = [cst.parse_statement(line + '\n') for line in missing]
    return module.with_changes(body=body[:position] + new + body[position:])


def run_pass(transformer: PortTransformer, source: str) -> Tuple[str, List[Note]]:
    """Runs one pass over `source`; returns the new source and the pass's notes."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    module = wrapper.visit(transformer)
    module = add_imports(module, transformer.needed_imports)
    return module.code, transformer.notes


def run_passes(passes: Iterable[Type[PortTransformer]], source: str,
               **options) -> List[Tuple[str, List[Note]]]:
    """Runs each pass on the previous one's output; returns (source, notes) of each pass."""
    results = []
    for make_pass in passes:
        source, notes = run_pass(make_pass(**options), source)
        results.append((source, notes))
    return results
