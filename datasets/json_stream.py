"""A JSON document's top-level arrays, element by element, in bounded memory.

Annotation files such as COCO's are one object whose few keys hold long arrays
(`{"images": [...], "annotations": [...], "categories": [...]}`; COCO train2017's is 450 MB).
`json.load` of such a file builds every value at once (several GB of Python objects for
train2017), so `stream_arrays` walks the top-level object itself and hands each element of
its arrays to a callback as soon as it is decoded; only one element is alive at a time, and
the file is read in pieces.

Hand-written only at the top level: each element is decoded by the standard library's C
decoder (`json.JSONDecoder.raw_decode`). A streaming parser library (ijson, with its C
backend) selects one array per pass over the file; on a generated file of train2017's size,
one ijson pass costs about as much CPU time as this whole walk, which needs one pass for
every array (benchmarks/bench_coco.py measures both beside pycocotools).

Bounded on hostile input: an element nested deeper than Python's recursion limit is a
ValueError (the C decoder's RecursionError, caught), an element longer than
`max_element_chars` is refused, integers of more than 4300 digits are refused by Python's
int conversion, and the file is read through a size bound (`slimdata.records.fs`).
"""

import codecs
import json
import re
from typing import Any, Callable, Mapping, Optional, Protocol, Set


class Readable(Protocol):
    """What is read from: a binary file (`fs.open_source`'s reader, an open file)."""

    def read(self, size: int = -1, /) -> Optional[bytes]: ...


#: Characters read at a time.
CHUNK_BYTES = 4 << 20
#: The longest single element (or top-level value) accepted: an annotation of COCO is at most
#: a few hundred kB (a crowd region's run lengths); this bounds what one element can cost.
MAX_ELEMENT_CHARS = 16 << 20

_WHITESPACE = re.compile(r'[ \t\n\r]*')
_DECODER = json.JSONDecoder()

#: Called with (index in the array, decoded element).
ElementHandler = Callable[[int, Any], None]


class _Reader:
    """The text of a binary file, decoded as UTF-8 a piece at a time, with a read position.

    `text[position:]` is what is left to parse; earlier text is dropped when more is read.
    """

    def __init__(self, file: 'Readable', path: str, max_element_chars: int,
                 on_bytes: Optional[Callable[[int], None]]):
        self.path = path
        self.text = ''
        self.position = 0
        self.at_end = False
        self._file = file
        self._decoder = codecs.getincrementaldecoder('utf-8')()
        self._max_element_chars = max_element_chars
        self._on_bytes = on_bytes
        self._dropped_chars = 0
        self._dropped_lines = 0
        self._dropped_column = 0  # characters dropped after the last dropped newline
        self._bytes_read = 0

    def read_more(self) -> None:
        data = self._file.read(CHUNK_BYTES) or b''
        self._bytes_read += len(data)
        if self._on_bytes is not None:
            self._on_bytes(len(data))
        dropped = self.text[:self.position]
        self._dropped_chars += len(dropped)
        self._dropped_lines += dropped.count('\n')
        last_newline = dropped.rfind('\n')
        self._dropped_column = (len(dropped) - last_newline - 1 if last_newline >= 0
                                else self._dropped_column + len(dropped))
        try:
            self.text = self.text[self.position:] + self._decoder.decode(data, final=not data)
        except UnicodeDecodeError as error:
            raise ValueError(f'{self.path} is not UTF-8 text near byte '
                             f'{self._bytes_read - len(data) + error.start:,} '
                             f'({error.reason}); JSON files are UTF-8') from error
        self.position = 0
        self.at_end = not data

    def skip_whitespace(self) -> None:
        while True:
            blank = _WHITESPACE.match(self.text, self.position)
            assert blank is not None  # the pattern matches the empty string
            self.position = blank.end()
            if self.position < len(self.text) or self.at_end:
                return
            self.read_more()

    def peek(self) -> str:
        """The next character that is not whitespace ('' at the end of the file)."""
        self.skip_whitespace()
        return self.text[self.position:self.position + 1]

    def expect(self, characters: str, what: str) -> str:
        """Consumes the next non-blank character, one of `characters`; else ValueError."""
        found = self.peek()
        if not found or found not in characters:
            shown = repr(found) if found else 'the end of the file'
            raise ValueError(f'{self.path} is not valid JSON: expected {what} at '
                             f'{self.where()}, found {shown}')
        self.position += 1
        return found

    def value(self, where: str) -> Any:
        """Decodes the next JSON value (reading more of the file until it is complete)."""
        while True:
            self.skip_whitespace()
            try:
                value, end = _DECODER.raw_decode(self.text, self.position)
            except json.JSONDecodeError as error:
                if self._can_grow():
                    self.read_more()
                    continue
                raise ValueError(self._decode_error(error, where)) from None
            except RecursionError:
                raise ValueError(f'{self.path}: {where} is nested deeper than Python\'s JSON '
                                 f'decoder allows (at {self.where()}); not an annotation '
                                 'file') from None
            except ValueError as error:  # an integer of more than 4300 digits
                raise ValueError(f'{self.path}: {where} at {self.where()}: {error}') from None
            if end == len(self.text) and self._can_grow():
                self.read_more()  # a number may go on in the next piece: decode it whole
                continue
            if end - self.position > self._max_element_chars:
                raise ValueError(self._too_long(where, 'it is longer'))
            self.position = end
            return value

    def _can_grow(self) -> bool:
        return not self.at_end and len(self.text) - self.position < self._max_element_chars

    def _decode_error(self, error: json.JSONDecodeError, where: str) -> str:
        if not self.at_end:
            return self._too_long(where, error.msg)
        return (f'{self.path} is not valid JSON: {error.msg} in {where}, at '
                f'{self.where(error.pos)}')

    def _too_long(self, where: str, reason: str) -> str:
        return (f'{self.path}: {where} at {self.where()} is not a JSON value of at most '
                f'{self._max_element_chars:,} characters ({reason}); refused')

    def where(self, position: Optional[int] = None) -> str:
        """'line L column C' of `position` in the text (the read position by default)."""
        position = self.position if position is None else position
        line_start = self.text.rfind('\n', 0, position) + 1
        line = self._dropped_lines + self.text.count('\n', 0, position) + 1
        column = position - line_start + 1 + (self._dropped_column if line_start == 0 else 0)
        return f'line {line} column {column}'


