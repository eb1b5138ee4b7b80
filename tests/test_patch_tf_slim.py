"""`slimdata.patch_tf_slim()` and the start-up hook: unedited tf_slim code on TensorFlow 2.21.

tf_slim always runs in a fresh subprocess here: the patch changes tf_slim (and adds names to
TensorFlow's private modules) for the rest of an interpreter, and other tests check tf_slim
1.1.0 unpatched (test_compat's strict xfails). The programs run are in tests/tf_slim_programs/:
`import_form.py` (each import form of tf_slim's decoder, patched before or after it) and
`run_od_style.py` (code written the way the OD API uses tf_slim: a Tensor subclass defined at
import time, BackupHandler, LookupTensor with a label map, the sequence decoder, decoding in
tf.data and tf.function). They check decoded values against the arrays they encoded.

Hook tests install into a throwaway environment in a temporary folder (a `--without-pip` venv
whose site-packages sees this venv's packages), with that environment's Python; the project's
venv is never written. A control run without any patch shows that each program needs it.
"""

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from slimdata.cli import patch_tf_slim as command
from test_tf_slim_suite import SUITE, TF_SLIM_DATA_DIR

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'benchmarks'))
from bench_hook_startup import make_environment  # noqa: E402

PROGRAMS = Path(__file__).resolve().parent / 'tf_slim_programs'
sys.path.insert(0, str(PROGRAMS))
from import_form import FORMS  # noqa: E402

OD_STYLE_CHECKS = [
    'ok: detection decode in tf.data.Dataset.map',
    'ok: detection decode in tf.function',
    'ok: sequence decode in tf.data.Dataset.map',
    'ok: 16-bit PNG through a subclass of Image defined before the patch',
    'ok: unknown item named in a KeyError that is a ValueError',
    'ok: sequence handlers take their default prefix=None',
]
NO_CASE = "module 'tensorflow.python.ops.control_flow_ops' has no attribute 'case'"
HOOK_COMMAND = ['-m', 'slimdata', 'patch-tf-slim']


def run(python, *args, cwd=None, check=True):
    # tf_slim's own tests make temporary folders they never remove: give them a TMPDIR that
    # goes when the run ends.
    with tempfile.TemporaryDirectory(prefix='slimdata-test-tmp-') as temporary:
        result = subprocess.run([str(python), *map(str, args)], cwd=cwd, capture_output=True,
                                text=True, timeout=600,
                                env={**os.environ, 'TF_CPP_MIN_LOG_LEVEL': '2',
                                     'TMPDIR': temporary})
    if check and result.returncode != 0:
        raise AssertionError(f'{args} exited with {result.returncode}:\n'
                             f'{result.stdout[-3000:]}\n{result.stderr[-5000:]}')
    return result


def hook_file(python) -> Path:
    return Path(run(python, '-c', 'from slimdata.cli import patch_tf_slim as command; '
                                  'print(command.hook_path())').stdout.strip())


def start_up_modules(python):
    return set(run(python, '-c', 'import sys; print(" ".join(sys.modules))').stdout.split())


@pytest.fixture(scope='module')
def hooked_python(tmp_path_factory):
    """The python of a throwaway environment with the hook installed."""
    python = make_environment(tmp_path_factory.mktemp('hooked') / 'env')
    run(python, *HOOK_COMMAND, 'install')
    return python


# --- patch_tf_slim(), called in code ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize('when', ['before', 'after'])
@pytest.mark.parametrize('form', sorted(FORMS))
def test_every_import_form_decodes_once_patched_before_or_after_the_import(form, when):
    result = run(sys.executable, PROGRAMS / 'import_form.py', form, when)
    assert result.stdout.splitlines()[-1] == 'decoded'


@pytest.mark.slow
def test_unpatched_the_same_program_fails_as_tf_slim_does_on_tensorflow_2_21():
    result = run(sys.executable, PROGRAMS / 'import_form.py', 'import tf_slim as slim',
                 'untouched', check=False)
    assert result.returncode != 0 and NO_CASE in result.stderr


@pytest.mark.slow
def test_od_style_code_works_when_patched_after_it_was_imported(tmp_path):
    # Its Tensor subclass, decoders and handlers all exist before the call.
    result = run(sys.executable, PROGRAMS / 'run_od_style.py', 'call-after', tmp_path)
    assert result.stdout.splitlines() == ['ok: patched after import'] + OD_STYLE_CHECKS


