"""The statements of a Python 2 file that 2to3's fixers need to see; the others set aside.

fissix's parser is pure Python: parsing a file costs four fifths of the Python 2 stage (some
200 CPU microseconds a line), while the fixers act on a fifth of its lines or less (a
`print`, an `xrange`, an `except E, e`). So the stage hands fissix a copy of the file in which
each run of sibling statements none of whose lines the fixers need (`set_aside`) is one
placeholder line, `<indent>pass  # _slimdata_set_aside_<n>_`, followed by blank lines to the
run's old length: the copy keeps every line number (the fixers' notes stay right) and its
blocks stay blocks. A `pass`, its number in a comment: fissix's parser takes a name through
some fifteen grammar rules and a `pass` through three (measured on seglink: the parser's
steps halved, against a placeholder name). After the fixers, `put_back` puts each run set
aside back in place of its placeholder, as it was.

Statements are found on the text, with no parser (Python 3's cannot read a `print` statement,
fissix's is the cost saved): logical lines by a scan of strings, comments, brackets and line
ends (`_SCAN`), blocks by indentation, a compound statement with its decorators and its
clauses (`elif`, `else`, `except`, `finally`). Whatever that scan gets wrong cannot hide a
line the fixers need (a statement is set aside only when none of its lines is needed); it can
only make a copy fissix cannot parse, or one whose placeholders the fixers moved, and then
`put_back` refuses it and the caller runs the fixers on the whole file.
"""

import dataclasses
import re
from typing import Callable, List, Optional, Sequence, Tuple

# The tokens that decide where a logical line ends: strings (whatever their prefix: the quote
# decides), comments, brackets, a backslash continuing a line, line ends.
_SCAN = re.compile(r"""
      (?P<string> '''(?:\\[\s\S]|[^\\])*?''' | \"\"\"(?:\\[\s\S]|[^\\])*?\"\"\"
                | '(?:\\[\s\S]|[^\\'\n])*' | "(?:\\[\s\S]|[^\\"\n])*" )
    | \#[^\n]*
    | (?P<open> [(\[{] ) | (?P<close> [)\]}] )
    | \\\n
    | (?P<end> \n )
""", re.VERBOSE)
_CLAUSES = frozenset(('elif', 'else', 'except', 'finally'))
_FIRST_WORD = re.compile(r'[ \t\f]*(@|\w+)')
_PLACEHOLDER = re.compile(r'([ \t\f]*)pass  # _slimdata_set_aside_(\d+)_\n')


@dataclasses.dataclass
class LogicalLine:
    """Lines `first`..`last` (1-based) of one logical line, indented to `column`."""
    first: int
    last: int
    column: int
    word: str  # its first word ('@' for a decorator)


@dataclasses.dataclass
class Statement:
    """A statement on lines `first`..`last`: its own lines (`headers`: each logical line of a
    compound statement's decorators and clauses) and the statements of its blocks."""
    first: int
    last: int
    headers: List[LogicalLine]
    blocks: List[List['Statement']]


def logical_lines(code: str) -> List[LogicalLine]:
    """The logical lines of `code` (which ends with a line end), blank and comment lines left
    out."""
    found: List[LogicalLine] = []
    line, depth, first = 1, 0, 0  # first: the current logical line's first line, 0: none yet
    line_starts = [0] + [match.end() for match in re.finditer('\n', code)]
    position = 0
    for match in _SCAN.finditer(code):
        if not first and code[position:match.start()].strip(' \t\f\n\\'):
            first = line
        kind = match.lastgroup
        if kind == 'string':
            first = first or line
            line += match.group().count('\n')
        elif kind == 'open':
            first, depth = first or line, depth + 1
        elif kind == 'close':
            first, depth = first or line, max(depth - 1, 0)
        elif kind == 'end':
            if first and depth == 0:
                found.append(_logical(code, line_starts, first, line))
                first = 0
            line += 1
        elif match.group().startswith('\\'):
            line += 1
        position = match.end()
    return found


