"""LibCST's tree of a file whose top-level functions and classes are parsed when first read.

LibCST's parse is the largest single cost of a port (some 50 CPU microseconds a line: its
native parser builds, and validates, a Python object for each node), and most of a file is
top-level functions and classes that no pass visits: of the lines the passes parsed on three
Python 2 repositories, 56% were in top-level statements no pass walked into.

`parse_module` parses the file with each such statement (`_deferrable`) replaced by a stand-in
of as many lines (an `if` whose block holds one string, one token), and puts in the stand-in's
place a deferred node: an instance
of a subclass of the statement's own LibCST class (`FunctionDef`, `ClassDef`), with the same
name, whose fields parse the statement's text alone the first time one is read
(`Deferred.parsed`). Whatever reads the tree, a pass's walk, a visitor, LibCST's metadata, gets
what a parse of the whole file gives, and code that reads no field (a walk that skips the
statement, a rendering that copies its text) parses nothing. No reader needs to know: a miss is
a parse, not a difference (`tests/test_port_deferred.py` compares the trees, node for node,
on the corpus).

The text parsed alone is the file's for those lines; a statement is deferred only where it
parses alone to the node the whole file's parse has:

- after the file's first indented block, so that the file's indentation (LibCST's
  `default_indent`, read from the first block) is read from the same text; the statement's text
  is parsed after a block indented by it, for the same reason;
- the lines after it (comments, blank lines) are its own where LibCST gives them to its
  blocks (their footers), by their indentation: the stand-in's block is indented as the
  statement's first block, and its footer says how many are;
- of four lines or more (`_SHORTEST`), in a file with no form feed or carriage return; one
  whose lines (and those its blocks hold after it) reach the file's end without a newline is
  parsed at once.
"""

import ast
import dataclasses
from typing import Dict, List, Optional, Tuple, cast

import libcst as cst
from libcst.metadata.position_provider import WhitespaceInclusivePositionProvidingCodegenState

from slimdata.port.qualified import first_line, top_indexes

#: Statements of fewer lines are parsed with the file: a parse of its own costs more than the
#: lines saved (some 15 microseconds a call).
_SHORTEST = 4
#: The first lines of the code a deferred statement is parsed in: a block that sets the file's
#: indentation (`{indent}`), so that LibCST reads the statement's blocks as in the file.
_PRELUDE = 'if 1:\n{indent}pass\n'
_PRELUDE_LINES = _PRELUDE.count('\n')


class Deferred:
    """A top-level statement's node parsed from its text when a field is first read.

    Mixed into a subclass of the statement's LibCST class of the same name (`_DEFERRED_TYPES`),
    so that LibCST's visitors and `isinstance` take it for one. `leading_lines` (the comments
    and blank lines before it, parsed with the file) are read without a parse.
    """

    __slots__ = ()
    _text: str
    _line: int
    _indent: str
    _leading: Tuple[cst.EmptyLine, ...]
    _node: Optional[cst.CSTNode]

    def parsed(self) -> cst.CSTNode:
        """The statement's node as the whole file's parse gives it (parsed on first use)."""
        node = self._node
        if node is None:
            node = _parse_alone(self._text, self._indent, self._line, type(self).__mro__[2])
            node = node.with_changes(leading_lines=self._leading)
            object.__setattr__(self, '_node', node)
        return node

    @property
    def leading_lines(self) -> Tuple[cst.EmptyLine, ...]:
        return self._leading

    def _codegen_impl(self, state, **kwargs) -> None:
        if self._node is not None or isinstance(
                state, WhitespaceInclusivePositionProvidingCodegenState):
            # LibCST's rendering of its class, of this node (whose fields are the parsed
            # node's): the positions it records are this node's, as for the parsed one
            # (LibCST's positions of a statement start after its leading lines).
            super()._codegen_impl(state, **kwargs)  # type: ignore[misc]
            return
        for line in self._leading:
            line._codegen(state)
        # Its last newline a token of its own, as LibCST's statements end.
        state.add_token(self._text[:-1])
        state.add_token(self._text[-1])

    def with_changes(self, **changes) -> cst.CSTNode:
        return self.parsed().with_changes(**changes)

    def deep_clone(self) -> cst.CSTNode:
        return self.parsed().deep_clone()

    def deep_equals(self, other: cst.CSTNode) -> bool:
        return self.parsed().deep_equals(real_node(other))

    def __repr__(self) -> str:
        return f'Deferred({self.parsed()!r})'


def unparsed(node: cst.CSTNode) -> bool:
    """Whether `node` is a deferred statement not parsed yet."""
    return isinstance(node, Deferred) and node._node is None


def unparsed_text(node: cst.CSTNode) -> Optional[str]:
    """The code of `node`, a deferred statement not parsed yet (its leading lines left out);
    None for any other node."""
    return node._text if unparsed(node) else None  # type: ignore[attr-defined]


def real_node(node: cst.CSTNode) -> cst.CSTNode:
    """`node`, or the node a deferred one stands for (parsed)."""
    return node.parsed() if isinstance(node, Deferred) else node


def real_type(node: cst.CSTNode) -> type:
    """The LibCST class of `node` (of the node a deferred one stands for)."""
    kind = type(node)
    return kind.__mro__[2] if issubclass(kind, Deferred) else kind


