"""`patch_tf_slim()`: tf_slim's own data code, unedited, working on modern TensorFlow.

For code you cannot edit (the TF Object Detection API does
`from tf_slim import tfexample_decoder as slim_example_decoder`; notebooks; a framework's
entry point)::

    import slimdata
    slimdata.patch_tf_slim()   # before or after tf_slim, or the code that uses it, is imported

or with no code at all, `slimdata patch-tf-slim install` (a start-up hook that applies this
patch when a program imports tf_slim; see `slimdata.tf_slim_hook`).

What breaks. tf_slim 1.1.0, its last release, calls functions and classes on TensorFlow's
private modules that TensorFlow has since moved elsewhere. In its data code:
`control_flow_ops.case` (every decode through `Image`), `control_flow_ops.cond`
(`BackupHandler`; `Image` with a `dct_method`) and `array_ops.stack` (`Tensor` with
`shape_keys`). In its model code (found by scanning every tf_slim module for references to
names its private modules no longer have): `ops.Tensor` (every `conv2d` with a
`normalizer_fn`), `ops.IndexedSlices` (`learning.create_train_op`'s gradient helpers),
`array_ops.unstack` (`fully_connected` on rank > 2), `control_flow_ops.Assert` and
`while_loop` (metrics, metric-learning losses), `variable_scope.variable` (`local_variable`,
`global_variable`), and `batch_norm`'s default path, which builds TensorFlow's legacy
`BatchNormalization` layer, which TensorFlow 2.21 loads from `tf_keras.legacy_tf_layers`, a
module that no release of tf_keras has any more (every `slim.batch_norm` with its default
`updates_collections` fails with `No module named 'tf_keras'`).

Why the patch changes no name that tf_slim defines. Code holds tf_slim's objects from the
moment it imports them: the OD API defines `class _ClassTensorHandler(
slim_example_decoder.Tensor)` at import time, and tf_slim's methods run
`super(Tensor, self).__init__(...)`, looking `Tensor` up in tf_slim's module again. Replace
that name with slimdata's class and every such subclass fails (`super(type, obj)`: obj is not
an instance of the new type); decoders and handlers built before the call would keep the old
classes anyway. So the patch never swaps tf_slim's modules or classes; it makes two kinds of
change in place, and existing subclasses and objects see them at once:

1. Repairs. The missing names are added, under their old names, to the private modules
   that tf_slim's modules hold, each being the public name TensorFlow exports for it
   (`tf.compat.v1.case`, `tf.Tensor`, `tf.compat.v1.Variable`, ...: the same objects,
   moved; `REPAIRS` lists them). Only missing names are added; nothing is replaced. Every
   line of tf_slim's code then runs as written, as does code written against the same
   private names beside it (tf_slim's own tests call `control_flow_ops.case`).
   `batch_norm` is routed around the layer TensorFlow no longer has: when it would build
   that layer (the default `updates_collections`), it runs its own fused implementation
   instead, with an equal copy of the collection name (tf_slim chooses the path by the
   name's identity); the update ops go to the same collection, the variables have the same
   names (checkpoints restore), and the outputs are the same batch normalisation.
   `renorm` and `adjustment`, which only that layer implements, raise a ValueError
   saying so.
2. Fixes. slimdata's fixes of tf_slim bugs become methods of tf_slim's own classes, where
   they change nothing that worked:
   * `Image._decode` is slimdata's: with `dtype=tf.uint16` a 16-bit PNG keeps its 16 bits
     (tf_slim cut them to 8); the format 'raw' is recognised in any case;
   * `TFExampleDecoder.decode` and `TFSequenceExampleDecoder.decode` first check the items
     asked for and the keys their handlers read: an unknown one raises
     `slimdata.tfexample_decoder.UnknownKeyError` naming it and the known ones, which is a
     KeyError (as tf_slim's bare `KeyError: 'lable'` was) and a ValueError;
   * `BoundingBoxSequence` and `KeypointsSequence` accept their own default `prefix=None`
     (a TypeError in tf_slim).
   Left as tf_slim has it: `list_items()` returning `dict_keys` (TFSequenceExampleDecoder,
   DataProvider); a list would break code that does set operations on it.

slimdata imports no private TensorFlow module: the patch reaches them through the references
tf_slim's module holds. Patching is per interpreter and cannot be undone in it; a new
interpreter without the call (or without the hook) runs tf_slim as it is.
"""

import functools
import importlib
import inspect
import logging
import sys
import types
from typing import Any, Callable, List, Optional, Tuple

from slimdata import tfexample_decoder
from slimdata._tf import tf

logger = logging.getLogger(__name__)

#: tf_slim's module that holds everything the patch changes; every import form of tf_slim's
#: data code runs it (tf_slim's `__init__` imports it).
TF_SLIM_DECODER = 'tf_slim.data.tfexample_decoder'

