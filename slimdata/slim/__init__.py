"""The facade: everything of `tf_slim`, with its data modules replaced by slimdata's.

Old code did `slim = tf.contrib.slim` (or `import tf_slim as slim`); with::

    from slimdata import slim

`slim.conv2d`, `slim.arg_scope`, `slim.learning.train`, `slim.queues`, ... are tf_slim's,
repaired for modern TensorFlow when this module is imported (`slimdata.tf_slim_patch.
repair_tf_slim()`: the names tf_slim's code uses that TensorFlow's private modules no longer
have, and `batch_norm`, whose default path needs a layer TensorFlow 2.21 no longer ships), and
`slim.dataset`, `slim.tfexample_decoder`, `slim.dataset_data_provider`, `slim.parallel_reader`,
`slim.prefetch_queue`, `slim.data_decoder`, `slim.data_provider` (and `slim.data.<module>`)
are slimdata's, which work on modern TensorFlow.

It is a package, so that the mechanical rewrite `tf_slim` -> `slimdata.slim` works for every
import form: `from slimdata.slim.data import X` and `import slimdata.slim.data.X` give
slimdata's modules (see `slimdata.slim.data`), and any other submodule,
`from slimdata.slim.nets import vgg` or `import slimdata.slim.learning`, is tf_slim's own
module object (an alias, never a second copy: arg scopes and collections stay shared).
"""

import importlib
import importlib.abc
import importlib.util
import sys

from slimdata import tensorflow_required as _tensorflow_required

# Before tf_slim, whose import would fail with a bare "No module named 'tensorflow'".
_tensorflow_required.require('from slimdata import slim')

import tf_slim as _tf_slim  # noqa: E402

from slimdata.slim import data  # noqa: E402, F401 (slim.data, as tf_slim has it)
from slimdata.slim.data import MODULES as _DATA_MODULES  # noqa: E402
from slimdata.tf_slim_patch import repair_tf_slim as _repair_tf_slim  # noqa: E402

_repair_tf_slim()  # before the names below are copied: they include the routed batch_norm

# tf_slim's names, its top-level data modules (all of `tf_slim.data` but test_utils) swapped for
# slimdata's; `data` is the subpackage slimdata.slim.data, imported above.
globals().update({name: _DATA_MODULES.get(name, value) for name, value in vars(_tf_slim).items()
                  if not name.startswith('__') and name != 'data'})


def _alias_name(tf_slim_name: str) -> str:
    return __name__ + tf_slim_name[len('tf_slim'):]


def _tf_slim_name(alias: str) -> str:
    return 'tf_slim' + alias[len(__name__):]


def _is_aliased(tf_slim_name: str) -> bool:
    """tf_slim's submodules are aliased, except its data package: that one is slimdata's."""
    return tf_slim_name.startswith('tf_slim.') and not (
        tf_slim_name == 'tf_slim.data' or tf_slim_name.startswith('tf_slim.data.'))


class _TfSlimAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports `slimdata.slim.<path>` (outside `data`) as tf_slim's own module `tf_slim.<path>`.

    For the submodules that `import tf_slim` does not load (`tf_slim.nets.vgg`, ...). It comes
    before the path finder, which would otherwise find `vgg.py` in `slimdata.slim.nets.__path__`
    (tf_slim's folder) and run a second copy of it under the alias' name.
    """

    def find_spec(self, fullname, path=None, target=None):
        if not (fullname.startswith(__name__ + '.') and _is_aliased(_tf_slim_name(fullname))):
            return None
        if importlib.util.find_spec(_tf_slim_name(fullname)) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module(_tf_slim_name(spec.name))
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module):
        # tf_slim's module already ran; the import system has just set its __spec__ to the
        # alias' spec, so it gets its own back (reload and pickling read it).
        module.__spec__ = module.__spec__.loader_state


# Aliases for the submodules that tf_slim has already loaded: registered as they are, so that
# importing one leaves the facade's attributes as tf_slim has them (`slim.layers` is
# `tf_slim.layers.layers` there, not the package).
for _name in [name for name in sys.modules if _is_aliased(name)]:
    sys.modules.setdefault(_alias_name(_name), sys.modules[_name])
del _name

if not any(type(finder).__name__ == _TfSlimAliasFinder.__name__ for finder in sys.meta_path):
    sys.meta_path.insert(0, _TfSlimAliasFinder())
