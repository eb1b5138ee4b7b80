"""What Python's own parser tells of a LibCST tree, cheaper than LibCST's metadata.

LibCST's metadata providers each walk the whole tree in Python. Python's `ast` parser is
written in C (some 15 CPU microseconds a line with its walk) and numbers every statement's lines,
so the passes ask it what it can answer, for the tree as it is before each pass:

- the names the module binds (`qualified.ModuleNames`), for qualified names;
- the lines each statement spans: for the report's line numbers, and so that a pass skips the
  statements its pattern does not match (`PortTransformer.statement_filter`);
- what a pass asks before its walk to skip more: the lines of some kind of node (a division),
  the attribute chains on each name and what the imports bind to it (the names pass), whether
  anything may read a name (an unused import).

LibCST's statements and Python's pair one to one in each block, except that a line of
statements joined by `;` is one of LibCST's (`qualified.top_indexes`).
"""

import ast
import bisect
import re
import symtable
from typing import (
    AbstractSet,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Pattern,
    Sequence,
    Set,
    Tuple,
    Union,
    cast,
)

import libcst as cst

from slimdata.port import deferred
from slimdata.port.patterns import alternatives, gate
from slimdata.port.qualified import (
    ModuleNames,
    every_node,
    every_statement,
    first_line,
    top_indexes,
)

_NOT_YET = object()  # a fact not computed yet


