"""The package is typed: mypy checks all of it, and every public function of the compat API
says its types.

Type hints must not change tf_slim's signatures (names, order, defaults): tests/test_compat.py
compares those with tf_slim's; this file checks that the hints are there and that a type
checker uses them (a wrong call in a user's code is reported, a right one is not).
"""

import importlib
import inspect
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
COMPAT_MODULES = ('data_decoder', 'data_provider', 'dataset', 'dataset_data_provider',
                  'dataset_batch_provider', 'parallel_reader', 'prefetch_queue',
                  'tfexample_decoder', 'queue_session', 'tfdata', 'test_utils')


def _public_callables(module):
    """(qualified name, function) of the module's public functions and of its public classes'
    methods (their own, __init__ included; properties by their getter)."""
    for name, value in vars(module).items():
        if name.startswith('_') or getattr(value, '__module__', None) != module.__name__:
            continue
        if inspect.isfunction(value):
            yield name, value
        elif inspect.isclass(value):
            for attribute, member in vars(value).items():
                if attribute.startswith('_') and attribute != '__init__':
                    continue
                function = member.fget if isinstance(member, property) else member
                if inspect.isfunction(function):
                    yield f'{name}.{attribute}', function


def _missing_annotations(function):
    signature = inspect.signature(function)
    missing = [parameter.name for parameter in signature.parameters.values()
               if parameter.name not in ('self', 'cls')
               and parameter.annotation is inspect.Parameter.empty]
    if function.__name__ != '__init__' and signature.return_annotation is inspect.Signature.empty:
        missing.append('return')
    return missing


@pytest.mark.parametrize('module_name', COMPAT_MODULES)
def test_every_public_function_of_the_compat_api_is_annotated(module_name):
    module = importlib.import_module(f'slimdata.{module_name}')
    callables = list(_public_callables(module))
    assert callables, module_name
    missing = {name: _missing_annotations(function) for name, function in callables}
    assert {name: params for name, params in missing.items() if params} == {}


def _mypy(*arguments, cwd=ROOT):
    return subprocess.run([sys.executable, '-m', 'mypy', '--no-incremental',
                           '--config-file', str(ROOT / 'pyproject.toml'), *arguments],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.mark.slow
def test_mypy_passes_on_the_whole_package_as_installed(tmp_path):
    """`mypy slimdata` on the package laid out as installed, every module of it checked.

    `make lint` runs `mypy slimdata datasets` in the source tree, where mypy cannot follow
    setup.py's mapping of `slimdata.datasets` to datasets/: there, whatever slimdata.cli and
    the converters import from `slimdata.datasets` is Any. Laid out as installed, calls across
    that boundary are checked too.
    """
    no_caches = shutil.ignore_patterns('__pycache__')
    shutil.copytree(ROOT / 'slimdata', tmp_path / 'slimdata', ignore=no_caches)
    shutil.copytree(ROOT / 'datasets', tmp_path / 'slimdata' / 'datasets', ignore=no_caches)
    result = _mypy('slimdata', cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    modules = list((tmp_path / 'slimdata').rglob('*.py'))
    assert f'no issues found in {len(modules)} source files' in result.stdout, result.stdout


USER_CODE = '''
import tensorflow.compat.v1 as tf

from slimdata import dataset, dataset_data_provider, prefetch_queue, tfdata
from slimdata import tfexample_decoder as slim_example_decoder

keys_to_features = {
    'image/encoded': tf.FixedLenFeature((), tf.string, default_value=''),
    'image/class/label': tf.FixedLenFeature([], tf.int64, default_value=0),
}
items_to_handlers = {
    'image': slim_example_decoder.Image(shape=[28, 28, 1], channels=1),
    'label': slim_example_decoder.Tensor('image/class/label'),
}
decoder = slim_example_decoder.TFExampleDecoder(keys_to_features, items_to_handlers)
data = dataset.Dataset(data_sources='train-*.tfrecord', reader=tf.TFRecordReader,
                       decoder=decoder, num_samples=100, items_to_descriptions={},
                       num_classes=10)
classes: int = data.num_classes
provider = dataset_data_provider.DatasetDataProvider(data, num_readers=2, shuffle=False)
image, label = provider.get(['image', 'label'])
queue = prefetch_queue.prefetch_queue([image, label], capacity=4)
names: list = decoder.list_items()
bridge = tfdata.to_tf_data(data, items=['image'], num_epochs=1)
'''

WRONG_CALLS = {
    'decoder = slim_example_decoder.TFExampleDecoder(5, items_to_handlers)':
        'Argument 1 to "TFExampleDecoder" has incompatible type "int"',
    "provider = dataset_data_provider.DatasetDataProvider(data, num_readers='2')":
        'Argument "num_readers" to "DatasetDataProvider" has incompatible type "str"',
    'count: str = data.num_samples': 'Incompatible types in assignment',
    "handler = slim_example_decoder.Image(channels='3')":
        'Argument "channels" to "Image" has incompatible type "str"',
}


def test_mypy_accepts_right_calls_and_reports_wrong_ones(tmp_path):
    """A user's typical code type-checks; each wrong call in it is reported by mypy."""
    wrong = WRONG_CALLS
    right = tmp_path / 'right.py'
    right.write_text(USER_CODE)
    wrong_file = tmp_path / 'wrong.py'
    wrong_file.write_text(USER_CODE + '\n'.join(wrong) + '\n')
    result = _mypy(str(right), str(wrong_file))
    output = result.stdout
    right_errors = [line for line in output.splitlines() if line.startswith(str(right))]
    assert right_errors == []
    for line, message in wrong.items():
        assert message in output, (line, textwrap.indent(output, '  '))
    wrong_errors = [line for line in output.splitlines() if line.startswith(str(wrong_file))]
    assert len(wrong_errors) == len(wrong), output
