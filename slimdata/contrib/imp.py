"""The functions of Python's `imp` module that have no one-line successor in `importlib`.

Python 3.12 removed `imp` (deprecated since 3.4); TF1-era code loads configuration files and
compiled extensions with it (`imp.load_source(name, path)`, `imp.load_dynamic(name, path)`:
Faster R-CNN's Cython boxes, pylib's `util.mod`). `slimdata port` rewrites those calls to
these, which do what `imp` did on Python 3.11, on `importlib` alone (with `reload` and
`new_module`, importlib's and `types.ModuleType`, so that `import imp` can become `import
slimdata.contrib.imp as imp`):

- the module is made from the file at `path` whatever its suffix (a `.cfg` file of Python
  code too), under the name `name`, and put in `sys.modules` before it runs;
- `load_source` of a name already in `sys.modules` runs the file again in that module (as a
  reload does), and a module whose code raises is taken out of `sys.modules` again.
"""

import importlib.machinery
import importlib.util
import sys
from importlib import reload
from types import ModuleType

__all__ = ['load_dynamic', 'load_source', 'new_module', 'reload']


def new_module(name: str) -> ModuleType:
    """A new, empty module named `name`, in no `sys.modules` (`imp.new_module`)."""
    return ModuleType(name)


def load_source(name: str, path: str) -> ModuleType:
    """The Python source file at `path` loaded as the module `name` (`imp.load_source`)."""
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    assert spec is not None, 'a spec is made for any path when the loader is given'
    existing = sys.modules.get(name)
    if existing is not None:
        existing.__spec__, existing.__loader__ = spec, loader
        existing.__dict__.update(__file__=spec.origin, __cached__=spec.cached)
        loader.exec_module(existing)
        return sys.modules[name]
    return _load(spec)


def load_dynamic(name: str, path: str) -> ModuleType:
    """The compiled extension module at `path` loaded as `name` (`imp.load_dynamic`)."""
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    return _load(importlib.machinery.ModuleSpec(name, loader, origin=path))


def _load(spec: importlib.machinery.ModuleSpec) -> ModuleType:
    """The module of `spec`, in `sys.modules` while and after it runs; taken out if it raises."""
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        assert spec.loader is not None
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(spec.name, None)
        raise
    # A module may replace itself in sys.modules while it runs (imp returned that one too).
    return sys.modules[spec.name]
