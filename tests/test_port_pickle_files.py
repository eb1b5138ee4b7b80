"""Files pickle reads or writes get a binary mode, Python 2's pickles `encoding='latin1'`
(slimdata.port.py3.pickle_files), ported and run."""

import pickle
import pickletools

from port_snippets import kinds, port, run
from slimdata.port import edits

# What Python 2's `cPickle.dump({'data': '\x80\xff', 'labels': [1, 2]}, f, 2)` writes, opcode by
# opcode (its str is SHORT_BINSTRING: bytes, as in CIFAR-10's batches): Python 3 reads it only
# with an encoding that takes every byte.
PYTHON_2_PICKLE = (b'\x80\x02' b'}q\x00' b'(' b'U\x04data' b'U\x02\x80\xff'
                   b'U\x06labels' b']q\x01' b'(K\x01K\x02e' b'u' b'.')


def test_the_python_2_pickle_is_what_python_2_writes_and_python_3_refuses_by_default():
    opcodes = [opcode.name for opcode, _, _ in pickletools.genops(PYTHON_2_PICKLE)]
    assert opcodes.count('SHORT_BINSTRING') == 3 and opcodes[0] == 'PROTO'
    try:
        pickle.loads(PYTHON_2_PICKLE)
    except UnicodeDecodeError:
        pass
    else:
        raise AssertionError('Python 3 read a Python 2 byte string as ASCII')


def test_a_python_2_converter_reads_its_pickle_after_the_port(tmp_path):
    batch = tmp_path / 'data_batch_1'
    batch.write_bytes(PYTHON_2_PICKLE)
    code, notes = port(
        'import cPickle\n\n\n'
        'def read(filename):\n'
        "    with open(filename, 'r') as f:\n"
        '        data = cPickle.load(f)\n'
        '    print "read", len(data)\n'
        '    return data\n')
    assert "open(filename, 'rb')" in code
    assert "pickle.load(f, encoding='latin1')" in code
    data = run(code)['read'](str(batch))
    # Python 2 read '\x80\xff' as those two bytes: latin1 gives the characters of the same
    # ordinals, and the labels as they were.
    assert [ord(character) for character in data['data']] == [0x80, 0xFF]
    assert data['labels'] == [1, 2]
    changed = {(note.line, note.message.split(':')[0]) for note in kinds(notes, edits.CHANGED)}
    assert (5, "open(..., 'rb')") in changed
    assert (6, "cPickle.load(..., encoding='latin1')") in changed \
        or (6, "pickle.load(..., encoding='latin1')") in changed


def test_a_file_pickle_writes_gets_wb_and_reads_back(tmp_path):
    code, notes = port(
        'import pickle\n\n\n'
        'def save(obj, path):\n'
        "    f = open(path, 'w')\n"
        '    pickle.dump(obj, f, 2)\n'
        '    f.close()\n\n\n'
        'def load(path):\n'
        '    return pickle.load(open(path))\n')
    assert "f = open(path, 'wb')" in code and "pickle.load(open(path, 'rb'))" in code
    assert 'encoding' not in code  # a Python 3 file: its pickles are Python 3's
    namespace = run(code)
    namespace['save']({'a': b'\x80', 'b': [1.5]}, str(tmp_path / 'x.pkl'))
    assert namespace['load'](str(tmp_path / 'x.pkl')) == {'a': b'\x80', 'b': [1.5]}
    assert [note.line for note in kinds(notes, edits.CHANGED)] == [5, 11]


def test_tensorflow_openers_get_the_mode_too():
    code, _ = port(
        'import tensorflow as tf\nfrom six.moves import cPickle\n\n\n'
        'def read(filename):\n'
        "    with tf.io.gfile.GFile(filename, mode='r') as f:\n"
        '        return cPickle.load(f)\n')
    assert "tf.io.gfile.GFile(filename, mode='rb')" in code


def test_a_file_opened_twice_in_the_scope_is_reported_not_changed():
    source = ('import pickle\n\n\n'
              'def read(path, other):\n'
              '    f = open(path)\n'
              '    f = open(other)\n'
              '    return pickle.load(f)\n')
    code, notes = port(source)
    assert code == source
    [note] = kinds(notes, edits.NOT_PORTED)
    assert note.line == 7 and 'opened more than once' in note.message


