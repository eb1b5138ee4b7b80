"""`slimdata patch-tf-slim install|uninstall|status`: the no-code switch for tf_slim code.

For programs you cannot edit (the OD API's `model_main_tf2.py`, a framework's entry point):
`install` writes `slimdata-patch-tf-slim.pth` into the site-packages of the Python that runs
it, so that every later interpreter of that environment patches tf_slim when a program
imports it (`slimdata.tf_slim_hook`; start-up imports nothing more than that small module).
`uninstall` removes the file; `status` says whether it is installed and whether this
interpreter is patched (it imports tf_slim, and so TensorFlow, to find out).

Exit status: 0 when all is well, 1 for a problem (already installed, nothing to uninstall, a
file that cannot be written, a hook that is installed but does not patch), 2 for a usage error.
"""

import argparse
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from slimdata import tf_slim_hook
from slimdata.cli import common

HOOK_FILE_NAME = 'slimdata-patch-tf-slim.pth'
# Python runs the lines of a .pth file that start with `import`, and skips those with `#`.
HOOK_TEXT = ('# slimdata: patches tf_slim when a program imports it. Written by '
             '`slimdata patch-tf-slim install`; `slimdata patch-tf-slim uninstall` removes it.\n'
             'import slimdata.tf_slim_hook; slimdata.tf_slim_hook.install()\n')
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
    return {'install': install, 'uninstall': uninstall, 'status': status}[args.action]()


def install() -> int:
    path = hook_path()
    if path.exists():
        print(f'error: the hook is already installed: {path} (`slimdata patch-tf-slim status` '
              'checks it; uninstall first to reinstall)', file=sys.stderr)
        return 1
    try:
        _write_atomically(path, HOOK_TEXT)
    except OSError as error:
        print(f'error: cannot write the hook {path}: {error}', file=sys.stderr)
        return 1
    if subprocess.run([sys.executable, '-c', _CHECK_ACTIVE]).returncode != 0:
        path.unlink()
        print(f'error: {path.parent} is not read at start-up by {sys.executable} (not a site '
              'directory?), so the hook would do nothing; removed it again', file=sys.stderr)
        return 1
    print(f'installed {path}\nNew Python processes of this environment patch tf_slim when they '
          'import it (this one is not patched). Undo: slimdata patch-tf-slim uninstall')
    return 0


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
        print(f'hook: installed, {path}, but not as this slimdata writes it: uninstall and '
              'install again')
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
