"""`slimdata port`'s cost per line: its own passes beside TensorFlow's tf_upgrade_v2 alone.

Corpora, each measured on its own:

  * TREE arguments: real repositories (a snapshot of balancap/SSD-Tensorflow fetched by hand
    under /work/ext/, say; never committed), their .py files;
  * a slim-era tree built from tests/port_fixture/shapes_slim: 24 copies (--copies), 144
    files, some 5,200 lines;
  * the same tree written for Python 2 (`python_2_tree`: each module also holds the tests'
    `PYTHON_2_TAIL`, a function with backticks, `<>`, `raise E, V`, `xrange`, `has_key`,
    `iteritems`, `/` of ints, a `BytesList` of text), so that the Python 2 stage and the
    Python 2 semantics passes run on every file (the figures below were measured with a tail
    of its own holding `except E, e` in place of the `BytesList`);
  * single large files of about --large-lines lines (default 20,000) and a quarter and half of
    that, made of the first TREE's modules (else the fixture's) one after another: the cost per
    line must not grow with the file.

For each corpus:

  own passes     slimdata's passes (`tree.port_sources(..., tf_upgrade=None)`) in a process of
                 their own, timed after TensorFlow and tf_slim are imported (a cost paid once):
                 CPU seconds, lines/s, CPU microseconds per line, and the memory they add (peak
                 resident size above the process's after the imports);
  tf_upgrade_v2  TensorFlow's upgrader on the same files (safety mode, as `slimdata port` runs
                 it) measured as the own passes are: in a process of its own, after its
                 imports and a first one-line tree (`ast_edits.ASTCodeUpgrader.process_tree`),
                 CPU microseconds per line; and its command as a user runs it, a process of
                 its own: its CPU with its start-up (measured apart on a one-line file) and its
                 peak memory;
  whole port     `slimdata port SRC DST` as a user runs it: the CPU of all its processes;
  2to3, then tf_upgrade_v2
                 for a tree with files Python 3 cannot parse, which tf_upgrade_v2 skips: its
                 cost per line of the files it upgraded, and what a user runs short of slimdata
                 on Python 2 code, 2to3 (fissix's, every default fixer) over the tree, then
                 tf_upgrade_v2 over 2to3's, each measured as the passes are;

and the ratio of the own passes' cost per line to tf_upgrade_v2's (without and with its
start-up spread over the corpus).

    .venv/bin/python benchmarks/bench_port.py /work/ext/SSD-Tensorflow --repeat 2

The machines are shared: CPU seconds move less with the load than wall time; --repeat N keeps
the smallest of N runs.

Measured 2026-11-28 (0.4.8; docs/port-robustness.md, "Cost", has the tables), CPU
microseconds per line, first run: SSD-Tensorflow 169 against tf_upgrade_v2's 177; the Python 2
repositories 197-291, 1.3-1.5 times tf_upgrade_v2 per line of the files it upgraded in that
run and 0.9-1.3 in one an hour before, 0.6-0.7 times 2to3 and tf_upgrade_v2 together. Single
runs move by a fifth or more on the shared machines: `--pairs N` decides a ratio better, N
pairs of the own passes and tf_upgrade_v2, the two of a pair at the same time, and their
median (0.4.10, seven pairs, three runs: 0.73-0.81 on SSD-Tensorflow, 0.90-1.31 on the Python 2
repositories; 0.4.9's the same hour, 1.18-1.25; 0.4.11, five pairs, three runs: 0.68-0.72
on SSD-Tensorflow, 0.95-1.40 on the Python 2 repositories).

    .venv/bin/python benchmarks/bench_port.py --pairs 7 /work/ext/SSD-Tensorflow

`--instructions` gives the ratio in instructions counted by valgrind's callgrind instead: the
same figure at every run, whatever the machine's load (some four minutes a tree; 0.4.12:
seglink 0.90, pixel_link 0.93, TextBoxes-TensorFlow 1.04, SSD-Tensorflow 0.72; 0.4.13: 0.85,
0.88, 0.92, 0.66).

    .venv/bin/python benchmarks/bench_port.py --instructions /work/ext/SSD-Tensorflow

The single large files are made of the first TREE's modules, `from __future__` lines dropped:
give a Python 3 tree first (a Python 2 module printing with `print(..., end='')` no longer
parses without its import).
"""