def _deferred_type(kind: type) -> type:
    """A subclass of LibCST's `kind` named as it, whose fields are the parsed node's."""
    def forwarded(name: str) -> property:
        return property(lambda self: getattr(self.parsed(), name))
    namespace: Dict[str, object] = {field.name: forwarded(field.name)
                                    for field in dataclasses.fields(kind)
                                    if field.name != 'leading_lines'}
    namespace.update(__slots__=('_text', '_line', '_indent', '_leading', '_node'),
                     __module__=__name__, __qualname__=f'Deferred{kind.__name__}',
                     __doc__=f'A deferred `{kind.__name__}` (see `Deferred`).')
    # Named as LibCST's class: visitors find their `visit_<Node>` methods by the type's name.
    return type(kind.__name__, (Deferred, kind), namespace)


#: LibCST's class of each deferrable statement of Python's, and its deferred subclass.
_DEFERRED_TYPES: Dict[type, type] = {
    ast.FunctionDef: _deferred_type(cst.FunctionDef),
    ast.AsyncFunctionDef: _deferred_type(cst.FunctionDef),
    ast.ClassDef: _deferred_type(cst.ClassDef),
}
#: The deferred classes (a walk's statement types: `edits._STATEMENT_TYPES`).
DEFERRED_TYPES = frozenset(_DEFERRED_TYPES.values())
#: The top-level statements that may be deferred (Python's classes).
_DEFERRABLE = tuple(_DEFERRED_TYPES)


def _deferred(kind: type, text: str, line: int, indent: str,
              leading: Tuple[cst.EmptyLine, ...]) -> Deferred:
    node: Deferred = object.__new__(_DEFERRED_TYPES[kind])
    for name, value in (('_text', text), ('_line', line), ('_indent', indent),
                        ('_leading', leading), ('_node', None)):
        object.__setattr__(node, name, value)
    return node


def _parse_alone(text: str, indent: str, line: int, kind: type) -> cst.CSTNode:
    """The statement of `text` (lines from `line` of its file), parsed after a block indented
    by the file's `indent`. Raises LibCST's ParserSyntaxError at the file's line."""
    try:
        module = cst.parse_module(_PRELUDE.format(indent=indent) + text)
    except cst.ParserSyntaxError as error:
        raise cst.ParserSyntaxError(
            error.message, lines=text.split('\n'), raw_line=error.raw_line - _PRELUDE_LINES
            + line - 1, raw_column=error.raw_column) from error
    if len(module.body) != 2 or type(module.body[1]) is not kind or module.footer:
        raise ValueError(f'line {line}: a deferred statement parsed as another')
    return module.body[1]


def parse_module(code: str, tree: ast.Module) -> cst.Module:
    """LibCST's tree of `code` (whose Python tree is `tree`), its top-level functions and
    classes that may be (`_deferrable`) deferred."""
    spans = _deferrable(code, tree)
    if not spans:
        return cst.parse_module(code)
    lines = code.split('\n')
    stand_in = list(lines)
    for _, first, last, indent in spans:
        # An `if` of as many lines, its block indented as the statement's first block and
        # holding one string (one token): LibCST gives the lines after the statement to its
        # blocks or to the next statement by that indentation.
        stand_in[first - 1:last] = ['if 1:', indent + '"""', *[''] * (last - first - 2), '"""']
    module = cst.parse_module('\n'.join(stand_in))
    tops = top_indexes(tree.body, module.body)
    if tops is None:
        return cst.parse_module(code)
    body = list(module.body)
    for index, first, last, _ in spans:
        stand_in_node = body[tops[index]]
        if not (isinstance(stand_in_node, cst.If) and isinstance(
                stand_in_node.body, cst.IndentedBlock) and stand_in_node.orelse is None):
            return cst.parse_module(code)  # not the stand-in: the file is read whole
        # The lines after it that its blocks hold (comments and blank lines indented as they
        # are): the statement's text, before the next statement's.
        last += len(stand_in_node.body.footer)
        text = '\n'.join(lines[first - 1:last]) + '\n'
        node = _deferred(type(tree.body[index]), text, first, module.default_indent,
                         tuple(stand_in_node.leading_lines))
        # The file's end without a newline after them: parsed now (a deferred statement's
        # text ends with its newline).
        body[tops[index]] = cast(cst.BaseCompoundStatement,
                                 node if last < len(lines) else node.parsed())
    return module.with_changes(body=body)


def _deferrable(code: str, tree: ast.Module) -> List[Tuple[int, int, int, str]]:
    """(index in `tree.body`, first line, last line, the indentation of its first block) of
    each top-level function or class that may be deferred (see the module's docstring)."""
    if '\f' in code or '\r' in code:
        return []
    statements = tree.body
    lines = code.split('\n')
    start = _after_first_block(statements, lines)
    if start is None:
        return []
    found = []
    for index in range(start, len(statements)):
        statement = statements[index]
        if not isinstance(statement, _DEFERRABLE):
            continue
        first, last = first_line(statement), statement.end_lineno or statement.lineno
        indent = _block_indent(statement, lines)
        # (`last < len(lines)`: a newline ends its last line.)
        if last - first + 1 >= _SHORTEST and last < len(lines) and indent is not None:
            found.append((index, first, last, indent))
    return found


def _block_indent(statement: ast.stmt, lines: List[str]) -> Optional[str]:
    """The indentation of the first line of `statement`'s first block, or None where it has
    none (a simple statement, `match`) or that block is on the statement's line
    (`def f(): return (...)`)."""
    block = getattr(statement, 'body', None)
    if not isinstance(block, list):
        return None
    first = block[0]
    indent = lines[first.lineno - 1][:first.col_offset]
    return None if indent.strip() else indent


def _after_first_block(statements: List[ast.stmt], lines: List[str]) -> Optional[int]:
    """The index of the statement after the first one whose first block is indented (the one
    LibCST reads the file's indentation from, or one after it), or None."""
    for index, statement in enumerate(statements):
        if _block_indent(statement, lines) is not None:
            return index + 1
    return None
