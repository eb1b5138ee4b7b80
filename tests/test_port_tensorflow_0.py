"""TensorFlow 0.x's API (slimdata.port.tensorflow_0): a TensorFlow 0.x program, ported, computes
what numpy computes; TensorFlow 1 code is left as it is."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from port_snippets import port, port_with_work, work_lines
from slimdata.port import installed, tensorflow_0, tree

tf = pytest.importorskip('tensorflow')

# Written for TensorFlow 0.12, as smallcorgi/Faster-RCNN_TF and its kin wrote it.
PROGRAM = '''import json
import tensorflow as tf


def main():
    a = tf.constant([[1., 2.], [3., 4.]])
    b = tf.constant([[0.25, 0.75], [0.5, 0.5]])
    joined = tf.concat(1, [a, b])
    stacked_rows = tf.concat(concat_dim=0, values=[a, b])
    left, right = tf.split(1, 2, joined)
    packed = tf.pack([a, b])
    first, second = tf.unpack(packed)
    arithmetic = tf.sub(tf.mul(a, b), tf.neg(a))
    flipped = tf.reverse(a, [False, True])
    chosen = tf.select(tf.constant([True, False]), a, b)
    softmax_loss = tf.nn.softmax_cross_entropy_with_logits(a, b)
    sigmoid_loss = tf.nn.sigmoid_cross_entropy_with_logits(a, targets=b)
    total = tf.reduce_sum(a, reduction_indices=[1])
    largest = tf.argmax(a, dimension=1)
    product = tf.batch_matmul(a, b, adj_x=True)
    with tf.op_scope([a], 'scoped', 'default'):
        inside = tf.identity(a, name='inside')
    tf.scalar_summary('total', tf.reduce_sum(a))
    merged = tf.merge_all_summaries()
    counter = tf.Variable(0)
    with tf.Session() as session:
        session.run(tf.initialize_all_variables())
        values = session.run([joined, stacked_rows, left, right, packed, first, arithmetic, flipped,
                              chosen, softmax_loss, sigmoid_loss, total, largest, product])
        session.run(merged)
        print(json.dumps([value.tolist() for value in values] + [inside.op.name]))


if __name__ == '__main__':
    main()
'''


def _expected():
    a = np.array([[1., 2.], [3., 4.]])
    b = np.array([[0.25, 0.75], [0.5, 0.5]])
    joined = np.concatenate([a, b], axis=1)
    softmax = np.exp(a) / np.exp(a).sum(axis=1, keepdims=True)
    return [joined, np.concatenate([a, b], axis=0), joined[:, :2], joined[:, 2:],
            np.stack([a, b]), a, a * b + a, a[:, ::-1], np.where(np.array([[True], [False]]), a, b),
            -(b * np.log(softmax)).sum(axis=1),
            np.maximum(a, 0) - a * b + np.log1p(np.exp(-np.abs(a))),
            a.sum(axis=1), a.argmax(axis=1), a.T @ b]


def test_a_tensorflow_0_program_computes_what_numpy_does(tmp_path):
    results, problems = tree.port_sources({'m.py': PROGRAM})
    assert problems == []
    ported, notes = results['m.py']
    for old in (r'tf\.concat\(1,', r'tf\.pack\b', r'tf\.mul\b', r'tf\.select\b', 'concat_dim',
                'scalar_summary', r'\[False, True\]', 'adj_x', 'targets='):
        assert not re.search(old, ported), old
    (tmp_path / 'm.py').write_text(ported)
    done = subprocess.run([sys.executable, 'm.py'], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    *values, scope = json.loads(done.stdout.splitlines()[-1])
    for got, expected in zip(values, _expected()):
        np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert scope == 'scoped/inside'
    # Every line that changed is reported, at its line of the ported file.
    changed = {note.line for note in notes if 'TensorFlow 0.x' in note.message
               or 'TensorFlow 1.0' in note.message}
    expected_lines = {number for number, line in enumerate(ported.splitlines(), 1) if any(
        new in line for new in ('axis=', 'tf.stack', 'tf.unstack', 'tf.subtract', '[1])',
                                'tf.where', 'logits=', 'tf.matmul', 'tf.summary'))}
    # (tf_upgrade_v2 writes axis= for reduction_indices= and dimension=, which TF 1 kept.)
    assert changed == expected_lines - {
        number for number, line in enumerate(ported.splitlines(), 1)
        if 'reduce_sum(a, ' in line or 'argmax' in line} and len(changed) == 13
    # What the installed TensorFlow kept as TensorFlow 0.x wrote it is left as it is.
    for kept in ("tf.op_scope([a], 'scoped', 'default')", 'tf.initialize_all_variables()'):
        assert kept in ported, kept


def test_tensorflow_1_code_is_left_as_it_is():
    code = ('import re\nimport numpy as np\nimport tensorflow as tf\n\n\n'
            'def net(a, b, axis, parts):\n'
            '    joined = tf.concat([a, b], 1)\n    more = tf.concat(parts, axis)\n'
            '    left, right = tf.split(joined, 2, axis=1)\n'
            '    flipped = tf.reverse(a, [1])\n'
            '    loss = tf.nn.softmax_cross_entropy_with_logits(labels=b, logits=a)\n'
            "    total = tf.reduce_sum(a, reduction_indices=[1])\n"
            "    name = re.sub('a', 'b', 'abc')\n    pick = np.select([a > 0], [a])\n"
            '    return joined, more, left, right, flipped, loss, total, name, pick\n')
    results, problems = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert problems == []
    assert results['m.py'][0] == code
    assert [note for note in results['m.py'][1] if 'TensorFlow' in note.message] == []


def test_an_order_the_port_cannot_tell_is_reported_in_a_tensorflow_0_file():
    code = ('import tensorflow as tf\n\n\ndef net(parts, dim):\n'
            '    stacked = tf.pack(parts)\n    return tf.concat(dim, parts), stacked\n')
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    ported, notes = results['m.py']
    assert 'tf.stack(parts)' in ported and 'tf.concat(dim, parts)' in ported
    assert [note.line for note in notes if note.kind == 'not ported'] == [6]
    # The same call in TensorFlow 1 code: nothing to say.
    tf1 = code.replace('tf.pack(parts)', 'tf.stack(parts)')
    assert tree.port_sources({'m.py': tf1}, tf_upgrade=None)[0]['m.py'] == (tf1, [])


def test_the_tables_name_what_the_installed_tensorflow_has():
    """Every successor is in the installed tf.compat.v1; every keyword the orders write is a
    parameter of the installed function; TensorFlow 0.x's names are gone but for those kept
    (tf.compat.v1.op_scope, initialize_all_variables)."""
    for new in tensorflow_0.RENAMES.values():
        assert installed.resolve_v1(new) is not None, new
    assert {old for old in tensorflow_0.RENAMES if tensorflow_0.renamed(old)} >= {
        'mul', 'sub', 'neg', 'pack', 'unpack', 'select', 'scalar_summary',
        'train.SummaryWriter', 'batch_matmul'}
    for old, order in tensorflow_0.ORDERS.items():
        parameters = tensorflow_0._parameters(tensorflow_0.RENAMES.get(old, old))
        assert parameters is not None and set(order) <= parameters, old
    for path, renames in tensorflow_0.KEYWORDS.items():
        parameters = tensorflow_0._parameters(path)
        assert parameters is None or set(renames.values()) <= parameters, path


# Each kind of TensorFlow 0.x call the pass changes, as PROGRAM writes them.
TENSORFLOW_0_CALLS = [
    'tf.concat(1, [a, b])', 'tf.concat(-1, [a, b])', 'tf.concat(concat_dim=0, values=[a, b])',
    'tf.split(1, 2, a)', 'tf.pack([a, b])', 'tf.reverse(a, [False, True])',
    'tf.nn.softmax_cross_entropy_with_logits(a, b)',
    'tf.nn.sigmoid_cross_entropy_with_logits(a, targets=b)',
    'tf.batch_matmul(a, b, adj_x=True)',
    'tf.merge_all_summaries()', 'tf.train.SummaryWriter(b)']


@pytest.mark.parametrize('call', TENSORFLOW_0_CALLS)
def test_python_s_tree_shows_the_pass_each_call_it_changes(call):
    """The pass walks only the statements where Python's tree shows work (`work_lines`): each
    call it changes is among them, and the function before it, with TensorFlow 1's calls of
    the same functions, is not."""
    code = ('import tensorflow as tf\n\n\n'
            'def tensorflow_1(a, b, parts):\n'
            '    joined = tf.concat([a, b], 1) + tf.concat(parts, axis=0)\n'
            '    halves = tf.split(joined, 2, axis=1)\n'
            '    return tf.reverse(a, [1]), halves, tf.reduce_sum(a, axis=1)\n\n\n'
            'def tensorflow_0(a, b):\n'
            f'    value = {call}\n'
            '    return value\n')
    notes = port_with_work(tensorflow_0.TensorFlow0Pass, code, [11], untouched=10)
    assert {note.line for note in notes} == {11}
    assert port(code)[0].split('\n')[10] != code.split('\n')[10]


def test_tensorflow_1_calls_are_no_work():
    """TensorFlow 1's calls of the functions TensorFlow 1.0 changed (a list first, the axis
    by keyword, dimensions to `reverse`) and `str.split` show the pass nothing to do; a name
    first in `concat`, which it reports in a TensorFlow 0.x file, does."""
    code = ('import tensorflow as tf\n\n\n'
            'def net(a, b, parts):\n'
            '    joined = tf.concat([a, b], 1) + tf.concat(parts, axis=0)\n'
            "    words = 'a b'.split()\n"
            '    halves = tf.split(joined, 2, axis=1)\n'
            '    return tf.reverse(a, [1]), halves, tf.nn.softmax_cross_entropy_with_logits(\n'
            '        labels=b, logits=a), words\n')
    assert work_lines(tensorflow_0.TensorFlow0Pass, code) == []
    assert port(code) == (code, [])
    unclear = code.replace('tf.concat(parts, axis=0)', 'tf.concat(1, parts)')
    assert work_lines(tensorflow_0.TensorFlow0Pass, unclear) == [5]
