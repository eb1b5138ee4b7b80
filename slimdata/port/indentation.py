"""The indentation stage: tabs mixed with spaces, made what Python 3 and LibCST read.

A tab in indentation moves to the next multiple of 8 columns (Python 2's reading, and Python
3's when it accepts the file). Two kinds of file mix tabs and spaces in a way the passes cannot
read, and for both, expanding the indentation's tabs to 8-column stops gives the same blocks:

- a Python 2 file (marked by the Python 2 stage) that Python 3 refuses with TabError: Python 2
  indented a block by a tab on one line and 8 spaces on the next (TextBoxes-TensorFlow's
  `processing/image_processing2.py`); Python 3 refuses what it cannot read both with a tab of
  8 and of 1 column;
- valid Python that LibCST's tokenizer refuses ("no matching outer block for dedent"), being
  stricter than Python's on some mixes: it keeps each block's indentation as the text after
  that of the block around it, so a block's must begin with it, as written (`\t` then `    `
  inside ` \t` is refused). Python's tree tells where each block begins, so LibCST parses
  the file first (to be sure) only where a block's indentation does not begin so
  (`libcst_may_refuse`): a parse of the whole file costs more than the statements the passes
  read of it.

Only then, each line's leading tabs are expanded; lines that continue a string begun on an
earlier line are content and left as they are. Other files are not touched.
"""

import ast
import io
import re
import tokenize
from typing import Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from slimdata.port.edits import CHANGED, Context, Note
from slimdata.port.qualified import first_line

#: Python 2's tab stops (its tokenizer's `tabsize`), the columns Python 3 reads a tab as too.
TAB_STOP = 8

_TAB_INDENT = re.compile(r'^[ ]*\t', re.MULTILINE)
_SPACE_INDENT = re.compile(r'^\t* ', re.MULTILINE)
#: What `libcst_may_refuse` leaves to LibCST: a line starting with a backslash (LibCST's
#: tokenizer takes it for a blank line), a form feed (it resets a line's columns), and line
#: breaks other than `\n`.
_READ_OTHERWISE = re.compile(r'^[ \t]*\\|[\f\r\v\x1c-\x1e\x85\u2028\u2029]', re.MULTILINE)


def tab_error_line(code: str, context: Optional[Context] = None) -> int:
    """The line of Python 3's TabError in `code`, or 0 if it has none (nor when a stage before
    left Python's tree of the same code in `context`, where the tree parsed is left too)."""
    if context is not None and context.python_tree_of(code) is not None:
        return 0
    try:
        tree = ast.parse(code)
    except TabError as error:
        return error.lineno or 1
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 0
    if context is not None:
        context.python_tree = (code, tree)
    return 0


def libcst_refusal_line(code: str, context: Optional[Context] = None) -> int:
    """The line at which LibCST's tokenizer refuses `code` (Python accepts it), or 0; the tree
    it parses is left in `context` for the LibCST passes (a parse is a fifth of their cost)."""
    try:
        module = cst.parse_module(code)
    except cst.ParserSyntaxError as error:
        return error.raw_line or 1 if 'tokenizer error' in str(error) else 0
    if context is not None:
        context.libcst_module = (code, module)
    return 0


def libcst_may_refuse(code: str, tree: ast.Module) -> bool:
    """Whether LibCST's tokenizer may refuse `code`, whose tree Python parsed (`tree`): a
    block's indentation, where it begins, does not begin with that of the block around it as
    written (LibCST's one rule beyond Python's), or `_READ_OTHERWISE`. False: it reads it."""
    return bool(_READ_OTHERWISE.search(code)) or not _nested_as_written(
        tree.body, '', code.split('\n'))


def _nested_as_written(body: Sequence[ast.stmt], outer: str, lines: List[str]) -> bool:
    """Whether each block in the statements of `body` (at any depth) that begins on a line of
    its own is indented by `outer` (the indentation of `body`'s block) and more, as written."""
    for statement in body:
        for block in _blocks(statement, lines):
            first = block[0]
            line = lines[first_line(first) - 1]
            indent = line[:len(line) - len(line.lstrip(' \t'))]
            own_line = (line[len(indent):].startswith('@') if getattr(first, 'decorator_list', None)
                        else len(indent) == first.col_offset)
            if not own_line:
                continue  # on its header's line (`if x: y`): no block in it
            if not indent.startswith(outer) or not _nested_as_written(block, indent, lines):
                return False
    return True


def _blocks(statement: ast.stmt, lines: List[str]) -> Iterator[List[ast.stmt]]:
    """The blocks of `statement` (an `elif`'s, which is not a block: its own)."""
    for field in ('body', 'orelse', 'finalbody'):
        block = getattr(statement, field, None)
        if not block or not isinstance(block, list):
            continue
        if (field == 'orelse' and isinstance(block[0], ast.If)
                and lines[block[0].lineno - 1].lstrip(' \t').startswith('elif')):
            yield from _blocks(block[0], lines)
        else:
            yield block
    for clause in (*getattr(statement, 'handlers', ()), *getattr(statement, 'cases', ())):
        yield clause.body


class IndentationStage:
    """Expands the indentation's tabs where Python 3 (in a Python 2 file) or LibCST cannot
    read the file's mix of tabs and spaces."""

    NAME = 'indentation'

    @staticmethod
    def has_work(code: str, context: Context) -> bool:
        # Cheap: both kinds of indentation in the file. The parses are left to `port`.
        return bool(_TAB_INDENT.search(code) and _SPACE_INDENT.search(code))

    @staticmethod
    def port(code: str, context: Context) -> Tuple[str, List[Note]]:
        tab_error = tab_error_line(code, context)
        line = tab_error if context.python_2 else 0
        if line:
            why = "Python 2's tab stops (Python 3 refuses tabs and spaces mixed)"
        else:
            tree = context.python_tree_of(code) if tab_error == 0 else None
            line = libcst_refusal_line(code, context) if tree is None or libcst_may_refuse(
                code, tree) else 0
            why = 'as Python reads them (LibCST cannot parse this mix of tabs and spaces)'
        if not line:
            return code, []
        inside = _lines_inside_strings(code)
        lines = code.splitlines(keepends=True)
        for number, text in enumerate(lines, start=1):
            body = text.lstrip(' \t')
            indent = text[:len(text) - len(body)]
            if '\t' in indent and number not in inside:
                lines[number - 1] = indent.expandtabs(TAB_STOP) + body
        return ''.join(lines), [Note(CHANGED, line, f'tabs in indentation expanded to '
                                                    f'{TAB_STOP} columns, {why}')]


def _lines_inside_strings(code: str) -> Set[int]:
    """The lines (1-based) that continue a string token begun on an earlier line."""
    inside: Set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.STRING and token.end[0] > token.start[0]:
            inside.update(range(token.start[0] + 1, token.end[0] + 1))
    return inside
