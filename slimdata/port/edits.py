"""What the porting passes share: their notes, a base transformer, and adding imports.

Each pass is a LibCST transformer: it edits the concrete syntax tree, so comments, blank lines
and formatting of everything it does not change survive byte for byte. A pass records a `Note`
for every change it makes and every line it could not port, with the line number of its input.
"""

import ast
import contextlib
import dataclasses
import gc
import inspect
import re
from typing import (
    Callable,
    ClassVar,
    Collection,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Pattern,
    Sequence,
    Set,
    Tuple,
    TypeVar,
)

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import (
    BaseAssignment,
    CodeRange,
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    ProviderT,
    QualifiedName,
    QualifiedNameProvider,
    QualifiedNameSource,
    ScopeProvider,
)

from slimdata.port import deferred
from slimdata.port.deferred import DEFERRED_TYPES
from slimdata.port.facts import MatchedLines, TreeFacts
from slimdata.port.patterns import found_in
from slimdata.port.qualified import UNSCOPED
from slimdata.port.rendering import Renderings, code_after_pass

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
    `python_2_by_imports` says which, see `python2_imports`); `shows_python_2`: whether its
    own text shows Python 2 (`python2.shows_python_2`), when known before the stages.
    `python_tree`, `libcst_module`: (code, Python's tree of it) and (code, LibCST's) of the
    code a text stage returned, or that the check for Python 2 before the stages read, when
    parsed already (the LibCST passes take them for the same code); `tree_facts`: the facts
    of the code the last LibCST pass left.
    `star_imported`: the names the file gets from its star imports of other files of the
    tree, {name: qualified name} (`star_imports`).
    """
    path: str = ''
    paths: frozenset = frozenset()
    report_unknown_contrib: bool = True
    python_2: bool = False
    shows_python_2: Optional[bool] = None
    python_2_by_imports: str = ''
    python_tree: Optional[Tuple[str, ast.Module]] = None
    libcst_module: Optional[Tuple[str, cst.Module]] = None
    star_imported: Mapping[str, str] = dataclasses.field(default_factory=dict)
    tree_facts: Optional[TreeFacts] = None
    # Each pass's `work_lines` of the last tree it was asked of: (tree, lines).
    found_work_lines: Dict[type, Tuple[ast.Module, Optional[MatchedLines]]] = dataclasses.field(
        default_factory=dict, repr=False, compare=False)

    def python_tree_of(self, code: str) -> Optional[ast.Module]:
        """Python's tree of `code` a stage left, or None. After a LibCST pass, the tree of the
        code it left (`tree_facts`, parsed on first use: the next pass that runs uses it)."""
        tree = _tree_of(self.python_tree, code)
        if tree is None and self.tree_facts is not None and self.tree_facts.code == code:
            tree = self.tree_facts.python_tree()
        return tree

    def libcst_module_of(self, code: str) -> Optional[cst.Module]:
        """LibCST's tree of `code` a stage left, or None."""
        return _tree_of(self.libcst_module, code)


_Tree = TypeVar('_Tree')


def _tree_of(parsed: Optional[Tuple[str, _Tree]], code: str) -> Optional[_Tree]:
    return parsed[1] if parsed is not None and parsed[0] == code else None


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


#: `BINDINGS` for a pass whose statements need no name bound elsewhere (matches nothing).
NO_BINDINGS = re.compile(r'(?!)')

#: The nodes `statement_filter` skips.
_STATEMENTS = (cst.SimpleStatementLine, cst.BaseCompoundStatement)


#: The concrete LibCST node types `statement_filter` skips and `STATEMENTS_ONLY` leaves: a
#: set lookup by the node's type (LibCST's bases are ABCs, whose `isinstance` costs some ten
#: times as much; a walk asks it at every node).
def _concrete_types(bases: Tuple[type, ...]) -> frozenset:
    return frozenset(kind for kind in vars(cst).values() if isinstance(kind, type)
                     and issubclass(kind, bases) and not inspect.isabstract(kind))


_STATEMENT_TYPES = _concrete_types(_STATEMENTS) | DEFERRED_TYPES
_EXPRESSION_TYPES = _concrete_types((cst.BaseExpression,))

