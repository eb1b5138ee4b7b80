"""Whether an import line resolves on the installed packages: the port never writes one that
does not.

`tf_upgrade_v2` in safety mode prefixes `tensorflow.compat.v1.` to every `tensorflow.` import
path, also where the result does not exist (`from tensorflow.core.example import example_pb2`
-> `from tensorflow.compat.v1.core.example ...`, a ModuleNotFoundError; likewise
`tensorflow.python`). `unresolved` finds such lines by resolving them as Python would: the
module by `importlib.util.find_spec`, each imported name as a submodule or an attribute of the
imported module. Only imports of the packages the port writes (`PORT_PACKAGES`) are checked;
the user's own modules are left alone. Results are cached per import.
"""

import functools
import importlib
import re
from typing import Optional, Tuple

from slimdata.port.installed import is_module

#: The top-level packages whose import paths the port writes.
PORT_PACKAGES = ('tensorflow', 'tf_slim', 'slimdata')

# A whole one-line import: `import a.b [as c], d` or `from a.b import c [as d], (e)`.
_IMPORT = re.compile(r'^\s*import\s+(?P<modules>[\w. ,]+?)\s*(#.*)?$')
_FROM = re.compile(r'^\s*from\s+(?P<module>[\w.]+)\s+import\s+\(?(?P<names>[\w ,]+?)\)?\s*'
                   r'(#.*)?$')


@functools.lru_cache(maxsize=None)
def _has(module: str, name: str) -> bool:
    """Whether `from module import name` works: a submodule, or an attribute of the module."""
    if is_module(f'{module}.{name}'):
        return True
    try:
        return hasattr(importlib.import_module(module), name)
    except ImportError:
        return False


def _checked(module: str) -> bool:
    return module.split('.')[0] in PORT_PACKAGES


def _aliases(text: str) -> Tuple[str, ...]:
    return tuple(part.split(' as ')[0].strip() for part in text.split(',') if part.strip())


def unresolved(line: str) -> Optional[str]:
    """The module or name of import `line` that does not resolve, or None (also for a line
    that is not a whole import, or imports none of `PORT_PACKAGES`)."""
    found = _FROM.match(line)
    if found:
        module = found.group('module')
        if not _checked(module):
            return None
        if not is_module(module):
            return module
        return next((f'{module}.{name}' for name in _aliases(found.group('names'))
                     if not _has(module, name)), None)
    found = _IMPORT.match(line)
    if found:
        return next((module for module in _aliases(found.group('modules'))
                     if _checked(module) and not is_module(module)), None)
    return None
