"""One command line: --version, flag ranges, one exit-code rule, help pages, --json, --quiet,
and no TensorFlow (or its log lines) where a command does not need it."""

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import write_with_tf
from slimdata import __version__, cli
from slimdata.datasets import synthetic

# The environment of a user, without the tests' own quieting of TensorFlow (conftest.py).
TF_LOG_LINE = re.compile(r'^[IWEF]\d{4} |absl::InitializeLog', re.MULTILINE)
USER_ENV = {key: value for key, value in os.environ.items()
            if key not in ('TF_CPP_MIN_LOG_LEVEL', 'TF_ENABLE_ONEDNN_OPTS')}
COMMANDS = ('count', 'verify', 'inspect', 'index', 'show', 'convert', 'patch-tf-slim')


def slimdata(*argv, env=None):
    """Runs `python -m slimdata ...` in a subprocess, as a user's shell would."""
    return subprocess.run([sys.executable, '-m', 'slimdata', *argv], capture_output=True,
                          text=True, timeout=300, env=env)


def test_version():
    run = slimdata('--version')
    assert (run.returncode, run.stdout.strip()) == (0, f'slimdata {__version__}')


@pytest.mark.parametrize('command', COMMANDS)
def test_every_help_page_has_a_description_and_an_example(command):
    run = slimdata(command, '--help')
    assert run.returncode == 0
    text = run.stdout
    assert f'usage: slimdata {command}' in text
    assert '\nexamples:\n  slimdata ' in text or '\nexamples:\n  python -m slimdata' in text
    description = text.split('\n\n')[1]
    assert len(description) > 30 and description[0].isupper()
    assert '--quiet' in text and '--verbose' in text


@pytest.mark.parametrize('argv, flag', [
    (['convert', 'image-folder', '.', 'out', '--shards', '0'], '--shards/--num-shards'),
    (['convert', 'image-folder', '.', 'out', '--processes', '-3'], '--processes'),
    (['convert', 'image-folder', '.', 'out', '--validation-ratio', '1.5'], '--validation-ratio'),
    (['convert', 'voc-seg', '.', 'out', '--ignore-label', '300'], '--ignore-label'),
    (['convert', 'voc', '.', 'out', '--year', '2007', '--split', 'x', '--max-file-size', 'lots'],
     '--max-file-size'),
    (['inspect', '.', '-n', '0'], '-n/--num-records'),
])
def test_a_flag_out_of_range_is_a_usage_error_naming_the_flag(argv, flag, capsys):
    with pytest.raises(SystemExit) as raised:
        cli.main(argv)
    assert raised.value.code == 2
    assert f'error: argument {flag}: expected' in capsys.readouterr().err


def test_a_missing_source_is_a_usage_error_before_tensorflow_is_imported(tmp_path):
    code = ('import sys\n'
            'from slimdata import cli\n'
            'try:\n'
            f'    cli.main(["convert", "image-folder", {str(tmp_path / "missing")!r}, "out"])\n'
            'except SystemExit as exit:\n'
            '    print(exit.code, "tensorflow" in sys.modules)\n')
    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         timeout=300)
    assert run.stdout.split() == ['2', 'False']
    assert run.stderr.strip().endswith(f'error: argument SRC: {tmp_path / "missing"} does not '
                                       'exist')


@pytest.mark.parametrize('command', ['count', 'verify', 'index', 'inspect'])
def test_a_path_that_matches_nothing_is_a_usage_error(command, tmp_path):
    run = slimdata(command, str(tmp_path / 'nothing-*'))
    assert run.returncode == 2
    assert f"No files match '{tmp_path / 'nothing-*'}'" in run.stderr


@pytest.fixture(scope='module')
def converted(tmp_path_factory):
    base = tmp_path_factory.mktemp('converted')
    synthetic.make_image_folder(str(base / 'shapes'), num_classes=2, images_per_class=4,
                                image_size=12)
    run = slimdata('convert', 'image-folder', str(base / 'shapes'), str(base / 'out'),
                   '--validation-ratio', '0.25', '--shards', '2', env=USER_ENV)
    assert run.returncode == 0, run.stderr
    return base, run


