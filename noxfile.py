"""The TensorFlow matrix: the suite's core on each TensorFlow, numpy and Python that setup.py
accepts, one virtualenv per combination (`make matrix`, or `nox -s "core-3.10(tf2.16)"`).

`make test` and CI run everything on the newest TensorFlow; this is the check that the floors
setup.py declares (tensorflow-cpu>=2.16, numpy>=1.26, Python>=3.10) are true. The results of
the last run are the table in docs/development.md.
"""

import nox

nox.options.default_venv_backend = 'venv'
nox.options.envdir = '.matrix'
nox.options.reuse_existing_virtualenvs = True

#: The oldest, a middle and the newest TensorFlow, each with a Python it supports. numpy None:
#: the newest numpy that TensorFlow's own requirements allow.
COMBINATIONS = [
    nox.param('3.10', '2.16', '1.26', id='tf2.16'),
    nox.param('3.12', '2.18', None, id='tf2.18'),
    nox.param('3.13', '2.21', '2', id='tf2.21'),
]

#: The suite's core: the compat API, tf_slim's own data tests, the tf.data bridge, a
#: converter and its descriptor, the read-time record checks, queue loops, the tf_slim
#: patch, the port's spellings and its successors of what Python removed, a training example
#: and the record layer against TensorFlow's own writer.
CORE_TESTS = [
    'tests/test_compat.py',
    'tests/test_tf_slim_suite.py',
    'tests/test_tfdata.py',
    'tests/test_pascalvoc.py',
    'tests/test_dataset_factory.py',
    'tests/test_record_checks.py',
    'tests/test_queue_session.py',
    'tests/test_patch_tf_slim.py',
    'tests/test_port_spellings.py',
    # What Python 3.12 removed (imp, ...) matters on the newer Pythons only.
    'tests/test_port_backports.py',
    'tests/test_port_python_removals.py',
    # TensorFlow 0.x's names: what the installed TensorFlow still has decides what changes.
    'tests/test_port_tensorflow_0.py',
    'tests/test_train_ssd.py',
    'tests/test_tfrecord.py',
]


@nox.session
@nox.parametrize('python,tensorflow,numpy', COMBINATIONS)
def core(session: nox.Session, tensorflow: str, numpy: str) -> None:
    """Installs slimdata with tensorflow-cpu==TENSORFLOW.* (and numpy==NUMPY.*) and runs
    CORE_TESTS (extra arguments after `--` go to pytest instead)."""
    pins = [f'tensorflow-cpu=={tensorflow}.*'] + ([f'numpy=={numpy}.*'] if numpy else [])
    session.install('-e', '.[dev]', *pins)
    # tf-keras's metadata asks for the full `tensorflow` beside tensorflow-cpu: without its
    # dependencies, at the same version, as the Makefile installs it.
    session.install('--no-deps', f'tf-keras=={tensorflow}.*')
    session.run('python', '-c', 'import numpy, sys, tensorflow as tf; '
                'print("matrix:", tf.__version__, "numpy", numpy.__version__, "python", '
                'sys.version.split()[0])')
    session.run('pytest', '-q', '-n', '1', *(session.posargs or CORE_TESTS))
