"""Python 2's str-as-bytes in ported Python 2 files (slimdata.port.py2.text_bytes), and the
helper it writes (slimdata.contrib.py2.to_bytes)."""

import codecs
import subprocess
import sys

import pytest

from slimdata.contrib.py2 import to_bytes
from slimdata.port import edits, tree

CONVERTER = '''import tensorflow.compat.v1 as tf

def _bytes_feature(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))

def example(name, labels):
    print 'writing', name
    return tf.train.Example(features=tf.train.Features(feature={
        'image/filename': _bytes_feature(name),
        'image/format': _bytes_feature('jpeg'),
        'labels': tf.train.Feature(bytes_list=tf.train.BytesList(value=labels)),
    }))

features = example(u'caf\\xe9.jpg', ['a', 'b']).features.feature
print features['image/filename'].bytes_list.value[0] == u'caf\\xe9.jpg'.encode('utf-8')
print features['image/format'].bytes_list.value[0] == b'jpeg'
print list(features['labels'].bytes_list.value) == [b'a', b'b']
'''


def test_to_bytes_is_what_python_2_stored():
    assert to_bytes('café') == 'café'.encode('utf-8') and to_bytes(b'\xff') == b'\xff'
    assert to_bytes(['a', b'b']) == [b'a', b'b'] and to_bytes(('a',)) == (b'a',)
    assert to_bytes(3) == 3


@pytest.mark.slow
def test_a_python_2_converter_writes_bytes_after_the_port(tmp_path):
    results, problems = tree.port_sources({'convert.py': CONVERTER}, tf_upgrade=None)
    assert problems == []
    ported, notes = results['convert.py']
    assert 'BytesList(value=[to_bytes(value)])' in ported
    assert 'BytesList(value=to_bytes(labels))' in ported
    assert 'feature={\n        \'image/filename\': _bytes_feature(to_bytes(name)),' in ported
    wrapped = [number for number, line in enumerate(ported.splitlines(), 1)
               if 'to_bytes(' in line and not line.startswith('from ')]
    assert sorted(note.line for note in notes if 'to_bytes' in note.message) == wrapped
    (tmp_path / 'convert.py').write_text(ported)
    done = subprocess.run([sys.executable, 'convert.py'], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ['writing café.jpg', 'True', 'True', 'True']


def test_a_python_2_byte_string_compared_is_reported():
    code = ("def strip_bom(data):\n    print 'checking'\n"
            "    if data[:3] == '\\xef\\xbb\\xbf':\n        data = data[3:]\n"
            "    return data.startswith('\\xff\\xd8'), data\n"
            "TEXT = '\\xe9t\\xe9'\n"
            "line = util.str.remove_all(line, '\\xef\\xbb\\xbf')\n")
    results, problems = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert problems == []
    ported, notes = results['m.py']
    reported = [(note.line, note.message) for note in notes if note.kind == edits.NOT_PORTED]
    assert [line for line, _ in reported] == [3, 5]  # not the assignment on line 6
    assert all('was bytes in Python 2 and is text in Python 3' in message
               for _, message in reported)
    assert "'\\xef\\xbb\\xbf'" in ported  # left as it was


def test_a_python_2_bom_given_to_a_function_strips_the_bom_of_text(tmp_path):
    # pixel_link's and seglink's ICDAR converters: the ground truth files start with a BOM.
    code = ("def first_box(path):\n    print 'reading', path\n"
            "    line = open(path).readline().replace('\\xef\\xbb\\xbf', '')\n"
            "    return [int(value) for value in line.split(',')[:8]]\n")
    results, problems = tree.port_sources({'gt.py': code}, tf_upgrade=None)
    assert problems == []
    ported, notes = results['gt.py']
    assert [(note.kind, note.line) for note in notes if 'byte order mark' in note.message] == [
        (edits.CHANGED, 3)]
    truth = tmp_path / 'gt_img_1.txt'
    truth.write_bytes(codecs.BOM_UTF8 + b'377,117,463,117,465,130,378,130,Genaxis Theatre\r\n')
    namespace: dict = {}
    exec(compile(ported, 'gt.py', 'exec'), namespace)  # noqa: S102 - the ported code under test
    assert namespace['first_box'](str(truth)) == [377, 117, 463, 117, 465, 130, 378, 130]