class TreeFacts:
    """The facts of a LibCST `module` whose code is `code`, each computed when first asked
    (`python_tree`: Python's `ast` of `code`, if it was parsed already; `previous`: the facts
    of the code a pass made this code of, whose tree, if parsed, gives this one its statements
    left where they were: `spliced_tree`)."""

    def __init__(self, module: cst.Module, code: str, python_tree: Optional[ast.Module] = None,
                 previous: Optional['TreeFacts'] = None) -> None:
        self.module, self.code = module, code
        self._tree: object = _NOT_YET if python_tree is None else python_tree
        # Kept only where its tree was parsed (`spliced_tree` needs it; nothing parses it later).
        self._previous = (previous if python_tree is None and previous is not None
                          and isinstance(previous._tree, ast.Module) else None)
        self._names: object = _NOT_YET
        self._spans: object = _NOT_YET
        # The deferred statements not parsed when `spans` paired them, with Python's
        # statement: `parse_deferred` pairs their blocks.
        self._unparsed: List[Tuple[ast.stmt, cst.CSTNode]] = []
        self._bindings: object = _NOT_YET  # (code, names bound) of each binding statement
        self._chains: object = _NOT_YET  # root name -> the attribute chains on it
        self._read: object = _NOT_YET  # the names read, deleted or written in a string
        self._unclear: Set[str] = set()  # of those, the names deleted or written in a string
        self._symbols: object = _NOT_YET  # Python's symbol table of the code
        self._imported: object = _NOT_YET  # name bound -> what the imports bind to it
        self._nodes: Optional[List[ast.AST]] = None  # every node of Python's tree
        self._matches: Dict[Pattern[str], MatchedLines] = {}  # by pattern, the lines it matches

    def python_tree(self) -> Optional[ast.Module]:
        if self._tree is _NOT_YET:
            previous, self._previous = self._previous, None
            self._tree = (spliced_tree(cast(ast.Module, previous._tree), previous.code, self.code)
                          if previous is not None else None)
            if self._tree is None:
                try:
                    self._tree = ast.parse(self.code)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    self._tree = None
        return cast(Optional[ast.Module], self._tree)

    def _every_node(self) -> List[ast.AST]:
        """Every node of Python's tree (which the caller has), walked once for all facts."""
        if self._nodes is None:
            self._nodes = every_node(cast(ast.Module, self.python_tree()))
        return self._nodes

    def module_names(self) -> Optional[ModuleNames]:
        if self._names is _NOT_YET:
            tree = self.python_tree()
            self._names = ModuleNames.of(tree, self.module, self.code) if tree is not None else None
        return cast(Optional[ModuleNames], self._names)

    def spans(self) -> Dict[int, 'Span']:
        """The lines of the statements (by the id of LibCST's node) of each block that pairs
        with Python's, nested blocks too."""
        if self._spans is _NOT_YET:
            spans: Dict[int, Span] = {}
            tree = self.python_tree()
            if tree is not None:
                _pair(tree.body, self.module.body, spans, self._unparsed)
            self._spans = spans
        return cast(Dict[int, Span], self._spans)

    def parse_deferred(self, lines: 'MatchedLines') -> None:
        """Parses the deferred top-level statements that hold some of `lines` (a pass will
        walk them) and pairs their blocks, and those of any parsed since (by a reader), so
        that a walk skips by their statements' spans. (The blocks of one parsed by a reader
        and not paired yet are walked whole, a note's line in them found from the whole
        statement's positions: the same answers, at more cost.)"""
        spans = self.spans()
        unparsed, self._unparsed = self._unparsed, []
        for statement, node in unparsed:
            span = spans[id(node)]
            if deferred.unparsed(node) and not lines.any_in(span.first, span.last):
                self._unparsed.append((statement, node))
                continue
            for inner_statements, inner_body in _blocks(statement, deferred.real_node(node)):
                _pair(inner_statements, inner_body, spans, self._unparsed)

    def matched_lines(self, pattern: Pattern[str]) -> 'MatchedLines':
        """The lines a match of `pattern` starts or goes on in: of each of its alternatives,
        searched alone (faster: `patterns`), which may add lines to its own matches' (a
        match of one alternative inside or beside another's), never lose one. Each
        alternative's lines are kept: a pass's bindings and statements share them."""
        parts = [self._matched_by(alternative) for alternative in alternatives(pattern)]
        return parts[0] if len(parts) == 1 else MatchedLines(
            [line for part in parts for line in part.lines])

    def _matched_by(self, pattern: Pattern[str]) -> 'MatchedLines':
        found = self._matches.get(pattern)
        if found is None:
            found = self._matches[pattern] = MatchedLines.matching(self.code, pattern)
        return found

    def lines_of(self, kinds: Tuple[type, ...], test=lambda node: True,
                 text: Optional[Pattern[str]] = None) -> Optional['MatchedLines']:
        """The lines of the nodes of Python's tree of the `kinds` that pass `test`, or None
        without Python's tree. `text`: what the code of such a node holds (`/` of a
        division); only the top-level statements whose lines match it are walked (a walk of
        Python's tree is some 10 CPU microseconds a line, the search a twentieth of it)."""
        tree = self.python_tree()
        return node_lines(tree, self.code, kinds, test, text) if tree is not None else None

    def names_bound_where(self, pattern: Pattern[str]) -> Optional[Set[str]]:
        """The names bound by the imports and assignments (anywhere) whose code `pattern`
        matches (`slim` of `slim = tf.contrib.slim`), or None without Python's tree."""
        if self._bindings is _NOT_YET:
            tree = self.python_tree()
            self._bindings = None if tree is None else [
                (node.lineno, cast(int, node.end_lineno), set(bound_by(node)))
                for node in every_statement(tree.body) if isinstance(node, _BINDING_STATEMENTS)]
        if self._bindings is None:
            return None
        # One search of the code, not one of each statement's lines (a file of 300
        # assignments, five passes: 1,500 searches).
        matched = self.matched_lines(pattern)
        if matched.empty():
            return set()
        return {name for first, last, names in cast(List[Tuple[int, int, Set[str]]],
                                                    self._bindings)
                if matched.any_in(first, last) for name in names}

    def attribute_chains(self) -> Optional[Dict[str, Set[str]]]:
        """The dotted attribute chains of the code by the name they start with (`slim`:
        {`slim.conv2d`, `slim.nets.vgg`, `slim.nets`, ...}: each chain and every shorter one in
        it), or None without Python's tree."""
        if self._chains is _NOT_YET:
            tree = self.python_tree()
            chains: Optional[Dict[str, Set[str]]] = None
            if tree is not None:
                chains = {}
                for node in self._every_node():
                    if isinstance(node, ast.Attribute):
                        parts = [node.attr]
                        value = node.value
                        while isinstance(value, ast.Attribute):
                            parts.append(value.attr)
                            value = value.value
                        if isinstance(value, ast.Name):
                            chains.setdefault(value.id, set()).add(
                                '.'.join([value.id] + parts[::-1]))
            self._chains = chains
        return cast(Optional[Dict[str, Set[str]]], self._chains)

    def may_read(self, name: str) -> bool:
        """Whether the code may read `name`: a Name of it that is not assigned to (read or
        deleted), or a string holding it as a word (an annotation, `__all__`); True without
        Python's tree. False says for sure that nothing reads it."""
        if self._read is _NOT_YET:
            tree = self.python_tree()
            read: Optional[Set[str]] = None
            if tree is not None:
                read = set()
                for node in self._every_node():
                    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
                        read.add(node.id)
                        if isinstance(node.ctx, ast.Del):
                            self._unclear.add(node.id)
                    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                        self._unclear.update(re.findall(r'\w+', node.value))
                read |= self._unclear
            self._read = read
        return self._read is None or name in cast(Set[str], self._read)

    def binding_read(self, name: str, line: int) -> Optional[bool]:
        """Whether code reads the binding of `name` that the statement at `line` makes (an
        import), by Python's own scope analysis (`symtable`): a read in its scope, or in a
        scope inside it that takes the name from there. None where that cannot say as LibCST's
        scope analysis would: no tree, a statement in a class body or declaring the name
        global, a `del` of the name or a string holding it (an annotation, `__all__`), a
        list, set or dict comprehension naming it that the table may not show."""
        if not self.may_read(name):
            return False
        if self._read is None or name in self._unclear:
            return None
        scope = self._scope_at(line)
        if scope is None or scope.get_type() == 'class' or name not in scope.get_identifiers():
            return None
        symbol = scope.lookup(name)
        if scope.get_type() == 'function' and (symbol.is_global() or symbol.is_nonlocal()):
            return None
        if symbol.is_referenced() or _read_inside(scope, name, scope.get_type() == 'module'):
            return True
        # Python 3.12 inlines list, set and dict comprehensions into their scope, and its
        # symbol table then drops their reads of a name that scope binds.
        return None if self._read_in_a_comprehension(name) else False

    def _read_in_a_comprehension(self, name: str) -> bool:
        return any(isinstance(inner, ast.Name) and inner.id == name
                   for node in self._every_node() if isinstance(node, _INLINED_COMPREHENSIONS)
                   for inner in every_node(node))

    def _scope_at(self, line: int) -> Optional[symtable.SymbolTable]:
        """The symbol table of the innermost function, class or module holding `line`."""
        tree = self.python_tree()
        if self._symbols is _NOT_YET:
            try:
                self._symbols = symtable.symtable(self.code, '<port>', 'exec') if tree else None
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._symbols = None
        table = cast(Optional[symtable.SymbolTable], self._symbols)
        if tree is None or table is None:
            return None
        holding = sorted((node for node in self._every_node() if isinstance(node, _SCOPE_NODES)
                          and node.lineno <= line <= cast(int, node.end_lineno)),
                         key=lambda node: node.lineno)
        for node in holding:
            table = next((child for child in table.get_children()
                          if child.get_name() == node.name
                          and child.get_lineno() == node.lineno), None)
            if table is None:
                return None
        return table

    def imported_as(self, name: str) -> Set[str]:
        """What the imports anywhere in the code bind to `name` (`tensorflow.contrib.slim` of
        `import tensorflow.contrib.slim as slim`; a relative one as written, `.nets`)."""
        return self.imported_names().get(name, set())

    def imported_names(self) -> Dict[str, Set[str]]:
        """{name: what the imports anywhere in the code bind to it} (`imported_as`)."""
        if self._imported is _NOT_YET:  # every import read once, for all names
            tree = self.python_tree()
            imported: Dict[str, Set[str]] = {}
            for node in every_statement(tree.body) if tree is not None else ():
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    for alias, bound in zip(node.names, bound_by(node)):
                        imported.setdefault(bound, set()).add(_imported_name(node, alias, bound))
            self._imported = imported
        return cast(Dict[str, Set[str]], self._imported)


