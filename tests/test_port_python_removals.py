"""Standard library names Python 3.7-3.12 removed: renamed where the successor is the same,
else reported (slimdata.port.py3.python_removals), ported and run."""

import base64
import threading
import xml.etree.ElementTree as ElementTree

from port_snippets import kinds, port, port_and_run
from slimdata.port import edits


def test_time_clock_and_base64_names_become_their_successors():
    ported, notes, namespace = port_and_run(
        'import base64\nimport time\nfrom base64 import decodestring\n\n'
        'start = time.clock()\n'
        "encoded = base64.encodestring(b'\\x00\\xff')\n"
        'decoded = decodestring(encoded)\n'
        'elapsed = time.clock() - start\n')
    assert 'from base64 import decodebytes as decodestring' in ported
    assert 'time.perf_counter()' in ported and 'base64.encodebytes(' in ported
    # What the removed functions returned (Python 3.8's base64: encodestring was encodebytes).
    assert namespace['encoded'] == base64.encodebytes(b'\x00\xff') == b'AP8=\n'
    assert namespace['decoded'] == b'\x00\xff' and namespace['elapsed'] >= 0
    assert sorted(note.line for note in kinds(notes, edits.CHANGED)) == [3, 5, 6, 8]


def test_removed_methods_of_threads_and_elements():
    ported, notes, namespace = port_and_run(
        'import threading\nimport xml.etree.ElementTree as ET\n\n\n'
        'def read(text):\n'
        '    root = ET.fromstring(text)\n'
        "    return [child.tag for child in root.getchildren()], list(root.getiterator('b'))\n\n\n"
        'def alive(thread):\n'
        '    return thread.isAlive()\n')
    assert 'list(root)' in ported and "root.iter('b')" in ported
    assert 'thread.is_alive()' in ported
    tags, found = namespace['read']('<a><b/><c><b/></c></a>')
    root = ElementTree.fromstring('<a><b/><c><b/></c></a>')
    assert tags == [child.tag for child in root] and len(found) == len(list(root.iter('b'))) == 2
    thread = threading.Thread(target=lambda: None)
    assert namespace['alive'](thread) is False
    assert len(kinds(notes, edits.CHANGED)) == 3


def test_a_method_the_file_defines_is_left_alone():
    source = ('class Worker:\n'
              '    def isAlive(self):\n'
              '        return True\n\n\n'
              'alive = Worker().isAlive()\n')
    assert port(source) == (source, [])


def test_getargspec_renamed_where_a_shared_field_is_read_else_reported():
    ported, notes, namespace = port_and_run(
        'import inspect\n\n\n'
        'def f(a, b=2, *rest):\n'
        '    pass\n\n\n'
        'names = inspect.getargspec(f).args\n'
        'defaults = inspect.getargspec(f).defaults\n')
    assert ported.count('inspect.getfullargspec(f)') == 2
    assert namespace['names'] == ['a', 'b'] and namespace['defaults'] == (2,)
    source = 'import inspect\nargs, varargs, keywords, defaults = inspect.getargspec(len)\n'
    code, notes = port(source)
    assert code == source  # getfullargspec's seven fields would not unpack into four
    [reported] = kinds(notes, edits.NOT_PORTED)
    assert reported.line == 2 and 'getfullargspec' in reported.message


def test_functions_without_a_certain_successor_are_reported():
    source = ('import cgi\nfrom fractions import gcd\n\n'
              'x = cgi.escape("<a>")\n')
    code, notes = port(source)
    assert code == source
    assert [(note.line, note.message.split(':')[0]) for note in notes] == [
        (2, 'fractions.gcd'), (4, 'cgi.escape')]


def test_element_methods_are_left_where_no_xml_parser_is_named():
    """`getchildren()` of a class of another module of the tree is no ElementTree element's."""
    source = 'def kids(node):\n    return node.getchildren()\n'
    assert port(source) == (source, [])
