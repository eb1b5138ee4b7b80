"""Standard library names that Python 3.7-3.12 removed, which TF1-era code still calls.

- functions removed for another of the same arguments and result -> that one: `time.clock()`
  (3.8; `time.perf_counter()`, a clock for elapsed time, which is what such code measures),
  `base64.encodestring` / `decodestring` (3.9; `encodebytes` / `decodebytes`), also where
  imported by name (`from time import clock` -> `from time import perf_counter as clock`);
- methods removed: `thread.isAlive()` -> `thread.is_alive()` (3.9), an ElementTree element's
  `getchildren()` -> `list(element)` and `getiterator(tag)` -> `iter(tag)` (3.9; VOC XML
  readers) in a file that names an XML parser, unless the file defines a method of that name;
- `inspect.getargspec(f)` (3.11) -> `inspect.getfullargspec(f)` where only a field both have
  is read (`.args`, `.varargs`, `.defaults`); elsewhere reported, as getfullargspec has seven
  fields (`keywords` is `varkw`);
- the others are reported with what replaces them (`fractions.gcd`, `cgi.escape`,
  `platform.linux_distribution`, ...).
"""

import re
from typing import Dict, Tuple

import libcst as cst
from libcst.helpers import ensure_type

from slimdata.port.edits import CHANGED, NOT_PORTED, code_of, defines
from slimdata.port.facts import words_pattern
from slimdata.port.spelling import SpellingAware

# A file whose elements can be ElementTree's (xml.etree's, lxml's, or handed over by a parser).
_ELEMENT_TREE = re.compile(r'\b(?:etree|ElementTree|lxml|minidom|parse)\b')
#: Functions removed for another of the same arguments and result: old -> (new, Python).
RENAMES: Dict[str, Tuple[str, str]] = {
    'time.clock': ('time.perf_counter', '3.8'),
    'base64.encodestring': ('base64.encodebytes', '3.9'),
    'base64.decodestring': ('base64.decodebytes', '3.9'),
}
#: Methods removed: name -> (the new call, with {receiver} and {args}; whose; Python; what the
#: file's text must hold for the receiver to be one of those).
METHODS: Dict[str, Tuple[str, str, str, 're.Pattern[str]']] = {
    'isAlive': ('{receiver}.is_alive()', 'threading.Thread', '3.9', re.compile('')),
    'getchildren': ('list({receiver})', 'an ElementTree element', '3.9', _ELEMENT_TREE),
    'getiterator': ('{receiver}.iter({args})', 'an ElementTree element', '3.9', _ELEMENT_TREE),
}
_GETARGSPEC = 'inspect.getargspec'
# The fields of getargspec's result that getfullargspec's has too, under the same name.
_SHARED_FIELDS = frozenset(('args', 'varargs', 'defaults'))
#: Functions removed without a certain successor: name -> (Python, what replaces it).
REMOVED: Dict[str, Tuple[str, str]] = {
    _GETARGSPEC: ('3.11', 'inspect.getfullargspec, whose result has seven fields (keywords '
                          'is varkw)'),
    'fractions.gcd': ('3.9', 'math.gcd, which is never negative'),
    'cgi.escape': ('3.8', 'html.escape(s, quote=False); with quote=True html.escape also '
                          "escapes '"),
    'platform.linux_distribution': ('3.8', 'the distro package'),
    'platform.dist': ('3.8', 'the distro package'),
    'os.errno': ('3.7', 'import errno'),
}
_NAMES = sorted({name.rsplit('.', 1)[1] for name in (*RENAMES, *REMOVED)} | set(METHODS))


class PythonRemovalsPass(SpellingAware):
    """Renames or reports the standard library names Python removed (see the module
    docstring)."""

    NAME = 'Python removals'
    TRIGGER = re.compile(words_pattern(_NAMES))
    # Its work is at the names (and at the uses of what imports of them bind).
    FILTERS_STATEMENTS = True

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)

    def leave_Attribute(self, original: cst.Attribute,
                        updated: cst.Attribute) -> cst.BaseExpression:
        if original.attr.value not in _NAMES:
            return updated
        name = self.qualified_name(original) or ''
        if name in RENAMES:
            new, version = RENAMES[name]
            replacement = updated.with_changes(attr=cst.Name(new.rsplit('.', 1)[1]))
            self.note(CHANGED, original, f'{code_of(original)} -> {code_of(replacement)} '
                                         f'(Python {version} removed {name})')
            return replacement
        if name in REMOVED and name != _GETARGSPEC:
            self._report(original, name)
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        if not isinstance(func, cst.Attribute):
            return updated
        if self.qualified_name(func) == _GETARGSPEC:
            if self.attribute_read(original) not in _SHARED_FIELDS:
                self._report(original, _GETARGSPEC)
                return updated
            self.note(CHANGED, original, 'inspect.getargspec -> inspect.getfullargspec (Python '
                                         '3.11 removed getargspec; the field read is in both)')
            return updated.with_changes(func=ensure_type(updated.func, cst.Attribute).with_changes(
                attr=cst.Name('getfullargspec')))
        method = func.attr.value
        if method not in METHODS or defines(self.source, method) or (
                method != 'getiterator' and original.args) or not METHODS[method][3].search(
                    self.source):
            return updated
        template, whose, version, _ = METHODS[method]
        receiver = code_of(ensure_type(updated.func, cst.Attribute).value)
        new = cst.parse_expression(template.format(
            receiver=receiver, args=', '.join(code_of(argument) for argument in updated.args)))
        self.note(CHANGED, original, f'{code_of(original)} -> {code_of(new)} (Python {version} '
                                     f'removed {method} of {whose})')
        return new

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        module = code_of(original.module) if original.module and not original.relative else ''
        if isinstance(original.names, cst.ImportStar) or not any(
                f'{module}.{code_of(alias.name)}' in {*RENAMES, *REMOVED}
                for alias in original.names):
            return updated
        assert not isinstance(updated.names, cst.ImportStar)
        names = []
        for alias in updated.names:
            old = f'{module}.{code_of(alias.name)}'
            if old in REMOVED:
                self._report(original, old)
            if old not in RENAMES:
                names.append(alias)
                continue
            new, version = RENAMES[old]
            self.note(CHANGED, original, f'from {module} import {code_of(alias.name)} -> '
                                         f'{new} (Python {version} removed {old})')
            names.append(alias.with_changes(
                name=cst.Name(new.rsplit('.', 1)[1]),
                asname=alias.asname or cst.AsName(name=cst.Name(code_of(alias.name)))))
        return updated.with_changes(names=names)

    def _report(self, node: cst.CSTNode, name: str) -> None:
        version, instead = REMOVED[name]
        self.note(NOT_PORTED, node, f'{name}: Python {version} removed it; use {instead}')

