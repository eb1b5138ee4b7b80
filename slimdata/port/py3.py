"""The Python 3 pass: the breakages old converters carry, fixed where the fix is certain.

- `collections.Iterable` (and the other abstract base classes) -> `collections.abc.Iterable`;
- image bytes read in text mode: `tf.gfile.FastGFile(path, 'r').read()` / `open(path).read()`
  whose result is image data gets mode 'rb'. Certain when the result goes, in the same function,
  into a `BytesList`, a `*bytes*feature` helper or an image decoder, or is stored in a name that
  says it is image data (`image_data`, `encoded_jpg`, `seg_data`, ...); a TensorFlow file read
  whole in text mode otherwise is reported, not changed;
- a `str` literal where a `BytesList` needs bytes (`BytesList(value=['jpeg'])`,
  `bytes_feature('png')`) becomes a bytes literal.
"""

import re
from typing import Dict, Optional, Set

import libcst as cst

from slimdata.port.edits import CHANGED, NOT_PORTED, PortTransformer, code_of

ABSTRACT_CLASSES = frozenset((
    'AsyncGenerator', 'AsyncIterable', 'AsyncIterator', 'Awaitable', 'ByteString', 'Callable',
    'Collection', 'Container', 'Coroutine', 'Generator', 'Hashable', 'ItemsView', 'Iterable',
    'Iterator', 'KeysView', 'Mapping', 'MappingView', 'MutableMapping', 'MutableSequence',
    'MutableSet', 'Reversible', 'Sequence', 'Set', 'Sized', 'ValuesView'))

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


class Py3Pass(PortTransformer):
    """Fixes the Python 3 breakages of the module docstring."""

    def __init__(self, **_options) -> None:
        super().__init__()
        self.binary_reads: Dict[cst.Call, str] = {}   # opener call -> why it reads bytes
        self.text_reads: Set[cst.Call] = set()         # TensorFlow file read whole as text

    # -- collections.abc ---------------------------------------------------------------------

    def leave_Attribute(self, original: cst.Attribute,
                        updated: cst.Attribute) -> cst.BaseExpression:
        if not (original.attr.value in ABSTRACT_CLASSES and isinstance(original.value, cst.Name)):
            return updated  # checked first: a qualified name costs the file's scope analysis
        name = self.qualified_name(original)
        if name and name.startswith('collections.') and name.count('.') == 1:
            self.need_import('import collections.abc')
            self.note(CHANGED, original, f'{code_of(original)} -> collections.abc.'
                                         f'{original.attr.value}')
            return updated.with_changes(value=cst.parse_expression(
                f'{original.value.value}.abc'))
        return updated

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        if (original.relative or not original.module or code_of(original.module) != 'collections'
                or isinstance(original.names, cst.ImportStar)):
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
            self.need_import(code_of(cst.ImportFrom(module=cst.parse_expression(
                'collections.abc'), names=moved)))
            return updated.with_changes(names=kept)
        return updated.with_changes(module=cst.parse_expression('collections.abc'))

    # -- reads in text mode ------------------------------------------------------------------

    def visit_Module(self, node: cst.Module) -> None:
        self._scan_scope(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scan_scope(node)

    def _scan_scope(self, scope: cst.CSTNode) -> None:
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
        return self._bytes_literals(original, updated)

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


def _names_in(node: cst.CSTNode) -> Set[str]:
    names = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            names.add(name.value)

    node.visit(Collect())
    return names