def stream_arrays(file: 'Readable', path: str, handlers: Mapping[str, ElementHandler], *,
                  max_element_chars: int = MAX_ELEMENT_CHARS,
                  on_bytes: Optional[Callable[[int], None]] = None) -> Set[str]:
    """Walks a JSON document that is one object, calling `handlers[key](index, element)` for
    every element of the arrays under the keys of `handlers`, in file order.

    Values under other keys are decoded (an array element by element) and dropped. Only one
    element is held at a time.

    Args:
      file: the document, opened in binary mode (read in pieces of CHUNK_BYTES).
      path: its name, for messages.
      handlers: key -> the function called with each element of that key's array; it may
        raise ValueError (which ends the walk).
      max_element_chars: a longer element or value is refused.
      on_bytes: called with the number of bytes of each piece read (for a progress display).

    Returns:
      The keys of `handlers` that the document holds.

    Raises:
      ValueError: naming `path` (and the line and column, or the key and element index) if
        the document is not JSON, not one object, holds a key twice, has an element too
        long or too deeply nested, or has a non-array value under a key of `handlers`.
    """
    reader = _Reader(file, path, max_element_chars, on_bytes)
    reader.read_more()
    reader.expect('{', 'an object (an annotation file is one JSON object)')
    found: Set[str] = set()
    seen: Set[str] = set()
    if reader.peek() == '}':
        reader.position += 1
    else:
        while True:
            key = reader.value('a key of the top-level object')
            if not isinstance(key, str):
                raise ValueError(f'{path} is not valid JSON: a key of the top-level object is '
                                 f'not a string, at {reader.where()}')
            if key in seen:
                raise ValueError(f'{path}: the key {key!r} appears twice in the top-level '
                                 'object')
            seen.add(key)
            reader.expect(':', "':' after a key")
            handler = handlers.get(key)
            if handler is not None:
                if reader.peek() != '[':
                    kind = type(reader.value(f'the value of {key!r}')).__name__
                    raise ValueError(f'{path}: {key!r} holds a {kind}; expected an array')
                found.add(key)
            _walk_value(reader, key, handler)
            if reader.expect(',}', "',' or '}' in the top-level object") == '}':
                break
    if reader.peek():
        raise ValueError(f'{path} is not valid JSON: more data after the top-level object, at '
                         f'{reader.where()}')
    return found


def _walk_value(reader: _Reader, key: str, handler: Optional[ElementHandler]) -> None:
    """Decodes the value of `key`: an array element by element (each to `handler`, if any),
    anything else at once (and drops it)."""
    if reader.peek() != '[':
        reader.value(f'the value of {key!r}')
        return
    reader.position += 1
    if reader.peek() == ']':
        reader.position += 1
        return
    index = 0
    while True:
        element = reader.value(f'{key}[{index}]')
        if handler is not None:
            handler(index, element)
        index += 1
        if reader.expect(',]', f"',' or ']' after {key}[{index - 1}]") == ']':
            return
