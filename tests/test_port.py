"""`slimdata port`: old TF-Slim / TF1 code ported, then imported and run.

The fast tests port snippets in memory without tf_upgrade_v2 (`tf_upgrade=None`) and execute
the result, so they check what the ported code does, not only its text. The slow ones port
tests/port_fixture/shapes_slim (a small repository written in the style of SSD-Tensorflow and
models/research/slim: tf.contrib.slim, arg scopes, contrib initializers, tf.layers, private
ops, Python 2 habits) with TensorFlow's tf_upgrade_v2 as the command does, then run its own
converter and train script: the records must hold the source images' pixels, and training
must run its steps.
"""

import io
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tokenize

import numpy as np
import pytest
from PIL import Image

from slimdata.port import edits, entry, tree
from slimdata.records import example_schema, tfrecord

FIXTURE = pathlib.Path(__file__).parent / 'port_fixture' / 'shapes_slim'
CLASSES = ('circle', 'square', 'triangle')


def _port(code: str, path: str = 'module.py'):
    results, problems = tree.port_sources({path: code}, tf_upgrade=None)
    assert problems == []
    return results[path]


def _run(code: str) -> dict:
    namespace: dict = {'__name__': 'ported'}
    exec(compile(code, 'ported.py', 'exec'), namespace)  # noqa: S102
    return namespace


def _kinds(notes, kind):
    return [note for note in notes if note.kind == kind]


# -- data imports: every form of tf_slim / tf.contrib.slim goes to slimdata --------------------

@pytest.mark.parametrize('old', [
    'import tf_slim as slim\nx = slim.tfexample_decoder.Image\n',
    'from tf_slim import tfexample_decoder\nx = tfexample_decoder.Image\n',
    'from tf_slim.data import tfexample_decoder as decoder\nx = decoder.Image\n',
    'import tf_slim.data.tfexample_decoder\nx = tf_slim.data.tfexample_decoder.Image\n',
    'import tensorflow as tf\nslim = tf.contrib.slim\nx = slim.tfexample_decoder.Image\n',
    'from tensorflow.contrib import slim\nx = slim.tfexample_decoder.Image\n',
    'import tensorflow.contrib.slim as slim\nx = slim.tfexample_decoder.Image\n',
    'from tensorflow.contrib.slim.python.slim.data import tfexample_decoder\n'
    'x = tfexample_decoder.Image\n',
    'import tensorflow as tf\nx = tf.contrib.slim.tfexample_decoder.Image\n',
])
def test_data_imports_of_every_form_reach_slimdata(old):
    import slimdata.tfexample_decoder
    code, notes = _port(old)
    assert 'contrib' not in code and 'tf_slim.data' not in code
    assert _run(code)['x'] is slimdata.tfexample_decoder.Image
    assert _kinds(notes, edits.CHANGED) and not _kinds(notes, edits.NOT_PORTED)


def test_slim_alias_reaches_slimdata_data_and_tf_slim_layers():
    import tf_slim

    import slimdata.dataset_data_provider
    code, _ = _port('import tensorflow as tf\nslim = tf.contrib.slim\n'
                    'p = slim.dataset_data_provider.DatasetDataProvider\n'
                    'c = slim.conv2d\nl = slim.learning.train\n')
    namespace = _run(code)
    assert namespace['p'] is slimdata.dataset_data_provider.DatasetDataProvider
    assert namespace['c'] is tf_slim.conv2d
    assert namespace['l'] is tf_slim.learning.train


# -- contrib.framework / contrib.layers: the names the issue lists ----------------------------

@pytest.mark.parametrize('old, successor', [
    ('tf.contrib.framework.arg_scope', 'arg_scope'),
    ('tf.contrib.framework.add_arg_scope', 'add_arg_scope'),
    ('tf.contrib.layers.xavier_initializer', 'xavier_initializer'),
    ('tf.contrib.layers.l2_regularizer', 'l2_regularizer'),
    ('tf.contrib.layers.softmax', 'softmax'),
    ('tf.contrib.layers.initializers.xavier_initializer', 'initializers.xavier_initializer'),
    ('tf.contrib.layers.utils.smart_cond', 'utils.smart_cond'),
    ('tf.contrib.framework.get_or_create_global_step', 'get_or_create_global_step'),
])
def test_contrib_names_become_tf_slim_names(old, successor):
    import tf_slim
    code, notes = _port(f'import tensorflow as tf\n\n\ndef f():\n    return {old}\n')
    expected = tf_slim
    for part in successor.split('.'):
        expected = getattr(expected, part)
    assert _run(code)['f']() is expected
    # Notes name lines of the ported file (where `import tf_slim` came in above).
    return_line = code.splitlines().index(f'    return tf_slim.{successor}') + 1
    assert [note.line for note in _kinds(notes, edits.CHANGED)] == [return_line]


