"""What the installed packages hold, as the passes ask: modules, successors that exist, TF1 names.

The rules (`slimdata.port.rules`) say what an old name becomes; these functions check it on the
packages installed where the port runs (tf_slim, TensorFlow, slimdata), so that the port never
writes a name that does not import. Cached: a name is looked up once per run.
"""

import functools
import importlib
import importlib.util
import types
from typing import List, Optional

from slimdata.port import rules


@functools.lru_cache(maxsize=None)
def is_module(name: str) -> bool:
    """Whether `name` is an importable module (importing its parent packages to find out)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError, AttributeError):
        return False


def module_of(name: str) -> str:
    """The longest prefix of dotted `name` that is a module (what `import` needs for it)."""
    parts = name.split('.')
    for length in range(len(parts), 0, -1):
        if is_module('.'.join(parts[:length])):
            return '.'.join(parts[:length])
    return parts[0]


def importable(name: str) -> str:
    """`name` spelled so that `from <parent> import <last>` works.

    The facade `slimdata.slim` is a module, not a package: a name two levels under it is
    imported from the data module of slimdata or the tf_slim package it stands for. A package
    whose attribute hides its submodule of the same name (`tf_slim.training` is the module
    `tf_slim.training.training` once tf_slim is imported) is spelled by the module that holds
    the name.
    """
    parent, _, last = name.rpartition('.')
    if not parent:
        return name
    if not is_module(parent) and name.startswith(rules.FACADE + '.'):
        rest = name[len(rules.FACADE) + 1:].split('.')
        if rest[0] == 'data':
            rest = rest[1:]
        package = 'slimdata' if rest[0] in rules.DATA_MODULES else 'tf_slim'
        return '.'.join([package] + rest)
    holder = _attribute_chain(parent)
    if (holder is not None and getattr(holder, '__name__', parent) != parent
            and hasattr(holder, last) and isinstance(holder, types.ModuleType)):
        return f'{holder.__name__}.{last}'
    return name


@functools.lru_cache(maxsize=None)
def exists(dotted_name: str) -> bool:
    """Whether `dotted_name` is there once its module is imported (`tensorflow.python.ops.x.f`:
    a private module is no attribute of its package, so not `_attribute_chain`)."""
    module = module_of(dotted_name)
    try:
        found = importlib.import_module(module)
    except ImportError:
        return False
    return _attributes(found, dotted_name[len(module):].split('.')[1:]) is not None


@functools.lru_cache(maxsize=None)
def _attribute_chain(dotted_name: str):
    """What `dotted_name` is in code that imported its module: attribute by attribute from the
    top-level package, as ported code looks it up; None if it is not there."""
    module = module_of(dotted_name)
    try:
        target: object = importlib.import_module(module.split('.')[0])
        importlib.import_module(module)
    except ImportError:
        return None
    return _attributes(target, dotted_name.split('.')[1:])


def _attributes(target: object, parts: List[str]) -> object:
    """`target.a.b` for parts ['a', 'b'], or None where an attribute is missing."""
    for part in parts:
        target = getattr(target, part, None)
        if target is None:
            return None
    return target


def checked_successor(name: str) -> Optional[str]:
    """The successor of old `name` by the rules, if it is really there (a module's rule covers
    every name under it, and not every contrib name made it into tf_slim), else None.

    A successor that has a successor itself (contrib's `variables` module is `tf_slim`, which
    is ported to the facade) gives way to it: what the pass writes, a second port keeps.
    """
    target = rules.successor(name)
    for _ in range(3):
        further = rules.successor(target) if target is not None else None
        if further is None or further == target:
            break
        target = further
    return target if target is not None and _attribute_chain(target) is not None else None


@functools.lru_cache(maxsize=None)
def _tensorflow_v1():
    import tensorflow as tf  # public API only; imported when a file uses private modules
    return tf.compat.v1


def resolve_v1(path: str):
    """The object at dotted `path` under tf.compat.v1, or None."""
    target = _tensorflow_v1()
    for part in path.split('.'):
        target = getattr(target, part, None)
    return target


def public_name(private: str) -> Optional[str]:
    """The path under tf.compat.v1 of a private TensorFlow function, or None if none is known."""
    candidates = []
    if private in rules.PRIVATE_RENAMES:
        candidates.append(rules.PRIVATE_RENAMES[private])
    module, _, attr = private.rpartition('.')
    candidates += [f'{space}.{attr}'.lstrip('.') for space in rules.PRIVATE_MODULES.get(module, ())]
    return next((path for path in candidates if resolve_v1(path) is not None), None)