#: A `visit_<Node>_<field>` or `leave_<Node>_<field>` method (LibCST's node names hold no `_`).
_FIELD_HOOK = re.compile(r'(?:visit|leave)_[A-Z][A-Za-z]*_[a-z]')

#: The nodes of a tree's whitespace, comments and punctuation, which hold nothing but more of
#: them: two thirds of a tree's nodes, which a walk builds again each (LibCST's visitors too).
#: A visitor with no method for one walks none of them (`_Hooks.on_visit`): half a walk's
#: time saved, measured on SSD-Tensorflow and seglink.
_TRIVIA_TYPES = _concrete_types((
    cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.EmptyLine,
    cst.Comment, cst.Newline, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual,
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
    cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.BaseBinaryOp, cst.BaseBooleanOp,
    cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp, cst.ImportStar))
#: The nodes whose own nodes are all trivia (a name, a number, a string, `pass`): such a
#: node is visited and left, but not walked into, nor built again.
_LEAF_TYPES = frozenset((cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString,
                         cst.FormattedStringText, cst.Ellipsis, cst.Pass, cst.Break,
                         cst.Continue, cst.Asynchronous, cst.ParamSlash, cst.ParamStar))


class _Hooks:
    """A visitor's `visit_<Node>` and `leave_<Node>` methods looked up once per node type.

    LibCST's visitors build the method's name and look it up at every node, call it (most
    are LibCST's stubs, which do nothing), and do so again for every field of every node
    (`visit_<Node>_<field>`, which no pass of the port has): measured, a tenth of a pass's
    walk. A class that has a field method of its own keeps LibCST's lookups for them, and
    one that defines `on_visit_attribute` or `on_leave_attribute` keeps its own.

    The methods are the class's, looked up when a walk first meets a node type: unlike
    LibCST's, an instance attribute named `visit_Name`, a static or class method of that
    name, or a method set on the class after its first walk is not what is called.

    A class with no method for whitespace, comments or punctuation (`_TRIVIA_TYPES`, two
    thirds of a tree's nodes) does not walk into them, nor into the nodes that hold nothing
    else (`_LEAF_TYPES`: names, numbers, strings): such a node is visited and left, but not
    its own nodes, nor is it built again.
    """

    _visits: ClassVar[Dict[type, Optional[Callable]]] = {}
    _leaves: ClassVar[Dict[type, Optional[Callable]]] = {}
    #: Whether a walk skips the `_TRIVIA_TYPES` when the class has no method for any (False:
    #: it reads every node, through `on_visit` or `on_leave`).
    SKIPS_TRIVIA: ClassVar[bool] = True
    _trivia: ClassVar[frozenset] = frozenset()  # the `_TRIVIA_TYPES` it does not walk
    _leaf_kinds: ClassVar[frozenset] = frozenset()  # the `_LEAF_TYPES` it does not walk into

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._visits, cls._leaves = {}, {}  # each class its own (its methods are its own)
        has_field_methods = any(_FIELD_HOOK.match(name) for klass in cls.__mro__
                                if not klass.__module__.startswith('libcst.')
                                for name in vars(klass))
        # A method for one trivia type: all are walked (one holds another: a comment is in
        # an empty line or a line's end).
        reads_trivia = any(cls._own_method(prefix + kind.__name__) is not None
                           for kind in _TRIVIA_TYPES for prefix in ('visit_', 'leave_'))
        skips = not (has_field_methods or reads_trivia) and cls.SKIPS_TRIVIA
        cls._trivia = _TRIVIA_TYPES if skips else frozenset()
        cls._leaf_kinds = _LEAF_TYPES if skips else frozenset()
        for hook in ('on_visit_attribute', 'on_leave_attribute'):  # LibCST's visitors'
            if cls._own_method(hook) not in (None, _no_field_hook):
                continue  # the class's own
            setattr(cls, hook, next(vars(klass)[hook] for klass in cls.__mro__
                                    if klass.__module__.startswith('libcst.')
                                    and hook in vars(klass))
                    if has_field_methods else _no_field_hook)

    @classmethod
    def _own_method(cls, name: str) -> Optional[Callable]:
        """The method `name` of the class unless it is none or LibCST's stub."""
        for klass in cls.__mro__:
            if name in vars(klass):
                return None if klass.__module__.startswith('libcst.') else getattr(cls, name)
        return None

    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = type(node)
        if kind in self._trivia:
            return False  # its nodes are all trivia: not walked, the node kept as it is
        try:  # the lookup of `visit_method` inlined: this runs at every node of every walk
            visit = self._visits[kind]
        except KeyError:
            visit = self.visit_method(kind)
        return (visit is None or visit(self, node) is not False) and kind not in self._leaf_kinds

    @classmethod
    def visit_method(cls, kind: type) -> Optional[Callable]:
        """`visit_<Node>` of the class for nodes of type `kind` (a function), or None."""
        return cls._method(cls._visits, 'visit_', kind)

    @classmethod
    def leave_method(cls, kind: type) -> Optional[Callable]:
        """`leave_<Node>` of the class for nodes of type `kind` (a function), or None."""
        return cls._method(cls._leaves, 'leave_', kind)

    @classmethod
    def _method(cls, found: Dict[type, Optional[Callable]], prefix: str,
                kind: type) -> Optional[Callable]:
        try:
            return found[kind]
        except KeyError:
            method = found[kind] = cls._own_method(prefix + kind.__name__)
            return method