def test_contrib_variables_module_import():
    import tf_slim
    code, _ = _port('from tensorflow.contrib.framework.python.ops import variables as cv\n'
                    'f = cv.get_or_create_global_step\n')
    assert _run(code)['f'] is tf_slim.get_or_create_global_step


def test_contrib_without_successor_is_left_and_reported_with_the_reason():
    old = ('import tensorflow as tf\n\n'
           'def build():\n'
           '    tf.contrib.quantize.create_training_graph()  # quantization-aware training\n')
    code, notes = _port(old)
    assert code == old
    [note] = _kinds(notes, edits.NOT_PORTED)
    assert note.line == 4 and 'no successor' in note.message and 'quantize' in note.message


# -- private TensorFlow modules ---------------------------------------------------------------

def test_private_ops_become_public_calls_and_their_imports_go():
    import tensorflow as tf
    old = ('import tensorflow as tf\n'
           'from tensorflow.python.ops import array_ops\n'
           'from tensorflow.python.ops import control_flow_ops\n\n'
           'cond = control_flow_ops.cond\n'
           'check = control_flow_ops.Assert\n'
           'unstack = array_ops.unstack\n')
    code, notes = _port(old)
    assert 'tensorflow.python' not in code
    namespace = _run(code)
    assert namespace['cond'] is tf.compat.v1.cond
    assert namespace['check'] is tf.compat.v1.Assert
    assert namespace['unstack'] is tf.compat.v1.unstack
    assert sum('removed the import' in note.message for note in notes) == 2


def test_private_op_without_public_name_is_kept_and_reported():
    old = ('from tensorflow.python.ops import control_flow_ops\n'
           'f = control_flow_ops.with_dependencies\n')
    code, notes = _port(old)
    assert code == old
    [note] = _kinds(notes, edits.NOT_PORTED)
    assert note.line == 2 and 'private TensorFlow module' in note.message


# -- Python 3 ------------------------------------------------------------------------------------


# -- the entry point ------------------------------------------------------------------------------

def test_graph_mode_switched_on_where_a_script_starts_once(monkeypatch):
    old = ('import tensorflow as tf\n\n\ndef main(_):\n    pass\n\n\n'
           "if __name__ == '__main__':\n    tf.app.run()\n")
    monkeypatch.setattr(entry, 'is_module', lambda name: False)  # as without tf-keras
    code, notes = _port(old)
    assert code.startswith("import tensorflow as tf\nif __name__ == '__main__':  # TF1 "
                           'behaviour (slimdata port)\n    tf.compat.v1.disable_v2_behavior()\n'
                           '    tf.compat.v1.enable_resource_variables()\n')
    assert 'pip install --no-deps "tf-keras==' in notes[0].message
    assert _port(code)[0] == code  # a second port adds nothing


# A package run as `python -m pkg`: its __main__.py has no guard, and reads a shape TF1's way.
PACKAGE_MAIN = """import tensorflow.compat.v1 as tf

images = tf.placeholder(tf.float32, [None, 28, 28, 1])
print('width', images.get_shape()[2].value)
"""


@pytest.mark.slow
def test_a_package_main_without_a_guard_is_an_entry_point(tmp_path):
    source, ported = tmp_path / 'src', tmp_path / 'ported'
    (source / 'pkg').mkdir(parents=True)
    (source / 'pkg' / '__init__.py').write_text('')
    (source / 'pkg' / '__main__.py').write_text(PACKAGE_MAIN)

    def run_package(root):
        return subprocess.run([sys.executable, '-m', 'pkg'], cwd=root, capture_output=True,
                              text=True, timeout=300, check=False)

    original = run_package(source)
    assert original.returncode != 0 and 'eager execution' in original.stderr
    tree.port_tree(str(source), str(ported), tf_upgrade=None)
    after = run_package(ported)
    assert after.returncode == 0, after.stderr[-2000:]
    assert after.stdout.splitlines()[-1] == 'width 28'