#: The repairs: (a tf_slim module that holds the private module; the name it gives it; the
#: name missing from it; the public name TensorFlow exports for it, under `tf.`). tf_slim's
#: `__init__` imports its layers and variables modules before its data modules, so all of
#: these are loaded when the decoder module is.
REPAIRS = (
    (TF_SLIM_DECODER, 'control_flow_ops', 'case', 'compat.v1.case'),
    (TF_SLIM_DECODER, 'control_flow_ops', 'cond', 'compat.v1.cond'),
    (TF_SLIM_DECODER, 'control_flow_ops', 'Assert', 'compat.v1.Assert'),
    (TF_SLIM_DECODER, 'control_flow_ops', 'while_loop', 'compat.v1.while_loop'),
    (TF_SLIM_DECODER, 'array_ops', 'stack', 'stack'),
    (TF_SLIM_DECODER, 'array_ops', 'unstack', 'unstack'),
    (TF_SLIM_DECODER, 'ops', 'Tensor', 'Tensor'),
    (TF_SLIM_DECODER, 'ops', 'IndexedSlices', 'IndexedSlices'),
    ('tf_slim.ops.variables', 'variable_scope', 'variable', 'compat.v1.Variable'),
)

#: tf_slim's batch_norm, and the modules that export it under that name.
TF_SLIM_LAYERS = 'tf_slim.layers.layers'
BATCH_NORM_HOLDERS = (TF_SLIM_LAYERS, 'tf_slim.layers', 'tf_slim')
_BATCH_NORM_ROUTE = 'takes its own fused (or moments) path, not the layer TensorFlow 2.21 lacks'

# Set on every method the patch installs, to the change it makes: marks it as done.
_FIX_MARK = '_slimdata_fix'


def patch_tf_slim() -> Tuple[str, ...]:
    """Makes tf_slim's code work on modern TensorFlow, in this interpreter.

    Imports tf_slim's decoder module if it is not imported yet (and with it TensorFlow), then
    repairs and fixes it in place (see the module docstring). Idempotent.

    Returns:
      The changes this call made, one line each (also logged at debug level); an empty
      tuple when tf_slim was patched already.

    Raises:
      ImportError: if tf_slim is not installed.
    """
    module = import_tf_slim_decoder()
    if module is None:
        raise ImportError('patch_tf_slim: tf_slim is not installed, so there is nothing to '
                          'patch (`pip install tf-slim` installs it)')
    return patch_module(module)


def repair_tf_slim() -> Tuple[str, ...]:
    """Only the repairs (see the module docstring), not the fixes: tf_slim's code runs on
    modern TensorFlow as it is written, bugs included. `slimdata.slim` applies this: its data
    modules are slimdata's, and tf_slim's own data classes keep tf_slim's behaviour for code
    that uses them directly. Idempotent; returns the changes made, as `patch_tf_slim`."""
    if import_tf_slim_decoder() is None:
        raise ImportError('repair_tf_slim: tf_slim is not installed')
    return _apply(_pending_repairs() + _pending_batch_norm_route(), 'repaired')


def import_tf_slim_decoder() -> Optional[types.ModuleType]:
    """tf_slim's decoder module, imported as a program would import it; None without tf_slim."""
    try:
        return importlib.import_module(TF_SLIM_DECODER)
    except ModuleNotFoundError as error:
        if error.name is None or not (TF_SLIM_DECODER + '.').startswith(error.name + '.'):
            raise  # something tf_slim needs is missing: say what
        return None


def patch_module(decoder_module: types.ModuleType) -> Tuple[str, ...]:
    """Patches tf_slim's `tfexample_decoder` module, already executed; see patch_tf_slim."""
    return _apply(_pending_changes(decoder_module), 'patched')


def _apply(pending: List[Tuple[str, Callable[[], None]]], done: str) -> Tuple[str, ...]:
    changes = []
    for change, apply in pending:
        apply()
        changes.append(change)
        logger.debug('patch_tf_slim: %s', change)
    if not changes:
        logger.debug('patch_tf_slim: %s is %s already', TF_SLIM_DECODER, done)
    return tuple(changes)


def is_patched() -> bool:
    """True when tf_slim's decoder module is imported in this interpreter and fully patched."""
    module = sys.modules.get(TF_SLIM_DECODER)
    return module is not None and not _pending_changes(module)


def _pending_changes(decoder_module) -> List[Tuple[str, Callable[[], None]]]:
    """The changes still to make to tf_slim's decoder module: (description, apply) pairs."""
    return (_pending_repairs() + _pending_fixes(decoder_module) +
            _pending_batch_norm_route())


def _pending_repairs():
    pending = []
    for holder, alias, name, public_name in REPAIRS:
        private_module = getattr(sys.modules.get(holder), alias, None)
        if private_module is None or _has(private_module, name):
            continue
        public_function = functools.reduce(getattr, public_name.split('.'), tf)
        pending.append((f'{private_module.__name__}.{name} = tf.{public_name}',
                        functools.partial(setattr, private_module, name, public_function)))
    return pending


def _has(module: types.ModuleType, name: str) -> bool:
    """hasattr, where a lazily loaded name that fails to load counts as missing."""
    try:
        return hasattr(module, name)
    except ImportError:
        return False


