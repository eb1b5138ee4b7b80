"""The Python 3 pass: the breakages old converters carry, fixed where the fix is certain.

- `collections.Iterable` (and the other abstract base classes) -> `collections.abc.Iterable`;
- image bytes read in text mode: `tf.gfile.FastGFile(path, 'r').read()` / `open(path).read()`
  whose result is image data gets mode 'rb'. Certain when the result goes, in the same function,
  into a `BytesList`, a `*bytes*feature` helper or an image decoder, or is stored in a name that
  says it is image data (`image_data`, `encoded_jpg`, `seg_data`, ...); a TensorFlow file read
  whole in text mode otherwise is reported, not changed;
- a `str` literal where a `BytesList` needs bytes (`BytesList(value=['jpeg'])`,
  `bytes_feature('png')`) becomes a bytes literal;
- numpy's aliases of builtins that numpy 1.24 removed (`np.int`, `np.float`, `np.object`, ...)
  become the builtins they stood for, and the names numpy 2.0 removed for another name
  (`np.NaN` -> `np.nan`, `np.string_` -> `np.bytes_`, ...) that name;
- in a package (a folder with `__init__.py`), Python 2's implicit relative imports of sibling
  modules (`import fsns` beside `fsns.py`) become explicit: Python 2 took the sibling first, so
  the meaning is kept (not under `from __future__ import absolute_import`, which turned that
  off). In `__init__.py`, `from . import fsns`; in another module, which may also run as a
  script from its folder (where the sibling is top-level), `if __package__: from . import
  fsns` / `else: import fsns`;
- `import StringIO` / `import cStringIO` (Python 2) holding bytes: when every
  `StringIO.StringIO(...)` of the file is certainly bytes - its value is opened as an image
  (`PIL.Image.open(StringIO.StringIO(data))`) or it is bound to a name that a `.save(name, ...)`
  (PIL's, numpy's) writes into in the same function - the import becomes
  `from io import BytesIO` and the calls `BytesIO(...)`; otherwise each use is reported
  (`io.StringIO` holds text, `io.BytesIO` bytes);
- `.decode(...)` on a group of a match of a str pattern (`m.group(2).decode('utf-8')`, where
  `m` is only ever bound to `PATTERN.match(line)` / `re.match(r'...', line)` and `PATTERN`
  only to `re.compile(r'...')`): in Python 2 the line was bytes; in Python 3 a str pattern
  matches only str, whose groups are text with no `decode`, so the call is dropped. Any other
  binding of either name leaves it as it is;
- Python 2's dict iterators: `d.iteritems()` / `itervalues()` / `iterkeys()` -> `d.items()` /
  `values()` / `keys()` where they are iterated (a `for` loop, a comprehension), else
  `iter(d.items())`, as 2to3 does (no Python 3 mapping has them; pandas renamed its
  `iteritems` to `items` too); and in a file that uses those iterators (written for Python 2,
  where `keys()` / `values()` / `items()` returned lists) `d.values()` -> `list(d.values())`
  where the list may matter (returned, passed on: attention_ocr 2019 returns its update ops
  as `names_to_updates.values()` for `session.run`), not where a loop, a comprehension, `in`
  or a function such as `sorted` or `len` consumes it;
- `import contextlib2` (the Python 2 backport, which TF1-era code imports and seldom declares)
  becomes `import contextlib as contextlib2` when every name the file takes from it is in
  Python 3's `contextlib` (`ExitStack`, `suppress`, ...).
"""

import contextlib
import functools
import re
from typing import Callable, Collection, Dict, List, Optional, Set, Tuple, TypeGuard, Union

import libcst as cst
from libcst.helpers import ensure_type
from libcst.metadata import Assignment, ParentNodeProvider

from slimdata.port.edits import CHANGED, NOT_PORTED, PortTransformer, code_of
from slimdata.port.spelling import SpellingAware

ABSTRACT_CLASSES = frozenset((
    'AsyncGenerator', 'AsyncIterable', 'AsyncIterator', 'Awaitable', 'ByteString', 'Callable',
    'Collection', 'Container', 'Coroutine', 'Generator', 'Hashable', 'ItemsView', 'Iterable',
    'Iterator', 'KeysView', 'Mapping', 'MappingView', 'MutableMapping', 'MutableSequence',
    'MutableSet', 'Reversible', 'Sequence', 'Set', 'Sized', 'ValuesView'))