@pytest.mark.slow
def test_patch_reports_its_changes_once_logs_them_and_is_idempotent():
    code = '''
import logging, sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format="LOG %(name)s %(message)s")
import tf_slim
from slimdata import tf_slim_patch
import slimdata
assert not tf_slim_patch.is_patched()
first = slimdata.patch_tf_slim()
assert tf_slim_patch.is_patched()
second = slimdata.patch_tf_slim()
print("FIRST", "|".join(first))
print("SECOND", "|".join(second))
'''
    lines = run(sys.executable, '-c', code).stdout.splitlines()
    first = next(line for line in lines if line.startswith('FIRST '))[6:].split('|')
    assert next(line for line in lines if line.startswith('SECOND ')) == 'SECOND '
    # The names tf_slim 1.1.0 uses that TensorFlow 2.21's private modules no longer have.
    assert first[:9] == [
        'tensorflow.python.ops.control_flow_ops.case = tf.compat.v1.case',
        'tensorflow.python.ops.control_flow_ops.cond = tf.compat.v1.cond',
        'tensorflow.python.ops.control_flow_ops.Assert = tf.compat.v1.Assert',
        'tensorflow.python.ops.control_flow_ops.while_loop = tf.compat.v1.while_loop',
        'tensorflow.python.ops.array_ops.stack = tf.stack',
        'tensorflow.python.ops.array_ops.unstack = tf.unstack',
        'tensorflow.python.framework.ops.Tensor = tf.Tensor',
        'tensorflow.python.framework.ops.IndexedSlices = tf.IndexedSlices',
        'tensorflow.python.ops.variable_scope.variable = tf.compat.v1.Variable']
    assert [change.split(':')[0] for change in first[9:]] == [
        'tf_slim Image._decode', 'tf_slim TFExampleDecoder.decode',
        'tf_slim TFSequenceExampleDecoder.decode', 'tf_slim BoundingBoxSequence.__init__',
        'tf_slim KeypointsSequence.__init__', 'tf_slim batch_norm']
    logged = [line for line in lines if line.startswith('LOG slimdata.tf_slim_patch ')]
    assert logged == [f'LOG slimdata.tf_slim_patch patch_tf_slim: {change}' for change in first] \
        + ['LOG slimdata.tf_slim_patch patch_tf_slim: tf_slim.data.tfexample_decoder is '
           'patched already']


@pytest.mark.slow
def test_patch_without_tf_slim_says_it_is_not_installed():
    code = '''
import sys
class HideTfSlim:
    def find_spec(self, name, path=None, target=None):
        if name == "tf_slim" or name.startswith("tf_slim."):
            raise ModuleNotFoundError("No module named 'tf_slim'", name="tf_slim")
sys.meta_path.insert(0, HideTfSlim())
import slimdata
try:
    slimdata.patch_tf_slim()
except ImportError as error:
    print(error)
'''
    assert 'tf_slim is not installed' in run(sys.executable, '-c', code).stdout


@pytest.mark.slow
def test_patch_tf_slim_is_exported_without_importing_tensorflow():
    code = ('import sys, slimdata\n'
            'assert "tensorflow" not in sys.modules\n'
            'from slimdata import tf_slim_patch\n'
            'assert slimdata.patch_tf_slim is tf_slim_patch.patch_tf_slim\n'
            'from slimdata import patch_tf_slim\n')
    run(sys.executable, '-c', code)


# --- the start-up hook ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize('form', sorted(FORMS))
def test_every_import_form_decodes_under_the_hook(hooked_python, form):
    result = run(hooked_python, PROGRAMS / 'import_form.py', form, 'untouched')
    assert result.stdout.splitlines()[-1] == 'decoded'


@pytest.mark.slow
def test_od_style_code_works_unedited_under_the_hook(hooked_python, tmp_path):
    result = run(hooked_python, PROGRAMS / 'run_od_style.py', 'untouched', tmp_path)
    assert result.stdout.splitlines() == OD_STYLE_CHECKS


@pytest.mark.slow
def test_install_status_uninstall(tmp_path):
    python = make_environment(tmp_path / 'env')
    hook = hook_file(python)
    files_before = sorted(hook.parent.iterdir())
    modules_before = start_up_modules(python)

    installed = run(python, *HOOK_COMMAND, 'install')
    assert f'installed {hook}' in installed.stdout
    assert hook.read_text() == command.HOOK_TEXT
    written = hook.read_text()
    again = run(python, *HOOK_COMMAND, 'install')  # idempotent: says so, checks, exit 0
    assert again.stdout.startswith(f'the hook is installed already: {hook}\n')
    assert '(checked; this one is not patched)' in again.stdout
    assert hook.read_text() == written

    # Start-up loads the small hook module and nothing else (TensorFlow comes with tf_slim).
    assert start_up_modules(python) - modules_before == {'slimdata', 'slimdata.tf_slim_hook'}
    status = run(python, *HOOK_COMMAND, 'status')
    assert f'hook: installed, {hook}' in status.stdout
    assert 'the hook is active' in status.stdout
    assert 'tf_slim: patched in this interpreter' in status.stdout

    removed = run(python, *HOOK_COMMAND, 'uninstall')
    assert f'removed {hook}' in removed.stdout
    assert sorted(hook.parent.iterdir()) == files_before
    assert start_up_modules(python) == modules_before
    again = run(python, *HOOK_COMMAND, 'uninstall', check=False)
    assert again.returncode == 1 and 'not installed' in again.stderr
    status = run(python, *HOOK_COMMAND, 'status')
    assert f'hook: not installed (it would be {hook})' in status.stdout
    assert 'the hook is not active' in status.stdout
    assert 'tf_slim: not patched in this interpreter' in status.stdout


