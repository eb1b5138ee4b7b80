"""Qualified names from a module's own bindings, without LibCST's scope analysis where it can.

The passes ask LibCST's `QualifiedNameProvider` what a name means (`tensorflow.contrib.slim.
conv2d` for `slim.conv2d` after `import tensorflow.contrib.slim as slim`). It rests on LibCST's
`ScopeProvider`, which visits every node of the file first: some 800 CPU microseconds a line of
SSD-Tensorflow, the largest cost of the port, paid again after each pass that changes the tree.

Yet most names a pass asks about have a root (`slim`, `tf`, `np`, `range`) bound only at module
level, by imports, plain assignments, `for` targets and definitions, and nowhere else in the file.
Their answer then follows from those bindings alone, whatever scope the name is used in.
`ModuleNames` reads them from Python's own parser (`ast`, written in C: some 30 microseconds a
line with the walk) and answers exactly what LibCST would, by the same rules (longest prefix in
scope, an import's aliases matched in order, a module-level use sees only the bindings of the
statements before it). Every other case returns None, and the caller asks LibCST:

- a root bound anywhere else (a parameter, a local, a class attribute, a comprehension target,
  `global`, `with ... as`, `except ... as`, `+=`, an annotated assignment, a walrus, a pattern),
  or by a dotted import without `as` (`import os.path` binds the names `os.path` and `os`);
- a bare name that is not the callee, an argument or the root of an attribute chain;
- a module-level use of a name bound in the same top-level statement (which binding comes
  first is LibCST's count of assignments, not worth repeating);
- a file whose statements cannot be paired with LibCST's.

`tests/test_port_qualified.py` compares both answers for every name and attribute of real
repositories' files.
"""

import ast
import builtins
import collections
import dataclasses
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import QualifiedName, QualifiedNameSource

#: The parent of a node of the tree being visited (None for the module).
ParentOf = Callable[[cst.CSTNode], Optional[cst.CSTNode]]


@dataclasses.dataclass(frozen=True)
class _Import:
    """A module-level import statement: `module` ('' for `import x`; dots first for a relative
    import), the (name, alias) of each of its names, and its top-level statement's index."""
    module: str
    names: Tuple[Tuple[str, Optional[str]], ...]
    top: int

    def qualified_names(self, full_name: str) -> Set[str]:
        """What `full_name` (rooted at a name this statement binds) names through it: LibCST's
        `ImportAssignment.get_qualified_names_for`, rule for rule."""
        results = set()
        for name, alias in self.names:
            parts = name.split('.')
            for end in range(len(parts), 0, -1):
                real_name = '.'.join(parts[:end])
                as_name = alias if alias is not None else real_name
                if self.module.endswith('.'):
                    real_name = self.module + real_name
                elif self.module:
                    real_name = f'{self.module}.{real_name}'
                if full_name.startswith(as_name):
                    remaining = full_name.split(as_name, 1)[1]
                    if remaining and not remaining.startswith('.'):
                        continue
                    remaining = remaining.lstrip('.')
                    results.add(f'{real_name}.{remaining}' if remaining else real_name)
                    break
        return results


@dataclasses.dataclass
class _Bindings:
    """A name's module-level bindings: its imports, and the top-level statements of the
    others (assignments, `for` targets, definitions)."""
    imports: List[_Import] = dataclasses.field(default_factory=list)
    local_tops: List[int] = dataclasses.field(default_factory=list)

    def tops(self) -> Iterator[int]:
        yield from (found.top for found in self.imports)
        yield from self.local_tops

    def before(self, top: int) -> '_Bindings':
        return _Bindings([found for found in self.imports if found.top < top],
                         [local for local in self.local_tops if local < top])

    def names_for(self, full_name: str, prefix: str = '') -> Set[QualifiedName]:
        """LibCST's names for `full_name` through these bindings, in a scope whose own names
        start with `prefix` (`f.<locals>`; '' at module level)."""
        names = {QualifiedName(name, QualifiedNameSource.IMPORT)
                 for found in self.imports for name in found.qualified_names(full_name)}
        if self.local_tops:
            names.add(QualifiedName(f'{prefix}.{full_name}' if prefix else full_name,
                                    QualifiedNameSource.LOCAL))
        return names


