"""Python 2's indentation with tabs and spaces mixed, made Python 3's.

Python 2 read a tab in indentation as a move to the next multiple of 8 columns, so a block
could be indented by a tab on one line and 8 spaces on the next (TextBoxes-TensorFlow's
`processing/image_processing2.py`). Python 3 refuses such a file (TabError: the meaning
would depend on the tab's width). In a file the Python 2 stage marked, and only when Python 3
refuses it so, each line's leading tabs are expanded to Python 2's 8-column stops: the blocks
Python 2 read, exactly. Lines inside a string that spans lines are content and left as they
are.
"""

import ast
import io
import tokenize
from typing import List, Set, Tuple

from slimdata.port.edits import CHANGED, Context, Note

#: Python 2's tab stops (its tokenizer's `tabsize`).
TAB_STOP = 8


def tab_error_line(code: str) -> int:
    """The line of Python 3's TabError in `code`, or 0 if it has none."""
    try:
        ast.parse(code)
    except TabError as error:
        return error.lineno or 1
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 0
    return 0


class TabsStage:
    """Expands the indentation's tabs of a Python 2 file Python 3 refuses for them."""

    NAME = 'python 2 tabs'

    @classmethod
    def has_work(cls, code: str, context: Context) -> bool:
        return context.python_2 and '\t' in code and tab_error_line(code) > 0

    @classmethod
    def port(cls, code: str, context: Context) -> Tuple[str, List[Note]]:
        first = tab_error_line(code)
        if not (context.python_2 and first):  # has_work only saves time
            return code, []
        inside = _lines_inside_strings(code)
        lines = code.splitlines(keepends=True)
        for number, line in enumerate(lines, start=1):
            body = line.lstrip(' \t')
            indent = line[:len(line) - len(body)]
            if '\t' in indent and number not in inside:
                lines[number - 1] = indent.expandtabs(TAB_STOP) + body
        return ''.join(lines), [Note(CHANGED, first, 'tabs in indentation expanded to 8 '
                                                     "columns, Python 2's tab stops (Python 3 "
                                                     'refuses tabs and spaces mixed)')]


def _lines_inside_strings(code: str) -> Set[int]:
    """The lines (1-based) that continue a string token begun on an earlier line."""
    inside: Set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.STRING and token.end[0] > token.start[0]:
            inside.update(range(token.start[0] + 1, token.end[0] + 1))
    return inside
