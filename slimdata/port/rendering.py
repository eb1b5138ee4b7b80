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
statement beside it is rendered and must be the text between the seams. Where anything does
not hold, the whole module is rendered, as LibCST does.

The passes of one file share their renderings (`Renderings`): a statement rendered for one
pass, a new one or a neighbour checked at a seam, is the same node in the next pass's tree
when that pass leaves it, and its code the same text.
"""

from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst

from slimdata.port.facts import Span


class Renderings:
    """The code of top-level statements rendered so far, by node (a statement's code does
    not depend on its neighbours, only on its module's indentation and line end)."""

    def __init__(self) -> None:
        self._style: Tuple[str, str] = ('', '')
        self._codes: Dict[int, Tuple[cst.CSTNode, str]] = {}  # the node kept: its id stays its

    def code_of(self, module: cst.Module, statement: cst.CSTNode) -> str:
        style = (module.default_indent, module.default_newline)
        if style != self._style:
            self._style, self._codes = style, {}
        found = self._codes.get(id(statement))
        if found is None:
            found = self._codes[id(statement)] = (statement, module.code_for_node(statement))
        return found[1]

    def has(self, statement: cst.CSTNode) -> bool:
        return id(statement) in self._codes


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
    seams = _Seams(before, lines, starts, renderings)
    old_index = {id(statement): index for index, statement in enumerate(before.body)}
    pieces = [''.join(after.code_for_node(line) for line in after.header)]
    kept = 0  # the old statements before this index are used or dropped
    for statement in after.body:
        index = old_index.get(id(statement))
        if index is None or index < kept:
            if not seams.hold(kept):  # where the new text goes
                return None
            pieces.append(renderings.code_of(after, statement))
            continue
        # Old statements kept..index-1 were replaced or removed: the seams around them.
        if not all(seams.hold(seam) for seam in range(kept, index + 1)):
            return None
        pieces.append(''.join(lines[starts[index]:starts[index + 1]]))
        kept = index + 1
    if not all(seams.hold(seam) for seam in range(kept, len(before.body) + 1)):
        return None
    pieces.append(''.join(after.code_for_node(line) for line in after.footer))
    stitched = ''.join(pieces)
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


class _Seams:
    """Checks the lines where the old statements' texts start (`starts`, by index)."""

    def __init__(self, before: cst.Module, lines: List[str], starts: List[int],
                 renderings: Renderings) -> None:
        self.before, self.lines, self.starts = before, lines, starts
        self.renderings = renderings
        self.rendered: Set[int] = set()  # the statements found where they were taken to be

    def hold(self, seam: int) -> bool:
        """Whether old statement `seam` starts where it was taken to (the end of the last
        one: the footer's start, its line count from the end, LibCST's own; so is the first
        one's start, the header's end). A statement beside the seam, one rendered already or
        else the smaller, must be the text from its start to the next one's."""
        if seam in (0, len(self.before.body)):
            return True
        after, before = seam, seam - 1
        if not {after, before} & self.rendered:
            checked = min((after, before), key=self._cost)
            if not self._rendered_as_taken(checked):
                return False
        return True

    def _cost(self, index: int) -> int:
        """What rendering statement `index` costs: nothing when rendered already, else its
        length in lines."""
        if self.renderings.has(self.before.body[index]):
            return 0
        return self.starts[index + 1] - self.starts[index]

    def _rendered_as_taken(self, index: int) -> bool:
        text = ''.join(self.lines[self.starts[index]:self.starts[index + 1]])
        if self.renderings.code_of(self.before, self.before.body[index]) != text:
            return False
        self.rendered.add(index)
        return True