def names_bound_to(functions: AbstractSet[str], tree: ast.Module, code: str,
                   star_imported: Mapping[str, str]) -> Set[str]:
    """The names a call of one of `functions` (last names: `name_scope`) may be written with:
    their own, those an import anywhere binds one to (`ns` of `from tensorflow import
    name_scope as ns`; an assignment, `ns = tf.name_scope`, gives `ns` no qualified name), and
    those the file's star imports of other files of the tree bring (`star_aliases`). The
    imports are read only where the code shows `name as`."""
    names = set(functions) | star_aliases(functions, star_imported)
    if re.search(words_pattern(functions) + r'[\s\\]+as\b', code) is None:
        return names
    for statement in every_statement(tree.body):
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            names.update(alias.asname for alias in statement.names if alias.asname
                         and alias.name.rsplit('.', 1)[-1] in functions)
    return names


def star_aliases(functions: AbstractSet[str], star_imported: Mapping[str, str]) -> Set[str]:
    """The names `star_imported` (by a file's star imports of other files of the tree: name ->
    qualified name) binds to one of `functions` (last names)."""
    return {name for name, qualified in star_imported.items()
            if qualified.rsplit('.', 1)[-1] in functions}


def words_pattern(words: Iterable[str]) -> str:
    """A regular expression matching any of `words` (each a whole word), written as a trie:
    Python's `re` tries the alternatives of a flat alternation one by one (measured: 2.5 times
    slower over the 200 words of the Python 2 stage's fixers)."""
    trie: Dict[str, dict] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[''] = {}

    def written(node: Dict[str, dict]) -> str:
        branches = [re.escape(char) + written(child) for char, child in sorted(node.items())
                    if char]
        if not branches:
            return ''
        ends_here = '' in node
        if len(branches) == 1 and not ends_here:
            return branches[0]
        return '(?:' + '|'.join(branches) + ')' + ('?' if ends_here else '')

    return r'\b' + written(trie) + r'\b'


