"""Python 2's integer division kept in ported Python 2 files (slimdata.port.py2.division),
and the helper it writes (slimdata.contrib.py2.old_div)."""

import subprocess
import sys

import numpy as np
import pytest

from port_snippets import work_lines
from slimdata.contrib.py2 import old_div
from slimdata.port import edits, tree
from slimdata.port.py2.division import DivisionPass

PROGRAM = '''import numpy as np

def split(batch_size, num_clones):
    print batch_size / num_clones, 7 / 2, 7 / 2.0, -7 / 2, len('abcde') / 2
    total = 9
    total /= 2
    print total
    print (np.arange(5) / 2).tolist(), (np.arange(5.0) / 2).tolist()

split(32, 3)
'''


def _port(code: str):
    results, problems = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert problems == []
    return results['m.py']


def _lines_with(code: str, *words: str):
    return [number for number, line in enumerate(code.splitlines(), 1)
            if any(word in line for word in words) and not line.startswith('from ')]


def _run(tmp_path, code: str) -> str:
    (tmp_path / 'm.py').write_text(code)
    done = subprocess.run([sys.executable, 'm.py'], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_python_2_program_divides_as_it_did(tmp_path):
    ported, notes = _port(PROGRAM)
    assert 'old_div(batch_size, num_clones)' in ported and '7 // 2' in ported
    assert '7 / 2.0' in ported and "len('abcde') // 2" in ported
    assert 'total = old_div(total, 2)' in ported
    # Python 2's results: floor division of integers, true division where a float takes part.
    assert _run(tmp_path, ported).splitlines() == [
        f"{32 // 3} {7 // 2} {7 / 2.0} {-7 // 2} {5 // 2}", str(9 // 2),
        f'{[value // 2 for value in range(5)]} {[value / 2 for value in range(5)]}']
    # Reported at the lines of the ported file that hold them.
    division_lines = sorted({note.line for note in notes if '/' in note.message})
    assert division_lines == _lines_with(ported, 'old_div(', ' // ')


def test_left_alone_in_python_3_files_and_under_future_division():
    python_3 = 'def f(a, b):\n    print(a / b)\n'
    assert _port(python_3) == (python_3, [])
    future = ('from __future__ import division\n\ndef f(a, b):\n    print a / b\n')
    ported, notes = _port(future)
    assert 'print(a / b)' in ported and not any('old_div' in note.message for note in notes)


def test_a_slash_that_divides_nothing_costs_no_syntax_tree(monkeypatch):
    """A Python 2 file whose `/` are in paths and comments only: nothing for the pass, and no
    LibCST tree made for it (no other pass has work); one `/` that divides still is."""
    paths = ("# data/train and data/test\nimport os\nROOT = '/data/voc/'\n"
             "def where(name):\n    return os.path.join(ROOT, name)  # a/b\n")
    python_2 = 'print "x"\n' + paths
    parsed = []
    monkeypatch.setattr(edits.ParsedFile, '__init__', lambda *args, real=edits.ParsedFile.__init__,
                        **kwargs: parsed.append(1) or real(*args, **kwargs))
    ported, notes = _port(python_2)
    assert ported == 'print("x")\n' + paths and parsed == []
    assert len(notes) == 1 and 'print' in notes[0].message
    ported, notes = _port(python_2 + 'HALF = len(ROOT) / 2\n')
    assert ported.endswith('HALF = len(ROOT) // 2\n') and parsed == [1]


def test_old_div_is_python_2_division():
    assert old_div(7, 2) == 3 and old_div(-7, 2) == -4 and old_div(True, 1) == 1
    assert old_div(7.0, 2) == 3.5 and old_div(7, 2.0) == 3.5
    assert old_div(np.int64(7), 2) == 3 and isinstance(old_div(np.int64(7), 2), np.integer)
    assert old_div(np.arange(5), 2).tolist() == [0, 0, 1, 1, 2]
    assert old_div(np.arange(5, dtype=np.uint8), np.uint8(2)).dtype == np.uint8
    assert old_div(np.arange(4.0), 2).tolist() == [0.0, 0.5, 1.0, 1.5]


TF_PROGRAM = '''import tensorflow.compat.v1 as tf

def main():
    batch_size, num_clones = 8, 2
    queue = tf.FIFOQueue(16, [tf.int32], shapes=[[]])
    enqueue = queue.enqueue_many([tf.range(16)])
    batch = queue.dequeue_many(batch_size / num_clones)
    half = tf.constant(7) / 2
    ratio = tf.constant(7.0) / 2
    with tf.Session() as session:
        session.run(enqueue)
        print session.run(batch).tolist(), session.run(half), session.run(ratio)

if __name__ == '__main__':
    main()
'''


@pytest.mark.slow
def test_batch_size_over_num_clones_feeds_a_dequeue_count(tmp_path):
    """The issue's shape: `batch_size / num_clones` as a queue's dequeue count is 4.0 in
    Python 3, which TensorFlow refuses ('got 4.0 of type float'); TF1 floored integer tensors
    too."""
    ported, notes = _port(TF_PROGRAM)
    assert 'queue.dequeue_many(old_div(batch_size, num_clones))' in ported
    [line] = _lines_with(ported, 'dequeue_many')
    assert any(note.kind == edits.CHANGED and note.line == line and 'old_div' in note.message
               for note in notes)
    assert _run(tmp_path, ported).split() == ['[0,', '1,', '2,', '3]', str(7 // 2), '3.5']


def test_a_division_with_a_float_literal_is_no_work():
    """`/` with a float literal (signed or not) divides as it did: the pass leaves it, and
    Python's tree shows it no work there (`work_lines`), so it walks only the other `/`."""
    code = ('def scale(image, n):\n'
            '    image = image / 255.\n'
            '    delta = 32. / 255.\n'
            '    image /= 2.0\n'
            '    return image + delta, -1.5 / n, n / +0.5\n\n\n'
            'def half(n):\n'
            '    return n / 2\n')
    assert work_lines(DivisionPass, code) == [9]
    ported, notes = _port('print "x"\n' + code)
    assert ported == 'from slimdata.contrib.py2 import old_div\nprint("x")\n' + code.replace(
        'n / 2', 'old_div(n, 2)')
    assert [note.line for note in notes if 'old_div' in note.message] == [11]