# The line `slimdata patch-tf-slim install` wrote up to 0.2.0.
OLD_HOOK_LINE = 'import slimdata.tf_slim_hook; slimdata.tf_slim_hook.install()\n'


@pytest.mark.slow
def test_install_rewrites_a_hook_file_written_otherwise(tmp_path):
    python = make_environment(tmp_path / 'env')
    hook = hook_file(python)
    hook.write_text(OLD_HOOK_LINE)
    installed = run(python, *HOOK_COMMAND, 'install')
    assert installed.stdout.startswith(f'updated {hook} (it was not as this slimdata writes '
                                       'it)\n')
    assert hook.read_text() == command.HOOK_TEXT
    assert 'tf_slim: patched in this interpreter' in run(python, *HOOK_COMMAND, 'status').stdout


@pytest.mark.slow
def test_hook_does_nothing_once_slimdata_is_gone(tmp_path):
    python = make_environment(tmp_path / 'env')
    hook = hook_file(python)
    run(python, *HOOK_COMMAND, 'install')
    # As after `pip uninstall slimdata`: the environment no longer sees slimdata (nor this
    # venv), and the hook file stays.
    (hook.parent / '_project_venv.pth').unlink()
    elsewhere = tmp_path / 'elsewhere'  # not the repository: `import slimdata` must fail
    elsewhere.mkdir()
    gone = run(python, '-c', 'import slimdata', cwd=elsewhere, check=False)
    assert "No module named 'slimdata'" in gone.stderr
    started = run(python, '-c', 'import sys; print(sorted(m for m in sys.modules '
                                'if m.startswith("slimdata")))', cwd=elsewhere)
    assert (started.stdout, started.stderr) == ('[]\n', '')
    # The control: the line written up to 0.2.0 printed a traceback at every start.
    hook.write_text(OLD_HOOK_LINE)
    started = run(python, '-c', 'pass', cwd=elsewhere)
    assert 'Error processing line 1' in started.stderr
    assert "ModuleNotFoundError: No module named 'slimdata'" in started.stderr


@pytest.mark.slow
def test_status_reports_a_hook_file_that_does_not_patch_as_a_problem(tmp_path):
    python = make_environment(tmp_path / 'env')
    hook_file(python).write_text('# an old or edited hook file that does nothing\n')
    status = run(python, *HOOK_COMMAND, 'status', check=False)
    assert status.returncode == 1
    assert 'not as this slimdata writes it' in status.stdout
    assert 'tf_slim: not patched in this interpreter' in status.stdout


def test_usage_errors_exit_with_2():
    for args in (['patch-tf-slim'], ['patch-tf-slim', 'remove']):
        result = run(sys.executable, '-m', 'slimdata', *args, check=False)
        assert result.returncode == 2 and 'install' in result.stderr


# --- tf_slim's own data tests ------------------------------------------------------------


def _run_tf_slim_suite(python, folder, conftest=None):
    """tf_slim's 4 data test files, as shipped (numpy 2's `.tobytes()` for `.tostring()`)."""
    if conftest:
        (folder / 'conftest.py').write_text(conftest)
    for test_file in SUITE:
        source = (TF_SLIM_DATA_DIR / test_file).read_text()
        (folder / test_file).write_text(source.replace('.tostring()', '.tobytes()'))
    result = run(python, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-W', 'ignore',
                 *sorted(SUITE), cwd=folder, check=False)
    summary = result.stdout.strip().splitlines()[-1]
    counts = {outcome: int(number)
              for number, outcome in re.findall(r'(\d+) (passed|failed|error)', summary)}
    return counts, result


@pytest.mark.slow
def test_tf_slim_own_data_tests_pass_under_the_hook(hooked_python, tmp_path):
    counts, result = _run_tf_slim_suite(hooked_python, tmp_path)
    assert counts == {'passed': sum(SUITE.values())}, result.stdout[-6000:]


@pytest.mark.slow
def test_tf_slim_own_data_tests_pass_with_patch_tf_slim_called_in_a_conftest(tmp_path):
    # pytest imports conftest.py first: the patch comes before the test files import tf_slim.
    counts, result = _run_tf_slim_suite(sys.executable, tmp_path,
                                        conftest='import slimdata\nslimdata.patch_tf_slim()\n')
    assert counts == {'passed': sum(SUITE.values())}, result.stdout[-6000:]


@pytest.mark.slow
def test_tf_slim_own_data_tests_fail_without_it(tmp_path):
    # The control: the same files in this venv, which has no hook.
    counts, result = _run_tf_slim_suite(sys.executable, tmp_path)
    assert counts.get('failed', 0) > 0, result.stdout[-6000:]
    assert counts.get('passed', 0) + counts['failed'] == sum(SUITE.values())