def _no_field_hook(visitor: object, node: cst.CSTNode, attribute: str) -> None:
    """`on_visit_attribute` and `on_leave_attribute` of a class without field methods."""


class KeepsUnchanged(_Hooks, cst.CSTTransformer):
    """A transformer that gives back the very node it was given wherever nothing in it was
    replaced (LibCST builds a copy of every node it walks). What a pass left is then known by
    identity: its code is the code it had (`rendering.code_after_pass`), not rendered again.

    `replacements`: how many times a `leave_*` gave another node than the one it was given.
    A subclass whose `on_visit` skips a node without calling this one's skips it in
    `on_leave` too.
    """

    def __init__(self) -> None:
        super().__init__()
        self.replacements = 0
        self._replacements_before: List[int] = []  # at each node visited, not yet left

    def on_visit(self, node: cst.CSTNode) -> bool:
        self._replacements_before.append(self.replacements)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):
        try:  # `leave_method` inlined, as `on_visit`'s
            leave = self._leaves[type(original_node)]
        except KeyError:
            leave = self.leave_method(type(original_node))
        result = updated_node if leave is None else leave(self, original_node, updated_node)
        if result is not updated_node:
            self.replacements += 1
        before = self._replacements_before.pop()
        return original_node if result is updated_node and self.replacements == before else result


