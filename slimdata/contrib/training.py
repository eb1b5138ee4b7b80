"""`tf.contrib.training.HParams`, which TensorFlow 2 dropped with contrib and nothing replaced.

slim's nasnet and pnasnet, deeplab and many TF1 repositories build their configurations with
it. This is a reimplementation of its documented behaviour (TensorFlow 1.15): hyperparameters
are attributes whose type is fixed by their first value; `parse('a=1,b=[2,3]')` and
`override_from_dict` set them with the same type checks and casts (an int may become a float,
never the reverse; a bool stays a bool; a str stays a str); `values()`, `to_json()`,
`parse_json()`, `get(key, default)`, `in`, `str()` as before. `HParamDef` protos (`hparam_def`,
`to_proto`) are not supported: TensorFlow 2 no longer ships that proto.
"""

import json
import numbers
import re
from typing import Any, Dict, NoReturn, Optional, Type

# name, optional [index], '=', a single value or a [list]; as TF 1.15's parse_values.
_PARAMETER = re.compile(r"""
  (?P<name>[a-zA-Z][\w\.]*)
  (\[\s*(?P<index>\d+)\s*\])?
  \s*=\s*
  ((?P<val>[^,\[]*)
   |
   \[(?P<vals>[^\]]*)\])
  ($|,\s*)""", re.VERBOSE)


def _parse_fail(name: str, kind: type, value: str, values: str) -> NoReturn:
    raise ValueError(f"Could not parse hparam '{name}' of type '{kind.__name__}' with value "
                     f"'{value}' in {values}")


def _reuse_fail(name: str, values: str) -> NoReturn:
    raise ValueError(f"Multiple assignments to variable '{name}' in {values}")


def _parser(name: str, kind: type, values: str):
    if kind is not bool:
        return kind

    def parse_bool(text: str) -> bool:
        if text in ('true', 'True'):
            return True
        if text in ('false', 'False'):
            return False
        try:
            return bool(int(text))
        except ValueError:
            _parse_fail(name, kind, text, values)
    return parse_bool


def parse_values(values: str, type_map: Dict[str, type],
                 ignore_unknown: bool = False) -> Dict[str, Any]:
    """Parses `values` ('a=1,b=[2,3],c[1]=4') by the types of `type_map` (name -> type).

    Returns name -> value, a list for `[...]`, and a dict index -> value for `name[i]=v`.
    Raises ValueError for malformed text, an unknown name (unless `ignore_unknown`), a value
    of the wrong type, or a name assigned twice.
    """
    results: Dict[str, Any] = {}
    position = 0
    while position < len(values):
        match = _PARAMETER.match(values, position)
        if not match:
            raise ValueError(f'Malformed hyperparameter value: {values[position:]}')
        position = match.end()
        name, index = match.group('name'), match.group('index')
        if name not in type_map:
            if ignore_unknown:
                continue
            raise ValueError(f'Unknown hyperparameter type for {name}')
        kind = type_map[name]
        parse = _parser(name, kind, values)
        if match.group('val') is not None:
            try:
                value = parse(match.group('val'))
            except ValueError:
                _parse_fail(name, kind, match.group('val'), values)
            if index is None:
                if name in results:
                    _reuse_fail(name, values)
                results[name] = value
            else:
                if name in results and not isinstance(results[name], dict):
                    _reuse_fail(name, values)
                indexed = results.setdefault(name, {})
                if int(index) in indexed:
                    _reuse_fail(f'{name}[{index}]', values)
                indexed[int(index)] = value
        else:
            if index is not None:
                raise ValueError('Assignment of a list to a list index.')
            if name in results:
                _reuse_fail(name, values)
            elements = [element for element in re.split('[ ,]', match.group('vals')) if element]
            try:
                results[name] = [parse(element) for element in elements]
            except ValueError:
                _parse_fail(name, kind, match.group('vals'), values)
    return results


def _cast(name: str, kind: Type[Any], value: Any) -> Any:
    """`value` as a `kind`, where TF1's HParams allowed it (int -> float, not the reverse)."""
    failure = f"Could not cast hparam '{name}' of type '{kind}' from value {value!r}"
    if issubclass(kind, type(None)):
        return value  # the first value was None: nothing to check against
    if issubclass(kind, (str, bytes)) and not isinstance(value, (str, bytes)):
        raise ValueError(failure)
    if issubclass(kind, bool) != isinstance(value, bool):
        raise ValueError(failure)
    if issubclass(kind, numbers.Integral) and not isinstance(value, numbers.Integral):
        raise ValueError(failure)
    if issubclass(kind, numbers.Number) and not isinstance(value, numbers.Number):
        raise ValueError(failure)
    return kind(value)