class ModuleNames:
    """A module's names, for `qualified_names` (see the module docstring).

    Built from a LibCST module and Python's `ast` of its code; `top_of` gives the index in
    the module's body of the top-level statement holding a node.
    """

    def __init__(self, bindings: Dict[str, _Bindings], unclear: Set[str]) -> None:
        self._bindings = bindings
        self._unclear = unclear
        self._scopes: Dict[int, Dict[str, _Bindings]] = {}  # by id of the scope's node

    @classmethod
    def of(cls, tree: ast.Module, module: cst.Module, code: str) -> Optional['ModuleNames']:
        """The names of `module`, whose `code` Python parsed into `tree`; None when their
        statements cannot be paired."""
        tops = top_indexes(tree.body, module.body)
        if tops is None:
            return None
        collector = _Collector()
        for statement, top in zip(tree.body, tops):
            collector.statement(statement, top)
        at_module_level = collections.Counter(_module_scope_names(tree))
        unclear = {name for name, count in at_module_level.items()
                   if count > collector.counts[name]}
        unclear.update(_special_names(tree, code))
        return cls(collector.bindings, unclear)

    def qualified_names(self, node: cst.CSTNode, parent_of: ParentOf,
                        top_of: Callable[[cst.CSTNode], Optional[int]]
                        ) -> Union[Set[QualifiedName], '_Unscoped', None]:
        """LibCST's qualified names of `node`; `UNSCOPED` for a node its scope analysis does
        not reach (in an import statement: no qualified name, not even an empty set); None
        when only its scope analysis can say."""
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return None
        statement_part = _statement_part(node, parent_of)
        if statement_part is not None:
            return UNSCOPED if statement_part == 'import' else None
        if isinstance(node, cst.Name):
            # A bare name counts as LibCST's access, which sees only the bindings before it in
            # its own scope, when it is read as a callee, an argument or a chain's root.
            parent = parent_of(node)
            if not ((isinstance(parent, cst.Attribute) and parent.value is node)
                    or (isinstance(parent, cst.Call) and parent.func is node)
                    or (isinstance(parent, cst.Arg) and parent.value is node)):
                return None
            full_name: Optional[str] = node.value
        else:
            full_name = get_full_name_for_node(node)
        if full_name is None:
            return None
        root = full_name.split('.', 1)[0]
        if root in self._unclear:
            return None
        scopes = _enclosing_scopes(node, parent_of)
        for depth, scope in enumerate(scopes):
            if depth and isinstance(scope, cst.ClassDef):
                continue  # a class's names are not seen from the functions in it
            bindings = self._scope_bindings(scope).get(root)
            if bindings is None:
                continue
            if depth == 0 and isinstance(node, cst.Name):
                # An access in the scope that binds it sees the bindings before it: those
                # of the statements before its own (and the parameters).
                statement = _statement_in(scope, node, parent_of)
                if statement is None or statement in set(bindings.tops()):
                    return None
                bindings = bindings.before(statement)
                if not bindings.imports and not bindings.local_tops:
                    return None  # LibCST then looks in the enclosing scope, classes too
            return bindings.names_for(full_name, _prefix(scopes[depth:]))
        return self._through_module(node, full_name, root, bool(scopes), top_of)

    def _through_module(self, node: cst.CSTNode, full_name: str, root: str, in_scope: bool,
                        top_of: Callable[[cst.CSTNode], Optional[int]]
                        ) -> Optional[Set[QualifiedName]]:
        """Through the module's bindings, for `node` in a function's (class's...) scope that
        does not bind its root (`in_scope`) or in the module's own."""
        bindings = self._bindings.get(root)
        if bindings is None:  # no module-level binding: a builtin, or nothing
            return _builtin(root)
        if in_scope or not isinstance(node, cst.Name):
            return bindings.names_for(full_name)
        top = top_of(node)
        if top is None or top in set(bindings.tops()):
            return None
        seen = bindings.before(top)
        if not seen.imports and not seen.local_tops:
            return _builtin(root)  # LibCST then looks in the builtins
        return seen.names_for(full_name)

    def _scope_bindings(self, scope: cst.CSTNode) -> Dict[str, _Bindings]:
        """The names a function, class, lambda or comprehension binds in its own scope."""
        found = self._scopes.get(id(scope))
        if found is None:
            found = self._scopes[id(scope)] = _ScopeCollector.of(scope)
        return found


class _Unscoped:
    """The type of `UNSCOPED`."""


UNSCOPED = _Unscoped()


def _builtin(name: str) -> Set[QualifiedName]:
    return ({QualifiedName(f'builtins.{name}', QualifiedNameSource.BUILTIN)}
            if hasattr(builtins, name) else set())


