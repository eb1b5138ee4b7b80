"""`tf.name_scope(name, [values])` given by position (slimdata.port.scopes), run."""

import ast
import subprocess
import sys

import pytest

from slimdata.port import edits, scopes, tree

SCRIPT = '''import tensorflow.compat.v1 as tf

def double(x, scope=None):
    with tf.name_scope(scope, [x]):
        with tf.variable_scope('inner', 'default', [x]):
            return tf.add(x, x, name='sum')

def main():
    with tf.Graph().as_default():
        y = double(tf.constant(2), scope='double')
        print(y.op.name)
        with tf.Session() as session:
            print(session.run(y))

if __name__ == '__main__':
    main()
'''


@pytest.mark.slow
def test_name_scope_values_by_position_run_after_the_port(tmp_path):
    (tmp_path / 'original.py').write_text(SCRIPT)
    original = subprocess.run([sys.executable, 'original.py'], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)
    assert original.returncode != 0
    results, problems = tree.port_sources({'m.py': SCRIPT}, tf_upgrade=None)
    assert problems == []
    ported, notes = results['m.py']
    assert 'tf.name_scope(scope, values=[x])' in ported
    assert "tf.variable_scope('inner', 'default', [x])" in ported  # a string default_name
    [line] = [number for number, text in enumerate(ported.splitlines(), 1) if 'values=' in text]
    assert [note.line for note in notes if 'values=' in note.message] == [line]
    (tmp_path / 'm.py').write_text(ported)
    done = subprocess.run([sys.executable, 'm.py'], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ['double/inner/sum', str(2 + 2)]


CALLS = '''import tensorflow as tf
from tensorflow import variable_scope as vs

def f(x, scope=None):
    with tf.name_scope(scope or default_scope(x), [x]):
        return tf.pad(x, [[1, 1]])

def g(x):
    with vs('a', (x,)):
        with tf.variable_scope('b', 'default', [x]):
            with tf.name_scope('c', values=[x]):
                return x
'''


def test_the_calls_are_found_whatever_their_first_argument_and_name():
    """A first argument with a call in it (once missed by a text pattern), and an imported
    alias: ported; a string default_name, a keyword `values` and other calls' lists: left."""
    results, problems = tree.port_sources({'m.py': CALLS}, tf_upgrade=None)
    assert problems == []
    ported, notes = results['m.py']
    assert ported == (CALLS.replace('default_scope(x), [x]', 'default_scope(x), values=[x]')
                      .replace("vs('a', (x,))", "vs('a', values=(x,))"))
    assert sorted(note.line for note in notes if 'values=' in note.message) == [5, 9]


def test_a_file_without_such_a_call_runs_no_pass_by_python_s_tree():
    """Naming a scope function is not enough: by Python's tree, a file whose scope calls
    all have a string or a keyword second has no work, and a file with one has."""
    code = CALLS.replace('[x]):\n        return tf.pad', "'f'):\n        return tf.pad").replace(
        "vs('a', (x,))", "vs('a')")
    context = edits.Context('m.py')
    context.python_tree = (code, ast.parse(code))
    assert not scopes.ScopeValuesPass.has_work(code, context)
    context.python_tree = (CALLS, ast.parse(CALLS))
    assert scopes.ScopeValuesPass.has_work(CALLS, context)
    # Without a tree left by a stage, its text decides.
    assert scopes.ScopeValuesPass.has_work(code, edits.Context('m.py'))


def test_a_scope_function_from_a_star_import_of_the_tree_is_found():
    """`vs` from another file's star import, the file naming no scope function: ported."""
    sources = {'a.py': 'from tensorflow import variable_scope as vs\n',
               'b.py': 'from a import *\n\n\ndef f(x):\n    with vs("a", [x]):\n'
                       '        return x\n'}
    results, problems = tree.port_sources(sources, tf_upgrade=None)
    assert problems == []
    assert 'with vs("a", values=[x]):' in results['b.py'][0]
    assert [note.line for note in results['b.py'][1] if 'values=' in note.message] == [5]
