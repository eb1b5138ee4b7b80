"""`slimdata patch-tf-slim install|uninstall|status`: the no-code switch for tf_slim code.

For programs you cannot edit (the OD API's `model_main_tf2.py`, a framework's entry point):
`install` writes `slimdata-patch-tf-slim.pth` into the site-packages of the Python that runs
it, so that every later interpreter of that environment patches tf_slim when a program
imports it (`slimdata.tf_slim_hook`; start-up imports nothing more than that small module).
`install` is idempotent: run again, it says the hook is installed already (and rewrites a
hook file that an older slimdata, or a person, wrote otherwise); either way it checks that a
new interpreter runs the hook. `uninstall` removes the file; `status` says whether it is
installed and whether this interpreter is patched (it imports tf_slim, and so TensorFlow, to
find out).

The file's line does nothing when slimdata is gone (`pip uninstall slimdata` does not know
the file, and leaves it): it imports the hook only if it can, so that no interpreter start of
the environment prints a traceback for it.

Exit status: 0 when all is well, 1 for a problem (nothing to uninstall, a file that cannot be
written, a hook that is installed but does not patch), 2 for a usage error.
"""

import argparse
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from slimdata import tensorflow_required, tf_slim_hook
from slimdata.cli import common

HOOK_FILE_NAME = 'slimdata-patch-tf-slim.pth'
# What the hook's line runs. When slimdata, or its hook module, is not importable (slimdata
# uninstalled), nothing: Python would print a traceback at every start otherwise. Any other
# error is the traceback Python prints for a .pth line: a broken slimdata must be seen.
_HOOK_CODE = ('try:\n'
              ' import slimdata.tf_slim_hook as hook\n'
              'except ModuleNotFoundError as error:\n'
              " if error.name not in ('slimdata', 'slimdata.tf_slim_hook'):\n"
              '  raise\n'
              'else:\n'
              ' hook.install()\n')
# Python runs the lines of a .pth file that start with `import`, and skips those with `#`; a
# line is one statement list, hence the `exec` of the compound statement above.
HOOK_TEXT = ('# slimdata: patches tf_slim when a program imports it. Written by '
             '`slimdata patch-tf-slim install`; `slimdata patch-tf-slim uninstall` removes it. '
             'Does nothing once slimdata is uninstalled.\n'
             f'import sys; exec({_HOOK_CODE!r})\n')
# Run by a fresh interpreter after install: exit status 0 when the hook is active in it.
_CHECK_ACTIVE = 'import sys, slimdata.tf_slim_hook as h; sys.exit(0 if h.is_active() else 1)'


def register(commands: argparse._SubParsersAction, selected: bool) -> None:
    parser = common.command_parser(
        commands, 'patch-tf-slim',
        "make unedited tf_slim code use slimdata's fixes (a start-up hook)",
        'Install, remove or check a start-up hook in this environment that patches '
        "tf_slim's data code for modern TensorFlow when a program imports tf_slim (the same "
        'patch as slimdata.patch_tf_slim()).',
        examples=['slimdata patch-tf-slim install', 'slimdata patch-tf-slim status',
                  'python -m slimdata patch-tf-slim uninstall'])
    parser.add_argument('action', choices=('install', 'uninstall', 'status'),
                        help='install the hook, remove it, or report on it')
    parser.set_defaults(run=run)


def hook_path() -> Path:
    """Where the hook lives: the site-packages of the running interpreter's environment."""
    return Path(sysconfig.get_paths()['purelib']) / HOOK_FILE_NAME


def run(args: argparse.Namespace) -> int:
    if args.action != 'uninstall':
        tensorflow_required.require('tf_slim, which the hook patches,')
    return {'install': install, 'uninstall': uninstall, 'status': status}[args.action]()


def install() -> int:
    """Writes the hook file unless it is there as this slimdata writes it; then checks that a
    new interpreter runs it (a file written now that does not run is removed again)."""
    path = hook_path()
    before = _read_or_none(path)
    if before == HOOK_TEXT:
        done = f'the hook is installed already: {path}'
    else:
        try:
            _write_atomically(path, HOOK_TEXT)
        except OSError as error:
            print(f'error: cannot write the hook {path}: {error}', file=sys.stderr)
            return 1
        done = f'installed {path}' if before is None else \
            f'updated {path} (it was not as this slimdata writes it)'
    if subprocess.run([sys.executable, '-c', _CHECK_ACTIVE]).returncode != 0:
        if before is None:
            path.unlink()
        where = 'removed it again' if before is None else \
            '`slimdata patch-tf-slim uninstall` removes it'
        print(f'error: {path.parent} is not read at start-up by {sys.executable} (not a site '
              f'directory?), so the hook does nothing; {where}', file=sys.stderr)
        return 1
    print(f'{done}\nNew Python processes of this environment patch tf_slim when they import '
          'it (checked; this one is not patched). Undo: slimdata patch-tf-slim uninstall')
    return 0


def _read_or_none(path: Path):
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


def uninstall() -> int:
    path = hook_path()
    try:
        path.unlink()
    except FileNotFoundError:
        print(f'error: the hook is not installed in this environment ({path} does not exist)',
              file=sys.stderr)
        return 1
    except OSError as error:
        print(f'error: cannot remove the hook {path}: {error}', file=sys.stderr)
        return 1
    print(f'removed {path}\nNew Python processes of this environment run tf_slim unpatched.')
    return 0


def status() -> int:
    path = hook_path()
    installed = path.exists()
    if not installed:
        print(f'hook: not installed (it would be {path})')
    elif path.read_text() == HOOK_TEXT:
        print(f'hook: installed, {path}')
    else:
        print(f'hook: installed, {path}, but not as this slimdata writes it: '
              '`slimdata patch-tf-slim install` rewrites it')
    print('this interpreter: the hook is ' + ('active' if tf_slim_hook.is_active() else
                                               'not active'))
    patched = _tf_slim_is_patched()
    if patched is None:
        print('tf_slim: not installed, nothing to patch')
        return 0
    print('tf_slim: ' + ('patched in this interpreter' if patched else
                         'not patched in this interpreter'))
    return 1 if installed and not patched else 0


def _tf_slim_is_patched():
    """Imports tf_slim's decoder as a program would; whether it is patched, None if absent."""
    from slimdata import tf_slim_patch
    if tf_slim_patch.import_tf_slim_decoder() is None:
        return None
    return tf_slim_patch.is_patched()


def _write_atomically(path: Path, text: str) -> None:
    """A complete file under `path` or none: a start-up file must never be half written."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix='.' + path.name)
    try:
        with os.fdopen(descriptor, 'w') as file:
            file.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