def _statement_part(node: cst.CSTNode, parent_of: ParentOf) -> Optional[str]:
    """'import' if `node` is part of an import statement (LibCST's scope analysis skips them,
    so they have no qualified name); 'typing' in a call of `TypeVar` or `NewType` (it skips
    their first argument); else None."""
    current: Optional[cst.CSTNode] = parent_of(node)
    while current is not None and not isinstance(current, (cst.SimpleStatementLine,
                                                           cst.Module)):
        if isinstance(current, (cst.Import, cst.ImportFrom)):
            return 'import'
        if isinstance(current, cst.Call) and (get_full_name_for_node(current.func) or '').endswith(
                ('TypeVar', 'NewType')):
            return 'typing'
        current = parent_of(current)
    return None


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _enclosing_scopes(node: cst.CSTNode, parent_of: ParentOf) -> List[cst.CSTNode]:
    """The functions, classes, lambdas and comprehensions whose scope `node` is in, innermost
    first, as LibCST's scope analysis puts it: in a function's, a lambda's or a class's body
    (not in its decorators, defaults or bases), in a comprehension past its first iterable."""
    scopes: List[cst.CSTNode] = []
    child: Optional[cst.CSTNode] = node
    parent = parent_of(node)
    while parent is not None:
        if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            if child is parent.body:
                scopes.append(parent)
        elif isinstance(parent, _COMPREHENSIONS):
            if child is not parent.for_in:
                scopes.append(parent)  # the element, or a dict comprehension's key and value
        elif isinstance(parent, cst.CompFor):
            outer = parent_of(parent)
            if not (child is parent.iter and isinstance(outer, _COMPREHENSIONS)):
                # The target, a condition, an inner loop: in the comprehension's scope.
                while not isinstance(outer, _COMPREHENSIONS) and outer is not None:
                    outer = parent_of(outer)
                if outer is not None:
                    scopes.append(outer)
                child, parent = outer, parent_of(outer) if outer is not None else None
                continue
        child, parent = parent, parent_of(parent)
    return scopes


def _statement_in(scope: cst.CSTNode, node: cst.CSTNode, parent_of: ParentOf) -> Optional[int]:
    """The index of the statement of `scope`'s body that holds `node` (`_PARAMETER` in a
    lambda's body or a comprehension's, which come after their parameters or first target),
    or None."""
    if isinstance(scope, cst.Lambda):
        return _PARAMETER + 1
    if not isinstance(scope, (cst.FunctionDef, cst.ClassDef)):
        return None  # a comprehension's inner loops: LibCST's count, not worth repeating
    body = scope.body
    child: Optional[cst.CSTNode] = node
    while child is not None and parent_of(child) is not body:
        child = parent_of(child)
    return next((index for index, statement in enumerate(body.body)
                 if statement is child), None) if child is not None else None


def _prefix(scopes: List[cst.CSTNode]) -> str:
    """LibCST's prefix of the names bound in `scopes[0]` (innermost first): `A.f.<locals>`."""
    parts: List[str] = []
    for scope in reversed(scopes):
        if isinstance(scope, cst.FunctionDef):
            parts += [scope.name.value, '<locals>']
        elif isinstance(scope, cst.ClassDef):
            parts.append(scope.name.value)
        elif isinstance(scope, cst.Lambda):
            parts.append('<locals>')
        else:
            parts.append('<comprehension>')
    return '.'.join(parts)


def last_name(node: ast.AST) -> str:
    """The last name of a name or attribute of Python's tree (`decode_jpeg` of
    `tf.image.decode_jpeg`, `ImportError`); '' for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ''


def first_line(statement: ast.stmt) -> int:
    """The first line of `statement`, its decorators' included."""
    return min([statement.lineno] + [decorator.lineno for decorator
                                     in getattr(statement, 'decorator_list', ())])


def top_indexes(statements: Sequence[ast.stmt],
                body: Iterable[cst.CSTNode]) -> Optional[List[int]]:
    """The index in LibCST's `body` of each top-level `ast` statement (a line of statements
    joined by `;` is one of LibCST's), or None if they do not pair."""
    tops: List[int] = []
    for index, statement in enumerate(body):
        count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        tops.extend([index] * count)
    return tops if len(tops) == len(statements) else None


