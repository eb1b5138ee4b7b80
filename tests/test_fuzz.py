"""A few cases of benchmarks/fuzz_readers.py (the long run is in docs/troubleshooting.md): the
framing readers and TFExampleDecoder give only documented errors, agree with TensorFlow's reader
and parser, and neither crash nor hang. Each batch runs in a subprocess, so a crash is seen."""

import subprocess
import sys
from pathlib import Path

import pytest

FUZZ = Path(__file__).resolve().parent.parent / 'benchmarks' / 'fuzz_readers.py'


@pytest.mark.slow
@pytest.mark.parametrize('target', ['framing', 'decoder'])
def test_fuzz_cases_meet_only_documented_errors(target):
    done = subprocess.run([sys.executable, str(FUZZ), '--targets', target, '--cases', '150',
                           '--batch', '150', '--timeout', '600', '--seed', '7'],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    [row] = [line for line in done.stdout.splitlines() if line.startswith(f'| {target} |')]
    cases, _, crashes, hangs, failures = [cell.strip() for cell in row.split('|')[2:7]]
    assert (int(cases), crashes, hangs, failures) == (150, '0', '0', '0'), row