class PassMetadata(KeepsUnchanged):
    """The metadata a pass asks of its tree, answered from Python's parser where it can say
    (`TreeFacts`), cheaper than LibCST's providers (`_OWN_METADATA`).

    `get_metadata` answers ParentNodeProvider for every node the pass has visited (children
    are visited before their parent's `leave_*`; the walk records them in `_parents`),
    PositionProvider and QualifiedNameProvider for every node. `context`: the file's; `facts`:
    what Python's parser says of the tree the pass runs on (set by `ParsedFile.run`; None:
    every answer is LibCST's).
    """

    METADATA_DEPENDENCIES: ClassVar[Collection[ProviderT]] = (PositionProvider,
                                                              QualifiedNameProvider)

    def __init__(self, context: Context) -> None:
        super().__init__()
        self.context = context
        self.facts: Optional[TreeFacts] = None
        self._wrapper: Optional[MetadataWrapper] = None
        self._parents: Dict[cst.CSTNode, cst.CSTNode] = {}
        self._top_indexes: Optional[Dict[int, int]] = None
        self._statement_lines: Optional[StatementLines] = None

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
            found = self._qualified_names(node, default)
        else:
            found = self._resolved(key).get(node, default)
        if found is _NO_DEFAULT:
            raise KeyError(f'no {key.__name__} metadata for {type(node).__name__}')
        return found

    def _qualified_names(self, node: cst.CSTNode, default):
        """From the module's own bindings when they say (`qualified.ModuleNames`), else from
        LibCST's scope analysis."""
        # Only for a node whose parents are known up to the module: visited by the pass, or
        # by a `LookAhead` of it.
        names = (self.facts.module_names()
                 if self.facts is not None and node in self._parents else None)
        found = (names.qualified_names(node, self._parents.get, self._top_of)
                 if names is not None else None)
        if found is UNSCOPED:
            return default
        if found is None:
            scope = self._resolved(ScopeProvider).get(node)
            if scope is None:
                return default
            found = scope.get_qualified_names_for(node)
        return found or self._star_imported(node)

    def _star_imported(self, node: cst.CSTNode) -> Set[QualifiedName]:
        """The name of `node`, rooted at a name the file binds nowhere, through a star import
        of another file of the tree (`Context.star_imported`), or none."""
        if not self.context.star_imported or not isinstance(node, (cst.Name, cst.Attribute)):
            return set()
        root, dot, rest = (get_full_name_for_node(node) or '').partition('.')
        module = self.context.star_imported.get(root)
        return ({QualifiedName(f'{module}{dot}{rest}', QualifiedNameSource.IMPORT)} if module
                else set())

    def _top_of(self, node: cst.CSTNode) -> Optional[int]:
        """The index in the module's body of the top-level statement holding `node` (one the
        pass has visited), or None."""
        if self.facts is None:
            return None
        if self._top_indexes is None:
            self._top_indexes = {id(statement): index for index, statement
                                 in enumerate(self.facts.module.body)}
        current: Optional[cst.CSTNode] = node
        while current is not None and id(current) not in self._top_indexes:
            current = self._parents.get(current)
        return self._top_indexes[id(current)] if current is not None else None

    def holds(self, statement: cst.CSTNode, lines: MatchedLines) -> bool:
        """Whether `statement`'s lines (Python's) hold some of `lines`; True where unknown."""
        span = self.facts.spans().get(id(statement)) if self.facts is not None else None
        return span is None or lines.any_in(span.first, span.last)

    def _line_in_statement(self, node: cst.CSTNode) -> Optional[int]:
        """`node`'s line from its statement's positions alone (`StatementLines`), or None."""
        if self.facts is None:
            return None
        if self._statement_lines is None or self._statement_lines.facts is not self.facts:
            self._statement_lines = StatementLines(self.facts, self._parents)
        return self._statement_lines.line_of(node)

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

    def line_of(self, node: cst.CSTNode) -> int:
        line = self._line_in_statement(node)
        return line if line is not None else self.get_metadata(PositionProvider, node).start.line

    def attribute_read(self, node: cst.BaseExpression) -> str:
        """The attribute read of `node`'s value (`args` of `spec(f).args`), or '' (the pass
        has visited `node`)."""
        parent = self._parents.get(node)
        return parent.attr.value if isinstance(parent, cst.Attribute) and parent.value is node \
            else ''

    def qualified_name(self, node: cst.CSTNode) -> Optional[str]:
        """The one qualified name of `node` through the file's imports, or None."""
        names = self.get_metadata(QualifiedNameProvider, node, set())
        return next(iter(names)).name if len(names) == 1 else None


