"""numpy's names that numpy 1.24 and 2.x removed, to what replaces them.

The whole of numpy 2.0's migration guide ("removed members of the main namespace") plus the
later removals (`in1d`, `trapz` in 2.4):

- the aliases of builtins (`np.int`, `np.float`, `np.object`, ...; removed in 1.24) -> the
  builtins they stood for;
- names removed for another name (`np.NaN` -> `np.nan`, `np.string_` -> `np.bytes_`,
  `np.mat` -> `np.asmatrix`, ...: `RENAMES`), or for an expression (`np.NINF` -> `-np.inf`:
  `EXPRESSIONS`);
- calls removed for another call: `np.cast[dtype](x)` -> `np.asarray(x, dtype=dtype)`,
  `np.asfarray(x)` -> `np.asarray(x, dtype=np.float64)`, `np.msort(a)` -> `np.sort(a, axis=0)`,
  `np.in1d(a, b)` -> `np.isin(a, b).ravel()`;
- names removed without a successor (`np.who`, `np.set_numeric_ops`, ...: `REMOVED`) are
  reported with the guide's advice;
- `np.fromstring(data, dtype)` in its binary mode (no `sep`), which numpy 2 refuses ("The
  binary mode of fromstring is removed") -> `np.frombuffer(data, dtype).copy()`: the same
  values in a new, writable array, as fromstring gave (tf-estimator-example's MNIST reader).

Each only where the installed numpy lacks the old name (and has the new one).
"""

import re

import libcst as cst
from libcst.helpers import ensure_type

from slimdata.port.edits import CHANGED, NO_BINDINGS, NOT_PORTED, code_of
from slimdata.port.spelling import SpellingAware

# numpy's aliases of builtins, removed in numpy 1.24 (`np.int` in dtype arguments).
ALIASES = {'numpy.int': 'int', 'numpy.float': 'float', 'numpy.complex': 'complex',
           'numpy.object': 'object', 'numpy.str': 'str', 'numpy.long': 'int',
           'numpy.unicode': 'str'}
# numpy's names that numpy 2.0 removed for one of another name (its migration guide):
# `np.NaN` -> `np.nan` (deeplab 2024's eval.py).
RENAMES = {
    'numpy.NaN': 'nan', 'numpy.NAN': 'nan', 'numpy.Inf': 'inf', 'numpy.Infinity': 'inf',
    'numpy.infty': 'inf', 'numpy.PINF': 'inf', 'numpy.float_': 'float64',
    'numpy.complex_': 'complex128', 'numpy.cfloat': 'complex128', 'numpy.longfloat': 'longdouble',
    'numpy.singlecomplex': 'complex64', 'numpy.clongfloat': 'clongdouble',
    'numpy.longcomplex': 'clongdouble', 'numpy.string_': 'bytes_', 'numpy.unicode_': 'str_',
    'numpy.product': 'prod', 'numpy.cumproduct': 'cumprod', 'numpy.sometrue': 'any',
    'numpy.alltrue': 'all', 'numpy.round_': 'round', 'numpy.mat': 'asmatrix',
    'numpy.issubsctype': 'issubdtype', 'numpy.trapz': 'trapezoid',
    'numpy.add_docstring': 'lib.add_docstring', 'numpy.add_newdoc': 'lib.add_newdoc',
    'numpy.byte_bounds': 'lib.array_utils.byte_bounds', 'numpy.DataSource': 'lib.npyio.DataSource',
    'numpy.tracemalloc_domain': 'lib.tracemalloc_domain',
    # The bit-size-0 aliases (`np.int0(points)` of OpenCV's box corners: seglink, pixel_link).
    'numpy.int0': 'intp', 'numpy.uint0': 'uintp', 'numpy.bool8': 'bool_',
    'numpy.object0': 'object_', 'numpy.str0': 'str_', 'numpy.bytes0': 'bytes_',
    'numpy.void0': 'void'}
