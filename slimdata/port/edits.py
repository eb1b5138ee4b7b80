"""What the porting passes share: their notes, a base transformer, and adding imports.

Each pass is a LibCST transformer: it edits the concrete syntax tree, so comments, blank lines
and formatting of everything it does not change survive byte for byte. A pass records a `Note`
for every change it makes and every line it could not port, with the line number of its input.
"""

import contextlib
import dataclasses
import gc
import re
from typing import (
    ClassVar,
    Collection,
    Dict,
    Iterator,
    List,
    Optional,
    Pattern,
    Sequence,
)

import libcst as cst
from libcst.metadata import (
    BaseAssignment,
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    ProviderT,
    QualifiedNameProvider,
    ScopeProvider,
)

CHANGED = 'changed'
NOT_PORTED = 'not ported'
TO_CHECK = 'to check'

_NO_DEFAULT = object()


@dataclasses.dataclass
class Context:
    """What every stage of the port knows of the file it works on (one per file, shared).

    `path`: the file's path relative to the tree ported ('/'-separated); `paths`: every Python
    file's path in the tree (a module's siblings); `report_unknown_contrib`: whether contrib
    names without a rule are reported (off when tf_upgrade_v2 runs after and reports them);
    `python_2`: whether the file was written for Python 2 (set by the Python 2 stage, or
    before the stages for a file that ran under Python 2 through its imports; then
    `python_2_by_imports` says which, see `python2_imports`).
    """
    path: str = ''
    paths: frozenset = frozenset()
    report_unknown_contrib: bool = True
    python_2: bool = False
    python_2_by_imports: str = ''


@dataclasses.dataclass(frozen=True)
class Note:
    """One line of the report: `kind` (CHANGED, NOT_PORTED, TO_CHECK) at `line` of a file."""
    kind: str
    line: int
    message: str


#: Metadata a PortTransformer answers itself, cheaper than libcst's providers, which each walk
#: the whole tree before the pass starts (CPU microseconds per line of SSD-Tensorflow: parents
#: 270, positions 150, qualified names 210 on top of the scopes' 360; the pass's own walk 90).
#: Parents are recorded during the pass's own walk; positions are computed once the pass
#: writes a note, scopes once it asks for a qualified name, and then only the node's.
_OWN_METADATA = frozenset((ParentNodeProvider, PositionProvider, QualifiedNameProvider))


class PortTransformer(cst.CSTTransformer):
    """A porting pass: records notes by line, and the import lines its edits need.

    A pass runs on a file only when `has_work` says so: by default when the file's text
    matches `TRIGGER`, which each pass builds from its own tables (a pass costs some 1 ms of
    CPU a line whether it finds work or not, so triggers are worth making tight). `NAME` is
    the pass's name in the report ("internal error in pass NAME").

    `get_metadata` answers ParentNodeProvider for every node the pass has visited (children
    are visited before their parent's `leave_*`), PositionProvider and QualifiedNameProvider
    for every node.
    """

    METADATA_DEPENDENCIES: ClassVar[Collection[ProviderT]] = (PositionProvider,
                                                              QualifiedNameProvider)

    NAME: ClassVar[str] = ''
    TRIGGER: ClassVar[Pattern[str]] = re.compile('')

    def __init__(self, context: Context) -> None:
        super().__init__()
        self.context = context
        self.notes: List[Note] = []
        self.needed_imports: List[str] = []
        self._wrapper: Optional[MetadataWrapper] = None
        self._parents: Dict[cst.CSTNode, cst.CSTNode] = {}
        self._ancestors: List[cst.CSTNode] = []
        self.changed = False  # whether a `leave_*` replaced a node
        self.source = ''  # the code of the tree the pass runs on (not rendered again)

    @classmethod
    def has_work(cls, code: str, context: Context) -> bool:
        """Whether the pass may change or report something in `code` (cheap: no parse)."""
        return cls.TRIGGER.search(code) is not None

    @classmethod
    def port(cls, parsed: 'ParsedFile', context: Context) -> List[Note]:
        """Runs the pass over the file's tree (which it updates); the pass's notes, by line of
        `parsed.code` as it was before."""
        transformer = cls(context)
        parsed.run(transformer)
        return transformer.notes

    @contextlib.contextmanager
    def resolve(self, wrapper: MetadataWrapper) -> Iterator[None]:
        self._wrapper = wrapper
        self.metadata = wrapper.resolve_many(
            set(self.get_inherited_dependencies()) - _OWN_METADATA)
        try:
            yield
        finally:
            self.metadata, self._wrapper = {}, None

    def get_metadata(self, key, node, default=_NO_DEFAULT):
        if key is ParentNodeProvider:
            found = self._parents.get(node, default)
        elif key is QualifiedNameProvider:
            scope = self._resolved(ScopeProvider).get(node)
            found = scope.get_qualified_names_for(node) if scope is not None else default
        else:
            found = self._resolved(key).get(node, default)
        if found is _NO_DEFAULT:
            raise KeyError(f'no {key.__name__} metadata for {type(node).__name__}')
        return found

    def bindings(self, name: cst.Name) -> Collection[BaseAssignment]:
        """Every binding of `name` visible where it is used (LibCST's scope analysis)."""
        scope = self._resolved(ScopeProvider).get(name)
        return scope[name.value] if scope is not None else ()

    def _resolved(self, key):
        """The metadata of `key` for the whole module, computed on first use."""
        if key not in self.metadata:
            assert self._wrapper is not None, 'metadata is asked for only while a pass runs'
            self.metadata = {**self.metadata, key: self._wrapper.resolve(key)}
        return self.metadata[key]

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._ancestors:
            self._parents[node] = self._ancestors[-1]
        self._ancestors.append(node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):
        self._ancestors.pop()
        result = super().on_leave(original_node, updated_node)
        if result is not updated_node:
            self.changed = True
        return result

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