class PortTransformer(PassMetadata):
    """A porting pass: records notes by line, and the import lines its edits need.

    A pass runs on a file only when `has_work` says so: by default when the file's text
    matches `TRIGGER`, which each pass builds from its own tables (a pass costs some 1 ms of
    CPU a line whether it finds work or not, so triggers are worth making tight). `NAME` is
    the pass's name in the report ("internal error in pass NAME"). What it asks of the tree
    (parents, positions, qualified names) `PassMetadata` answers.
    """

    NAME: ClassVar[str] = ''
    TRIGGER: ClassVar[Pattern[str]] = re.compile('')
    FILTERS_STATEMENTS: ClassVar[bool] = False  # see `statement_filter`
    STATEMENTS: ClassVar[Optional[Pattern[str]]] = None
    BINDINGS: ClassVar[Optional[Pattern[str]]] = None
    # A pass whose work is all in statements (imports), not in the expressions in them, which
    # are most of a tree: it does not walk them.
    STATEMENTS_ONLY: ClassVar[bool] = False

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        self.notes: List[Note] = []
        self.needed_imports: List[str] = []
        self._ancestors: List[cst.CSTNode] = []
        self.source = ''  # the code of the tree the pass runs on (not rendered again)
        self._matched: Optional[MatchedLines] = None  # the lines `statement_filter` matches
        self._skipped: Set[cst.CSTNode] = set()  # the statements it left unvisited

    @classmethod
    def has_work(cls, code: str, context: Context) -> bool:
        """Whether the pass may change or report something in `code`: its trigger found, and
        where the pass tells its work by Python's tree (`work_lines`) and a stage left that
        tree, some work there."""
        return found_in(cls.TRIGGER, code) and cls.tree_shows_work(code, context)

    @classmethod
    def tree_shows_work(cls, code: str, context: Context) -> bool:
        """False where Python's tree of `code`, when a stage left it, shows no `work_lines`."""
        tree = context.python_tree_of(code)
        lines = cls._work_lines_of(tree, code, context) if tree is not None else None
        return lines is None or not lines.empty()

    @classmethod
    def _work_lines_of(cls, tree: ast.Module, code: str,
                       context: Context) -> Optional[MatchedLines]:
        """`work_lines`, once per tree: `has_work` and `lines_to_visit` ask it of the same."""
        found = context.found_work_lines.get(cls)
        if found is None or found[0] is not tree:
            found = context.found_work_lines[cls] = (tree, cls.work_lines(tree, code, context))
        return found[1]

    @classmethod
    def work_lines(cls, tree: ast.Module, code: str,
                   context: Context) -> Optional[MatchedLines]:
        """The lines of the nodes of `tree` (Python's tree of `code`) the pass may change or
        report, where it can tell them (division: its `/` that divide), or None. A pass that
        tells them (and sets `FILTERS_STATEMENTS`) runs only where there are some, and walks
        only their statements."""
        return None

    @classmethod
    def port(cls, parsed: 'ParsedFile', context: Context) -> List[Note]:
        """Runs the pass over the file's tree (which it updates); the pass's notes, by line of
        `parsed.code` as it was before."""
        transformer = cls(context)
        parsed.run(transformer)
        return transformer.notes

    def statement_filter(self) -> Optional[Pattern[str]]:
        """A pattern for the statements the pass visits: those whose code it matches (with
        the statements in them); others are left as they are, unvisited. None: every
        statement. Called once `source` and `facts` are set, before the walk.

        Walking a statement is what costs a pass most, so a pass whose work is all in the
        statements that its `STATEMENTS` pattern matches (default: `TRIGGER`), or that use a
        name an import or assignment matching `BINDINGS` (default: that pattern) binds (`slim`
        of `slim = tf.contrib.slim`), and that needs nothing of the others, sets
        `FILTERS_STATEMENTS`.
        """
        if not self.FILTERS_STATEMENTS or self.facts is None:
            return None
        names = self.facts.names_bound_where(self.BINDINGS or self.STATEMENTS or self.TRIGGER)
        if names is None:
            return None
        names = self.names_to_visit(names)
        pattern = self.STATEMENTS or self.TRIGGER
        alternatives = [pattern.pattern]
        if names:
            # A use of a name is not an attribute's (`nn` of `tf.nn`).
            alternatives.append(r'(?<!\.)\b(?:' + '|'.join(map(re.escape, sorted(names)))
                                + r')\b')
        return re.compile('|'.join(f'(?:{alternative})' for alternative in alternatives),
                          pattern.flags)

    def lines_to_visit(self) -> Optional[MatchedLines]:
        """The lines of the statements the pass visits (`work_lines`, else see
        `statement_filter`), or None: every statement. Called once `source` and `facts` are
        set, before the walk."""
        if not self.FILTERS_STATEMENTS or self.facts is None:
            return None
        tree = self.facts.python_tree()
        lines = (self._work_lines_of(tree, self.facts.code, self.context) if tree is not None
                 else None)
        if lines is not None:
            return lines
        pattern = self.statement_filter()
        return self.facts.matched_lines(pattern) if pattern is not None else None

    def names_to_visit(self, names: Set[str]) -> Set[str]:
        """Of the `names` bound where `BINDINGS` matches, those whose uses the pass visits
        (all of them unless a pass knows, before its walk, that some uses need nothing)."""
        return names

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._ancestors:
            self._parents[node] = self._ancestors[-1]
        if self._matched is not None and self.facts is not None and type(
                node) in _STATEMENT_TYPES:
            span = self.facts.spans().get(id(node))
            if span is not None and not self._matched.any_in(span.first, span.last):
                self._skipped.add(node)
                return False
        if self.STATEMENTS_ONLY and type(node) in _EXPRESSION_TYPES:
            self._skipped.add(node)
            return False
        self._ancestors.append(node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):
        if original_node in self._skipped:
            return updated_node
        self._ancestors.pop()
        return super().on_leave(original_node, updated_node)

    @property
    def changed(self) -> bool:
        """Whether a `leave_*` replaced a node."""
        return self.replacements > 0

    def note(self, kind: str, node: cst.CSTNode, message: str) -> None:
        self.notes.append(Note(kind, self.line_of(node), message))

    def need_import(self, line: str) -> None:
        if line not in self.needed_imports:
            self.needed_imports.append(line)