import argparse
import ast
import json
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import Dict, List

TESTS = pathlib.Path(__file__).resolve().parent.parent / 'tests'
FIXTURE = TESTS / 'port_fixture' / 'shapes_slim'
sys.path.insert(0, str(TESTS))
import callgrind  # noqa: E402 (benchmarks/, the script's folder)

from port_snippets import PYTHON_2_TAIL  # noqa: E402 (the tests' Python 2 code)

_TF_UPGRADE = 'tensorflow.tools.compatibility.tf_upgrade_v2_main'

# Runs a command and prints the CPU seconds and peak memory (kB) of all its processes.
_RUSAGE = ('import resource, subprocess, sys\n'
           'subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n'
           'usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n'
           'print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss)\n')


def python_sources(root: pathlib.Path) -> Dict[str, str]:
    return {path.relative_to(root).as_posix(): path.read_text(encoding='utf-8')
            for path in sorted(root.rglob('*.py')) if path.is_file() and not path.is_symlink()}


def line_count(sources: Dict[str, str]) -> int:
    return sum(code.count('\n') for code in sources.values())


def fixture_tree(root: pathlib.Path, copies: int = 24) -> pathlib.Path:
    """120 files of slim-era code: the port fixture's 5 modules, `copies` times."""
    for index in range(copies):
        shutil.copytree(FIXTURE, root / f'copy_{index:02}')
    return root


def python_2_tree(root: pathlib.Path, copies: int = 24) -> pathlib.Path:
    """The fixture tree of `fixture_tree`, each module with the tests' `PYTHON_2_TAIL`."""
    fixture_tree(root, copies)
    for path in root.rglob('*.py'):
        if path.stat().st_size:
            path.write_text(path.read_text(encoding='utf-8') + PYTHON_2_TAIL, encoding='utf-8')
    return root


def large_file(sources: Dict[str, str], lines: int, folder: pathlib.Path) -> pathlib.Path:
    """One file of at least `lines` lines: whole modules of `sources` one after another."""
    modules = [code if code.endswith('\n') else code + '\n' for code in sources.values()]
    modules = [''.join(line for line in code.splitlines(keepends=True)
                       if not line.startswith('from __future__')) for code in modules]
    pieces, total, index = [], 0, 0
    while total < lines:
        pieces.append(modules[index % len(modules)])
        total += pieces[-1].count('\n')
        index += 1
    folder.mkdir(parents=True)
    (folder / 'large.py').write_text(''.join(pieces), encoding='utf-8')
    return folder