_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_INLINED_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp)


def _read_inside(scope: symtable.SymbolTable, name: str, module: bool) -> bool:
    """Whether a scope inside `scope` reads the `name` it binds: as a global (`module`) or
    as a free variable, through every scope between that does not bind it itself (a class
    body's own names are not seen by the functions in it)."""
    for inner in scope.get_children():
        if name in inner.get_identifiers():
            symbol = inner.lookup(name)
            reaches = symbol.is_global() if module else symbol.is_free()
            if reaches and symbol.is_referenced():
                return True
            if not reaches and inner.get_type() != 'class':
                continue  # bound there: what is inside it reads that binding
        if _read_inside(inner, name, module):
            return True
    return False


def spliced_tree(old_tree: ast.Module, old_code: str, code: str) -> Optional[ast.Module]:
    """Python's tree of `code`, which a pass made of `old_code` (whose tree is `old_tree`):
    each top-level statement of `old_tree` whose lines `code` holds as they were, at the same
    lines, taken as it is (its nodes shared), and the lines between parsed alone, each run
    after as many blank lines as come before it (the same line numbers); or None (`code` to be
    parsed whole): no statement kept, a run that does not parse alone.

    `code` is such runs and statements one after the other, each whole top-level statements
    that start at a line's start and end at a line's end, so its tree is theirs: a statement's
    tree is its text's at its lines (the future feature that changes the grammar, Barry's
    `<>`, excepted: parsed whole). A statement sharing a line with another (`a = 1; b = 2`)
    or whose last line goes on to the next (a backslash) is parsed with the runs. Most
    statements a pass leaves stay where they were: the lines Python parses again after the
    passes on three Python 2 repositories went from 27,631 to 14,176. The trees share the
    nodes kept: neither is changed after."""
    if 'barry_as_FLUFL' in code:
        return None
    old_lines, lines = old_code.split('\n'), code.split('\n')
    body = old_tree.body
    kept: List[Tuple[int, int, ast.stmt]] = []
    for index, statement in enumerate(body):
        first, last = first_line(statement), cast(int, statement.end_lineno)
        if ((index and cast(int, body[index - 1].end_lineno) >= first)
                or (index + 1 < len(body) and first_line(body[index + 1]) <= last)
                or last > len(lines) or old_lines[last - 1].endswith('\\')):
            continue  # on a line with another (`a = 1; b = 2`), gone, or going on
        if all(old_lines[line] == lines[line] for line in range(first - 1, last)):
            kept.append((first, last, statement))
    if not kept:
        return None
    statements: List[ast.stmt] = []
    line = 1  # the first line not yet in `statements`
    for first, last, statement in kept:
        if not _run_parsed(lines, line, first, statements):
            return None
        statements.append(statement)
        line = last + 1
    if not _run_parsed(lines, line, len(lines) + 1, statements):
        return None
    return ast.Module(body=statements, type_ignores=[])