class StatementLines:
    """The lines of a pass's nodes from their statements' lines alone.

    LibCST's positions cost a rendering of the whole tree with every node's place recorded
    (some 250 CPU microseconds a line), for the few nodes a pass writes notes on. The line
    of the innermost statement holding a node is Python's (`TreeFacts.spans`); the node's
    place in it comes from the positions of that statement alone, rendered on its own.
    `parents`: the parents of the nodes the pass (or a `LookAhead` of it) visited.
    """

    def __init__(self, facts: TreeFacts, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> None:
        self.facts, self._parents = facts, parents
        # The positions of a statement rendered alone, by its id and whether whole.
        self._positions: Dict[Tuple[int, bool], Mapping[cst.CSTNode, CodeRange]] = {}
        self._headers: Dict[int, Optional[cst.CSTNode]] = {}

    def line_of(self, node: cst.CSTNode) -> Optional[int]:
        """`node`'s line, or None where its statement is not known."""
        statement, in_leading_lines = self._statement_of(node)
        if statement is None:
            return None
        span = self.facts.spans()[id(statement)]
        line = span.line
        if (isinstance(statement, cst.SimpleStatementLine) and span.last == line
                and not in_leading_lines):
            return line  # a statement of one line: every node of its own is on that line
        # A compound statement's header first, rendered without its blocks (a note on a
        # `for` line need not render the loop's body); then the whole statement.
        for whole in (False, True):
            alone = statement if whole else self._header_of(statement)
            if alone is None:
                continue
            positions = self._positions.get((id(statement), whole))
            if positions is None:
                positions = self._positions[(id(statement), whole)] = MetadataWrapper(
                    self.facts.module.with_changes(body=[alone], header=[], footer=[]),
                    unsafe_skip_copy=True).resolve(PositionProvider)
            found = positions.get(node)
            if found is not None:
                start = positions[alone]
                return line + found.start.line - start.start.line
        return None

    def _header_of(self, statement: cst.CSTNode) -> Optional[cst.CSTNode]:
        """`statement` without its blocks (the same header nodes), or None: not compound."""
        if id(statement) not in self._headers:
            self._headers[id(statement)] = _without_blocks(statement)
        return self._headers[id(statement)]

    def _statement_of(self, node: cst.CSTNode) -> Tuple[Optional[cst.CSTNode], bool]:
        """(the innermost statement holding `node` whose lines Python gave, or None; whether
        `node` is in a comment or blank line before it, which the statement holds)."""
        spans = self.facts.spans()
        current: Optional[cst.CSTNode] = node
        in_leading_lines = False
        while current is not None and id(current) not in spans:
            in_leading_lines = in_leading_lines or isinstance(current, cst.EmptyLine)
            current = self._parents.get(current)
        return current, in_leading_lines


_EMPTY_BLOCK = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])])


def _without_blocks(statement: cst.CSTNode) -> Optional[cst.CSTNode]:
    """A compound statement with its header's nodes and a `pass` for its blocks; None for
    another statement (a `try`'s header is its `try:` alone: not worth one)."""
    if isinstance(statement, (cst.If, cst.While, cst.For)):
        return statement.with_changes(body=_EMPTY_BLOCK, orelse=None)
    if isinstance(statement, (cst.With, cst.FunctionDef, cst.ClassDef)):
        return statement.with_changes(body=_EMPTY_BLOCK)
    return None