# A script of TF1 days mixing a Keras layer with TF1's tf.layers.Layer, as deeplab's
# core/conv2d_ws.py does: Keras 3 has no tf.layers ("`Layer` is not available with Keras 3").
KERAS_2_SCRIPT = """import tensorflow as tf


class Conv2D(tf.keras.layers.Conv2D, tf.compat.v1.layers.Layer):
    pass


if __name__ == '__main__':
    inputs = tf.compat.v1.placeholder(tf.float32, [1, 4, 4, 1])
    outputs = Conv2D(2, 3)(inputs)
    print(tf.keras.layers.Conv2D.__module__.split('.')[0], outputs.shape.as_list())
"""


@pytest.mark.slow
def test_tf_keras_is_keras_2_in_a_ported_script(tmp_path):
    pytest.importorskip('tf_keras')
    script = tmp_path / 'script.py'
    script.write_text(KERAS_2_SCRIPT)
    environment = {key: value for key, value in os.environ.items()
                   if key != 'TF_USE_LEGACY_KERAS'}
    original = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              env=environment, timeout=300, check=False)
    assert original.returncode != 0 and 'not available with Keras 3' in original.stderr
    code, notes = _port(KERAS_2_SCRIPT)
    assert any('tf.keras is Keras 2 (tf-keras)' in note.message for note in notes)
    script.write_text(code)
    ported = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            env=environment, timeout=300, check=False)
    assert ported.returncode == 0, ported.stderr[-2000:]
    assert ported.stdout.split('\n')[-2] == 'tf_keras [1, 2, 2, 2]'


def test_comments_and_formatting_survive():
    old = ('"""Doc."""\n\nimport tensorflow as tf  # TF1\n\n'
           'slim = tf.contrib.slim   # the slim alias\n\n\n'
           'def net(x):\n'
           '    # A comment that must survive.\n'
           '    with tf.contrib.framework.arg_scope([slim.conv2d], padding="SAME"):  # why\n'
           '        return slim.conv2d(x,   8, [3, 3])   # odd spacing kept\n')
    code, _ = _port(old)
    for line in ('import tensorflow as tf  # TF1', '# A comment that must survive.',
                 'return slim.conv2d(x,   8, [3, 3])   # odd spacing kept',
                 'from slimdata import slim   # the slim alias'):
        assert line in code
    assert 'tf_slim.arg_scope([slim.conv2d], padding="SAME"):  # why' in code


def test_python_2_file_is_ported_by_the_python_2_stage_first():
    old = 'import tensorflow as tf\nslim = tf.contrib.slim\nprint "hello"\n'
    results, problems = tree.port_sources({'old.py': old}, tf_upgrade=None)
    assert problems == []
    assert results['old.py'][0] == ('import tensorflow as tf\nfrom slimdata import slim\n'
                                    'print("hello")\n')
    assert [(note.line, note.kind) for note in results['old.py'][1]] == [(3, 'changed'),
                                                                        (2, 'changed')]


# -- the tree: copies, in place with a backup, never touching unchanged files ----------------

def _small_tree(root: pathlib.Path) -> None:
    (root / 'pkg').mkdir(parents=True)
    (root / 'pkg' / 'data.py').write_text('import tf_slim as slim\nx = slim.dataset.Dataset\n')
    (root / 'pkg' / 'plain.py').write_text('import os\n')
    (root / 'notes.txt').write_text('not python\n')


def test_in_place_keeps_originals_and_leaves_unchanged_files_alone(tmp_path):
    root = tmp_path / 'repo'
    _small_tree(root)
    os.utime(root / 'pkg' / 'plain.py', (1_000_000, 1_000_000))
    report = tree.port_tree(str(root), tf_upgrade=None)
    assert [file.path for file in report.changed_files] == ['pkg/data.py']
    assert (root / 'pkg' / 'data.py').read_text().startswith('from slimdata import slim')
    backup = tmp_path / 'repo.port-backup'
    assert (backup / 'pkg' / 'data.py').read_text().startswith('import tf_slim as slim')
    assert not (backup / 'pkg' / 'plain.py').exists()
    assert (root / 'pkg' / 'plain.py').stat().st_mtime == 1_000_000
    assert [path.name for path in root.rglob('.*')] == []  # no temporaries left
    with pytest.raises(tree.PortError, match='already holds another version of pkg/data.py'):
        (root / 'pkg' / 'data.py').write_text('import tf_slim as slim\n')
        tree.port_tree(str(root), tf_upgrade=None)


