"""`benchmarks/callgrind.py`: instructions counted for parts of a run, from inside the process
(what `bench_port.py --instructions` is built on), under valgrind's callgrind for real."""

import pathlib
import shutil
import subprocess
import sys

import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / 'benchmarks'
sys.path.insert(0, str(BENCHMARKS))
import callgrind  # noqa: E402 (benchmarks/ is no package)

#: Two loops, one ten times as long as the other, each followed by a dump.
_SCRIPT = f'''
import sys
sys.path.insert(0, {str(BENCHMARKS)!r})
import callgrind
callgrind.dump('start')
total = 0
for i in range(20_000):
    total += i * i
callgrind.dump('short')
for i in range(200_000):
    total += i * i
callgrind.dump('long')
'''


@pytest.mark.slow
@pytest.mark.skipif(shutil.which('valgrind') is None or shutil.which('callgrind_control') is None,
                    reason="needs valgrind's callgrind")
def test_each_dump_counts_the_instructions_since_the_last(tmp_path):
    out = tmp_path / 'callgrind.out'
    subprocess.run(['valgrind', '--tool=callgrind', f'--callgrind-out-file={out}',
                    sys.executable, '-c', _SCRIPT], check=True, capture_output=True,
                   timeout=300)
    counts = callgrind.dumped_counts(out)
    assert set(counts) == {'start', 'short', 'long'}
    # The same `dump` call ends both: the loops' counts are as ten to one, give or take the
    # call of callgrind_control each dump makes.
    assert 7 < counts['long'] / counts['short'] < 11
