"""A tree's code after a pass, rendering only the top-level statements the pass changed.

LibCST renders a module by walking every node (some 45 CPU microseconds a line), and the port
needs the code after every pass that changed something (the next pass's trigger, the report's
line numbers). A pass leaves the statements it does not change as the very same nodes when it
skips them (`PortTransformer.statement_filter`), and a top-level statement's code does not
depend on its neighbours: it is the code it had. So the code after a pass is the code before
it, with the text of each statement the pass replaced, removed or added rendered alone.

Where each statement's text starts comes from Python's parser (`TreeFacts.spans`: its first
line, decorators included) less its leading blank and comment lines, which LibCST counts as
the statement's own. Every seam between old text and newly rendered text is checked: the old
statement beside it is rendered and must be the text between the seams. (Between two old
statements kept as they were, the text goes on from one to the next wherever the seam is: no
check.) Where anything does not hold, the whole module is rendered, as LibCST does.

A changed statement whose indented body is the last thing it renders (a `def`, a `class`, a
`with`, a `for`, `while` or `if` without `else`) and whose other parts are the very nodes they
were (the pass changed statements inside it only) is stitched the same way within its body:
its text up to its first inner statement and after its last is kept, and its inner
statements are copied, or rendered alone at their indentation. Both ends of such a body are
checked too. A pass that changes one line of a long function renders that line.

The passes of one file share their renderings (`Renderings`): a statement rendered for one
pass, a new one or a neighbour checked at a seam, is the same node in the next pass's tree
when that pass leaves it, and its code the same text.
"""

import dataclasses
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst

from slimdata.port.deferred import real_type, unparsed
from slimdata.port.facts import Span

#: The indentation of each block around a statement, outermost first (an `IndentedBlock`'s
#: `indent`: None for the module's default); () at module level.
Indents = Tuple[Optional[str], ...]


class Renderings:
    """The code of statements rendered so far, whole or their headers (`_header_code`), by
    node and indentation (a statement's code does not depend on its neighbours, only on its
    indentation and the module's indentation and line end)."""

    def __init__(self) -> None:
        self._style: Tuple[str, str] = ('', '')
        # By (id, indentation, header only); the node is kept: its id stays its.
        self._codes: Dict[Tuple[int, Indents, bool], Tuple[cst.CSTNode, str]] = {}

    def code_of(self, module: cst.Module, statement: cst.CSTNode, indents: Indents = ()) -> str:
        return self._cached(module, statement, indents, False,
                            lambda: _rendered(module, statement, indents))

    def header_of(self, module: cst.Module, statement: cst.CSTNode, body: cst.IndentedBlock,
                  indents: Indents) -> str:
        """The code of `statement` up to its indented `body`'s first statement."""
        return self._cached(module, statement, indents, True,
                            lambda: _header_code(module, statement, body, indents))

    def _cached(self, module: cst.Module, statement: cst.CSTNode, indents: Indents,
                header: bool, render: Callable[[], str]) -> str:
        style = (module.default_indent, module.default_newline)
        if style != self._style:
            self._style, self._codes = style, {}
        key = (id(statement), indents, header)
        found = self._codes.get(key)
        if found is None:
            found = self._codes[key] = (statement, render())
        return found[1]

    def has(self, statement: cst.CSTNode, indents: Indents = ()) -> bool:
        return (id(statement), indents, False) in self._codes


def _rendered(module: cst.Module, statement: cst.CSTNode, indents: Indents) -> str:
    """The code of `statement` in blocks indented by `indents`: rendered inside one `if _:`
    per block (LibCST indents a statement by the blocks it renders it in), whose lines are
    then dropped."""
    wrapped = statement
    for indent in reversed(indents):
        wrapped = cst.If(test=cst.Name('_'), body=cst.IndentedBlock(
            body=[wrapped], indent=indent))  # type: ignore[list-item]
    code = module.code_for_node(wrapped)
    for _ in indents:
        code = code[code.index('\n') + 1:]
    return code


def code_after_pass(before: cst.Module, code: str, spans: Mapping[int, Span],
                    after: cst.Module, renderings: Optional[Renderings] = None) -> str:
    """The code of `after`, the tree a pass made of `before` (whose code is `code`, and whose
    statements' lines are `spans`, by the id of LibCST's node). `renderings`: those of the
    passes before on the same file, which this one adds to."""
    stitched = _stitched(before, code, spans, after, renderings or Renderings())
    return stitched if stitched is not None else after.code


