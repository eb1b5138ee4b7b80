"""Lines of a file through the port: which line each became, and the line endings kept.

The passes and tf_upgrade_v2 each number lines in the code they were given. `line_map` carries
such a number to the line it became in the code a step wrote, so that the report names lines
of the ported file; `restore_endings` puts back each kept line's own line ending (CRLF, CR),
since the port works on LF text (tf_upgrade_v2 reads files with universal newlines).

Both rest on `matching_lines`, an alignment of the two versions by equal lines. It is a
patience alignment (lines found once in both versions anchor it; the gaps between anchors are
aligned the same way, and small gaps by difflib), hand-written because difflib.SequenceMatcher
alone costs time quadratic in the lines of a large file whose edits are spread out (measured:
1.7 s for a 20,000-line file, 11 s for 40,000), while this costs time linear in the lines
for the edits a port makes.
"""

import bisect
import difflib
import re
from typing import Callable, Dict, List, Sequence, Tuple

#: Python's line breaks (the tokenizer's: not str.splitlines', which also breaks at \f, \v, ...).
_LINE_BREAK = re.compile(r'\r\n|\r|\n')
#: Gaps without anchors are aligned by difflib when they are at most this many lines by this
#: many (its cost is the product of the two lengths at worst); larger ones stay unaligned.
_DIFFLIB_LIMIT = 250_000
#: How many times a gap is split again by its own anchors.
_MAX_DEPTH = 12
#: Lines found more often than this (blank lines, `)`) do not anchor an alignment.
_MAX_REPEATS = 8


def matching_lines(before: Sequence[str], after: Sequence[str]) -> List[Tuple[int, int]]:
    """Pairs (i, j), increasing in both, of lines `before[i] == after[j]` taken as the same."""
    pairs: List[Tuple[int, int]] = []
    pending = [(0, len(before), 0, len(after), 0)]
    while pending:
        low, high, after_low, after_high, depth = pending.pop()
        pairs += _align_gap(before, after, low, high, after_low, after_high, depth, pending)
    pairs.sort()
    return pairs


def _align_gap(before, after, low, high, after_low, after_high, depth, pending):
    """The pairs of one gap that are certain now; pushes the smaller gaps left to align."""
    pairs = []
    while low < high and after_low < after_high and before[low] == after[after_low]:
        pairs.append((low, after_low))
        low, after_low = low + 1, after_low + 1
    while low < high and after_low < after_high and before[high - 1] == after[after_high - 1]:
        high, after_high = high - 1, after_high - 1
        pairs.append((high, after_high))
    if low == high or after_low == after_high:
        return pairs
    anchors = _anchors(before, after, low, high, after_low, after_high)
    if anchors and depth < _MAX_DEPTH:
        previous = (low - 1, after_low - 1)
        for anchor in anchors + [(high, after_high)]:
            if anchor[0] - previous[0] > 1 and anchor[1] - previous[1] > 1:
                pending.append((previous[0] + 1, anchor[0], previous[1] + 1, anchor[1],
                                depth + 1))
            previous = anchor
        return pairs + anchors
    if (high - low) * (after_high - after_low) <= _DIFFLIB_LIMIT:
        matcher = difflib.SequenceMatcher(None, before[low:high], after[after_low:after_high],
                                          autojunk=False)
        for i, j, size in matcher.get_matching_blocks():
            pairs += [(low + i + k, after_low + j + k) for k in range(size)]
    return pairs


def _anchors(before, after, low, high, after_low, after_high) -> List[Tuple[int, int]]:
    """Pairs of a gap's lines that anchor its alignment.

    A line found as many times in both sides (at most _MAX_REPEATS) pairs its occurrences in
    order (lines found once are the common case; a block of code found twice still anchors);
    of those pairs, the longest run increasing in both sides.
    """
    places: Dict[str, Tuple[List[int], List[int]]] = {}
    for i in range(low, high):
        places.setdefault(before[i], ([], []))[0].append(i)
    for j in range(after_low, after_high):
        found = places.get(after[j])
        if found is not None:
            found[1].append(j)
    candidates = sorted(pair for in_before, in_after in places.values()
                        if len(in_before) == len(in_after) <= _MAX_REPEATS
                        for pair in zip(in_before, in_after))
    return _longest_increasing(candidates)


def _longest_increasing(pairs: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """The longest subsequence of `pairs` (sorted by i) whose j increase too (patience sort)."""
    tails: List[int] = []        # tails[k]: smallest j ending an increasing run of length k+1
    tail_index: List[int] = []   # the index in pairs of that run's last pair
    previous = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        position = bisect.bisect_left(tails, j)
        if position == len(tails):
            tails.append(j)
            tail_index.append(index)
        else:
            tails[position] = j
            tail_index[position] = index
        previous[index] = tail_index[position - 1] if position else -1
    run = []
    index = tail_index[-1] if tail_index else -1
    while index >= 0:
        run.append(pairs[index])
        index = previous[index]
    return run[::-1]


def line_map(before: str, after: str) -> Callable[[int], int]:
    """Maps a line number of `before` to the line of `after` it became (1-based).

    A line replaced or deleted maps to the line that took its place.
    """
    if before == after:  # a stage that changed nothing (most of them, on most files)
        return lambda line: line
    before_lines, after_lines = before.split('\n'), after.split('\n')
    mapping: Dict[int, int] = {}
    previous = (-1, -1)
    for i, j in matching_lines(before_lines, after_lines) + [(len(before_lines),
                                                               len(after_lines))]:
        first, after_first = previous[0] + 1, previous[1] + 1
        for k in range(first, i):  # replaced (or deleted) by after_lines[after_first:j]
            mapping[k] = min(after_first + (k - first), max(j - 1, after_first))
        mapping[i] = j
        previous = (i, j)
    return lambda line: mapping.get(line - 1, line - 1) + 1


def split_endings(text: str) -> Tuple[str, List[str]]:
    """(`text` with LF line breaks, the line break each of its lines had)."""
    if '\r' not in text:
        return text, []
    endings = _LINE_BREAK.findall(text)
    return _LINE_BREAK.sub('\n', text), endings


def restore_endings(original: str, endings: List[str], ported: str) -> str:
    """`ported` (LF) with each line kept from `original` (LF) ending as it did there, and each
    new line ending as most of the original's lines do."""
    if not endings:
        return ported
    usual = max(set(endings), key=endings.count)
    original_lines, ported_lines = original.split('\n'), ported.split('\n')
    ending_of = [usual] * (len(ported_lines) - 1)
    for i, j in matching_lines(original_lines, ported_lines):
        if i < len(endings) and j < len(ending_of):
            ending_of[j] = endings[i]
    pieces = []
    for line, ending in zip(ported_lines, ending_of):
        pieces += [line, ending]
    pieces.append(ported_lines[-1])
    return ''.join(pieces)