def test_copy_to_destination_and_dry_run(tmp_path):
    root = tmp_path / 'repo'
    _small_tree(root)
    before = {path: path.read_bytes() for path in root.rglob('*') if path.is_file()}
    report = tree.port_tree(str(root), str(tmp_path / 'dry'), dry_run=True, tf_upgrade=None)
    assert report.changed_files and not (tmp_path / 'dry').exists()
    tree.port_tree(str(root), str(tmp_path / 'out'), tf_upgrade=None)
    assert {path: path.read_bytes() for path in root.rglob('*') if path.is_file()} == before
    assert (tmp_path / 'out' / 'notes.txt').read_text() == 'not python\n'
    assert (tmp_path / 'out' / 'pkg' / 'data.py').read_text().startswith('from slimdata')
    assert tree.port_tree(str(root), str(tmp_path / 'out'), tf_upgrade=None).already_done
    (root / 'notes.txt').write_text('edited since\n')
    with pytest.raises(tree.PortError, match=r'not empty, and is not the port of .* \(notes.txt '
                                             r'differs\)'):
        tree.port_tree(str(root), str(tmp_path / 'out'), tf_upgrade=None)
    with pytest.raises(tree.PortError, match='inside'):
        tree.port_tree(str(root), str(root / 'sub'), tf_upgrade=None)


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, '-m', 'slimdata', *args], capture_output=True,
                          text=True, check=False, cwd=cwd)


def test_cli_usage_errors_exit_2_and_name_the_path(tmp_path):
    missing = _cli('port', str(tmp_path / 'missing'))
    assert missing.returncode == 2 and 'does not exist' in missing.stderr
    _small_tree(tmp_path / 'repo')
    (tmp_path / 'taken').mkdir()
    (tmp_path / 'taken' / 'f').write_text('x')
    taken = _cli('port', str(tmp_path / 'repo'), str(tmp_path / 'taken'), '--tf-upgrade', 'off')
    assert taken.returncode == 2 and 'taken exists and is not empty' in taken.stderr


def test_cli_report_names_every_change_and_what_is_not_ported(tmp_path):
    root = tmp_path / 'repo'
    root.mkdir()
    (root / 'model.py').write_bytes(b'x = 1\n')
    (root / 'latin1.py').write_bytes(b'# caf\xe9\nimport tf_slim\n')
    (root / 'net.py').write_text('import tensorflow as tf\nslim = tf.contrib.slim\n'
                                 'tf.contrib.quantize.create_training_graph()\n')
    result = _cli('port', str(root), str(tmp_path / 'out'), '--tf-upgrade', 'off',
                  '--json', str(tmp_path / 'report.json'))
    assert result.returncode == 1  # the file that is not UTF-8 is a problem
    out = result.stdout
    assert '3 Python files, 1 changed: 1 changes, 1 lines not ported' in out
    assert re.search(r'net\.py\n\s+2\s+changed\s+tf\.contrib\.slim -> slimdata\.slim', out)
    assert 'net.py:3: tensorflow.contrib.quantize.create_training_graph' in out
    assert 'latin1.py: not UTF-8 text' in out
    assert (tmp_path / 'report.json').stat().st_size > 0


def test_a_coding_declaration_is_honoured(tmp_path):
    root = tmp_path / 'repo'
    root.mkdir()
    (root / 'm.py').write_bytes(b'# -*- coding: latin-1 -*-\n# caf\xe9\nimport tf_slim as slim\n')
    tree.port_tree(str(root), str(tmp_path / 'out'), tf_upgrade=None)
    assert (tmp_path / 'out' / 'm.py').read_bytes() == (
        b'# -*- coding: latin-1 -*-\n# caf\xe9\nfrom slimdata import slim\n')


# -- a whole repository in the style of the old slim repos: ported, converted, trained ---------

def _code_names(code: str) -> set:
    return {token.string for token in tokenize.generate_tokens(io.StringIO(code).readline)
            if token.type == tokenize.NAME}


def _source_images(root: pathlib.Path) -> dict:
    """PNGs of three classes, of different sizes; returns {bytes of the PNG: (class, pixels)}."""
    rng = np.random.default_rng(7)
    images = {}
    for class_id, name in enumerate(CLASSES):
        (root / name).mkdir(parents=True)
        for index in range(4):
            pixels = rng.integers(0, 256, (9 + index, 11 + class_id, 3), dtype=np.uint8)
            path = root / name / f'{index}.png'
            Image.fromarray(pixels).save(path)
            images[path.read_bytes()] = (class_id, pixels)
    return images


