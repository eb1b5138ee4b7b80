"""numpy's names that numpy 1.24 and 2.0 removed, to the names that replace them.

The aliases of builtins (`np.int`, `np.float`, `np.object`, ...; removed in 1.24) become the
builtins they stood for; the names numpy 2.0 removed for another name (`np.NaN` -> `np.nan`,
`np.string_` -> `np.bytes_`, ...; its migration guide) that name. Only where the installed
numpy lacks the old name and has the new one.
"""

import re

import libcst as cst

from slimdata.port.edits import CHANGED, code_of
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
    'numpy.alltrue': 'all', 'numpy.round_': 'round'}
_OLD_NAMES = frozenset(name.split('.')[1] for name in [*ALIASES, *RENAMES])


def _numpy():
    import numpy  # the installed one decides which names are gone
    return numpy


class NumpyNamesPass(SpellingAware):
    """Renames numpy's removed names (see the module docstring)."""

    NAME = 'numpy names'
    TRIGGER = re.compile(r'\b(?:np|numpy)\.(?:' + '|'.join(sorted(_OLD_NAMES)) + r')\b')

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)

    def leave_Attribute(self, original: cst.Attribute,
                        updated: cst.Attribute) -> cst.BaseExpression:
        if not (isinstance(original.value, cst.Name) and original.attr.value in _OLD_NAMES):
            return updated  # checked first: a qualified name costs the file's scope analysis
        name = self.qualified_name(original) or ''
        gone = original.attr.value not in vars(_numpy())  # no FutureWarning probe
        builtin = ALIASES.get(name)
        if builtin and gone:
            self.note(CHANGED, original, f'{code_of(original)} -> {builtin} (numpy removed the '
                                         'alias of the builtin in 1.24)')
            return cst.Name(builtin)
        renamed = RENAMES.get(name)
        if renamed and gone and renamed in vars(_numpy()):
            self.note(CHANGED, original, f'{code_of(original)} -> {original.value.value}.'
                                         f'{renamed} (numpy 2.0 removed the old name)')
            return updated.with_changes(attr=cst.Name(renamed))
        return updated
