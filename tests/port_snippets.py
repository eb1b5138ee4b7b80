"""What the port's tests of one pass share: a snippet ported in memory, and run."""

import ast
from typing import List

from slimdata.port import edits, tree


def port(code: str, path: str = 'module.py'):
    """(ported code, notes) of `code` ported alone, without tf_upgrade_v2; no problem."""
    results, problems = tree.port_sources({path: code}, tf_upgrade=None)
    assert problems == []
    return results[path]


def run(code: str) -> dict:
    """The namespace `code` leaves when executed."""
    namespace: dict = {'__name__': 'ported'}
    exec(compile(code, 'ported.py', 'exec'), namespace)  # noqa: S102
    return namespace


def port_and_run(code: str):
    """(ported code, notes, the namespace the ported code leaves)."""
    ported, notes = port(code, 'm.py')
    return ported, notes, run(ported)


def work_lines(stage, code: str, python_2: bool = False) -> List[int]:
    """The lines a LibCST pass tells, by Python's tree of `code` alone (`work_lines`), that it
    may change or report: it walks those statements only."""
    context = edits.Context('m.py', python_2=python_2)
    return sorted(set(stage.work_lines(ast.parse(code), code, context).lines))


def port_with_work(stage, code: str, lines: List[int], untouched: int):
    """The notes of `code` ported, once checked that `stage` tells its work in `lines`
    (`work_lines`) and that the port leaves the first `untouched` lines as they are."""
    assert work_lines(stage, code) == lines
    ported, notes = port(code)
    assert ported.split('\n')[:untouched] == code.split('\n')[:untouched]
    return notes


def kinds(notes, kind):
    return [note for note in notes if note.kind == kind]


#: Python 2 code, appended to a module: the Python 2 stage, then the passes for Python 2 files,
#: have work (the pipeline's tests, and benchmarks/bench_port.py's Python 2 tree).
PYTHON_2_TAIL = """

def _report(values, counts):
    lines = []
    for index in xrange(len(values)):
        lines.append(`values[index]`)
    if counts.has_key('total') and len(values) <> 0:
        lines.append(counts['total'] / len(values))
    for name, count in counts.iteritems():
        lines.append(tf.train.BytesList(value=[name]))
    if not lines:
        raise ValueError, 'no values'
    return lines[:len(lines) / 2]
"""
