"""`slimdata port`'s table of old names: every successor exists, name by name.

The successors are checked against what tf_slim 1.1.0, slimdata and TensorFlow's public API
export here, by importing them: a rule that names something missing would port code into an
ImportError or AttributeError.
"""

import importlib
import importlib.util
import types

import pytest

from slimdata.contrib import unavailable
from slimdata.port import installed, rules


def _resolve(dotted: str):
    """The object at `dotted` as ported code reaches it, or None if it is not there.

    Ported code reaches a name two ways, and both must work: in place, `import <module>` then
    the attribute chain from the top-level package (`tf_slim.training.create_train_op`); in a
    rewritten import, `from <parent> import <last>` of the name `installed.importable` spells.
    """
    module = installed.module_of(dotted)
    try:
        importlib.import_module(module)
        target = importlib.import_module(dotted.split('.')[0])
    except ImportError:
        return None
    for attribute in dotted.split('.')[1:]:
        target = getattr(target, attribute, None)
        if target is None:
            return None
    parent, _, last = installed.importable(dotted).rpartition('.')
    if parent:
        namespace: dict = {}
        try:
            exec(f'from {parent} import {last} as imported', namespace)  # noqa: S102
        except ImportError:
            return None
        assert namespace['imported'] is target, dotted
    return target


def _needs_tf_keras(successor: str) -> bool:
    """slimdata.contrib.rnn's cells are tf-keras's, which is not a dependency (see there)."""
    return (successor.startswith('slimdata.contrib.rnn')
            and importlib.util.find_spec('tf_keras') is None)


@pytest.mark.parametrize('old', sorted(rules.NAME_RULES))
def test_every_successor_exists(old):
    new = rules.NAME_RULES[old]
    if _needs_tf_keras(new):
        pytest.skip('tf-keras is not installed')
    target = new[:-2] if new.endswith('.*') else new
    assert _resolve(target) is not None, f'{old} -> {new}: {target} does not exist'


@pytest.mark.parametrize('old', sorted(k for k in rules.NAME_RULES if k.endswith('.*')))
def test_a_moved_module_is_a_module(old):
    """`a.*` -> `b.*` moves a module: b must be one (its names are then looked up in it)."""
    target = rules.NAME_RULES[old][:-2]
    if _needs_tf_keras(target):
        pytest.skip('tf-keras is not installed')
    assert isinstance(_resolve(target), types.ModuleType), target


@pytest.mark.parametrize('name', rules._FRAMEWORK_NAMES + rules._LAYERS_NAMES)
def test_contrib_framework_and_layers_names_exist_in_tf_slim(name):
    old = [key for key in (f'tensorflow.contrib.framework.{name}',
                           f'tensorflow.contrib.layers.{name}') if key in rules.NAME_RULES]
    assert old, name
    for key in old:
        assert _resolve(rules.successor(key)) is not None, key


@pytest.mark.parametrize('private', sorted(rules.PRIVATE_RENAMES))
def test_private_renames_name_public_functions(private):
    assert installed.resolve_v1(rules.PRIVATE_RENAMES[private]) is not None, private


@pytest.mark.parametrize('layer', sorted(rules.TF_LAYERS))
def test_tf_layers_targets_exist(layer):
    assert _resolve(rules.TF_LAYERS[layer].target) is not None


@pytest.mark.parametrize('old, new', [
    ('tensorflow.contrib.slim', 'slimdata.slim'),
    ('tensorflow.contrib.slim.tfexample_decoder.Image', 'slimdata.tfexample_decoder.Image'),
    ('tf_slim.data.dataset_data_provider', 'slimdata.dataset_data_provider'),
    ('tensorflow.contrib.framework.arg_scope', 'tf_slim.arg_scope'),
    ('tensorflow.contrib.layers.xavier_initializer', 'tf_slim.xavier_initializer'),
    ('tensorflow.contrib.layers.initializers.xavier_initializer',
     'tf_slim.initializers.xavier_initializer'),
    ('tensorflow.contrib.layers.utils.smart_cond', 'tf_slim.utils.smart_cond'),
    ('tensorflow.contrib.framework.python.ops.variables.get_or_create_global_step',
     'tf_slim.get_or_create_global_step'),
])
def test_successor_of_a_name_under_a_moved_module(old, new):
    assert rules.successor(old) == new
    assert _resolve(new) is not None


def test_names_without_successor_have_a_reason():
    reason = unavailable.unportable_reason('tensorflow.contrib.quantize.create_eval_graph')
    assert 'quantization' in reason
    assert (unavailable.unportable_reason('tensorflow.contrib.nccl.all_sum')
            == unavailable.UNPORTABLE['tensorflow.contrib'])
    assert rules.successor('tensorflow.contrib.quantize.create_eval_graph') is None
