"""Searches of the port's regular expressions, made fast where Python's `re` is slow.

Every pass's trigger is searched in every file, and a pass's statement filter in each file it
runs on: some 6% of a port once. Python's `re` finds a pattern that starts with a literal by a
fast scan for it, but tries a pattern that starts with `\\b`, with a line's start (`(?m:^`), or
with an alternation, at every position of the text: 3 to 25 times as slow. So a pattern is
searched alternative by alternative (`alternatives`), and each first without its leading word
boundaries and line start (`found_in`), which answers as the pattern's own search does.
"""

import functools
import re
from typing import List, Optional, Pattern, Tuple


def found_in(pattern: Pattern[str], code: str) -> bool:
    """Whether `pattern` matches in `code`: each of its top-level alternatives searched alone
    (`A|B` matches somewhere exactly where `A` or `B` does; TensorFlow 0.x's trigger so: a
    third of its time), first without its word boundaries and line start (`gate`). Without
    them a pattern matches wherever it did (an assertion only rules matches out, and what
    `[ \\t]*` matched after a line's start the rest matches without it), so where that one
    finds nothing neither would the pattern; where it finds something the pattern is searched
    itself."""
    return any((quick is None or quick.search(code) is not None) and alternative.search(code)
               is not None for alternative, quick in _searches(pattern))


@functools.lru_cache(maxsize=None)
def _searches(pattern: Pattern[str]) -> Tuple[Tuple[Pattern[str], Optional[Pattern[str]]], ...]:
    """(each top-level alternative of `pattern`, its `gate`)."""
    return tuple((alternative, gate(alternative)) for alternative in alternatives(pattern))


#: A line's start and its indentation opening a pattern (`(?m:^[ \\t]*import\\b)`): the group
#: that opens it with the multi-line flag, and the anchor and indentation after.
_LINE_START = re.compile(r'(\(\?m:)?\^\[ \\t\]\*')


@functools.lru_cache(maxsize=4096)  # as `alternatives`
def gate(pattern: Pattern[str]) -> Optional[Pattern[str]]:
    """`pattern` without what `re` tries at every position before its first character: its
    line start and indentation (`_LINE_START`, with the multi-line flag), then its word
    boundaries (`_without_word_boundaries`); or None: it has neither (then no gate)."""
    text = pattern.pattern
    start = _LINE_START.match(text)
    if start is not None and (start.group(1) or pattern.flags & re.MULTILINE):
        text = (start.group(1) or '') + text[start.end():]
    try:
        unanchored = re.compile(text, pattern.flags)
    except re.error:  # a construct the match above misreads: no gate
        return None
    bounded = _without_word_boundaries(unanchored)
    return unanchored if bounded is None and text != pattern.pattern else bounded


#: What a pattern split into its alternatives may no longer match alike: a backreference or a
#: conditional (group numbers change), a verbose group's comments (a `|` or `)` in them).
_NOT_SPLIT = re.compile(r'\\[1-9]|\(\?P=|\(\?\(|\(\?[a-zA-Z-]*x')


@functools.lru_cache(maxsize=4096)  # the statement filters vary with a file's names
def alternatives(pattern: Pattern[str]) -> Tuple[Pattern[str], ...]:
    """The alternatives of `pattern`'s top-level `|` compiled alone (with its flags), or
    (pattern,) where it has none or where they may not match alike (`_NOT_SPLIT`)."""
    text = pattern.pattern
    if pattern.flags & re.VERBOSE or _NOT_SPLIT.search(text):
        return (pattern,)
    bars: List[int] = []
    depth, index, in_class = 0, 0, False
    while index < len(text):
        char = text[index]
        if char == '\\':
            index += 1  # the escaped character is a literal
        elif in_class:
            in_class = char != ']'
        elif char == '[':
            in_class = True
            # A `]` first in a class (after its `^`) is a literal, not the class's end.
            index += text.startswith('^', index + 1)
            index += text.startswith(']', index + 1)
        elif char == '(':
            depth += 1
        elif char == ')':
            depth -= 1
        elif char == '|' and depth == 0:
            bars.append(index)
        index += 1
    if not bars:
        return (pattern,)
    bounds = [-1, *bars, len(text)]
    try:
        return tuple(re.compile(text[start + 1:end], pattern.flags)
                     for start, end in zip(bounds, bounds[1:]))
    except re.error:  # a construct the scan above misreads: the pattern is searched whole
        return (pattern,)


#: A `\b` (not an escaped backslash's b).
_WORD_BOUNDARY = re.compile(r'(?<!\\)\\b')
#: Where a `\b` may no longer be an assertion whose removal lets more match: a character
#: class (`[\b]` is a backspace), a negative lookaround (`(?!\bx)`).
_NOT_PLAIN = re.compile(r'\[|\(\?<?!')


@functools.lru_cache(maxsize=None)
def _without_word_boundaries(pattern: Pattern[str]) -> Optional[Pattern[str]]:
    """`pattern` without the `\\b` assertions before its first character class or negative
    lookaround (the slow ones lead), or None: it has none there (then no gate)."""
    plain = _NOT_PLAIN.search(pattern.pattern)
    end = plain.start() if plain else len(pattern.pattern)
    head = pattern.pattern[:end]
    if not _WORD_BOUNDARY.search(head):
        return None
    return re.compile(_WORD_BOUNDARY.sub('', head) + pattern.pattern[end:], pattern.flags)
