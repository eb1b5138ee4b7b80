"""`slimdata.slim` is a package: the rewrite `tf_slim` -> `slimdata.slim` works for every import.

Data modules resolve to slimdata's module objects (the same objects as `slimdata.<name>`), any
other submodule to tf_slim's own module object (an alias, never a second copy).
"""

import importlib
import subprocess
import sys

import pytest

import slimdata
from slimdata import slim

pytest.importorskip('tf_slim')

DATA_MODULES = ('data_decoder', 'data_provider', 'dataset', 'dataset_data_provider',
                'parallel_reader', 'prefetch_queue', 'test_utils', 'tfexample_decoder')


def _slimdata_module(name):
    return importlib.import_module(f'slimdata.{name}')


@pytest.mark.parametrize('name', DATA_MODULES)
def test_every_import_form_of_a_data_module_gives_slimdata_s_module(name):
    namespace = {}
    exec(f'from slimdata.slim.data import {name} as from_data\n'
         f'import slimdata.slim.data.{name}\n'
         f'dotted = slimdata.slim.data.{name}\n', namespace)
    expected = _slimdata_module(name)
    assert namespace['from_data'] is expected
    assert namespace['dotted'] is expected
    assert slim.data.__dict__[name] is expected


@pytest.mark.parametrize('name', [name for name in DATA_MODULES if name != 'test_utils'])
def test_tf_slim_s_top_level_data_names_are_slimdata_s(name):
    import tf_slim
    namespace = {}
    exec(f'from slimdata.slim import {name} as top_level', namespace)
    assert namespace['top_level'] is _slimdata_module(name) is getattr(slim, name)
    assert getattr(tf_slim, name).__name__ == f'tf_slim.data.{name}'  # tf_slim's are its own


def test_names_inside_data_modules_import_from_the_alias():
    from slimdata.slim.data.dataset_data_provider import DatasetDataProvider
    from slimdata.slim.data.tfexample_decoder import Image, TFExampleDecoder
    assert Image is slimdata.tfexample_decoder.Image
    assert TFExampleDecoder is slimdata.tfexample_decoder.TFExampleDecoder
    assert DatasetDataProvider is slimdata.dataset_data_provider.DatasetDataProvider


def test_other_submodules_are_tf_slim_s_own_modules():
    import tf_slim.nets.vgg

    from slimdata.slim.layers import layers
    from slimdata.slim.nets import resnet_utils
    from slimdata.slim.ops import arg_scope
    namespace = {}
    exec('import slimdata.slim.learning\nimport slimdata.slim.nets.vgg\n'
         'learning = slimdata.slim.learning\nvgg = slimdata.slim.nets.vgg\n', namespace)
    assert layers is sys.modules['tf_slim.layers.layers']
    assert arg_scope is sys.modules['tf_slim.ops.arg_scope']
    assert resnet_utils is sys.modules['tf_slim.nets.resnet_utils']
    assert namespace['learning'] is sys.modules['tf_slim.learning']
    assert namespace['vgg'] is tf_slim.nets.vgg
    # The alias leaves tf_slim's modules as they were: their spec still names them.
    assert tf_slim.nets.vgg.__spec__.name == 'tf_slim.nets.vgg'
    assert resnet_utils.__spec__.name == 'tf_slim.nets.resnet_utils'
    assert importlib.reload(resnet_utils) is resnet_utils


def test_facade_attributes_are_tf_slim_s_even_after_importing_aliases():
    import tf_slim

    import slimdata.slim.layers  # noqa: F401  (tf_slim's `slim.layers` is layers.layers)
    assert slim.layers is tf_slim.layers
    assert slim.conv2d is tf_slim.conv2d and slim.arg_scope is tf_slim.arg_scope


@pytest.mark.parametrize('statement', ['import slimdata.slim.conv2d',
                                       'import slimdata.slim.data.nothing',
                                       'from slimdata.slim.data import nothing'])
def test_names_that_are_no_modules_fail_as_in_tf_slim(statement):
    with pytest.raises(ImportError, match='nothing|conv2d'):
        exec(statement, {})


@pytest.mark.slow
def test_data_imports_in_a_fresh_interpreter():
    # The alias registration must not depend on slimdata.tfexample_decoder being imported first.
    code = ('import sys\n'
            'import slimdata.slim.data.tfexample_decoder as decoder\n'
            'assert decoder is sys.modules["slimdata.tfexample_decoder"]\n'
            'from slimdata.slim.nets import vgg\n'
            'assert vgg is sys.modules["tf_slim.nets.vgg"]\n')
    subprocess.run([sys.executable, '-c', code], check=True)