def _logical(code: str, line_starts: Sequence[int], first: int, last: int) -> LogicalLine:
    start = line_starts[first - 1]
    word = _FIRST_WORD.match(code, start)
    text = code[start:line_starts[first]] if first < len(line_starts) else code[start:]
    indent = text[:len(text) - len(text.lstrip(' \t\f'))]
    return LogicalLine(first, last, len(indent.expandtabs(8)), word.group(1) if word else '')


def statements(code: str) -> List[Statement]:
    """The top-level statements of `code`, each with its blocks (see the module docstring)."""
    lines = logical_lines(code)
    position = 0

    def block(column: int) -> List[Statement]:
        nonlocal position
        found: List[Statement] = []
        while position < len(lines) and lines[position].column == column:
            headers: List[LogicalLine] = []
            blocks: List[List[Statement]] = []
            while lines[position].word == '@' and position + 1 < len(lines):
                headers.append(lines[position])
                position += 1
            while True:
                headers.append(lines[position])
                position += 1
                if position < len(lines) and lines[position].column > column:
                    blocks.append(block(lines[position].column))
                if not (position < len(lines) and lines[position].column == column
                        and lines[position].word in _CLAUSES):
                    break
            last = max(headers[-1].last, blocks[-1][-1].last if blocks and blocks[-1] else 0)
            found.append(Statement(headers[0].first, last, headers, blocks))
        return found

    found = block(lines[0].column) if lines else []
    while position < len(lines):  # a dedent below the first statement's column: odd code;
        found.extend(block(lines[position].column))  # go on from there
    return found


def set_aside(code: str, needed: Callable[[int, int], bool]) -> Tuple[str, List[Tuple[int, int]]]:
    """(a copy of `code` in which each run of sibling statements for whose lines
    `needed(first, last)` is false is one placeholder, the lines (first, last) each
    placeholder stands for). A run is one placeholder, not one each: fissix's tokenizer and
    parser then see one `pass` where a module of small functions had dozens. The first
    statement is always kept: fissix reads the file's `from __future__` features from the
    statements that open it."""
    lines = code.splitlines(True)
    set_aside_lines: List[Tuple[int, int]] = []

    def set_aside_run(first: int, last: int) -> None:
        indent = lines[first - 1][:len(lines[first - 1]) - len(lines[first - 1].lstrip(' \t\f'))]
        lines[first - 1] = f'{indent}pass  # _slimdata_set_aside_{len(set_aside_lines)}_\n'
        lines[first:last] = ['\n'] * (last - first)
        set_aside_lines.append((first, last))

    def visit_block(block: Sequence[Statement], keep_first: bool) -> None:
        run: List[Statement] = []  # statements not needed, one after the other
        for index, statement in enumerate(block):
            if (keep_first and index == 0) or needed(statement.first, statement.last):
                if run:
                    set_aside_run(run[0].first, run[-1].last)
                    run = []
                for inner in statement.blocks:
                    visit_block(inner, False)
            else:
                run.append(statement)
        if run:
            set_aside_run(run[0].first, run[-1].last)

    visit_block(statements(code), True)
    return ''.join(lines), set_aside_lines


def put_back(fixed: str, code: str, set_aside_lines: Sequence[Tuple[int, int]]
             ) -> Optional[str]:
    """`fixed` (the copy `set_aside` made, after the fixers) with each statement of `code` set
    aside back in place of its placeholder; None when `fixed` does not hold each placeholder
    once, as written, followed by its blank lines."""
    old = code.splitlines(True)
    new = fixed.splitlines(True)
    result: List[str] = []
    seen = 0
    index = 0
    while index < len(new):
        placeholder = _PLACEHOLDER.fullmatch(new[index])
        if placeholder is None:
            result.append(new[index])
            index += 1
            continue
        number = int(placeholder.group(2))
        if number != seen:
            return None
        first, last = set_aside_lines[number]
        blanks = new[index + 1:index + 1 + last - first]
        if (len(blanks) != last - first or any(blank != '\n' for blank in blanks)
                or not old[first - 1].startswith(placeholder.group(1))):
            return None
        result.extend(old[first - 1:last])
        seen += 1
        index += 1 + last - first
    return ''.join(result) if seen == len(set_aside_lines) else None