def measure_own(root: pathlib.Path, dumps: bool = False) -> dict:
    """In this process: the passes over the tree, after the one-time imports. `dumps`: under
    callgrind, its counts dumped after the imports and after each run (`callgrind.dump`)."""
    from slimdata import progress
    from slimdata.port import tree
    progress.configure(quiet=True)
    sources = python_sources(root)
    # Once per run, as tf_upgrade_v2's start-up: the imports, and 2to3's fixers compiled.
    tree.port_sources({'warm.py': 'import tensorflow as tf\nslim = tf.contrib.slim\n'
                                  'from tensorflow.python.ops import array_ops\n'
                                  'x = array_ops.unstack\n',
                       'warm_python_2.py': 'print "x"\n'}, tf_upgrade=None)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu = _cpu_of_runs(lambda: tree.port_sources(sources, tf_upgrade=None), dumps)
    return {**cpu, 'memory_kb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base}


#: The labels of the two runs of `_cpu_of_runs`, in callgrind's dumps.
_RUN_LABELS = ('run', 'run_again')


def _cpu_of_runs(run, dumps: bool = False) -> dict:
    """The CPU seconds of a first run and of a second (its caches warm: the names, modules
    and tables a first run of the same tree looked up once). `dumps`: under callgrind, its
    counts dumped before the runs and after each (`callgrind.dump`)."""
    import time
    times = []
    if dumps:
        callgrind.dump('start')
    for label in _RUN_LABELS:
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
        if dumps:
            callgrind.dump(label)
    return {'cpu': times[0], 'cpu_again': times[1]}


def measure_upgrade(root: pathlib.Path, dumps: bool = False) -> dict:
    """In this process: tf_upgrade_v2's work over the tree (safety mode, as `slimdata port`
    runs it), after its imports and a first file, as `measure_own` measures the passes."""
    from tensorflow.tools.compatibility import ast_edits, tf_upgrade_v2_safety
    upgrader = ast_edits.ASTCodeUpgrader(tf_upgrade_v2_safety.TFAPIChangeSpec())
    with tempfile.TemporaryDirectory(prefix='bench-upgrade-') as temporary:
        work = pathlib.Path(temporary)
        (work / 'warm').mkdir()
        (work / 'warm' / 'warm.py').write_text('import tensorflow as tf\nx = tf.contrib.slim\n')
        upgrader.process_tree(str(work / 'warm'), str(work / 'warm_out'), False)
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        outputs = iter(('out', 'out_again'))  # a new output folder for each run
        cpu = _cpu_of_runs(lambda: upgrader.process_tree(str(root), str(work / next(outputs)),
                                                         False), dumps)
    return {**cpu, 'memory_kb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base}


def measure_2to3(root: pathlib.Path, out: pathlib.Path) -> dict:
    """In this process: 2to3 with all its default fixers (fissix's, as `2to3 -w` runs them) over
    every file of the tree, after its fixers are made and a first file, as `measure_own`
    measures the passes; the converted tree is written to `out` (a file 2to3 cannot parse is
    copied as it is)."""
    from fissix import refactor
    from fissix.pgen2.parse import ParseError
    from fissix.pgen2.tokenize import TokenError
    tool = refactor.RefactoringTool(refactor.get_fixers_from_package('fissix.fixes'))
    tool.refactor_string('print "x"\n', 'warm.py')
    sources = python_sources(root)
    converted = {}

    def convert_all() -> None:
        for name, code in sources.items():
            try:
                converted[name] = str(tool.refactor_string(
                    code if code.endswith('\n') else code + '\n', name))
            except (ParseError, TokenError, IndentationError):
                converted[name] = code
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu = _cpu_of_runs(convert_all)
    for name, code in converted.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(code, encoding='utf-8')
    return {**cpu, 'memory_kb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base}


def python_3_lines(sources: Dict[str, str]) -> int:
    """The lines of the files Python 3 parses (the only ones tf_upgrade_v2 upgrades)."""
    return sum(code.count('\n') for code in sources.values() if _python_3_parses(code))


def _python_3_parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def _in_process(measure: str, root: pathlib.Path, *more: str) -> dict:
    output = subprocess.run([sys.executable, __file__, measure, str(root), *more],
                            capture_output=True, text=True, check=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def paired(root: pathlib.Path, pairs: int) -> dict:
    """`pairs` pairs of the own passes and tf_upgrade_v2 over `root`, the two of a pair at
    the same time (a process each, one per core of the two, so that a change of the machine's
    load weighs on both alike), each the smaller of its two runs (`cpu`, `cpu_again`): CPU
    microseconds per line (tf_upgrade_v2's per line of the files it upgraded), each pair's
    ratio, and the median ratio."""
    sources = python_sources(root)
    lines, parsed = line_count(sources), python_3_lines(sources)
    owns, upgrades = [], []
    for _ in range(pairs):
        both = [subprocess.Popen([sys.executable, __file__, measure, str(root)],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                for measure in ('--measure-own', '--measure-upgrade')]
        own, upgrade = (json.loads(process.communicate()[0].strip().splitlines()[-1])
                        for process in both)
        owns.append(1e6 * min(own['cpu'], own['cpu_again']) / lines)
        upgrades.append(1e6 * min(upgrade['cpu'], upgrade['cpu_again']) / parsed)
    ratios = [own / upgrade for own, upgrade in zip(owns, upgrades)]
    return {'corpus': root.name, 'lines': lines, 'python_3_lines': parsed,
            'own_us_per_line': statistics.median(owns),
            'upgrade_us_per_parsed_line': statistics.median(upgrades),
            'ratios': ratios, 'ratio': statistics.median(ratios)}


def instructions(root: pathlib.Path) -> dict:
    """The instructions the own passes and tf_upgrade_v2 execute over `root`, counted by
    valgrind's callgrind, each in a process of its own (the two at the same time): per line
    (tf_upgrade_v2's per line of the files it upgraded), each the smaller of its two runs, and
    their ratio. Unlike CPU time, the counts do not move with the machine's load: the same
    code on the same files counts the same (Python's string hashes fixed), so a ratio of 0.97
    is one. They weigh every instruction alike, a cache miss or a native parser's loop."""
    if shutil.which('valgrind') is None or shutil.which('callgrind_control') is None:
        raise SystemExit("--instructions needs valgrind's callgrind (Debian: apt install "
                         'valgrind)')
    sources = python_sources(root)
    lines, parsed = line_count(sources), python_3_lines(sources)
    counts = {}
    with tempfile.TemporaryDirectory(prefix='bench-instructions-') as temporary:
        outputs = {measure: pathlib.Path(temporary) / f'{measure}.out'
                   for measure in ('own', 'upgrade')}
        processes = [subprocess.Popen(
            ['valgrind', '--tool=callgrind', f'--callgrind-out-file={out}', sys.executable,
             __file__, f'--measure-{measure}', str(root), '--dumps'],
            env={**os.environ, 'PYTHONHASHSEED': '0'}, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL) for measure, out in outputs.items()]
        for process in processes:
            if process.wait():
                raise SystemExit(f'callgrind over {root} failed ({process.args})')
        for measure, out in outputs.items():
            dumped = callgrind.dumped_counts(out)
            counts[measure] = min(dumped[label] for label in _RUN_LABELS)
    own, upgrade = counts['own'] / lines, counts['upgrade'] / parsed
    return {'corpus': root.name, 'lines': lines, 'python_3_lines': parsed,
            'own_instructions_per_line': own, 'upgrade_instructions_per_parsed_line': upgrade,
            'ratio': own / upgrade}


def _cpu_of(command: List[str]) -> dict:
    output = subprocess.run([sys.executable, '-c', _RUSAGE, *command], capture_output=True,
                            text=True, check=True).stdout.split()
    return {'cpu': float(output[0]), 'memory_kb': int(output[1])}


def _tf_upgrade(root: pathlib.Path, work: pathlib.Path) -> dict:
    out = work / 'tf_upgrade_out'
    shutil.rmtree(out, ignore_errors=True)
    return _cpu_of([sys.executable, '-m', _TF_UPGRADE, '--intree', str(root), '--outtree',
                    str(out), '--reportfile', str(work / 'report.txt'), '--copyotherfiles',
                    'False', '--no_upgrade_compat_v1_import', '--mode', 'SAFETY'])


def _whole_port(root: pathlib.Path, work: pathlib.Path) -> dict:
    out = work / 'port_out'
    shutil.rmtree(out, ignore_errors=True)
    return _cpu_of([sys.executable, '-m', 'slimdata', 'port', str(root), str(out), '--quiet'])


def _best(measure, repeat: int) -> dict:
    runs = [measure() for _ in range(repeat)]
    return min(runs, key=lambda run: run['cpu'])


def bench(name: str, root: pathlib.Path, work: pathlib.Path, repeat: int) -> dict:
    sources = python_sources(root)
    lines, parsed = line_count(sources), python_3_lines(sources)
    # Each measure's runs alternate with the other's, so that a change of the machine's load
    # weighs on both alike.
    owns, upgrades = [], []
    for _ in range(repeat):
        owns.append(_in_process('--measure-own', root))
        upgrades.append(_in_process('--measure-upgrade', root))
    own = min(owns, key=lambda run: run['cpu'])
    upgrade_alone = min(upgrades, key=lambda run: run['cpu'])
    own_again = min(run['cpu_again'] for run in owns) / lines
    upgrade_again = min(run['cpu_again'] for run in upgrades) / lines
    upgrade = _best(lambda: _tf_upgrade(root, work), repeat)
    whole = _best(lambda: _whole_port(root, work), repeat)
    upgrade_per_line = upgrade_alone['cpu'] / lines
    own_per_line = own['cpu'] / lines
    return {'corpus': name, 'files': len(sources), 'lines': lines,
            'own_lines_per_s': 1 / own_per_line, 'own_us_per_line': 1e6 * own_per_line,
            'own_memory_mb': own['memory_kb'] / 1024,
            'upgrade_cpu_s': upgrade['cpu'],
            'upgrade_lines_per_s': 1 / upgrade_per_line,
            'upgrade_us_per_line': 1e6 * upgrade_per_line,
            'upgrade_us_per_line_with_startup': 1e6 * upgrade['cpu'] / lines,
            'upgrade_memory_mb': upgrade['memory_kb'] / 1024,
            'upgrade_added_memory_mb': upgrade_alone['memory_kb'] / 1024,
            'whole_cpu_s': whole['cpu'], 'whole_lines_per_s': lines / whole['cpu'],
            'whole_us_per_line': 1e6 * whole['cpu'] / lines,
            'whole_memory_mb': whole['memory_kb'] / 1024,
            'ratio': own_per_line / upgrade_per_line,
            'own_us_per_line_again': 1e6 * own_again,
            'upgrade_us_per_line_again': 1e6 * upgrade_again,
            'ratio_again': own_again / upgrade_again,
            'ratio_with_startup': own['cpu'] / upgrade['cpu'],
            **(_python_2_baseline(root, work, repeat, lines, parsed, own['cpu'],
                                  upgrade_alone['cpu']) if parsed < lines else {})}


def _python_2_baseline(root: pathlib.Path, work: pathlib.Path, repeat: int, lines: int,
                       parsed: int, own_cpu: float, upgrade_cpu: float) -> dict:
    """A tree with files Python 3 cannot parse, which tf_upgrade_v2 skips (logging a parse
    error): its cost per line of the files it did upgrade, and the port a user makes without
    slimdata, 2to3 over the tree and then tf_upgrade_v2 over 2to3's (where every file
    parses), beside the own passes, which do both. `lines`: the tree's; `parsed`: those of
    its files Python 3 parses."""
    out = work / 'after_2to3'
    converts, upgrades = [], []
    for _ in range(repeat):  # alternating, as in `bench`
        shutil.rmtree(out, ignore_errors=True)
        converts.append(_in_process('--measure-2to3', root, str(out)))
        upgrades.append(_in_process('--measure-upgrade', out))
    convert = min(run['cpu'] for run in converts)
    upgrade = min(run['cpu'] for run in upgrades)
    return {'python_3_lines': parsed,  # none: tf_upgrade_v2 upgraded nothing
            'upgrade_us_per_parsed_line': 1e6 * upgrade_cpu / parsed if parsed else None,
            'ratio_to_parsed_lines': own_cpu / lines / (upgrade_cpu / parsed) if parsed else None,
            '2to3_us_per_line': 1e6 * convert / lines,
            'upgrade_after_2to3_us_per_line': 1e6 * upgrade / lines,
            'ratio_to_upgrade_after_2to3': own_cpu / upgrade,
            'ratio_to_2to3_and_upgrade': own_cpu / (convert + upgrade)}


def print_table(rows: List[dict], startup: float) -> None:
    print(f"tf_upgrade_v2's start-up (a one-line file): {startup:.2f} CPU s")
    print(f'{"corpus":<24} {"files":>5} {"lines":>7} | {"own passes":^26} | '
          f'{"tf_upgrade_v2 alone":^26} | {"whole port":^18} | {"own/tf_upgrade":^14} | '
          f'{"second run, us/line":^26}')
    print(f'{"":<24} {"":>5} {"":>7} | {"lines/s":>8} {"us/line":>8} {"+MB":>7} | '
          f'{"lines/s":>8} {"us/line":>8} {"MB":>7} | {"lines/s":>8} {"MB":>8} | '
          f'{"per line":>8} {"+start":>6} | {"own":>8} {"tf_upg.":>8} {"ratio":>7}')
    for row in rows:
        print(f'{row["corpus"]:<24} {row["files"]:>5} {row["lines"]:>7} | '
              f'{row["own_lines_per_s"]:>8.0f} {row["own_us_per_line"]:>8.0f} '
              f'{row["own_memory_mb"]:>7.0f} | {row["upgrade_lines_per_s"]:>8.0f} '
              f'{row["upgrade_us_per_line"]:>8.0f} {row["upgrade_memory_mb"]:>7.0f} | '
              f'{row["whole_lines_per_s"]:>8.0f} {row["whole_memory_mb"]:>8.0f} | '
              f'{row["ratio"]:>8.2f} {row["ratio_with_startup"]:>6.2f} | '
              f'{row["own_us_per_line_again"]:>8.0f} {row["upgrade_us_per_line_again"]:>8.0f} '
              f'{row["ratio_again"]:>7.2f}')
    python_2 = [row for row in rows if 'python_3_lines' in row]
    if not python_2:
        return
    print('\nTrees with files Python 3 cannot parse (tf_upgrade_v2 skips them), us/line:')
    print(f'{"corpus":<24} {"Py3 lines":>9} | {"own":>6} | {"tf_upg. per parsed line":>23} '
          f'{"ratio":>6} | {"2to3":>6} {"then tf_upg.":>12} {"own/tf_upg.":>11} '
          f'{"own/(both)":>10}')
    for row in python_2:
        parsed = ((f'{row["upgrade_us_per_parsed_line"]:>23.0f} '
                   f'{row["ratio_to_parsed_lines"]:>6.2f}') if row['python_3_lines']
                  else f'{"(none parsed)":>23} {"":>6}')
        print(f'{row["corpus"]:<24} {row["python_3_lines"]:>9} | {row["own_us_per_line"]:>6.0f} | '
              f'{parsed} | '
              f'{row["2to3_us_per_line"]:>6.0f} {row["upgrade_after_2to3_us_per_line"]:>12.0f} '
              f'{row["ratio_to_upgrade_after_2to3"]:>11.2f} '
              f'{row["ratio_to_2to3_and_upgrade"]:>10.2f}')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('trees', nargs='*', metavar='TREE', help='repositories to port')
    parser.add_argument('--copies', type=int, default=24,
                        help='copies of the port fixture in the slim-era trees (default 24)')
    parser.add_argument('--large-lines', type=int, default=20_000,
                        help='lines of the largest single file (default 20,000)')
    parser.add_argument('--repeat', type=int, default=1, help='runs of each measure; the '
                                                             'smallest CPU time is kept')
    parser.add_argument('--json', metavar='FILE', help='also write the figures as JSON')
    parser.add_argument('--pairs', type=int, metavar='N',
                        help='only the ratio to tf_upgrade_v2 of each TREE: N pairs, the two '
                             'of a pair run at the same time (`paired`)')
    parser.add_argument('--instructions', action='store_true',
                        help="only the ratio to tf_upgrade_v2 of each TREE, in instructions "
                             "counted by valgrind's callgrind (`instructions`): the same "
                             'figure at every run')
    parser.add_argument('--measure-own', metavar='TREE', help=argparse.SUPPRESS)
    parser.add_argument('--dumps', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('--measure-upgrade', metavar='TREE', help=argparse.SUPPRESS)
    parser.add_argument('--measure-2to3', nargs=2, metavar=('TREE', 'OUT'),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_2to3:
        print(json.dumps(measure_2to3(*map(pathlib.Path, args.measure_2to3))))
        return
    if args.measure_own:
        print(json.dumps(measure_own(pathlib.Path(args.measure_own), args.dumps)))
        return
    if args.measure_upgrade:
        print(json.dumps(measure_upgrade(pathlib.Path(args.measure_upgrade), args.dumps)))
        return
    if args.pairs or args.instructions:
        if not args.trees:
            parser.error('--pairs and --instructions measure the TREE arguments: give one')
        for tree in args.trees:
            sources = python_sources(pathlib.Path(tree)) if pathlib.Path(tree).is_dir() else {}
            if not python_3_lines(sources):
                parser.error(f'{tree}: no Python file that Python 3 parses (a folder of '
                             'them is needed: tf_upgrade_v2 upgrades only those)')
    if args.instructions:
        rows = []
        for tree in args.trees:
            rows.append(instructions(pathlib.Path(tree)))
            row = rows[-1]
            print(f'{row["corpus"]:<24} own {row["own_instructions_per_line"] / 1e3:6.0f} K '
                  f'instructions/line  tf_upgrade_v2 '
                  f'{row["upgrade_instructions_per_parsed_line"] / 1e3:6.0f} K per parsed line  '
                  f'ratio {row["ratio"]:.3f}', flush=True)
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
        return
    if args.pairs:
        rows = [paired(pathlib.Path(tree), args.pairs) for tree in args.trees]
        for row in rows:
            print(f'{row["corpus"]:<24} own {row["own_us_per_line"]:5.0f} us/line  '
                  f'tf_upgrade_v2 {row["upgrade_us_per_parsed_line"]:5.0f} per parsed line  '
                  f'ratio {row["ratio"]:.2f}  (each: '
                  + ' '.join(f'{ratio:.2f}' for ratio in row['ratios']) + ')', flush=True)
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
        return
    with tempfile.TemporaryDirectory(prefix='bench-port-') as temporary:
        work = pathlib.Path(temporary)
        corpora = [(pathlib.Path(tree).name, pathlib.Path(tree)) for tree in args.trees]
        corpora.append((f'slim-era fixture x{args.copies}',
                        fixture_tree(work / 'fixture', args.copies)))
        corpora.append(('the same, Python 2',
                        python_2_tree(work / 'fixture_python_2', args.copies)))
        first = python_sources(corpora[0][1])
        for lines in (args.large_lines // 4, args.large_lines // 2, args.large_lines):
            corpora.append((f'one file, {lines:,} lines',
                            large_file(first, lines, work / f'large_{lines}')))
        (work / 'one').mkdir()
        (work / 'one' / 'one.py').write_text('x = 1\n')
        startup = _best(lambda: _tf_upgrade(work / 'one', work), args.repeat)['cpu']
        rows = []
        for name, root in corpora:
            rows.append(bench(name, root, work, args.repeat))
            print(f'measured {name}', file=sys.stderr, flush=True)
            if args.json:  # as it goes: a run is long
                pathlib.Path(args.json).write_text(json.dumps({'startup': startup, 'rows': rows},
                                                              indent=1))
        print_table(rows, startup)


if __name__ == '__main__':
    main()