# numpy's aliases of builtins, removed in numpy 1.24 (`np.int` in dtype arguments).
_NUMPY_ALIASES = {'numpy.int': 'int', 'numpy.float': 'float', 'numpy.complex': 'complex',
                  'numpy.object': 'object', 'numpy.str': 'str', 'numpy.long': 'int',
                  'numpy.unicode': 'str'}
# numpy's names that numpy 2.0 removed for one of another name (its migration guide):
# `np.NaN` -> `np.nan` (deeplab 2024's eval.py).
_NUMPY_2_RENAMES = {
    'numpy.NaN': 'nan', 'numpy.NAN': 'nan', 'numpy.Inf': 'inf', 'numpy.Infinity': 'inf',
    'numpy.infty': 'inf', 'numpy.PINF': 'inf', 'numpy.float_': 'float64',
    'numpy.complex_': 'complex128', 'numpy.cfloat': 'complex128', 'numpy.longfloat': 'longdouble',
    'numpy.singlecomplex': 'complex64', 'numpy.clongfloat': 'clongdouble',
    'numpy.longcomplex': 'clongdouble', 'numpy.string_': 'bytes_', 'numpy.unicode_': 'str_',
    'numpy.product': 'prod', 'numpy.cumproduct': 'cumprod', 'numpy.sometrue': 'any',
    'numpy.alltrue': 'all', 'numpy.round_': 'round'}
_ALIASED = frozenset(name.split('.')[1] for name in [*_NUMPY_ALIASES, *_NUMPY_2_RENAMES])


def _numpy():
    import numpy  # the installed one decides which aliases are gone
    return numpy


# Functions that open a file: the standard ones and TensorFlow's (TF1 names included).
_OPENERS = frozenset(
    ['builtins.open', 'io.open', 'codecs.open']
    + [f'tensorflow.{space}gfile.{name}' for space in ('', 'compat.v1.', 'io.')
       for name in ('FastGFile', 'GFile', 'Open')]
    + ['tensorflow.python.platform.gfile.FastGFile', 'tensorflow.python.platform.gfile.GFile'])
_TENSORFLOW_OPENER = re.compile(r'gfile\.(FastGFile|GFile|Open)$')
# Where bytes go: tf.train.BytesList, helpers named like bytes_feature / _bytes_list_feature,
# image decoders.
_BYTES_SINK = re.compile(r'(BytesList|bytes(_list)?_feature|decode_(jpeg|png|image|gif|bmp|raw)'
                         r'|read_image_dims|to_tfexample)$', re.IGNORECASE)
_BYTES_SINK_HELPER = re.compile(r'bytes(_list)?_feature$|BytesList$', re.IGNORECASE)
_IMAGE_DATA_NAME = re.compile(r'(image|img|jpe?g|png|seg|encoded)', re.IGNORECASE)


def _callee_name(call: cst.Call) -> str:
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else (
        func.value if isinstance(func, cst.Name) else '')


def _mode_argument(call: cst.Call) -> Optional[cst.Arg]:
    for index, argument in enumerate(call.args):
        if (argument.keyword and argument.keyword.value == 'mode') or (
                argument.keyword is None and index == 1):
            return argument
    return None


