"""The indentation stage: tabs mixed with spaces that Python reads but LibCST's tokenizer does not.

Python 3 accepts a mix of tabs and spaces in indentation when the blocks come out the same with
a tab worth 8 columns and with a tab worth 1 (else `TabError`). LibCST's tokenizer is stricter
on some such mixes ("no matching outer block for dedent"), so a valid file would be refused
whole. This stage, on files that mix both, asks LibCST first; only when it refuses the file
does it rewrite the indentation of each statement line with spaces, a tab taken as 8 columns
(Python's own reading, so the blocks stay the same), and report it. Strings, comments and
continuation lines are left as they are.
"""

import io
import re
import tokenize
from typing import List, Set, Tuple

import libcst as cst

from slimdata.port.edits import CHANGED, Context, Note

_TAB_INDENT = re.compile(r'^[ ]*\t', re.MULTILINE)
_SPACE_INDENT = re.compile(r'^\t* ', re.MULTILINE)
#: Tokens after which a new statement line starts.
_LINE_ENDS = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)


class IndentationStage:
    """Expands the tabs of statement indentation where LibCST cannot read the file's mix."""

    NAME = 'indentation'

    @staticmethod
    def has_work(code: str, context: Context) -> bool:
        return bool(_TAB_INDENT.search(code) and _SPACE_INDENT.search(code))

    @staticmethod
    def port(code: str, context: Context) -> Tuple[str, List[Note]]:
        try:
            cst.parse_module(code)
            return code, []  # LibCST reads this mix: nothing to change
        except cst.ParserSyntaxError as error:
            if 'tokenizer error' not in str(error):
                raise  # not about indentation: the pipeline reports it
        starts = _statement_lines(code)
        lines = code.splitlines(keepends=True)
        changed = []
        for number in sorted(starts):
            line = lines[number - 1]
            body = line.lstrip(' \t')
            indentation = line[:len(line) - len(body)]
            if '\t' in indentation:
                lines[number - 1] = indentation.expandtabs(8) + body
                changed.append(number)
        if not changed:
            return code, []
        plural = 's' if len(changed) > 1 else ''
        note = Note(CHANGED, changed[0],
                    f'indentation of {len(changed)} line{plural} (line{plural} '
                    f'{_ranges(changed)}): tabs as 8 spaces, as Python reads them (LibCST '
                    'cannot parse this mix of tabs and spaces)')
        return ''.join(lines), [note]


def _statement_lines(code: str) -> Set[int]:
    """The numbers of the lines on which a statement starts (not continuation lines, nor lines
    inside a string)."""
    starts: Set[int] = set()
    at_line_start = True
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type in _LINE_ENDS:
            at_line_start = True
            continue
        if token.type in (tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER):
            continue
        if at_line_start:
            starts.add(token.start[0])
            at_line_start = False
    return starts


def _ranges(numbers: List[int]) -> str:
    """'3-5, 9' for [3, 4, 5, 9]."""
    spans: List[List[int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return ', '.join(str(a) if a == b else f'{a}-{b}' for a, b in spans)