def callee_name(call: cst.Call) -> str:
    """The last name of what `call` calls (`decode_jpeg` of `tf.image.decode_jpeg(x)`), or ''."""
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else (
        func.value if isinstance(func, cst.Name) else '')


def mode_argument(call: cst.Call) -> Optional[cst.Arg]:
    """The mode argument of an `open`-like call (second positional, or `mode=`), or None."""
    for index, argument in enumerate(call.args):
        if (argument.keyword and argument.keyword.value == 'mode') or (
                argument.keyword is None and index == 1):
            return argument
    return None


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


class ParsedFile:
    """A file's syntax tree, which the LibCST passes work on in turn.

    The file is parsed once, not once per pass; the metadata a pass resolves (scopes,
    positions) is kept for the next pass as long as the tree stays the same, and the tree's
    code is rendered again only when a pass changed it (the next pass's trigger and the report's
    line numbers need it). Most passes change nothing in most files; each step saved costs
    about as much as a pass's own walk (parse) or several (scopes): see `_OWN_METADATA`.

    `code`: the code of the tree as it is now, in which a pass numbers its notes' lines.
    """

    def __init__(self, code: str) -> None:
        self.code = code
        # A freshly parsed tree holds no node twice: no need for the wrapper's deep copy.
        self._wrapper = MetadataWrapper(cst.parse_module(code), unsafe_skip_copy=True)

    def run(self, transformer: PortTransformer) -> None:
        """Runs one pass over the tree, and the imports it needs added."""
        with garbage_collection_paused():
            transformer.source = self.code
            visited = self._wrapper.visit(transformer)
            module = add_imports(visited, transformer.needed_imports)
            if not transformer.changed and module is visited:
                return  # a copy of the same tree: the old one keeps its metadata
            # A pass builds every node it puts in the tree (none is put in twice, which the
            # wrapper's deep copy would be for): the new tree is taken as it is too.
            self._wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
            self.code = module.code


@contextlib.contextmanager
def garbage_collection_paused() -> Iterator[None]:
    """Python's cycle collector off while a file is ported.

    A pass allocates millions of small nodes that live until it ends; each collection of the
    older generations scans them all again, and every object alive besides (TensorFlow's, the
    previous pass's trees): measured, a tenth of a pass's time, and 0.9 s of the 0.04 s an
    alignment of a 40,000-line file takes without it, growing faster than the file. What the
    port leaves is freed when the collector is back on.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
