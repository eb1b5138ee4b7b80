"""Calling a user's `model_fn` and `input_fn` as TF1's Estimator did: the argument names a
function takes (`fn_args`), the checks of a `model_fn`'s signature, and what an `input_fn`
returned split into features, labels and the hooks it needs."""

import functools
import inspect
from typing import Any, Callable, Dict, List, Optional, Tuple

from slimdata._tf import tf
from slimdata.contrib.estimator.spec import Hook

v1 = tf.compat.v1

_MODEL_FN_ARGS = {'features', 'labels', 'mode', 'params', 'config'}


def fn_args(fn: Callable) -> Tuple[str, ...]:
    """The argument names `fn` can be called with by name, as TF1's `fn_args`: a partial's
    bound keywords are left out, as are a method's `self` and `*args` / `**kwargs`."""
    parameters = inspect.signature(fn).parameters
    bound = fn.keywords if isinstance(fn, functools.partial) else {}
    return tuple(name for name, parameter in parameters.items()
                 if name not in bound and parameter.kind not in (
                     inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD))


def check_model_fn(model_fn: Callable, params: Optional[Dict[str, Any]]) -> None:
    """ValueError (TF1's messages) unless `model_fn` takes `features` and only the arguments
    an Estimator passes, and takes `params` when `params` is given."""
    if not callable(model_fn):
        raise ValueError(f'model_fn must be callable, given: {model_fn!r}')
    args = set(fn_args(model_fn))
    if 'features' not in args:
        raise ValueError(f'model_fn ({model_fn}) must include features argument.')
    if params is not None and 'params' not in args:
        raise ValueError(f'model_fn ({model_fn}) does not include params argument, but params '
                         f'({params}) is passed to Estimator.')
    unexpected = args - _MODEL_FN_ARGS - {'self'}
    if unexpected:
        raise ValueError(f'model_fn ({model_fn}) has following not expected args: '
                         f'{sorted(unexpected)}')


def named_arguments(fn: Callable, values: Dict[str, Any]) -> Dict[str, Any]:
    """The items of `values` whose names `fn` takes (TF1 passed mode, params, config so)."""
    args = fn_args(fn)
    return {name: value for name, value in values.items() if name in args}


class _DatasetInitializerHook(Hook):
    """Initializes the iterator of an input_fn's Dataset once the session exists."""

    def __init__(self, iterator: Any) -> None:
        self._iterator = iterator

    def after_create_session(self, session: Any, coord: Any) -> None:
        session.run(self._iterator.initializer)


def parse_input(result: Any) -> Tuple[Any, Any, List[Any]]:
    """(features, labels, hooks) of what an input_fn returned: a Dataset (of features or of
    (features, labels)), a (features, labels) pair of tensors or dicts, or features alone."""
    hooks = []
    if isinstance(result, tf.data.Dataset):
        iterator = v1.data.make_initializable_iterator(result)
        hooks.append(_DatasetInitializerHook(iterator))
        result = iterator.get_next()
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise ValueError('input_fn should return (features, labels) as a len 2 tuple, '
                             f'given a {type(result).__name__} of {len(result)}')
        return result[0], result[1], hooks
    return result, None, hooks