def _run_parsed(lines: Sequence[str], start: int, end: int, statements: List[ast.stmt]) -> bool:
    """Whether lines `start`..`end - 1` parse alone (after `start - 1` blank lines: the same
    line numbers), their statements added to `statements`."""
    if end <= start:
        return True
    try:
        run = ast.parse('\n' * (start - 1) + '\n'.join(lines[start - 1:end - 1]))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    statements.extend(run.body)
    return True


def node_lines(tree: ast.Module, code: str, kinds: Tuple[type, ...], test=lambda node: True,
               text: Optional[Pattern[str]] = None) -> 'MatchedLines':
    """The lines of the nodes of `tree` (Python's tree of `code`) of the `kinds` that pass
    `test`; see `TreeFacts.lines_of`."""
    return lines_of_nodes(node for node in hinted_nodes(tree, code, text)
                          if isinstance(node, kinds) and test(node))


def hinted_nodes(tree: ast.Module, code: str, text: Optional[Pattern[str]]) -> List[ast.AST]:
    """Every node of `tree` (Python's tree of `code`), or, given `text`, those of the
    statements, at any depth, whose lines hold it: a node whose code holds the text is among
    them, and so are the statements around it (most of a function holds no `/`: the walk of
    each top-level statement with one was most of the search)."""
    wanted = None
    if text is not None:
        hinted = MatchedLines.matching(code, text)
        wanted = lambda statement: hinted.any_in(  # noqa: E731
            first_line(statement), cast(int, statement.end_lineno))
    return every_node(tree, wanted)


def lines_of_nodes(nodes: Iterable[ast.AST]) -> 'MatchedLines':
    """The lines the `nodes` (expressions or statements of Python's tree) span."""
    return MatchedLines([line for node in nodes
                         for line in range(cast(ast.expr, node).lineno,
                                           cast(int, cast(ast.expr, node).end_lineno) + 1)])


class Span(NamedTuple):
    """A statement's lines: `first` (its decorators' included), `line` (its own, where
    LibCST's positions start it: a definition's `def`), `last`."""
    first: int
    line: int
    last: int


class MatchedLines:
    """Lines a pass has work in (with `matching`: those a match of a pattern starts or goes on
    in)."""

    def __init__(self, lines: List[int]) -> None:
        self.lines = sorted(lines)

    @classmethod
    def matching(cls, code: str, *patterns: Pattern[str]) -> 'MatchedLines':
        """The lines where a match of any of `patterns` starts or goes on (several simple
        patterns search faster than their alternation). A pattern whose quicker `gate` finds
        nothing is not searched; the lines are counted from one match to the next (a list of
        where each line starts cost more than the searches)."""
        lines: List[int] = []
        for pattern in patterns:
            quick = gate(pattern)
            if quick is not None and quick.search(code) is None:
                continue
            line, position = 1, 0
            for found in pattern.finditer(code):
                start, end = found.start(), max(found.end() - 1, found.start())
                line += code.count('\n', position, start)
                position = start
                lines.extend(range(line, line + code.count('\n', start, end) + 1))
        return cls(lines)

    def empty(self) -> bool:
        return not self.lines

    def any_in(self, first: int, last: int) -> bool:
        index = bisect.bisect_left(self.lines, first)
        return index < len(self.lines) and self.lines[index] <= last