class _Collector:
    """The module-level bindings `ModuleNames` models, and how many each name has."""

    def __init__(self) -> None:
        self.bindings: Dict[str, _Bindings] = collections.defaultdict(_Bindings)
        self.counts: collections.Counter = collections.Counter()

    def statement(self, statement: ast.stmt, top: int) -> None:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            self._import(statement, top)
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                self._target(target, top)
        elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
            self._target(statement.target, top)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._local(statement.name, top)
        elif isinstance(statement, (ast.For, ast.AsyncFor)):
            self._target(statement.target, top)
        # The statements of a block at module level are at module level too.
        for block in _blocks(statement):
            for inner in block:
                self.statement(inner, top)

    def _import(self, statement, top: int) -> None:
        if isinstance(statement, ast.ImportFrom):
            module = '.' * statement.level + (statement.module or '')
        else:
            module = ''
        found = _Import(module, tuple((alias.name, alias.asname) for alias in statement.names),
                        top)
        for alias in statement.names:
            if alias.asname is not None:
                bound = alias.asname
            elif alias.name == '*' or '.' in alias.name:
                continue  # binds nothing, or dotted names (left to LibCST: counted, unclear)
            else:
                bound = alias.name
            self.bindings[bound].imports.append(found)
            self.counts[bound] += 1

    def _target(self, target: ast.expr, top: int) -> None:
        if isinstance(target, ast.Name):
            self._local(target.id, top)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element, top)
        elif isinstance(target, ast.Starred):
            self._target(target.value, top)

    def _local(self, name: str, top: int) -> None:
        self.bindings[name].local_tops.append(top)
        self.counts[name] += 1


