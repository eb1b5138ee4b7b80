"""Python 2's dict iterators, and in files written for Python 2 the lists its views were.

`d.iteritems()` / `itervalues()` / `iterkeys()` -> `d.items()` / `values()` / `keys()` where
they are iterated (a `for` loop, a comprehension), else `iter(d.items())`, as 2to3 does (no
Python 3 mapping has them; pandas renamed its `iteritems` to `items` too). In a file that uses
those iterators or is otherwise Python 2 (`Context.python_2`; written for Python 2, where
`keys()` / `values()` / `items()` returned lists),
`d.values()` -> `list(d.values())` where the list may matter (returned, passed on:
attention_ocr 2019 returns its update ops as `names_to_updates.values()` for `session.run`),
not where a loop, a comprehension, `in` or a function such as `sorted` or `len` consumes it.
"""

import re
from typing import Collection

import libcst as cst
from libcst.helpers import ensure_type
from libcst.metadata import ParentNodeProvider

from slimdata.port.edits import CHANGED, NO_BINDINGS, Context, PortTransformer, code_of

ITERATORS = {'iteritems': 'items', 'itervalues': 'values', 'iterkeys': 'keys'}
#: What marks a file as written for Python 2's dicts.
PYTHON_2_DICTS = re.compile(r'\.iter(?:items|values|keys)\(\)')
_VIEWS = frozenset(ITERATORS.values())
_VIEW_CALL = re.compile(r'\.(?:' + '|'.join(sorted(_VIEWS)) + r')\(\)')
# Functions that consume an iterable once: a view serves them as a list did.
_CONSUMERS = frozenset(('list', 'tuple', 'set', 'frozenset', 'sorted', 'iter', 'len', 'sum',
                        'min', 'max', 'any', 'all', 'enumerate', 'zip', 'dict', 'map', 'filter'))


def _calls_method(call: cst.Call, names: Collection[str]) -> bool:
    """Whether `call` is `x.NAME()` with NAME in `names`, without arguments."""
    return (isinstance(call.func, cst.Attribute) and call.func.attr.value in names
            and not call.args)


class DictViewsPass(PortTransformer):
    """Python 2's dict iterators to views (see the module docstring)."""

    NAME = 'dict views'
    TRIGGER = PYTHON_2_DICTS
    # Its work is at the dict method calls, each in a statement of its own.
    FILTERS_STATEMENTS = True
    STATEMENTS = re.compile(r'\.(?:iter)?(?:items|values|keys)\(\)')
    BINDINGS = NO_BINDINGS

    @classmethod
    def has_work(cls, code: str, context: Context) -> bool:
        """A file with Python 2's dict iterators, or any Python 2 file using views."""
        return super().has_work(code, context) or (context.python_2
                                                    and _VIEW_CALL.search(code) is not None)

    def visit_Module(self, node: cst.Module) -> None:
        # Views become lists only in a file written for Python 2 (the trigger only saves time).
        self.python_2 = self.context.python_2 or PYTHON_2_DICTS.search(self.source) is not None

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if _calls_method(original, ITERATORS):
            return self._dict_iterator(original, updated)
        if (self.python_2 and _calls_method(original, _VIEWS)
                and not self._consumed(original)):
            self.note(CHANGED, original, f'{code_of(original)} -> list({code_of(original)}) '
                                         '(a list in Python 2, which this file was written for)')
            return cst.Call(func=cst.Name('list'), args=[cst.Arg(updated)])
        return updated

    def _dict_iterator(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = ensure_type(updated.func, cst.Attribute)
        view = ITERATORS[func.attr.value]
        call = updated.with_changes(func=func.with_changes(attr=cst.Name(view)))
        parent = self.get_metadata(ParentNodeProvider, original, None)
        iterated = isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is original
        new = call if iterated else cst.Call(func=cst.Name('iter'), args=[cst.Arg(call)])
        self.note(CHANGED, original, f'{code_of(original)} -> {code_of(new)} (Python 3 dicts '
                                     f'have no {func.attr.value})')
        return new

    def _consumed(self, call: cst.Call) -> bool:
        """Whether `call`'s value is only iterated once, where a view does what a list did: a
        `for` loop, a comprehension, `in`, or the argument of a function such as `sorted`."""
        parent = self.get_metadata(ParentNodeProvider, call, None)
        if isinstance(parent, (cst.For, cst.CompFor)):
            return parent.iter is call
        if isinstance(parent, cst.ComparisonTarget):
            return isinstance(parent.operator, (cst.In, cst.NotIn))
        if isinstance(parent, cst.Arg):
            caller = self.get_metadata(ParentNodeProvider, parent, None)
            return (isinstance(caller, cst.Call) and isinstance(caller.func, cst.Name)
                    and caller.func.value in _CONSUMERS)
        return False
