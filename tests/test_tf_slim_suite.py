"""tf_slim 1.1.0's own data tests, run against slimdata.

The test files shipped in the installed tf_slim wheel are copied with only their
`from tf_slim.data import X` lines pointed at slimdata, numpy's removed `.tostring()` spelled
`.tobytes()`, and one call in a test body that TensorFlow removed from its private modules
(`control_flow_ops.case`, in testDecodeImageWithItemHandlerCallback's own callback) spelled
with its public name `tf.case`; then they run with pytest in a subprocess. tf_slim itself fails
21 of these 55 tests on TensorFlow 2.21; slimdata must pass them all.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

tf_slim = pytest.importorskip('tf_slim')

TF_SLIM_DATA_DIR = Path(tf_slim.__file__).parent / 'data'
SUITE = {  # test file -> number of tests that must pass (tf_slim 1.1.0's counts)
    'dataset_data_provider_test.py': 3,
    'parallel_reader_test.py': 7,
    'prefetch_queue_test.py': 6,
    'tfexample_decoder_test.py': 39,
}


def port_to_slimdata(source: str) -> str:
    """The one-line port a user makes, plus the two renames numpy 2 and TF 2.21 force."""
    ported = re.sub(r'^from tf_slim\.data import (\w+)', r'from slimdata import \1', source,
                    flags=re.MULTILINE)
    return ported.replace('.tostring()', '.tobytes()').replace('control_flow_ops.case(',
                                                                'tf.case(')


def test_port_changes_only_the_data_imports():
    source = (TF_SLIM_DATA_DIR / 'dataset_data_provider_test.py').read_text()
    ported = port_to_slimdata(source)
    assert 'from slimdata import dataset_data_provider' in ported
    assert 'from tf_slim.data' not in ported
    assert 'from tf_slim import queues' in ported  # not a data module: stays tf_slim's
    assert len(ported.splitlines()) == len(source.splitlines())


def test_suite_counts_add_up_to_55():
    assert sum(SUITE.values()) == 55


@pytest.mark.slow
@pytest.mark.parametrize('test_file', sorted(SUITE))
def test_tf_slim_data_tests_pass_against_slimdata(test_file, tmp_path):
    ported = tmp_path / test_file
    ported.write_text(port_to_slimdata((TF_SLIM_DATA_DIR / test_file).read_text()))
    result = subprocess.run(
        [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-W', 'ignore',
         str(ported)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, 'TF_CPP_MIN_LOG_LEVEL': '2'})
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ''
    passed = int(re.search(r'(\d+) passed', summary).group(1)) if 'passed' in summary else 0
    assert result.returncode == 0 and passed == SUITE[test_file], (
        f'{test_file}: {summary}\n{result.stdout[-6000:]}\n{result.stderr[-2000:]}')
