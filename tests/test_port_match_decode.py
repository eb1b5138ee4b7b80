""".decode() of a str pattern's match group dropped
(slimdata.port.py3.match_decode), ported and run."""

import pytest

from port_snippets import port_and_run
from slimdata.port import tree

# attention_ocr 2019's read_charset (datasets/fsns.py): a line of a text file, matched by a str
# pattern, its group decoded as Python 2's bytes were.
CHARSET_READER = '''import io
import re

PATTERN = re.compile(r'(\\d+)\\t(.+)')


def read_charset(lines):
    charset = {}
    for line in lines:
        m = PATTERN.match(line)
        if m is None:
            continue
        charset[int(m.group(1))] = m.group(2).decode('utf-8')
    return charset


def first_number(data):
    found = re.search(r'\\d+', data)
    return found.group(0).decode('ascii')


def bytes_number(data):
    found = re.match(rb'(\\d+)', data)
    return found.group(1).decode('ascii')


charset = read_charset(io.StringIO('1\\t\\u00e4\\n2\\t<nul>\\n'))
number = first_number('abc 42')
from_bytes = bytes_number(b'7 days')
'''


def test_decode_of_a_str_pattern_match_is_dropped_and_a_bytes_one_kept():
    with pytest.raises(AttributeError, match="'str' object has no attribute 'decode'"):
        exec(compile(CHARSET_READER, 'm.py', 'exec'), {})  # noqa: S102
    ported, notes, namespace = port_and_run(CHARSET_READER)
    assert namespace['charset'] == {1: '\u00e4', 2: '<nul>'}
    assert namespace['number'] == '42' and namespace['from_bytes'] == '7'
    assert "found.group(1).decode('ascii')" in ported  # a bytes pattern's match is bytes
    assert [note.line for note in notes] == [13, 19]


def test_decode_kept_where_the_match_name_has_another_binding():
    code = ('import re\n'
            "PATTERN = re.compile(r'(.+)')\n"
            'def f(line, other):\n'
            '    m = PATTERN.match(line)\n'
            '    m = other\n'
            "    return m.group(1).decode('utf-8')\n")
    results, problems = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert problems == [] and results['m.py'] == (code, [])
