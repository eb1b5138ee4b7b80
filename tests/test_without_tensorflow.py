"""Where TensorFlow is not installed ("bring your own TensorFlow"), what needs it says so at
once, in one line naming what needs it and the command that installs it: `from slimdata
import slim`, the compat modules, `slimdata port` (before any file is ported) and
`slimdata patch-tf-slim install|status` (before anything is written). What does not need it
still runs.

Each case runs in a subprocess whose start-up hook (tests/import_watch/) makes
`import tensorflow` fail as it does where TensorFlow is not installed.
"""

import os
import subprocess
import sys

import pytest

from slimdata.cli import patch_tf_slim
from slimdata.tensorflow_required import INSTALL_COMMAND

WATCH_HOOK = os.path.join(os.path.dirname(__file__), 'import_watch')
HANG = 300  # a hang guard only


def run_without_tensorflow(*argv, cwd=None):
    env = dict(os.environ, SLIMDATA_TEST_HIDE_TENSORFLOW='1',
               PYTHONPATH=os.pathsep.join([WATCH_HOOK, os.environ.get('PYTHONPATH', '')]))
    return subprocess.run([sys.executable, *argv], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=HANG)


def assert_one_line_naming(stderr, needed_by):
    """The last line of stderr (all of it for a command) says what needs TensorFlow and the
    command that installs it, and not the extra of a package index slimdata is not on."""
    last = stderr.strip().splitlines()[-1]
    assert f'{needed_by} needs TensorFlow, which is not installed: {INSTALL_COMMAND}' in last
    assert 'slimdata[cpu]' not in stderr


def test_the_hook_hides_tensorflow():
    run = run_without_tensorflow('-c', 'import tensorflow')
    assert run.returncode == 1
    assert "ModuleNotFoundError: No module named 'tensorflow'" in run.stderr


@pytest.mark.parametrize('statement, needed_by', [
    ('from slimdata import slim', 'from slimdata import slim'),
    ('import slimdata.slim.learning', 'from slimdata import slim'),
    ('from slimdata import dataset_data_provider', "slimdata's TF-Slim API"),
])
def test_importing_what_needs_tensorflow_says_what_to_install(statement, needed_by):
    run = run_without_tensorflow('-c', statement)
    assert run.returncode == 1
    assert_one_line_naming(run.stderr, needed_by)
    assert "No module named 'tensorflow'" not in run.stderr  # not tf_slim's bare error


def test_port_says_it_before_porting_anything(tmp_path):
    source = tmp_path / 'repo'
    source.mkdir()
    (source / 'train.py').write_text('import tensorflow as tf\nx = tf.contrib.slim\n')
    run = run_without_tensorflow('-m', 'slimdata', 'port', str(source), str(tmp_path / 'dst'))
    assert run.returncode == 1
    assert run.stderr.count('\n') == 1  # one line, no traceback
    assert run.stderr.startswith('slimdata port: error: ')
    assert_one_line_naming(run.stderr, "its TF1-call pass (TensorFlow's tf_upgrade_v2; "
                                       '--tf-upgrade off ports without it)')
    assert not (tmp_path / 'dst').exists()


@pytest.mark.parametrize('action', ['status', 'install'])
def test_patch_tf_slim_says_it_before_writing_anything(action):
    hook = patch_tf_slim.hook_path()
    before = hook.read_bytes() if hook.exists() else None
    run = run_without_tensorflow('-m', 'slimdata', 'patch-tf-slim', action)
    after = hook.read_bytes() if hook.exists() else None
    if after is not None and before is None:  # never leave the test's environment changed
        hook.unlink()
    elif after != before:
        hook.write_bytes(before)
    assert run.returncode == 1
    assert run.stderr.count('\n') == 1
    assert run.stderr.startswith('slimdata patch-tf-slim: error: ')
    assert_one_line_naming(run.stderr, 'tf_slim, which the hook patches,')
    assert after == before


def test_the_record_tools_run_without_it(tmp_path):
    """Against the same hook: a conversion, and a count of what it wrote."""
    from slimdata.datasets import synthetic
    synthetic.make_image_folder(str(tmp_path / 'raw'), num_classes=2, images_per_class=3)
    convert = run_without_tensorflow('-m', 'slimdata', 'convert', 'image-folder',
                                     str(tmp_path / 'raw'), str(tmp_path / 'out'), '-q')
    assert convert.returncode == 0, convert.stderr
    count = run_without_tensorflow('-m', 'slimdata', 'count', str(tmp_path / 'out'))
    assert count.returncode == 0, count.stderr
    assert '6' in count.stdout.splitlines()[-1]