def _stitched(before: cst.Module, code: str, spans: Mapping[int, Span],
              after: cst.Module, renderings: Renderings) -> Optional[str]:
    if not (before.has_trailing_newline == after.has_trailing_newline and after.body
            and before.default_newline == after.default_newline == '\n' and '\r' not in code
            and before.default_indent == after.default_indent):
        return None
    if not before.has_trailing_newline:
        # LibCST renders the module and drops its last token, the newline ending its last
        # line: the same here, on the code with that newline.
        code += '\n'
    # Lines as Python and LibCST count them (str.splitlines also splits at \f, \x1c, ...).
    lines = [line + '\n' for line in code.split('\n')[:-1]]
    starts = _starts(before, spans, len(lines))
    if starts is None:
        return None
    body = _Stitcher(after, lines, spans, renderings).block(before.body, after.body, starts, ())
    if body is None:
        return None
    stitched = ''.join([*(after.code_for_node(line) for line in after.header), body,
                        *(after.code_for_node(line) for line in after.footer)])
    return stitched if after.has_trailing_newline else stitched[:-1]


def _starts(before: cst.Module, spans: Mapping[int, Span], line_count: int
            ) -> Optional[List[int]]:
    """The index of the line each top-level statement's text starts at (its leading lines
    first), and where the footer starts; None where Python's lines do not say."""
    starts = []
    for statement in before.body:
        span = spans.get(id(statement))
        if span is None:
            return None
        starts.append(span.first - 1 - len(_leading_lines(statement)))
    starts.append(line_count - len(before.footer))
    if starts[0] != len(before.header) or any(
            later <= earlier for earlier, later in zip(starts, starts[1:])):
        return None
    return starts


def _leading_lines(statement: cst.CSTNode) -> Sequence[cst.EmptyLine]:
    return getattr(statement, 'leading_lines', ())


#: Compound statements whose indented body is the last thing they render (`For`, `While`
#: and `If` without `else`).
_BODY_LAST = (cst.FunctionDef, cst.ClassDef, cst.With, cst.For, cst.While, cst.If)


class _Stitcher:
    """The code of the blocks of `after` (the tree a pass made), from the text of the old
    statements (`lines`, where each starts by `spans`) and the new ones rendered."""

    def __init__(self, after: cst.Module, lines: List[str], spans: Mapping[int, Span],
                 renderings: Renderings) -> None:
        self.after, self.lines, self.spans, self.renderings = after, lines, spans, renderings

    def block(self, old: Sequence[cst.CSTNode], new: Sequence[cst.CSTNode], starts: List[int],
              indents: Indents) -> Optional[str]:
        """The code of the statements `new` that replace `old`, whose texts start at `starts`
        (one more: where the last one ends), in blocks indented by `indents`."""
        seams = _Seams(self, old, starts, indents)
        old_index = {id(statement): index for index, statement in enumerate(old)}
        pieces: List[str] = []
        kept = 0  # the old statements before this index are used or dropped
        # Whether the last piece is old statement `kept - 1`'s text as it was: then the seam
        # after it needs no check before the next one's text, which goes on from the same
        # line wherever the seam is (the two texts are one stretch of the old lines).
        after_copy = False
        for statement in new:
            index = old_index.get(id(statement))
            if index is None and kept < len(old):  # new: the old one there changed inside?
                inner = self._within(old[kept], statement, starts[kept], starts[kept + 1],
                                     indents)
                if inner is not None:
                    if not seams.hold(kept):
                        return None
                    pieces.append(inner)
                    kept, after_copy = kept + 1, False
                    continue
            if index is None or index < kept:
                if not seams.hold(kept):  # where the new text goes
                    return None
                pieces.append(self.renderings.code_of(self.after, statement, indents))
                after_copy = False
                continue
            # Old statements kept..index-1 were replaced or removed: the seams around them.
            if not (after_copy and index == kept) and not all(
                    seams.hold(seam) for seam in range(kept, index + 1)):
                return None
            pieces.append(''.join(self.lines[starts[index]:starts[index + 1]]))
            kept, after_copy = index + 1, True
        if not all(seams.hold(seam) for seam in range(kept, len(old) + 1)):
            return None
        return ''.join(pieces)

    def _within(self, old: cst.CSTNode, new: cst.CSTNode, start: int, end: int,
                indents: Indents) -> Optional[str]:
        """The code of `new`, `old` (whose text is lines `start`..`end`) changed in its body
        only, stitched within that body; None where it is not so."""
        bodies = _changed_bodies(old, new)
        if bodies is None:
            return None
        old_body, new_body = bodies
        starts = []
        for statement in old_body.body:
            span = self.spans.get(id(statement))
            if span is None:
                return None
            starts.append(span.first - 1 - len(_leading_lines(statement)))
        starts.append(end - len(old_body.footer))
        if not start < starts[0] or any(later <= earlier
                                        for earlier, later in zip(starts, starts[1:])):
            return None
        header = self.renderings.header_of(self.after, old, old_body, indents)
        if header != ''.join(self.lines[start:starts[0]]):
            return None  # the body does not start where Python's lines put it
        body = self.block(old_body.body, new_body.body, starts, (*indents, old_body.indent))
        if body is None:
            return None
        return (''.join(self.lines[start:starts[0]]) + body
                + ''.join(self.lines[starts[-1]:end]))