def test_binary_files_and_other_loads_are_left_alone():
    source = ('import json\nimport pickle\n\n\n'
              'def read(path, text):\n'
              "    with open(path, 'rb') as f:\n"
              '        data = pickle.load(f)\n'
              '    with open(text) as f:\n'
              '        more = json.load(f)\n'
              '    return data, more, pickle.loads(b"")\n')
    assert port(source) == (source, [])


def test_an_object_array_loaded_for_item_gets_allow_pickle(tmp_path):
    """Faster R-CNN's `np.load(data_path).item()` of its pretrained weights (a dict saved by
    np.save): numpy 1.16.3 stopped loading object arrays by default."""
    import numpy as np
    weights = tmp_path / 'vgg16.npy'
    np.save(weights, np.array({'conv1': [1.5]}, dtype=object))
    source = ('import numpy as np\n\n\n'
              'def load(data_path):\n'
              '    return np.load(data_path).item()\n')
    try:
        run(source)['load'](str(weights))
    except ValueError as error:
        assert 'allow_pickle' in str(error)
    else:
        raise AssertionError('numpy loaded an object array without allow_pickle')
    code, notes = port(source)
    assert 'np.load(data_path, allow_pickle=True).item()' in code
    assert run(code)['load'](str(weights)) == {'conv1': [1.5]}
    assert [note.line for note in kinds(notes, edits.CHANGED)] == [5]
    python_2, _ = port(source + '\nprint "loaded"\n')
    assert "np.load(data_path, allow_pickle=True, encoding='latin1').item()" in python_2


def test_openers_in_other_statements_of_each_scope_get_the_mode():
    """The pass walks the scopes of its matches only (`work_lines`): the opener of each
    pickle, in another statement of its scope (the module, a nested function, a method), is
    changed, and a function with an opener but no pickle is left as it is."""
    source = ('import pickle\n\n'
              "log = open('log.txt')\n\n\n"
              'def text(path):\n'
              '    f = open(path)\n'
              '    lines = f.readlines()\n'
              '    return lines\n\n\n'
              'def outer(path):\n'
              '    g = open(path)\n\n'
              '    def inner(other):\n'
              '        f = open(other)\n'
              '        x = 1\n'
              '        return pickle.load(f), x\n'
              '    return inner, g\n\n\n'
              'class Saver(object):\n'
              '    def save(self, obj, path):\n'
              "        f = open(path, 'w')\n"
              '        y = 2\n'
              '        pickle.dump(obj, f)\n'
              '        return y\n\n\n'
              "data = open('data.pkl')\n"
              'if data:\n'
              '    value = pickle.load(data)\n')
    code, notes = port(source)
    changed = {source.split('\n')[note.line - 1].strip() for note in kinds(notes, edits.CHANGED)}
    assert changed == {"f = open(other)", "f = open(path, 'w')", "data = open('data.pkl')"}
    assert "f = open(other, 'rb')" in code and "f = open(path, 'wb')" in code
    assert "data = open('data.pkl', 'rb')" in code
    assert "    f = open(path)\n    lines" in code and "log = open('log.txt')" in code
    assert "g = open(path)\n" in code


def test_the_uses_of_an_import_s_other_name_are_pickle_s():
    """Where an import binds pickle or one of its functions to a name without 'pickle'
    (`import cPickle as pkl`, `from pickle import load as read`), the uses of that name are
    the pass's: their files get the mode, in any function."""
    source = ('import cPickle as pkl\nfrom pickle import load as read\n\n\n'
              'def save(obj, path):\n'
              "    f = open(path, 'w')\n"
              '    x = 1\n'
              '    pkl.dump(obj, f)\n'
              '    return x\n\n\n'
              'def other(path):\n'
              '    g = open(path)\n'
              '    y = g.read()\n'
              '    return y\n\n\n'
              'def restore(path):\n'
              '    h = open(path)\n'
              '    z = 2\n'
              '    return read(h), z\n')
    code, notes = port(source)
    assert "f = open(path, 'wb')" in code and "h = open(path, 'rb')" in code
    assert '    g = open(path)\n' in code
    changed = {source.split('\n')[note.line - 1].strip() for note in kinds(notes, edits.CHANGED)}
    assert {"f = open(path, 'w')", 'h = open(path)'} <= changed
