"""`make demo` runs to its end (on fewer examples): write, read back exactly, measure."""

import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parent.parent / 'train_examples' / 'demo.py'


@pytest.mark.slow
def test_demo_runs_to_its_end_and_checks_every_record(tmp_path):
    result = subprocess.run(
        [sys.executable, str(DEMO), '--output_dir', str(tmp_path), '--num_examples', '200',
         '--seconds', '0.5'], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert 'decoded and checked against the source: 200/200 exact' in result.stdout
    assert 'examples/s' in result.stdout
    assert len(list((tmp_path / 'mnist_like').glob('train-*-of-00004.tfrecord'))) == 4