_BINDING_STATEMENTS = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.AugAssign)


def _imported_name(statement: Union[ast.Import, ast.ImportFrom], alias: ast.alias,
                   bound: str) -> str:
    """What an import binds to `bound` (`import a.b` binds `a`; `from . import x`: `.x`)."""
    if isinstance(statement, ast.Import):
        return alias.name if alias.asname else bound
    module = '.' * statement.level + (statement.module or '')
    return f'{module}.{alias.name}' if statement.module else module + alias.name


def bound_by(statement: ast.stmt) -> Iterator[str]:
    """The names an import (but a star import's) or an assignment binds."""
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        for alias in statement.names:
            if alias.name != '*':
                yield alias.asname or alias.name.split('.', 1)[0]
        return
    targets = (statement.targets if isinstance(statement, ast.Assign)
               else [cast(Union[ast.AnnAssign, ast.AugAssign], statement).target])
    for target in targets:
        for node in every_node(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                yield node.id


def _pair(statements: Sequence[ast.stmt], body: Sequence[cst.CSTNode],
          spans: Dict[int, Span], unparsed: List[Tuple[ast.stmt, cst.CSTNode]]) -> None:
    """Records the spans of the LibCST statements `body`, paired with Python's `statements`
    (nothing for a block that does not pair); a deferred statement not parsed yet goes to
    `unparsed`, its blocks unpaired (reading them would parse it)."""
    tops = top_indexes(list(statements), body)
    if tops is None:
        return
    groups: Dict[int, List[ast.stmt]] = {}
    for top, statement in zip(tops, statements):
        groups.setdefault(top, []).append(statement)
    for index, node in enumerate(body):
        group = groups[index]
        spans[id(node)] = Span(first_line(group[0]), group[0].lineno,
                               cast(int, group[-1].end_lineno))
        if deferred.unparsed(node):
            unparsed.append((group[0], node))
        elif not isinstance(node, cst.SimpleStatementLine):
            for inner_statements, inner_body in _blocks(group[0], node):
                _pair(inner_statements, inner_body, spans, unparsed)


def _blocks(statement: ast.stmt, node: cst.CSTNode
            ) -> Iterator[Tuple[Sequence[ast.stmt], Sequence[cst.CSTNode]]]:
    """The blocks of a compound statement, Python's beside LibCST's (indented ones only)."""
    yield from _block(getattr(statement, 'body', None), getattr(node, 'body', None))
    if isinstance(node, (cst.Try, cst.TryStar)):
        for handler, cst_handler in zip(getattr(statement, 'handlers', ()), node.handlers):
            yield from _block(handler.body, getattr(cst_handler, 'body', None))
        if node.finalbody is not None:
            yield from _block(getattr(statement, 'finalbody', None), node.finalbody.body)
    orelse = getattr(node, 'orelse', None)
    if isinstance(orelse, cst.Else):
        yield from _block(getattr(statement, 'orelse', None), orelse.body)
    elif isinstance(orelse, cst.If):  # elif: Python's `orelse` holds that one `if`
        yield getattr(statement, 'orelse', []), [orelse]


def _block(statements: Union[List[ast.stmt], None], suite: object
           ) -> Iterator[Tuple[Sequence[ast.stmt], Sequence[cst.CSTNode]]]:
    if isinstance(suite, cst.IndentedBlock) and isinstance(statements, list):
        yield statements, suite.body