# Names removed for an expression ('{np}' is the file's name of numpy).
EXPRESSIONS = {'numpy.NINF': '-{np}.inf', 'numpy.PZERO': '0.0', 'numpy.NZERO': '-0.0',
               'numpy.issubclass_': 'issubclass'}
# Calls removed for another call: old name -> the new call's template ({np}, {args}).
CALLS = {'numpy.asfarray': '{np}.asarray({args}, dtype={np}.float64)',
         'numpy.msort': '{np}.sort({args}, axis=0)', 'numpy.in1d': '{np}.isin({args}).ravel()'}
# Names removed without a successor, and the migration guide's advice.
REMOVED = {
    'numpy.find_common_type': 'use numpy.result_type or numpy.promote_types',
    'numpy.safe_eval': 'use ast.literal_eval', 'numpy.who': 'no replacement',
    'numpy.deprecate': 'emit a DeprecationWarning with warnings.warn',
    'numpy.deprecate_with_doc': 'emit a DeprecationWarning with warnings.warn',
    'numpy.disp': 'use print', 'numpy.source': 'use inspect.getsource',
    'numpy.recfromcsv': 'use numpy.genfromtxt with a comma delimiter',
    'numpy.recfromtxt': 'use numpy.genfromtxt', 'numpy.nbytes': 'use numpy.dtype(t).itemsize',
    'numpy.sctype2char': 'use numpy.dtype(t).char', 'numpy.sctypes': 'list the types you need',
    'numpy.issctype': 'use issubclass(t, numpy.generic)',
    'numpy.obj2sctype': 'use numpy.dtype(x).type', 'numpy.maximum_sctype': 'name the type',
    'numpy.set_string_function': 'use numpy.set_printoptions with a formatter',
    'numpy.fastCopyAndTranspose': 'use a.T.copy()', 'numpy.geterrobj': 'use numpy.errstate',
    'numpy.seterrobj': 'use numpy.errstate', 'numpy.compat': 'no replacement',
    'numpy.set_numeric_ops': 'no replacement', 'numpy.add_newdoc_ufunc': 'no replacement',
    'numpy.get_array_wrap': 'no replacement'}
_CAST = 'numpy.cast'
_FROMSTRING = 'numpy.fromstring'
_OLD_NAMES = frozenset(name.split('.')[1] for name in [
    *ALIASES, *RENAMES, *EXPRESSIONS, *CALLS, *REMOVED, _CAST, _FROMSTRING])


def _numpy():
    import numpy  # the installed one decides which names are gone
    return numpy