class Py3Pass(SpellingAware, PortTransformer):
    """Fixes the Python 3 breakages of the module docstring."""

    def __init__(self, path: str = '', paths: frozenset = frozenset(), **_options) -> None:
        super().__init__()
        folder, _, name = path.rpartition('/')
        # The modules `import X` meant in Python 2 in a package's module: its siblings.
        in_package = f'{folder}/__init__.py'.lstrip('/') in paths and name.endswith('.py')
        self.siblings = frozenset(_sibling(folder, other) for other in paths
                                  if in_package and _sibling(folder, other))
        self.package_init = name == '__init__.py'
        self.guard_depth = 0  # in an except block or an `if __package__:`: left alone
        self.binary_reads: Dict[cst.Call, str] = {}   # opener call -> why it reads bytes
        self.text_reads: Set[cst.Call] = set()         # TensorFlow file read whole as text

    # -- collections.abc ---------------------------------------------------------------------

    def leave_Attribute(self, original: cst.Attribute,
                        updated: cst.Attribute) -> cst.BaseExpression:
        if not (isinstance(original.value, cst.Name) and (
                original.attr.value in ABSTRACT_CLASSES or original.attr.value in _ALIASED)):
            return updated  # checked first: a qualified name costs the file's scope analysis
        name = self.qualified_name(original)
        if name and name.startswith('collections.') and name.count('.') == 1:
            self.need_import('import collections.abc')
            self.note(CHANGED, original, f'{code_of(original)} -> collections.abc.'
                                         f'{original.attr.value}')
            return updated.with_changes(value=cst.parse_expression(
                f'{original.value.value}.abc'))
        builtin = _NUMPY_ALIASES.get(name or '')
        if builtin and original.attr.value not in vars(_numpy()):  # no FutureWarning probe
            self.note(CHANGED, original, f'{code_of(original)} -> {builtin} (numpy removed the '
                                         'alias of the builtin in 1.24)')
            return cst.Name(builtin)
        renamed = _NUMPY_2_RENAMES.get(name or '')
        if (renamed and original.attr.value not in vars(_numpy())
                and renamed in vars(_numpy())):
            self.note(CHANGED, original, f'{code_of(original)} -> {original.value.value}.'
                                         f'{renamed} (numpy 2.0 removed the old name)')
            return updated.with_changes(attr=cst.Name(renamed))
        return updated

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

    # -- reads in text mode ------------------------------------------------------------------

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)
        if 'absolute_import' in node.code:
            self.siblings = frozenset()  # `from __future__ import absolute_import`: no guess
        self._scan_scope(node)
        uses = _BackportUses()
        node.visit(uses)
        self.contextlib_names = uses.names
        self.python_2_dicts = bool(PYTHON_2_DICTS.search(node.code))
        self.module = node
        self.string_io = _StringIOUses(self)
        node.visit(self.string_io)
        # Bytes certain for every use (and the name free): the module is io.BytesIO.
        self.bytes_io = (bool(self.string_io.calls) and 'BytesIO' not in node.code
                         and all(self.string_io.calls.values()))

    # -- implicit relative imports ------------------------------------------------------------

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine):
        relative = self._relative_import(original)
        if relative is None:
            return updated
        old = code_of(original.body[0])
        self.note(CHANGED, original, f'{old} -> {relative} (a sibling module: an implicit '
                                     'relative import of Python 2)')
        if self.package_init:
            code = relative
        else:
            # A module of a package may also run as a script from its folder, where the
            # sibling is a top-level module: both work (and an ImportError inside the sibling
            # is not taken for its absence, as a try/except would).
            code = f'if __package__:\n    {relative}\nelse:\n    {old}'
        return cst.parse_statement(code + '\n').with_changes(
            leading_lines=original.leading_lines)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self.guard_depth += 1

    def leave_ExceptHandler(self, original: cst.ExceptHandler,
                            updated: cst.ExceptHandler) -> cst.ExceptHandler:
        self.guard_depth -= 1
        return updated

    def visit_If(self, node: cst.If) -> None:
        if code_of(node.test) == '__package__':
            self.guard_depth += 1

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.BaseStatement:
        if code_of(original.test) == '__package__':
            self.guard_depth -= 1
        return updated

    def _relative_import(self, line: cst.SimpleStatementLine) -> Optional[str]:
        """The explicit relative form of a one-statement line importing siblings, or None
        (also under `if __package__:`, which this pass writes, or in an except block)."""
        if not self.siblings or len(line.body) != 1 or self.guard_depth:
            return None
        statement = line.body[0]
        if isinstance(statement, cst.Import):
            if all(code_of(alias.name) in self.siblings for alias in statement.names):
                return 'from . import ' + ', '.join(code_of(alias).rstrip(', ')
                                                    for alias in statement.names)
        elif (isinstance(statement, cst.ImportFrom) and not statement.relative
              and statement.module is not None
              and code_of(statement.module).split('.')[0] in self.siblings):
            return 'from .' + code_of(statement)[len('from '):]
        return None

    # -- contextlib2 -------------------------------------------------------------------------

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        names = [code_of(alias.name) for alias in original.names]
        if names in (['StringIO'], ['cStringIO']) and original.names[0].asname is None:
            return self._string_io_import(original, updated, names[0])
        if names != ['contextlib2'] or original.names[0].asname is not None:
            return updated
        missing = sorted(name for name in self.contextlib_names
                         if not hasattr(contextlib, name))
        if missing:
            self.note(NOT_PORTED, original, f'contextlib2.{missing[0]} is not in Python 3\'s '
                                            'contextlib: install contextlib2')
            return updated
        self.note(CHANGED, original, 'import contextlib2 -> import contextlib as contextlib2 '
                                     "(Python 3's contextlib has every name used)")
        return ensure_type(cst.parse_statement('import contextlib as contextlib2\n'),
                           cst.SimpleStatementLine).body[0]

    # -- StringIO holding bytes ---------------------------------------------------------------

    def _string_io_import(self, original: cst.Import, updated: cst.Import, module: str):
        if not self.string_io.calls:
            return updated
        if not self.bytes_io:
            self.note(NOT_PORTED, original, f'import {module} (Python 2): io.StringIO holds '
                                            'text, io.BytesIO bytes; which one each use needs '
                                            'is not certain')
            return updated
        self.note(CHANGED, original, f'import {module} -> from io import BytesIO (every use '
                                     'holds bytes: an image saved or opened)')
        return ensure_type(cst.parse_statement('from io import BytesIO\n'),
                           cst.SimpleStatementLine).body[0]

    def _string_io_call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self.bytes_io or original not in self.string_io.calls:
            return updated
        self.note(CHANGED, original, f'{code_of(original.func)}(...) -> BytesIO(...)')
        return updated.with_changes(func=cst.Name('BytesIO'))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scan_scope(node)

    def _scan_scope(self, scope: Union[cst.Module, cst.FunctionDef]) -> None:
        """Finds the whole-file text reads of `scope` (not of functions inside it)."""
        scanner = _ReadScanner(self)
        scope.visit(scanner) if isinstance(scope, cst.Module) else scope.body.visit(scanner)
        for call, name in scanner.reads.items():
            if name and _IMAGE_DATA_NAME.search(name):
                self.binary_reads[call] = f'{name} holds image data'
            elif name in scanner.sink_arguments:
                self.binary_reads[call] = f'{name} goes into {scanner.sink_arguments[name]}'
            elif _TENSORFLOW_OPENER.search(self.qualified_name(call.func) or ''):
                self.text_reads.add(call)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if _calls_method(original, _DICT_ITERATORS):
            return self._dict_iterator(original, updated)
        if (self.python_2_dicts and _calls_method(original, _DICT_VIEWS)
                and not self._consumed(original)):
            self.note(CHANGED, original, f'{code_of(original)} -> list({code_of(original)}) '
                                         '(a list in Python 2, which this file was written for)')
            return cst.Call(func=cst.Name('list'), args=[cst.Arg(updated)])
        if self._decodes_text(original):
            group = ensure_type(original.func, cst.Attribute).value
            self.note(CHANGED, original, f'{code_of(original)} -> {code_of(group)}: a str '
                                         "pattern's match is text in Python 3 (a str has no "
                                         'decode)')
            return ensure_type(updated.func, cst.Attribute).value
        if original in self.binary_reads:
            mode = _mode_argument(original)
            new_mode = cst.SimpleString("'rb'")
            self.note(CHANGED, original, f"{code_of(original.func)}(..., 'rb'): "
                                         f'{self.binary_reads[original]} (bytes in Python 3)')
            if mode is None:
                args = list(updated.args)
                args[-1] = args[-1].with_changes(
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(' ')))
                return updated.with_changes(args=[*args, cst.Arg(new_mode)])
            return updated.with_changes(args=[
                argument.with_changes(value=new_mode) if index == original.args.index(mode)
                else argument for index, argument in enumerate(updated.args)])
        if original in self.text_reads:
            self.note(NOT_PORTED, original, 'a file read whole in text mode: if it is binary '
                                            "(an image), open it with mode 'rb'")
        if original in self.string_io.calls:
            return self._string_io_call(original, updated)
        return self._bytes_literals(original, updated)

    # -- Python 2's dict iterators ----------------------------------------------------------

    def _dict_iterator(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = ensure_type(updated.func, cst.Attribute)
        view = _DICT_ITERATORS[func.attr.value]
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

    # -- .decode() of a str pattern's match --------------------------------------------------

    def _decodes_text(self, call: cst.Call) -> bool:
        """Whether `call` is `NAME.group(...).decode(...)` with NAME only ever a match of a str
        pattern."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == 'decode'
                and isinstance(func.value, cst.Call)
                and isinstance(func.value.func, cst.Attribute)
                and func.value.func.attr.value == 'group'
                and isinstance(func.value.func.value, cst.Name)):
            return False
        return self._only_bound_to(func.value.func.value, self._is_text_match)

    def _only_bound_to(self, name: cst.Name, is_value: Callable[[cst.BaseExpression], bool]
                       ) -> bool:
        """Whether every binding of `name` where it is used is `name = value` with
        `is_value(value)` (a parameter, loop variable, import or other binding: False)."""
        bindings = self.bindings(name)
        return bool(bindings) and all(
            isinstance(binding, Assignment) and isinstance(binding.node, cst.Name)
            and binding.node in self.assigned
            and is_value(self.assigned[binding.node]) for binding in bindings)

    @functools.cached_property
    def assigned(self) -> Dict[cst.Name, cst.BaseExpression]:
        """The module's simple assignments, found once a `decode` asks (few files have one)."""
        assignments = _SimpleAssignments()
        self.module.visit(assignments)
        return assignments.values

    def _is_text_match(self, value: cst.BaseExpression) -> bool:
        """`re.match(r'...', s)` (search, fullmatch) or `PATTERN.match(s)` with PATTERN only
        ever a compiled str pattern."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in _MATCHERS and value.args):
            return False
        if self.qualified_name(value.func) == f're.{value.func.attr.value}':
            return _is_text_literal(value.args[0].value)
        pattern = value.func.value
        return isinstance(pattern, cst.Name) and self._only_bound_to(pattern,
                                                                     self._is_text_pattern)

    def _is_text_pattern(self, value: cst.BaseExpression) -> bool:
        return (isinstance(value, cst.Call) and bool(value.args)
                and self.qualified_name(value.func) == 're.compile'
                and _is_text_literal(value.args[0].value))

    # -- str where bytes are needed ------------------------------------------------------------

    def _bytes_literals(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not _BYTES_SINK_HELPER.search(_callee_name(original)):
            return updated
        new_args = []
        for argument in updated.args:
            value = argument.value
            if isinstance(value, cst.List):
                value = value.with_changes(elements=[
                    element.with_changes(value=self._as_bytes(original, element.value))
                    for element in value.elements])
            else:
                value = self._as_bytes(original, value)
            new_args.append(argument.with_changes(value=value))
        return updated.with_changes(args=new_args)

    def _as_bytes(self, call: cst.Call, value: cst.BaseExpression) -> cst.BaseExpression:
        if (isinstance(value, cst.SimpleString) and 'b' not in value.prefix.lower()
                and value.evaluated_value.isascii()):
            self.note(CHANGED, call, f'{value.value} -> b{value.value} '
                                     f'({_callee_name(call)} needs bytes)')
            return value.with_changes(value='b' + value.value)
        return value


class _ReadScanner(cst.CSTVisitor):
    """In one scope: `name = opener(path[, 'r']).read()` reads, and what bytes sinks receive."""

    def __init__(self, py3_pass: Py3Pass) -> None:
        super().__init__()
        self.py3_pass = py3_pass
        self.reads: Dict[cst.Call, Optional[str]] = {}
        self.sink_arguments: Dict[str, str] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # its own scope

    def visit_Assign(self, node: cst.Assign) -> None:
        opener = self._text_read_opener(node.value)
        if opener is not None and len(node.targets) == 1:
            target = node.targets[0].target
            self.reads[opener] = target.value if isinstance(target, cst.Name) else None

    def visit_Call(self, node: cst.Call) -> None:
        callee = _callee_name(node)
        if _BYTES_SINK.search(callee):
            for argument in node.args:
                for name in _names_in(argument.value):
                    self.sink_arguments.setdefault(name, callee)
        opener = self._text_read_opener(node)
        if opener is not None and opener not in self.reads:
            self.reads[opener] = None

    def _text_read_opener(self, node: cst.BaseExpression) -> Optional[cst.Call]:
        """The opener call of `opener(path, 'r').read()`, or None."""
        if not (isinstance(node, cst.Call) and not node.args
                and isinstance(node.func, cst.Attribute) and node.func.attr.value == 'read'
                and isinstance(node.func.value, cst.Call)):
            return None
        opener = node.func.value
        if self.py3_pass.qualified_name(opener.func) not in _OPENERS:
            return None
        mode = _mode_argument(opener)
        if mode is None:
            return opener
        text = mode.value.evaluated_value if isinstance(mode.value, cst.SimpleString) else None
        return opener if text in ('r', 'rt') else None


_TOP_IMPORT = re.compile(r'^[ \t]*(?:import|from)[ \t]+(\w+)', re.MULTILINE)


def imports_siblings(code: str, path: str, paths: frozenset) -> bool:
    """Whether `code` (of `path`, in a tree of `paths`) imports a module beside it by a plain
    name: cheap (a regular expression), to decide whether to run the pass at all."""
    folder, _, _ = path.rpartition('/')
    if f'{folder}/__init__.py'.lstrip('/') not in paths:
        return False
    names = set(_TOP_IMPORT.findall(code))
    return any(_sibling(folder, other) in names for other in paths)


def _sibling(folder: str, other: str) -> str:
    """The module name `other` (a path) is importable as from `folder`, if it is in it."""
    parent, _, name = other.rpartition('/')
    if parent == folder and name.endswith('.py') and name != '__init__.py':
        return name[:-3]
    grand, _, package = parent.rpartition('/')
    if name == '__init__.py' and grand == folder and parent and parent != folder:
        return package
    return ''


_DICT_ITERATORS = {'iteritems': 'items', 'itervalues': 'values', 'iterkeys': 'keys'}
PYTHON_2_DICTS = re.compile(r'\.iter(?:items|values|keys)\(\)')


def _calls_method(call: cst.Call, names: Collection[str]) -> bool:
    """Whether `call` is `x.NAME()` with NAME in `names`, without arguments."""
    return (isinstance(call.func, cst.Attribute) and call.func.attr.value in names
            and not call.args)


_DICT_VIEWS = frozenset(_DICT_ITERATORS.values())
# Functions that consume an iterable once: a view serves them as a list did.
_CONSUMERS = frozenset(('list', 'tuple', 'set', 'frozenset', 'sorted', 'iter', 'len', 'sum',
                        'min', 'max', 'any', 'all', 'enumerate', 'zip', 'dict', 'map', 'filter'))


_MATCHERS = frozenset(('match', 'search', 'fullmatch'))


def _is_text_literal(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.SimpleString) and 'b' not in node.prefix.lower()


class _SimpleAssignments(cst.CSTVisitor):
    """The value of every `NAME = value` (one target), by the target's Name node."""

    def __init__(self) -> None:
        super().__init__()
        self.values: Dict[cst.Name, cst.BaseExpression] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.values[node.targets[0].target] = node.value


class _BackportUses(cst.CSTVisitor):
    """The attributes a module takes from `contextlib2` (`contextlib2.ExitStack` -> ExitStack)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: Set[str] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == 'contextlib2':
            self.names.add(node.attr.value)


class _StringIOUses(cst.CSTVisitor):
    """Each `StringIO.StringIO(...)` / `cStringIO.StringIO(...)` call, and whether it certainly
    holds bytes: opened by `PIL.Image.open`, or bound to a name that `.save(name, ...)` writes
    into in the same function."""

    def __init__(self, py3_pass: Py3Pass) -> None:
        super().__init__()
        self.py3_pass = py3_pass
        self.calls: Dict[cst.Call, bool] = {}
        self.scopes: List[Tuple[Dict[str, List[cst.Call]], Set[str]]] = []

    def visit_Module(self, node: cst.Module) -> None:
        self.scopes.append(({}, set()))

    def leave_Module(self, original: cst.Module) -> None:
        self._close_scope()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(({}, set()))  # bound: name -> its StringIO calls; saved into

    def leave_FunctionDef(self, original: cst.FunctionDef) -> None:
        self._close_scope()

    def _close_scope(self) -> None:
        bound, saved = self.scopes.pop()
        for name, calls in bound.items():
            for call in calls:
                self.calls[call] = self.calls[call] or name in saved

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        if isinstance(target, cst.Name) and _is_string_io(node.value):
            self.scopes[-1][0].setdefault(target.value, []).append(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        if _is_string_io(node):
            self.calls.setdefault(node, False)
        func = node.func
        if not (isinstance(func, cst.Attribute) and node.args):
            return
        first = node.args[0].value
        if func.attr.value == 'save' and isinstance(first, cst.Name):
            self.scopes[-1][1].add(first.value)
        elif (func.attr.value == 'open' and _is_string_io(first)
              and self.py3_pass.qualified_name(func) == 'PIL.Image.open'):
            self.calls[first] = True


def _is_string_io(node: cst.CSTNode) -> TypeGuard[cst.Call]:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == 'StringIO' and isinstance(node.func.value, cst.Name)
            and node.func.value.value in ('StringIO', 'cStringIO'))


def _names_in(node: cst.CSTNode) -> Set[str]:
    names = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            names.add(name.value)

    node.visit(Collect())
    return names