def _indented_body(statement: cst.CSTNode) -> Optional[cst.IndentedBlock]:
    """The indented body `statement` renders last (`_BODY_LAST`), with statements in it; or
    None (and for a deferred statement not parsed yet, which renders as its text: no header
    to check apart, nothing to stitch within, no parse for either)."""
    if not isinstance(statement, _BODY_LAST) or unparsed(statement) or getattr(
            statement, 'orelse', None) is not None:
        return None
    body = statement.body
    return body if isinstance(body, cst.IndentedBlock) and body.body else None


def _header_code(module: cst.Module, statement: cst.CSTNode, body: cst.IndentedBlock,
                 indents: Indents) -> str:
    """The code of `statement` up to the first statement of its indented `body` (its leading
    lines, decorators and own lines), rendered with a `pass` for a body."""
    code = _rendered(module, statement.with_changes(body=body.with_changes(
        body=[cst.SimpleStatementLine([cst.Pass()])], footer=[])), indents)
    return code[:code.rstrip('\n').rfind('\n') + 1]


def _changed_bodies(old: cst.CSTNode, new: cst.CSTNode
                    ) -> Optional[Tuple[cst.IndentedBlock, cst.IndentedBlock]]:
    """The indented bodies of `old` and `new` when `new` is `old` with other statements in
    that body, which is the last thing it renders, every other part the very same node; else
    None."""
    old_body, new_body = _indented_body(old), _indented_body(new)
    if real_type(new) is not real_type(old) or old_body is None or new_body is None:
        return None
    if not (old_body.indent == new_body.indent and _same(old_body.header, new_body.header)
            and _same(old_body.footer, new_body.footer)):
        return None
    if not all(_same(getattr(old, field.name), getattr(new, field.name))
               for field in dataclasses.fields(new) if field.name != 'body'):
        return None
    return old_body, new_body


def _same(old: object, new: object) -> bool:
    """The very same node, or sequences of the very same nodes (LibCST builds a new tuple of
    the nodes it walks), or equal values (strings, None)."""
    if old is new:
        return True
    if isinstance(old, (tuple, list)) and isinstance(new, (tuple, list)):
        return len(old) == len(new) and all(a is b for a, b in zip(old, new))
    return not isinstance(old, cst.CSTNode) and old == new


class _Seams:
    """Checks the lines where the old statements of a block start (`starts`, by index, and
    where the last one ends)."""

    def __init__(self, stitcher: _Stitcher, old: Sequence[cst.CSTNode], starts: List[int],
                 indents: Indents) -> None:
        self.stitcher, self.old, self.starts, self.indents = stitcher, old, starts, indents
        # The seams found where they were taken to be: the first one's start and the last
        # one's end are known (LibCST's header and footer of the module; in a body, the end of
        # its statement's header, checked by `_Stitcher._within`, and its footer's start,
        # LibCST's count of its lines from the end of the statement's text).
        self.held: Set[int] = {0, len(old)}

    def hold(self, seam: int) -> bool:
        """Whether old statement `seam` starts where it was taken to: the statement before it
        (rendered whole) ends there, or the statement after it starts there (rendered whole,
        or the header of a compound one), whichever is cheapest."""
        if seam in self.held:
            return True
        checks = [(self._cost(seam - 1), seam - 1, False), (self._cost(seam), seam, False)]
        body = _indented_body(self.old[seam])
        if body is not None:
            checks.append((_HEADER_COST, seam, True))
        _, index, header_only = min(checks)
        if header_only and body is not None:
            header = self.stitcher.renderings.header_of(self.stitcher.after, self.old[index],
                                                        body, self.indents)
            text = ''.join(self.stitcher.lines[self.starts[index]:
                                               self.starts[index] + header.count('\n')])
            if header != text:
                return False
            self.held.add(index)
            return True
        text = ''.join(self.stitcher.lines[self.starts[index]:self.starts[index + 1]])
        if self.stitcher.renderings.code_of(self.stitcher.after, self.old[index],
                                            self.indents) != text:
            return False
        self.held.update((index, index + 1))
        return True

    def _cost(self, index: int) -> int:
        """What rendering statement `index` costs: nothing when rendered already, else its
        length in lines."""
        if self.stitcher.renderings.has(self.old[index], self.indents) or unparsed(
                self.old[index]):
            return 0
        return self.starts[index + 1] - self.starts[index]


#: What checking a compound statement's start by its header costs, against rendering a
#: statement of so many lines whole.
_HEADER_COST = 3
