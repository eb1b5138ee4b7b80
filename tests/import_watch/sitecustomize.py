"""A test-only start-up hook: tests/test_convert_without_tensorflow.py puts this folder on
PYTHONPATH of the `slimdata convert` it runs, so that every Python process of that run (the
command, each spawned worker, each Beam worker) loads it.

With SLIMDATA_TEST_IMPORT_WATCH=<folder> set, each process leaves a file `process-<pid>` in
that folder when it starts, and `tensorflow-<pid>` (holding the stack that asked) if it ever
imports TensorFlow.

With SLIMDATA_TEST_HIDE_TENSORFLOW=1 set, `import tensorflow` fails in each process as it does
where TensorFlow is not installed (tests/test_without_tensorflow.py).
"""

import os
import sys

_WATCH = os.environ.get('SLIMDATA_TEST_IMPORT_WATCH')

if _WATCH:
    open(os.path.join(_WATCH, f'process-{os.getpid()}'), 'w').close()

    class _TensorFlowWatch:
        """A finder that finds nothing: it only notes who looks for `tensorflow`."""

        def find_spec(self, name, path=None, target=None):
            if name == 'tensorflow':
                import traceback
                with open(os.path.join(_WATCH, f'tensorflow-{os.getpid()}'), 'w') as stack:
                    traceback.print_stack(file=stack)
            return None

    sys.meta_path.insert(0, _TensorFlowWatch())


if os.environ.get('SLIMDATA_TEST_HIDE_TENSORFLOW'):

    class _HideTensorFlow:
        """A finder that says `tensorflow` (and its submodules) is not installed."""

        def find_spec(self, name, path=None, target=None):
            if name.split('.')[0] == 'tensorflow':
                raise ModuleNotFoundError(f'No module named {name!r}', name=name)
            return None

    sys.meta_path.insert(0, _HideTensorFlow())