class Visitor(_Hooks, cst.CSTVisitor):
    """A LibCST visitor (it reads a tree, changes nothing) whose `visit_<Node>` and
    `leave_<Node>` methods are looked up once per node type (`_Hooks`)."""

    def on_leave(self, original_node: cst.CSTNode) -> None:
        leave = self.leave_method(type(original_node))
        if leave is not None:
            leave(self, original_node)


class LookAhead(Visitor):
    """A visitor a pass runs over part of its tree before its own walk gets there (a scope's
    statements, from its `visit_FunctionDef`). It records the parents of the nodes it visits
    for the pass, whose metadata then answers for them as for the nodes the pass visited (from
    Python's parser, not LibCST's whole-tree analyses). `parent`: the parent of the node it
    is run on (None for the module). `lines`: where the statements it needs to read are (it
    skips the others, whose lines Python's tree knows), or None: every statement."""

    def __init__(self, port_pass: PortTransformer, parent: Optional[cst.CSTNode],
                 lines: Optional[MatchedLines] = None) -> None:
        super().__init__()
        self._parents = port_pass._parents
        self._ancestors = [parent] if parent is not None else []
        # What to skip by: the lines to read and the statements' spans (None: nothing).
        self._skip_by = ((lines, port_pass.facts.spans())
                         if lines is not None and port_pass.facts is not None else None)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._ancestors:
            self._parents.setdefault(node, self._ancestors[-1])
        self._ancestors.append(node)  # popped by on_leave, which runs for a skipped node too
        if self._skip_by is not None and type(node) in _STATEMENT_TYPES:
            lines, spans = self._skip_by
            span = spans.get(id(node))
            if span is not None and not lines.any_in(span.first, span.last):
                return False
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._ancestors.pop()
        super().on_leave(original_node)


#: What the code of an import holds.
IMPORT_WORD = re.compile(r'\bimport\b')


class ImportRemover(KeepsUnchanged):
    """A transformer that edits import statements only: it does not walk the expressions of
    the tree (most of it; none holds a statement), nor a top-level statement not parsed yet
    (`deferred`) whose code holds no import (reading it would parse it)."""

    def on_visit(self, node: cst.CSTNode) -> bool:
        if type(node) in _EXPRESSION_TYPES:
            return False
        text = deferred.unparsed_text(node)
        return super().on_visit(node) and (text is None or IMPORT_WORD.search(text) is not None)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):
        if type(original_node) in _EXPRESSION_TYPES:
            return updated_node  # not visited
        return super().on_leave(original_node, updated_node)


#: The fields of LibCST's statements and blocks that hold statements or blocks.
_BLOCK_FIELDS = ('body', 'orelse', 'handlers', 'finalbody', 'cases')


def statements_in(port_pass: PortTransformer, node: cst.CSTNode,
                  wanted: Optional[MatchedLines] = None) -> Iterator[cst.CSTNode]:
    """The statements in `node`, in order, small ones (`import x`) and blocks too, each with
    its parent recorded for `port_pass` as a `LookAhead` would. Cheaper than a visitor, which
    rebuilds every node it passes; no expression is walked (none holds a statement).
    `wanted` (None: every statement): the lines of the statements the caller looks for
    (Python's tree knows them); a top-level statement not parsed yet (`deferred`) that holds
    none of them is yielded, but not read into (which would parse it)."""
    for field in _BLOCK_FIELDS:
        value = getattr(node, field, None)
        for child in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(child, cst.CSTNode) and not isinstance(child, cst.BaseExpression):
                port_pass._parents.setdefault(child, node)
                yield child
                if wanted is None or not deferred.unparsed(child) or port_pass.holds(
                        child, wanted):
                    yield from statements_in(port_pass, child, wanted)


def code_of(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def callee_name(call: cst.Call) -> str:
    """The last name of what `call` calls (`decode_jpeg` of `tf.image.decode_jpeg(x)`), or ''."""
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else (
        func.value if isinstance(func, cst.Name) else '')


def with_argument(call: cst.Call, argument: cst.Arg) -> cst.Call:
    """`call` with `argument` after its others."""
    args = list(call.args)
    if args:
        args[-1] = args[-1].with_changes(
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(' ')))
    return call.with_changes(args=[*args, argument])