def _python(*args, cwd):
    environment = dict(os.environ, PYTHONPATH=str(cwd), TF_CPP_MIN_LOG_LEVEL='3')
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          check=False, cwd=cwd, env=environment, timeout=600)


@pytest.fixture(scope='module')
def ported_fixture(tmp_path_factory):
    """The fixture repository ported by the command, as a user runs it (tf_upgrade_v2 too)."""
    work = tmp_path_factory.mktemp('port')
    original = work / 'shapes_slim'
    shutil.copytree(FIXTURE, original)
    result = _cli('port', str(original), str(work / 'ported'))
    assert result.returncode == 0, result.stderr
    return work, result.stdout


@pytest.mark.slow
def test_fixture_repository_ported_with_nothing_left(ported_fixture):
    work, report = ported_fixture
    assert 'lines not ported' in report and ', 0 lines not ported' in report
    assert 'Not ported' not in report
    ported = work / 'ported'
    for path in FIXTURE.rglob('*.py'):
        code = (ported / path.relative_to(FIXTURE)).read_text()
        names = _code_names(code)  # docstrings and comments may still say 'contrib'
        assert 'contrib' not in names and 'python' not in names, path
        # tf is tensorflow.compat.v1 after tf_upgrade_v2's safety mode: no tf.compat.v1.x
        if 'import tensorflow as tf' in path.read_text():
            assert 'import tensorflow.compat.v1 as tf' in code
            assert 'tf.compat.v1.' not in code
        for line in path.read_text().splitlines():  # every comment survives
            if line.strip().startswith('#'):
                assert line in code, (path, line)


@pytest.mark.slow
def test_a_second_port_with_tf_upgrade_v2_changes_nothing(ported_fixture):
    work, _ = ported_fixture
    again = _cli('port', str(work / 'ported'), str(work / 'again'))
    assert again.returncode == 0, again.stderr
    assert ' 0 changed: 0 changes' in again.stdout
    for path in (work / 'ported').rglob('*'):
        if path.is_file():
            assert (work / 'again' / path.relative_to(work / 'ported')).read_bytes() == (
                path.read_bytes()), path


@pytest.mark.slow
def test_the_original_fails_on_this_tensorflow(ported_fixture, tmp_path):
    """The independent expectation that the port is needed at all."""
    result = _python('datasets/convert_shapes.py', '--source_dir', str(tmp_path),
                     '--dataset_dir', str(tmp_path), cwd=FIXTURE)
    assert result.returncode != 0
    assert "has no attribute 'app'" in result.stderr or 'contrib' in result.stderr


@pytest.mark.slow
def test_ported_converter_writes_the_source_pixels_and_training_runs(ported_fixture, tmp_path):
    work, _ = ported_fixture
    ported = work / 'ported'
    images = _source_images(tmp_path / 'src')
    records = tmp_path / 'records'
    records.mkdir()
    converted = _python('datasets/convert_shapes.py', f'--source_dir={tmp_path / "src"}',
                        f'--dataset_dir={records}', cwd=ported)
    assert converted.returncode == 0, converted.stderr[-3000:]
    assert 'Wrote 12 images' in converted.stdout
    seen = []
    for record in tfrecord.iter_records(str(records / 'shapes_train.tfrecord')):
        features = {key: values for key, (_, values)
                    in example_schema.parse_example(record).items()}
        encoded = features['image/encoded'][0]
        class_id, pixels = images[encoded]  # the file's own bytes, unchanged
        assert features['image/format'] == [b'png']
        assert features['image/class/label'] == [class_id]
        assert features['image/height'] == [pixels.shape[0]]
        assert features['image/width'] == [pixels.shape[1]]
        seen.append(encoded)
    assert sorted(seen) == sorted(images)

    trained = _python('train.py', f'--dataset_dir={records}', f'--train_dir={tmp_path / "t"}',
                      '--max_number_of_steps=3', cwd=ported)
    assert trained.returncode == 0, trained.stderr[-3000:]
    loss = float(re.search(r'final loss (\S+)', trained.stdout).group(1))
    assert np.isfinite(loss) and loss > 0
    checkpoint = (tmp_path / 't' / 'checkpoint').read_text()
    assert 'model.ckpt-3' in checkpoint
