"""A set given to random.sample (slimdata.port.py3.random_sample), run."""

import random
import subprocess
import sys

from slimdata.port import tree

# MeasureDetector's converter's split, as it wrote it.
PROGRAM = '''import random
from random import sample as draw

random.seed(0)
indices = list(range(20))
validation = random.sample(indices, 2)
test = random.sample((set(indices) - set(validation)), 3)
other = draw({i * 3 for i in indices}.union({1, 2}), k=2)
views = random.sample(dict.fromkeys('abcdef').keys(), 2)
print(validation, test, other, views)
'''


def _run(tmp_path, code: str) -> subprocess.CompletedProcess:
    (tmp_path / 'm.py').write_text(code)
    return subprocess.run([sys.executable, 'm.py'], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)


def test_a_set_population_samples_as_python_3_10_did(tmp_path):
    assert 'Population must be a sequence' in _run(tmp_path, PROGRAM).stderr  # Python 3.11+
    results, problems = tree.port_sources({'m.py': PROGRAM}, tf_upgrade=None)
    assert problems == []
    ported, notes = results['m.py']
    assert sorted(note.line for note in notes) == [7, 8, 9]
    assert 'random.sample(indices, 2)' in ported  # a list stays as it is
    done = _run(tmp_path, ported)
    assert done.returncode == 0, done.stderr
    # Python 3.10's random.sample made a set tuple(population) and sampled that.
    generator = random.Random(0)
    indices = list(range(20))
    validation = generator.sample(indices, 2)
    test = generator.sample(tuple(set(indices) - set(validation)), 3)
    other = generator.sample(tuple({i * 3 for i in indices} | {1, 2}), 2)
    views = generator.sample(tuple(dict.fromkeys('abcdef')), 2)
    assert done.stdout.strip() == f'{validation} {test} {other} {views}'
    assert set(test) <= set(indices) - set(validation) and len(set(test)) == 3


def test_what_is_not_certainly_a_set_is_left():
    code = ('import random\nimport numpy as np\n\nchosen = set([1, 2, 3])\n'
            'a = random.sample(chosen, 2)\nb = np.random.choice([1, 2], 1)\n'
            'c = random.sample([1, 2, 3] + [4], 2)\n')
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert results['m.py'] == (code, [])
