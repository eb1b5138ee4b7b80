"""`collections.Iterable` (and the other abstract base classes) -> `collections.abc.Iterable`.

Python 3.10 removed the aliases in `collections`; `from collections import Iterable, OrderedDict`
is split so that the abstract classes come from `collections.abc`.
"""

import re

import libcst as cst

from slimdata.port.edits import CHANGED, NO_BINDINGS, code_of
from slimdata.port.spelling import SpellingAware

ABSTRACT_CLASSES = frozenset((
    'AsyncGenerator', 'AsyncIterable', 'AsyncIterator', 'Awaitable', 'ByteString', 'Callable',
    'Collection', 'Container', 'Coroutine', 'Generator', 'Hashable', 'ItemsView', 'Iterable',
    'Iterator', 'KeysView', 'Mapping', 'MappingView', 'MutableMapping', 'MutableSequence',
    'MutableSet', 'Reversible', 'Sequence', 'Set', 'Sized', 'ValuesView'))


class CollectionsAbcPass(SpellingAware):
    """Moves the abstract base classes of `collections` to `collections.abc`."""

    NAME = 'collections.abc'
    # `collections` alone is in every file that makes a namedtuple: an abstract class too.
    TRIGGER = re.compile(r'\A(?=.*\bcollections\b)(?=.*\b(?:'
                         + '|'.join(sorted(ABSTRACT_CLASSES)) + r')\b)', re.DOTALL)
    # Its work is at the abstract classes' names, under any name collections is bound to.
    FILTERS_STATEMENTS = True
    STATEMENTS = re.compile(r'\b(?:' + '|'.join(sorted(ABSTRACT_CLASSES)) + r')\b')
    BINDINGS = NO_BINDINGS

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)

    def leave_Attribute(self, original: cst.Attribute,
                        updated: cst.Attribute) -> cst.BaseExpression:
        if not (isinstance(original.value, cst.Name)
                and original.attr.value in ABSTRACT_CLASSES):
            return updated  # checked first: a qualified name costs the file's scope analysis
        name = self.qualified_name(original)
        if not (name and name.startswith('collections.') and name.count('.') == 1):
            return updated
        self.need_import('import collections.abc')
        self.note(CHANGED, original, f'{code_of(original)} -> collections.abc.'
                                     f'{original.attr.value}')
        return updated.with_changes(value=cst.parse_expression(f'{original.value.value}.abc'))

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        if (original.relative or not original.module or code_of(original.module) != 'collections'
                or isinstance(updated.names, cst.ImportStar)):
            return updated
        moved = [alias for alias in updated.names if code_of(alias.name) in ABSTRACT_CLASSES]
        kept = [alias for alias in updated.names if alias not in moved]
        if not moved:
            return updated
        self.note(CHANGED, original, 'from collections import '
                  + ', '.join(code_of(alias.name) for alias in moved) + ' -> collections.abc')
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            moved[-1] = moved[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            self.need_import(code_of(cst.ImportFrom(
                module=cst.Attribute(cst.Name('collections'), cst.Name('abc')), names=moved)))
            return updated.with_changes(names=kept)
        return updated.with_changes(module=cst.parse_expression('collections.abc'))