class HParams:
    """Hyperparameters as attributes, typed by their first value (`tf.contrib.training.HParams`).

    Args:
      hparam_def: not supported (an `HParamDef` proto); must be None.
      model_structure: anything, returned by `get_model_structure()`.
      **kwargs: the hyperparameters and their first values (a list fixes a list of that
        element type).
    """

    _HAS_DYNAMIC_ATTRIBUTES = True  # for pytype, as TF's

    def __init__(self, hparam_def=None, model_structure=None, **kwargs) -> None:
        if hparam_def is not None:
            raise ValueError('hparam_def (an HParamDef proto) is not supported: TensorFlow 2 '
                             'has no such proto; pass the values as keyword arguments')
        self._hparam_types: Dict[str, tuple] = {}
        self._model_structure = model_structure
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name: str, value: Any) -> None:
        """Adds hyperparameter `name` with `value`; its type (and list-ness) is fixed here."""
        if getattr(self, name, None) is not None:
            raise ValueError(f'Hyperparameter name is reserved: {name}')
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f'Multi-valued hyperparameters cannot be empty: {name}')
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name: str, value: Any) -> None:
        """Sets `name` (KeyError if unknown) to `value`, cast to its type (ValueError if not)."""
        kind, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError(f'Must not pass a list for single-valued parameter: {name}')
            setattr(self, name, [_cast(name, kind, element) for element in value])
        else:
            if is_list:
                raise ValueError(f'Must pass a list for multi-valued parameter: {name}.')
            setattr(self, name, _cast(name, kind, value))

    def del_hparam(self, name: str) -> None:
        """Removes `name` (nothing if there is no such hyperparameter)."""
        if hasattr(self, name):
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values: str) -> 'HParams':
        """Overrides from 'name=value,...' text (see `parse_values`); returns self."""
        type_map = {name: kind for name, (kind, _) in self._hparam_types.items()}
        return self.override_from_dict(parse_values(values, type_map))

    def override_from_dict(self, values_dict: Dict[str, Any]) -> 'HParams':
        """Sets each name of `values_dict` to its value (`set_hparam`); returns self."""
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def set_model_structure(self, model_structure) -> None:
        self._model_structure = model_structure

    def get_model_structure(self):
        return self._model_structure

    def to_json(self, indent: Optional[int] = None, separators=None,
                sort_keys: bool = False) -> str:
        """The values as JSON (callables left out, as TF's)."""
        def without_callables(value):
            if isinstance(value, dict):
                return {key: without_callables(item) for key, item in value.items()
                        if not callable(item)}
            if isinstance(value, list):
                return [without_callables(item) for item in value if not callable(item)]
            return value
        return json.dumps(without_callables(self.values()), indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def parse_json(self, values_json: str) -> 'HParams':
        """Overrides from a JSON object of name -> value; returns self."""
        return self.override_from_dict(json.loads(values_json))

    def values(self) -> Dict[str, Any]:
        """name -> value of every hyperparameter."""
        return {name: getattr(self, name) for name in self._hparam_types}

    def get(self, key: str, default: Any = None) -> Any:
        """The value of `key`, or `default` if there is none; a `default` that its type cannot
        take (another type, a list for a single value) raises ValueError."""
        if key not in self._hparam_types:
            return default
        if default is not None:
            kind, is_list = self._hparam_types[key]
            kind_name = f'list<{kind}>' if is_list else str(kind)
            failure = (f"Hparam '{key}' of type '{kind_name}' is incompatible with "
                       f'default={default}')
            if is_list != isinstance(default, list):
                raise ValueError(failure)
            try:
                for value in (default if is_list else [default]):
                    _cast(key, kind, value)
            except ValueError as error:
                raise ValueError(f'{failure}. {error}') from error
        return getattr(self, key)

    def __contains__(self, key: str) -> bool:
        return key in self._hparam_types

    def __str__(self) -> str:
        return str(sorted(self.values().items()))

    def __repr__(self) -> str:
        return f'{type(self).__name__}({self})'
