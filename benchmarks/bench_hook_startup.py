"""What the tf_slim start-up hook (`slimdata patch-tf-slim install`) costs every interpreter.

It builds a throwaway environment in a temporary folder (a `--without-pip` venv whose
site-packages sees this project's venv), installs the hook there with that environment's
Python, and then measures, in fresh processes:

  start-up   `python -c pass` with the hook file and without it, interleaved (with, without,
             with, ...) so that load drift hits both alike: median wall time and median CPU
             time (user + system, from getrusage of the child) of --runs runs each;
  imports    what the hook imports at start-up: `-X importtime`'s cumulative microseconds
             for `slimdata.tf_slim_hook` (with the `slimdata` package it needs), median of
             the runs, and the modules that start-up loads with the hook beyond those without;
  on use     in a process that imports tf_slim, what loading the patch adds: `-X importtime`
             for `slimdata.tf_slim_patch` (slimdata's decoder; TensorFlow is loaded already).

Bytecode: with PYTHONDONTWRITEBYTECODE set and no caches, every start compiles the two small
modules again (about 2 ms more); set PYTHONPYCACHEPREFIX to a folder to measure with caches,
as a pip-installed slimdata has them.

Run from the repository root: `.venv/bin/python benchmarks/bench_hook_startup.py [--runs 40]`.
The machine's own environment is never touched.
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

HOOK_MODULES = ('slimdata', 'slimdata.tf_slim_hook')
_LIST_MODULES = 'import sys; print(" ".join(sorted(sys.modules)))'


def make_environment(root: Path) -> Path:
    """A venv in `root` that sees this interpreter's site-packages; returns its python.

    Its own site-packages is empty but for a `.pth` line adding ours (processed before the
    hook's file, whose name sorts after it), so what is installed into it stays there.
    """
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(root)], check=True)
    python = root / 'bin' / 'python'
    site_packages = Path(subprocess.run(
        [str(python), '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
        check=True, capture_output=True, text=True).stdout.strip())
    ours = sysconfig.get_paths()['purelib']
    (site_packages / '_project_venv.pth').write_text(f'import site; site.addsitedir({ours!r})\n')
    return python


def timed_run(command: List[str], env: Dict[str, str]) -> Tuple[float, float]:
    """(wall seconds, CPU seconds) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def import_microseconds(python: Path, code: str, module: str, env: Dict[str, str]) -> int:
    """`-X importtime`'s cumulative microseconds for `module` while running `code`."""
    stderr = subprocess.run([str(python), '-X', 'importtime', '-c', code], check=True,
                            env=env, capture_output=True, text=True).stderr
    match = re.search(rf'^import time:\s+\d+ \|\s+(\d+) \|\s+{re.escape(module)}$', stderr,
                      flags=re.MULTILINE)
    if match is None:
        raise RuntimeError(f'{module} was not imported by {code!r}:\n{stderr[-2000:]}')
    return int(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=40, help='runs with and without the hook')
    args = parser.parse_args()
    env = {**os.environ, 'TF_CPP_MIN_LOG_LEVEL': '2'}
    with tempfile.TemporaryDirectory() as folder:
        python = make_environment(Path(folder) / 'env')
        subprocess.run([str(python), '-m', 'slimdata', 'patch-tf-slim', 'install'], check=True,
                       env=env, stdout=subprocess.DEVNULL)
        hook = Path(subprocess.run(
            [str(python), '-c', 'from slimdata.cli import patch_tf_slim as p; '
                                'print(p.hook_path())'],
            check=True, capture_output=True, text=True, env=env).stdout.strip())
        parked = hook.with_name(hook.name + '.off')
        timings = {'with hook': [], 'without': []}
        modules = {}
        for run in range(args.runs):
            for label, runs in timings.items():
                if label == 'without':
                    hook.rename(parked)
                runs.append(timed_run([str(python), '-c', 'pass'], env))
                if run == 0:
                    modules[label] = set(subprocess.run(
                        [str(python), '-c', _LIST_MODULES], check=True, env=env,
                        capture_output=True, text=True).stdout.split())
                if label == 'without':
                    parked.rename(hook)
        hook_import = [import_microseconds(python, 'pass', HOOK_MODULES[-1], env)
                       for _ in range(args.runs)]
        patch_import = [import_microseconds(python, 'import tf_slim', 'slimdata.tf_slim_patch',
                                            env) for _ in range(3)]
    print(f'Python {sys.version.split()[0]}, {args.runs} runs each, interleaved\n')
    print('| start-up (`python -c pass`) | wall, median | CPU, median |')
    print('|---|---|---|')
    for label, runs in timings.items():
        print(f'| {label} | {statistics.median(w for w, _ in runs) * 1e3:.1f} ms '
              f'| {statistics.median(c for _, c in runs) * 1e3:.1f} ms |')
    print(f'\nimport of {" + ".join(HOOK_MODULES)} at start-up (-X importtime, cumulative): '
          f'median {statistics.median(hook_import):.0f} us, min {min(hook_import)} us')
    print('modules loaded at start-up with the hook, beyond those without: '
          + ', '.join(sorted(modules['with hook'] - modules['without'])))
    print(f'on `import tf_slim`, the import of slimdata.tf_slim_patch (-X importtime, '
          f'cumulative): median {statistics.median(patch_import) / 1e3:.1f} ms')


if __name__ == '__main__':
    main()
