"""`tf.name_scope(name, [values])` given by position (slimdata.port.scopes), run."""

import subprocess
import sys

import pytest

from slimdata.port import tree

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
