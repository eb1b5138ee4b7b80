"""Instructions counted by valgrind's callgrind for parts of a run, from inside the process.

A process run under `valgrind --tool=callgrind --callgrind-out-file=OUT` calls `dump(label)`
after each part it measures: callgrind writes the instructions counted since the last dump to
`OUT.<n>`, labelled, and starts counting again from zero. `dumped_counts(OUT)` reads them back.
Unlike CPU time, a count does not move with the machine's load: the same code on the same
input counts the same (with Python's string hashes fixed, `PYTHONHASHSEED`).
"""

import os
import pathlib
import re
import subprocess
from typing import Dict


def dump(label: str) -> None:
    """Has callgrind, which this process runs under, write the instructions counted since its
    last dump, labelled `label` (one word), and count again from zero."""
    subprocess.run(['callgrind_control', f'--dump={label}', str(os.getpid())], check=True,
                   stdout=subprocess.DEVNULL)


def dumped_counts(out: pathlib.Path) -> Dict[str, int]:
    """{label: instructions} of the dumps `out.1`, `out.2`, ... that `dump` had written for
    the run whose `--callgrind-out-file` was `out`."""
    counts = {}
    for path in out.parent.glob(out.name + '.*'):
        text = path.read_text(encoding='utf-8', errors='replace')
        label = re.search(r'^desc: Trigger: dump (\S+)', text, re.MULTILINE)
        total = re.search(r'^(?:summary|totals): (\d+)', text, re.MULTILINE)
        if label and total:
            counts[label.group(1)] = int(total.group(1))
    return counts
