"""`patch_tf_slim()`: tf_slim's own data code, unedited, working on modern TensorFlow.

For code you cannot edit (the TF Object Detection API does
`from tf_slim import tfexample_decoder as slim_example_decoder`; notebooks; a framework's
entry point)::

    import slimdata
    slimdata.patch_tf_slim()   # before or after tf_slim, or the code that uses it, is imported

or with no code at all, `slimdata patch-tf-slim install` (a start-up hook that applies this
patch when a program imports tf_slim; see `slimdata.tf_slim_hook`).

What breaks. tf_slim 1.1.0, its last release, calls three functions on TensorFlow's private
modules that TensorFlow has since moved elsewhere: `control_flow_ops.case` (every decode
through `Image`), `control_flow_ops.cond` (`BackupHandler`; `Image` with a `dct_method`) and
`array_ops.stack` (`Tensor` with `shape_keys`). Everything else of its data code still runs.

Why the patch changes no name that tf_slim defines. Code holds tf_slim's objects from the
moment it imports them: the OD API defines `class _ClassTensorHandler(
slim_example_decoder.Tensor)` at import time, and tf_slim's methods run
`super(Tensor, self).__init__(...)`, looking `Tensor` up in tf_slim's module again. Replace
that name with slimdata's class and every such subclass fails (`super(type, obj)`: obj is not
an instance of the new type); decoders and handlers built before the call would keep the old
classes anyway. So the patch never swaps tf_slim's modules or classes; it makes two kinds of
change in place, and existing subclasses and objects see them at once:

1. Repairs. The three missing functions are added, under their old names, to the private
   modules that tf_slim's module holds, each being the public function TensorFlow exports for
   it (`tf.compat.v1.case`, `tf.compat.v1.cond`, `tf.stack`: the same functions, moved).
   Only missing names are added; nothing is replaced. Every line of tf_slim's data code then
   runs as written, as does code written against the same private names beside it (tf_slim's
   own tests call `control_flow_ops.case`).
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
from typing import Callable, List, Optional, Tuple

from slimdata import tfexample_decoder
from slimdata._tf import tf

logger = logging.getLogger(__name__)

#: tf_slim's module that holds everything the patch changes; every import form of tf_slim's
#: data code runs it (tf_slim's `__init__` imports it).
TF_SLIM_DECODER = 'tf_slim.data.tfexample_decoder'

#: The repairs: (private module, by the name tf_slim's module gives it; the function missing
#: from it; the public function that TensorFlow exports for it, under `tf.`).
REPAIRS = (
    ('control_flow_ops', 'case', 'compat.v1.case'),
    ('control_flow_ops', 'cond', 'compat.v1.cond'),
    ('array_ops', 'stack', 'stack'),
)

# Set on every method the patch installs, to the change it makes: marks it as done.
_FIX_MARK = '_slimdata_fix'


def patch_tf_slim() -> Tuple[str, ...]:
    """Makes tf_slim's data code work on modern TensorFlow, in this interpreter.

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
    changes = []
    for change, apply in _pending_changes(decoder_module):
        apply()
        changes.append(change)
        logger.debug('patch_tf_slim: %s', change)
    if not changes:
        logger.debug('patch_tf_slim: %s is patched already', decoder_module.__name__)
    return tuple(changes)


def is_patched() -> bool:
    """True when tf_slim's decoder module is imported in this interpreter and fully patched."""
    module = sys.modules.get(TF_SLIM_DECODER)
    return module is not None and not _pending_changes(module)


def _pending_changes(decoder_module) -> List[Tuple[str, Callable[[], None]]]:
    """The changes still to make to tf_slim's decoder module: (description, apply) pairs."""
    return _pending_repairs(decoder_module) + _pending_fixes(decoder_module)


def _pending_repairs(decoder_module):
    pending = []
    for alias, name, public_name in REPAIRS:
        private_module = getattr(decoder_module, alias, None)
        if private_module is None or hasattr(private_module, name):
            continue
        public_function = functools.reduce(getattr, public_name.split('.'), tf)
        pending.append((f'{private_module.__name__}.{name} = tf.{public_name}',
                        functools.partial(setattr, private_module, name, public_function)))
    return pending


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