def keyword_argument(keyword: str, value: cst.BaseExpression) -> cst.Arg:
    """The argument `keyword=value`, spelled without spaces around `=`."""
    return cst.Arg(value, keyword=cst.Name(keyword), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(''), whitespace_after=cst.SimpleWhitespace('')))


def defines(code: str, name: str) -> bool:
    """Whether `code` defines `name` itself (a function, a method, an assignment): its calls
    of a method of that name may be its own."""
    return re.search(rf'\bdef\s+{re.escape(name)}\b|\b{re.escape(name)}\s*=', code) is not None


def with_mode(call: cst.Call, text: str) -> cst.Call:
    """`call`, an `open`-like call, with the mode `text`: in its mode literal (quotes and
    prefix kept), or added after its arguments."""
    mode = mode_argument(call)
    if mode is None:
        return with_argument(call, cst.Arg(cst.SimpleString(repr(text))))
    old = cst.ensure_type(mode.value, cst.SimpleString)
    literal = cst.SimpleString(f'{old.prefix}{old.quote}{text}{old.quote}')
    return call.with_changes(args=[argument.with_changes(value=literal) if argument is mode
                                   else argument for argument in call.args])


def argument_at(call: cst.Call, position: int, keyword: str) -> Optional[cst.Arg]:
    """The argument of `call` given at `position` or as `keyword=`, or None."""
    for index, argument in enumerate(call.args):
        if (argument.keyword and argument.keyword.value == keyword) or (
                argument.keyword is None and index == position):
            return argument
    return None


def mode_argument(call: cst.Call) -> Optional[cst.Arg]:
    """The mode argument of an `open`-like call (second positional, or `mode=`), or None."""
    return argument_at(call, 1, 'mode')


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
    if not lines:
        return module  # no import statement rendered: most passes need none
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

    def __init__(self, code: str, python_tree: Optional[ast.Module] = None,
                 module: Optional[cst.Module] = None) -> None:
        """`python_tree`, `module`: Python's `ast` and LibCST's tree of `code`, when the caller
        parsed it already."""
        self.code = code
        if module is None:  # its top-level functions and classes parsed as the passes need
            module = (deferred.parse_module(code, python_tree) if python_tree is not None
                      else cst.parse_module(code))
        # A freshly parsed tree holds no node twice: no need for the wrapper's deep copy.
        self._wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        self._facts = TreeFacts(self._wrapper.module, code, python_tree)
        self._renderings = Renderings()

    @property
    def module(self) -> cst.Module:
        """The tree as it is now."""
        return self._wrapper.module

    @property
    def facts(self) -> TreeFacts:
        """What Python's parser says of the code as it is now."""
        return self._facts

    def run(self, transformer: PortTransformer) -> None:
        """Runs one pass over the tree, and the imports it needs added."""
        with garbage_collection_paused():
            transformer.source = self.code
            transformer.facts = self._facts
            transformer._matched = transformer.lines_to_visit()
            if transformer._matched is not None:
                self._facts.parse_deferred(transformer._matched)
            visited = self._wrapper.visit(transformer)
            assert not transformer._replacements_before, f'{transformer.NAME}: unbalanced walk'
            module = add_imports(visited, transformer.needed_imports)
            if not transformer.changed and module is visited:
                return  # a copy of the same tree: the old one keeps its metadata
            # A pass builds every node it puts in the tree (none is put in twice, which the
            # wrapper's deep copy would be for): the new tree is taken as it is too.
            self.code = code_after_pass(self._wrapper.module, self.code, self._facts.spans(),
                                        module, self._renderings)
            self._wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
            self._facts = TreeFacts(module, self.code, previous=self._facts)


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


@contextlib.contextmanager
def objects_alive_frozen() -> Iterator[None]:
    """What is alive when a port starts (TensorFlow's and LibCST's modules: some 300,000
    objects) out of the cycle collector's sight until it ends.

    Between files, and in the steps that read every file first, the collector runs; each
    collection of the oldest generation scanned them all again (measured: a tenth of a
    port's CPU time on two Python 2 repositories, 0.3 s in one collection). Nothing is
    frozen, or thawed after, when the caller froze objects itself (`gc.freeze` before a fork).
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