def test_a_conversion_says_where_the_files_are_and_what_to_run_next(converted):
    base, run = converted
    assert run.stdout.strip().splitlines()[-1] == (
        f'the records are in {base / "out"} (with dataset_info.json); next: slimdata verify '
        f'{base / "out"}')
    assert 'train: 6 records in 2 shards' in run.stdout
    # Progress and information go to stderr, never to stdout.
    assert 'done, 6 ex' in run.stderr and 'done,' not in run.stdout


@pytest.mark.parametrize('verbose', [False, True])
def test_tensorflows_start_up_lines_only_with_verbose(verbose):
    # `patch-tf-slim status` imports tf_slim, and so TensorFlow (convert no longer does).
    run = slimdata('patch-tf-slim', 'status', *(['--verbose'] if verbose else []),
                   env=USER_ENV)
    assert run.returncode in (0, 1)
    # TensorFlow's C++ log lines (glog's `I1127 ...` prefix, absl's start-up warning). Which
    # ones it prints depends on the CPU (oneDNN's line only where oneDNN is on by default,
    # on Intel CPUs), so the test looks for any of them, not for one message.
    assert bool(TF_LOG_LINE.search(run.stderr)) is verbose, run.stderr


def test_quiet_keeps_the_results_and_drops_the_rest(converted, tmp_path):
    base, _ = converted
    run = slimdata('convert', 'image-folder', str(base / 'shapes'), str(tmp_path / 'out'),
                   '--quiet')
    assert run.returncode == 0 and run.stderr == ''
    # The results stay; the hint to verify next is not a result, and goes with -q.
    assert 'train: ' in run.stdout and 'next: slimdata verify' not in run.stdout
    run = slimdata('verify', '--quiet', str(tmp_path / 'out'))
    assert run.returncode == 0 and run.stderr == '' and 'no problems found' in run.stdout


def test_count_and_verify_json_for_ci(converted):
    base, _ = converted
    run = slimdata('count', '--json', str(base / 'out'))
    counted = json.loads(run.stdout)
    assert run.returncode == 0 and counted['total'] == 8 and counted['errors'] == []
    assert sum(entry['records'] for entry in counted['files']) == 8
    run = slimdata('verify', '--json', '--decode', str(base / 'out'))
    report = json.loads(run.stdout)
    assert run.returncode == 0
    assert (report['ok'], report['records'], report['images_decoded'], report['problems']) == \
        (True, 8, 8, [])
    assert all(entry['ok'] for entry in report['files'])


def test_verify_json_lists_the_problems_and_exits_1(tmp_path):
    path = write_with_tf(tmp_path / 'a.tfrecord', [b'x' * 100])
    data = bytearray(open(path, 'rb').read())
    data[20] ^= 1
    open(path, 'wb').write(bytes(data))
    run = slimdata('verify', '--json', path)
    report = json.loads(run.stdout)
    assert run.returncode == 1 and report['ok'] is False
    [problem] = report['problems']
    assert (problem['file'], problem['record'], problem['kind']) == (path, 0, 'damaged-record')
    assert problem['message'].startswith(f'{path}: record 0 at byte offset 0')


def test_inspect_takes_a_folder_shows_the_recorded_schema_and_imports_no_tensorflow(converted):
    base, _ = converted
    code = ('import sys\n'
            'from slimdata import cli\n'
            f'status = cli.main(["inspect", {str(base / "out")!r}, "-n", "3"])\n'
            'print("tensorflow" in sys.modules, status)\n')
    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         timeout=300)
    assert run.stdout.strip().splitlines()[-1] == 'False 0'
    assert '3 record(s) parsed' in run.stdout
    assert f'# as the converter recorded it in {base / "out" / "dataset_info.json"}' \
        in run.stdout
    assert "'image/class/label': tf.io.FixedLenFeature([1], tf.int64, default_value=[0])," \
        in run.stdout


def test_quiet_ends_with_the_command(converted, tmp_path, capsys):
    """cli.main in a longer program: its -q does not silence what the program does next."""
    from slimdata import progress
    assert cli.main(['-q', 'verify', str(converted[0] / 'out')]) == 0
    assert progress.is_quiet() is False