def _pending_fixes(decoder_module):
    pending = []
    for class_name, method_name, fix, fixed in _FIXES:
        cls = getattr(decoder_module, class_name, None)
        original = vars(cls).get(method_name) if isinstance(cls, type) else None
        if original is None or hasattr(original, _FIX_MARK):
            continue
        replacement = functools.wraps(original)(fix(original))
        setattr(replacement, _FIX_MARK, fixed)
        pending.append((f'tf_slim {class_name}.{method_name}: {fixed}',
                        functools.partial(setattr, cls, method_name, replacement)))
    return pending


def _pending_batch_norm_route():
    layers_module = sys.modules.get(TF_SLIM_LAYERS)
    original = getattr(layers_module, 'batch_norm', None)
    if original is None or hasattr(original, _FIX_MARK):
        return []
    routed = _routed_batch_norm(original)
    holders = [sys.modules[name] for name in BATCH_NORM_HOLDERS
               if getattr(sys.modules.get(name), 'batch_norm', None) is original]
    return [(f'tf_slim batch_norm: {_BATCH_NORM_ROUTE}',
             functools.partial(_set_everywhere, holders, 'batch_norm', routed))]


def _set_everywhere(modules, name, value):
    for module in modules:
        setattr(module, name, value)


def _routed_batch_norm(original):
    """tf_slim's batch_norm (an arg-scoped function), routed past the Keras layer.

    It keeps the original's arg-scope key, so `arg_scope([slim.batch_norm], ...)` applies to
    both; it reads the arg scope itself to know the value `updates_collections` will have.
    """
    current_arg_scope = importlib.import_module('tf_slim.ops.arg_scope').current_arg_scope
    update_ops = tf.compat.v1.GraphKeys.UPDATE_OPS
    # Equal, not identical: tf_slim builds the Keras layer only for the identical object.
    update_ops_copy = ''.join(list(update_ops))
    key = original._key_op
    positional = list(inspect.signature(original).parameters)

    def batch_norm(*args, **kwargs):
        given = dict(zip(positional, args))
        effective = {**current_arg_scope().get(key, {}), **kwargs, **given}
        for option in ('renorm', 'adjustment'):
            if effective.get(option):
                raise ValueError(
                    f'slim.batch_norm({option}=...) needs TensorFlow\'s legacy '
                    'BatchNormalization layer, which TensorFlow 2.21 no longer ships (it '
                    'loads it from tf_keras.legacy_tf_layers); the default batch_norm works')
        collections = effective.get('updates_collections', update_ops)
        if ('updates_collections' not in given and isinstance(collections, str)
                and collections == update_ops):
            kwargs['updates_collections'] = update_ops_copy
        return original(*args, **kwargs)

    routed: Any = functools.wraps(original)(batch_norm)  # a function with tf_slim's attributes
    routed._key_op = key  # what tf_slim's arg_scope looks the function up by
    setattr(routed, _FIX_MARK, _BATCH_NORM_ROUTE)
    return routed


def _slimdata_image_decode(original):
    """tf_slim Image's `_decode` becomes slimdata's (the instance attributes are the same)."""
    del original  # replaced, not called: slimdata's decode does all that it did

    def _decode(self, image_buffer, image_format):
        return tfexample_decoder.Image._decode(self, image_buffer, image_format)
    return _decode


def _checks_items(known_keys, described_as):
    """A decode that checks the items asked for, and the keys they read, before decoding."""
    def fix(decode):
        def checked_decode(self, serialized_example, items=None):
            if items is not None:
                items = list(items)  # read twice here: an iterator would be spent by the check
            handlers = tfexample_decoder._handlers_for(items, self._items_to_handlers)
            tfexample_decoder._features_used(handlers, known_keys(self), described_as)
            return decode(self, serialized_example, items)
        return checked_decode
    return fix


def _prefix_none_is_no_prefix(init):
    """An `__init__` that passes prefix '' where the caller gave (or defaulted to) None."""
    signature = inspect.signature(init)

    def __init__(self, *args, **kwargs):
        arguments = signature.bind(self, *args, **kwargs)
        if arguments.arguments.get('prefix') is None:
            arguments.arguments['prefix'] = ''
        init(*arguments.args, **arguments.kwargs)
    return __init__


#: The fixes: (tf_slim class, its method, fix(original method) -> new method, what it fixes).
_FIXES = (
    ('Image', '_decode', _slimdata_image_decode,
     "slimdata's decode (16-bit PNGs keep 16 bits, 'raw' in any case)"),
    ('TFExampleDecoder', 'decode',
     _checks_items(lambda decoder: decoder._keys_to_features, 'keys_to_features'),
     'an unknown item or key raises UnknownKeyError naming it (a KeyError and a ValueError)'),
    ('TFSequenceExampleDecoder', 'decode',
     _checks_items(lambda decoder: {**decoder._keys_to_context_features,
                                    **decoder._keys_to_sequence_features},
                   'keys_to_context_features or keys_to_sequence_features'),
     'an unknown item or key raises UnknownKeyError naming it (a KeyError and a ValueError)'),
    ('BoundingBoxSequence', '__init__', _prefix_none_is_no_prefix,
     'prefix=None (the default) means no prefix'),
    ('KeypointsSequence', '__init__', _prefix_none_is_no_prefix,
     'prefix=None (the default) means no prefix'),
)
