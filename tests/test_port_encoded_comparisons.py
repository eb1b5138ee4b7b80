"""A value `.encode()` made, compared with what may be text
(slimdata.port.py3.encoded_comparisons)."""

from slimdata.port import edits, tree

CONVERTER = '''CLASSES = {'Car': 1, 'Pedestrian': 2}


def labels(lines):
    found = []
    for line in lines:
        type_txt = line.split(' ')[0].encode('ascii')
        if type_txt in CLASSES:
            found.append(CLASSES[type_txt])
        decoded = line.encode('ascii')
        decoded = decoded.decode('ascii')
        if decoded == 'Car' or line.encode('utf-8') == b'Car':
            found.append(0)
        if line.encode('utf-8') != line.upper().encode('utf-8'):
            found.append(-1)
    return found


def inner(line):
    type_txt = line
    return type_txt == 'Car'
'''


def _notes(code, path='convert.py'):
    results, problems = tree.port_sources({path: code}, tf_upgrade=None)
    assert problems == []
    ported, notes = results[path]
    return ported, [(note.kind, note.line) for note in notes if 'is bytes' in note.message]


def test_an_encoding_compared_with_text_is_reported_to_check_in_python_3_code():
    ported, found = _notes(CONVERTER)
    assert ported == CONVERTER  # reported, not changed
    line = CONVERTER.splitlines().index('        if type_txt in CLASSES:') + 1
    assert found == [(edits.TO_CHECK, line)]
    namespace: dict = {}
    exec(CONVERTER, namespace)  # noqa: S102 - what Python 3 makes of it: every label dropped
    assert namespace['labels'](['Car 0 0', 'Truck 1 1']) == [-1, -1]  # Python 2: [1, -1, -1]


def test_in_a_python_2_file_it_is_not_ported():
    code = 'print "converting"\n' + CONVERTER
    _, found = _notes(code)
    line = code.splitlines().index('        if type_txt in CLASSES:') + 1
    assert found == [(edits.NOT_PORTED, line)]
