"""Flag defaults of another type than the flag (slimdata.port.flags), run with absl."""

import ast
import subprocess
import sys

from slimdata.port import edits, flags, pipeline, tree

SCRIPT = '''from absl import app, flags

flags.DEFINE_string('checkpoint', False, 'a checkpoint to start from')
flags.DEFINE_string('steps', 5, 'steps to train')
flags.DEFINE_integer('rate', 0.5, 'the learning rate')
flags.DEFINE_string('name', 'x', 'a name')
FLAGS = flags.FLAGS

def main(_):
    print(bool(FLAGS.checkpoint), FLAGS.steps + 1, FLAGS.rate * 2, FLAGS.name)

if __name__ == '__main__':
    app.run(main)
'''


def _run(folder, code, *args):
    (folder / 'train.py').write_text(code)
    return subprocess.run([sys.executable, 'train.py', *args], cwd=folder, capture_output=True,
                          text=True, timeout=120)


def test_defaults_of_the_wrong_type_get_the_flags_type(tmp_path):
    original = _run(tmp_path, SCRIPT)
    assert original.returncode != 0 and 'flag value must be a string' in original.stderr
    results, problems = tree.port_sources({'train.py': SCRIPT}, tf_upgrade=None)
    assert problems == []
    ported, notes = results['train.py']
    assert "flags.DEFINE_string('checkpoint', None, " in ported
    assert "flags.DEFINE_integer('steps', 5, " in ported
    assert "flags.DEFINE_float('rate', 0.5, " in ported
    assert "flags.DEFINE_string('name', 'x', " in ported
    assert sorted(note.line for note in notes if note.kind == edits.CHANGED) == [3, 4, 5]
    done = _run(tmp_path, ported)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ['False', str(5 + 1), str(0.5 * 2), 'x']
    assert _run(tmp_path, ported, '--steps=7').stdout.split()[1] == str(7 + 1)


def test_a_true_default_of_a_string_flag_is_reported():
    code = "from absl import flags\nflags.DEFINE_string('fast', True, 'h')\n"
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    ported, notes = results['m.py']
    assert ported == code
    assert [(note.kind, note.line) for note in notes] == [(edits.NOT_PORTED, 2)]


def test_the_pass_runs_only_where_python_s_tree_shows_such_a_default():
    """Flags whose defaults are of their type (a string, None, an int of an integer flag, a
    name): the pass has no work, by Python's tree. One default of another type, positional
    or `default=`, under any spelling of `flags`, and it runs."""
    fine = ("import tensorflow as tf\nfrom absl import flags\nflags.DEFINE_string('a', 'x', "
            "'')\ntf.app.flags.DEFINE_string('b', None, '')\nflags.DEFINE_integer('c', 3, '')\n"
            "flags.DEFINE_string('d', default=DEFAULT, help='')\n")
    for code, works in ((fine, False),
                        (fine + "flags.DEFINE_string('e', default=5, help='')\n", True),
                        (fine + "tf.app.flags.DEFINE_integer('f', 0.5, '')\n", True),
                        (fine + "DEFINE_string('g', True, '')\n", True)):
        context = edits.Context('m.py')
        context.python_tree = (code, ast.parse(code))
        assert flags.FlagDefaultsPass.has_work(code, context) is works, code
        names = [stage.stage for stage in pipeline.port_file(code, edits.Context('m.py'))]
        assert ('flag defaults' in names) is works, (code, names)