def _blocks(statement: ast.stmt) -> Iterator[List[ast.stmt]]:
    """The blocks of statements of a compound statement that stay in its scope."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return
    for field in ('body', 'orelse', 'finalbody'):
        block = getattr(statement, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for handler in getattr(statement, 'handlers', ()):
        yield handler.body
    for case in getattr(statement, 'cases', ()):
        yield case.body


def _module_scope_names(tree: ast.Module) -> Iterator[str]:
    """Every name bound in the module's own scope, once per binding (not in a function's, a
    class's, a lambda's or a comprehension's: those bind their names in their own scope)."""
    pending: List[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.id
        elif isinstance(node, ast.alias) and node.name != '*':
            yield node.asname or node.name.split('.', 1)[0]
        elif isinstance(node, ast.ExceptHandler) and node.name:
            yield node.name
        pending.extend(ast.iter_child_nodes(node))


def every_node(root: ast.AST,
               wanted: Optional[Callable[[ast.stmt], bool]] = None) -> List[ast.AST]:
    """`root` and every node under it, depth first: `ast.walk`'s nodes, in another order, 1.6
    times as fast (one loop over each node's fields; `ast.walk` runs two generators a node).
    `wanted`: where given, the statements under `root` it refuses are left out, with all
    their nodes."""
    found: List[ast.AST] = []
    pending = [root]
    while pending:
        node = pending.pop()
        if wanted is not None and isinstance(node, ast.stmt) and not wanted(node):
            continue
        found.append(node)
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                pending.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                pending.append(value)
    return found


def every_statement(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of `body` and of every block in them (no expression is walked: only
    statements hold statements)."""
    for statement in body:
        yield statement
        for field in ('body', 'orelse', 'finalbody', 'handlers', 'cases'):
            inner = getattr(statement, field, None)
            if isinstance(inner, list):
                for item in inner:
                    if isinstance(item, ast.stmt):
                        yield from every_statement([item])
                    else:  # an except handler, a match case: their bodies
                        yield from every_statement(item.body)


def _special_names(tree: ast.Module, code: str) -> Iterator[str]:
    """Names bound anywhere in ways `ModuleNames` leaves to LibCST: `global` and `nonlocal`,
    walrus targets (which bind outside a comprehension), patterns, type parameters and
    aliases, and dotted imports without `as`.

    Read from the statements alone (a walk of every node costs some 40 CPU microseconds a
    line), and from the expressions only where `code` holds a walrus."""
    for statement in every_statement(tree.body):
        if isinstance(statement, (ast.Global, ast.Nonlocal)):
            yield from statement.names
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            yield from (alias.name.split('.', 1)[0] for alias in statement.names
                        if alias.asname is None and '.' in alias.name)
        else:
            yield from _pattern_and_type_names(statement)
    if ':=' in code:
        yield from (node.target.id for node in ast.walk(tree)
                    if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name))


def _pattern_and_type_names(statement: ast.stmt) -> Iterator[str]:
    """The names a statement's patterns (`case [x, *rest]`), type parameters and type alias
    (3.12) bind."""
    roots: List[ast.AST] = [case.pattern for case in getattr(statement, 'cases', ())]
    roots += getattr(statement, 'type_params', ())
    if isinstance(statement, getattr(ast, 'TypeAlias', ())):
        roots.append(statement)
    for node in (node for root in roots for node in ast.walk(root)):
        if isinstance(node, ast.expr):
            continue
        for field in ('name', 'rest'):
            bound = getattr(node, field, None)
            if isinstance(bound, str):
                yield bound
            elif isinstance(bound, ast.Name):
                yield bound.id


#: In place of a statement's index in a scope's `_Bindings`: a parameter, or the target of a
#: comprehension's first loop (bound before its body); an inner loop's target.
_PARAMETER, _INNER_TARGET = -2, -3


class _ScopeCollector:
    """The names one function, class, lambda or comprehension binds in its own scope, read
    from its statements and targets (not from the scopes in it, which bind their own)."""

    def __init__(self) -> None:
        self.bindings: Dict[str, _Bindings] = collections.defaultdict(_Bindings)
        self.top = _PARAMETER  # the index in the scope's body of the statement read

    @classmethod
    def of(cls, scope: cst.CSTNode) -> Dict[str, _Bindings]:
        collector = cls()
        if isinstance(scope, (cst.FunctionDef, cst.Lambda)):
            collector.parameters(scope.params)
        if isinstance(scope, (cst.FunctionDef, cst.ClassDef)):
            for collector.top, statement in enumerate(scope.body.body):
                collector.statement(statement)
        elif isinstance(scope, _COMPREHENSIONS):
            for_in: Optional[cst.CompFor] = scope.for_in
            while for_in is not None:
                collector.target(for_in.target)
                collector.top = _INNER_TARGET
                for_in = for_in.inner_for_in
        return dict(collector.bindings)

    def parameters(self, parameters: cst.Parameters) -> None:
        every = [*parameters.posonly_params, *parameters.params, *parameters.kwonly_params]
        every += [star for star in (parameters.star_arg, parameters.star_kwarg)
                  if isinstance(star, cst.Param)]
        for parameter in every:
            self.local(parameter.name.value)

    def block(self, block: cst.BaseSuite) -> None:
        for statement in block.body:
            self.statement(statement)

    def statement(self, statement: cst.CSTNode) -> None:
        if isinstance(statement, cst.BaseSmallStatement):  # in a one-line suite
            self.small_statement(statement)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self.small_statement(small)
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            self.local(statement.name.value)
        else:
            self.compound(statement)

    def small_statement(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                self.target(target.target)
        elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
            self.target(small.target)
        elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
                small.names, cst.ImportStar):
            module = ''
            if isinstance(small, cst.ImportFrom):
                module = '.' * len(small.relative) + (
                    get_full_name_for_node(small.module) or '' if small.module else '')
            found = _Import(module, tuple((get_full_name_for_node(alias.name) or '',
                                           alias.evaluated_alias) for alias in small.names),
                            self.top)
            for alias in small.names:
                bound = alias.evaluated_alias or alias.evaluated_name
                if '.' not in bound:  # dotted ones are `_special_names`
                    self.bindings[bound].imports.append(dataclasses.replace(found, top=self.top))

    def compound(self, statement: cst.CSTNode) -> None:
        if isinstance(statement, cst.For):
            self.target(statement.target)
        elif isinstance(statement, cst.With):
            for item in statement.items:
                if item.asname is not None:
                    self.target(item.asname.name)
        elif isinstance(statement, (cst.Try, cst.TryStar)):
            for handler in statement.handlers:
                if handler.name is not None:
                    self.target(handler.name.name)
                self.block(handler.body)
        elif isinstance(statement, cst.Match):
            for case in statement.cases:
                self.block(case.body)
        for field in ('body', 'orelse', 'finalbody'):
            inner = getattr(statement, field, None)
            if isinstance(inner, cst.BaseSuite):
                self.block(inner)
            elif isinstance(inner, (cst.Else, cst.Finally)):
                self.block(inner.body)
            elif isinstance(inner, cst.If):  # elif
                self.compound(inner)

    def target(self, target: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self.local(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.target(element.value)
        elif isinstance(target, cst.StarredElement):
            self.target(target.value)

    def local(self, name: str) -> None:
        self.bindings[name].local_tops.append(self.top)