class NumpyNamesPass(SpellingAware):
    """Renames numpy's removed names (see the module docstring)."""

    NAME = 'numpy names'
    TRIGGER = re.compile(r'\b(?:np|numpy)\.(?:' + '|'.join(sorted(_OLD_NAMES)) + r')\b')
    # Its work is at `<name>.<old name>`, under any name numpy is bound to.
    FILTERS_STATEMENTS = True
    STATEMENTS = re.compile(r'\.\s*(?:' + '|'.join(sorted(_OLD_NAMES)) + r')\b')
    BINDINGS = NO_BINDINGS

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)

    def _old_name(self, node: cst.BaseExpression) -> str:
        """'numpy.X' if `node` is numpy's removed X (`np.X`) under this numpy, else ''."""
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                and node.attr.value in _OLD_NAMES):
            return ''  # checked first: a qualified name costs the file's scope analysis
        name = self.qualified_name(node) or ''
        gone = node.attr.value not in vars(_numpy())  # no FutureWarning probe
        return name if (gone or name == _FROMSTRING) and name.startswith('numpy.') else ''

    def leave_Attribute(self, original: cst.Attribute,
                        updated: cst.Attribute) -> cst.BaseExpression:
        name = self._old_name(original)
        if not name:
            return updated
        numpy_name = code_of(original.value)
        if name in ALIASES:
            self.note(CHANGED, original, f'{code_of(original)} -> {ALIASES[name]} (numpy '
                                         'removed the alias of the builtin in 1.24)')
            return cst.Name(ALIASES[name])
        if name in RENAMES and _has(RENAMES[name]):
            new = f'{numpy_name}.{RENAMES[name]}'
            self.note(CHANGED, original, f'{code_of(original)} -> {new} (numpy 2 removed the '
                                         'old name)')
            return cst.parse_expression(new)
        if name in EXPRESSIONS:
            new = EXPRESSIONS[name].format(np=numpy_name)
            self.note(CHANGED, original, f'{code_of(original)} -> {new} (numpy 2 removed the '
                                         'old name)')
            return cst.parse_expression(new)
        if name in REMOVED:
            self.note(NOT_PORTED, original, f'{code_of(original)}: numpy 2 removed it; '
                                            f'{REMOVED[name]} (numpy 2.0 migration guide)')
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        if self._old_name(func) == _FROMSTRING:
            return self._fromstring(original, updated)
        cast = (isinstance(func, cst.Subscript) and len(func.slice) == 1
                and isinstance(func.slice[0].slice, cst.Index)
                and self._old_name(func.value) == _CAST)
        name = self._old_name(func)
        if not cast and name not in CALLS:
            return updated
        if any(argument.keyword or argument.star for argument in original.args) or (
                len(original.args) != (1 if cast or name != 'numpy.in1d' else 2)):
            self.note(NOT_PORTED, original, f'{code_of(original.func)}: numpy 2 removed it; '
                                            'its arguments here are not the ones the port '
                                            'rewrites (numpy 2.0 migration guide)')
            return updated
        args = ', '.join(code_of(argument.value) for argument in updated.args)
        if cast:
            subscript = func  # the old call's subscript (`np.cast['float32']`)
            assert isinstance(subscript, cst.Subscript)
            index = subscript.slice[0].slice
            assert isinstance(index, cst.Index)
            numpy_name = code_of(ensure_type(subscript.value, cst.Attribute).value)
            new = f'{numpy_name}.asarray({args}, dtype={code_of(index.value)})'
        else:
            numpy_name = code_of(ensure_type(func, cst.Attribute).value)
            new = CALLS[name].format(np=numpy_name, args=args)
        self.note(CHANGED, original, f'{code_of(original)} -> {new} (numpy 2 removed '
                                     f'{code_of(func)})')
        return cst.parse_expression(new)

    def _fromstring(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """`np.fromstring` in binary mode -> `np.frombuffer(...).copy()`; its text mode (a
        `sep` other than '') is left: numpy 2 still has it."""
        sep = [argument for argument in original.args
               if argument.keyword is not None and argument.keyword.value == 'sep']
        positional = [argument for argument in original.args if argument.keyword is None]
        if len(positional) > 3 or any(argument.star for argument in original.args) or (
                sep and code_of(sep[0].value) not in ("''", '""')):
            return updated  # a `sep` (by keyword, or the fourth argument): text mode
        args = [argument for argument in updated.args if argument.keyword is None
                or argument.keyword.value != 'sep']
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        func = ensure_type(updated.func, cst.Attribute)
        frombuffer = updated.with_changes(func=func.with_changes(attr=cst.Name('frombuffer')),
                                          args=args)
        copied = cst.Call(func=cst.Attribute(value=frombuffer, attr=cst.Name('copy')))
        new = code_of(copied)
        self.note(CHANGED, original, f'{code_of(original)} -> {new} (numpy 2 removed '
                                     "fromstring's binary mode)")
        return copied


def _has(path: str) -> bool:
    """Whether the installed numpy has the dotted `path` (`lib.add_docstring`)."""
    target: object = _numpy()
    for part in path.split('.'):
        target = getattr(target, part, None)
    return target is not None
