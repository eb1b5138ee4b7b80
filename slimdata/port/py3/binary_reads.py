"""Image bytes read in text mode: `open(path).read()` whose result is image data gets 'rb'.

`tf.gfile.FastGFile(path, 'r').read()` / `open(path).read()` read bytes in Python 2 and text in
Python 3. Mode 'rb' is certain when the result goes, in the same function, into a `BytesList`,
a `*bytes*feature` helper or an image decoder, or is stored in a name that says it is image
data (`image_data`, `encoded_jpg`, `seg_data`, ...); a TensorFlow file read whole in text mode
otherwise is reported, not changed.
"""

import ast
import re
from typing import Dict, Optional, Set, Union

import libcst as cst

from slimdata.port.edits import (
    CHANGED,
    NO_BINDINGS,
    NOT_PORTED,
    Context,
    LookAhead,
    Visitor,
    callee_name,
    code_of,
    mode_argument,
    with_argument,
)
from slimdata.port.facts import MatchedLines, node_lines
from slimdata.port.spelling import ScopeScanning

#: Functions that open a file: the standard ones and TensorFlow's (TF1 names included).
OPENERS = frozenset(
    ['builtins.open', 'io.open', 'codecs.open']
    + [f'tensorflow.{space}gfile.{name}' for space in ('', 'compat.v1.', 'io.')
       for name in ('FastGFile', 'GFile', 'Open')]
    + ['tensorflow.python.platform.gfile.FastGFile', 'tensorflow.python.platform.gfile.GFile'])
_TENSORFLOW_OPENER = re.compile(r'gfile\.(FastGFile|GFile|Open)$')
# Where bytes go: tf.train.BytesList, helpers named like bytes_feature / _bytes_list_feature,
# image decoders.
_BYTES_SINK = re.compile(r'(BytesList|bytes(_list)?_feature|decode_(jpeg|png|image|gif|bmp|raw)'
                         r'|read_image_dims|to_tfexample)$', re.IGNORECASE)
_IMAGE_DATA_NAME = re.compile(r'(image|img|jpe?g|png|seg|encoded)', re.IGNORECASE)
#: What a statement holding a read or a bytes sink holds: the others need no scan.
_READ_OR_SINK = re.compile(r'\.read\(\)|' + _BYTES_SINK.pattern[:-1], re.IGNORECASE)


class BinaryReadsPass(ScopeScanning):
    """Gives image reads in text mode the mode 'rb' (see the module docstring)."""

    NAME = 'binary reads'
    TRIGGER = re.compile(r'\.read\(\)')
    # The statements holding a read; its scans of each scope read the rest themselves.
    FILTERS_STATEMENTS = True
    BINDINGS = NO_BINDINGS

    @classmethod
    def work_lines(cls, tree: ast.Module, code: str, context: Context) -> MatchedLines:
        """The lines of the reads of a whole file in text mode (`_reads_text`), not those of
        a file object (`f.read()`) or in mode 'rb'."""
        return node_lines(tree, code, (ast.Call,), _reads_text, cls.TRIGGER)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.binary_reads: Dict[cst.Call, str] = {}   # opener call -> why it reads bytes
        self.text_reads: Set[cst.Call] = set()         # TensorFlow file read whole as text
        self._read_or_sink_lines: Optional[MatchedLines] = None  # what the scans read

    def scan_scope(self, statements: Union[cst.Module, cst.BaseSuite],
                   function: Optional[cst.FunctionDef]) -> None:
        """Finds the whole-file text reads of a scope (not of functions inside it)."""
        if isinstance(statements, cst.Module) and not self._reads_outside_functions(statements):
            return  # the module's scan would find no read (the walk sees only the others)
        if self._read_or_sink_lines is None and self.facts is not None:
            self._read_or_sink_lines = self.facts.matched_lines(_READ_OR_SINK)
        scanner = _ReadScanner(self, function, self._read_or_sink_lines)
        statements.visit(scanner)
        for call, name in scanner.reads.items():
            if name and _IMAGE_DATA_NAME.search(name):
                self.binary_reads[call] = f'{name} holds image data'
            elif name in scanner.sink_arguments:
                self.binary_reads[call] = f'{name} goes into {scanner.sink_arguments[name]}'
            elif _TENSORFLOW_OPENER.search(self.qualified_name(call.func) or ''):
                self.text_reads.add(call)

    def _reads_outside_functions(self, module: cst.Module) -> bool:
        """Whether a top-level statement other than a function's definition holds `.read()`
        (a class's too, with its methods); True where the lines are not known."""
        if self.facts is None or self._matched is None:
            return True
        spans = self.facts.spans()
        for statement in module.body:
            span = spans.get(id(statement))
            if span is None or (not isinstance(statement, cst.FunctionDef)
                                and self._matched.any_in(span.first, span.last)):
                return True
        return False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if original in self.text_reads:
            self.note(NOT_PORTED, original, 'a file read whole in text mode: if it is binary '
                                            "(an image), open it with mode 'rb'")
        if original not in self.binary_reads:
            return updated
        mode = mode_argument(original)
        new_mode = cst.SimpleString("'rb'")
        self.note(CHANGED, original, f"{code_of(original.func)}(..., 'rb'): "
                                     f'{self.binary_reads[original]} (bytes in Python 3)')
        if mode is None:
            return with_argument(updated, cst.Arg(new_mode))
        return updated.with_changes(args=[
            argument.with_changes(value=new_mode) if index == original.args.index(mode)
            else argument for index, argument in enumerate(updated.args)])


class _ReadScanner(LookAhead):
    """In one scope: `name = opener(path[, 'r']).read()` reads, and what bytes sinks receive."""

    def __init__(self, reads_pass: BinaryReadsPass, parent: Optional[cst.CSTNode],
                 lines: Optional[MatchedLines]) -> None:
        super().__init__(reads_pass, parent, lines)
        self.reads_pass = reads_pass
        self.reads: Dict[cst.Call, Optional[str]] = {}
        self.sink_arguments: Dict[str, str] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # its own scope

    # On leaving a node, not on visiting it: its children's parents are known by then (the
    # pass's qualified names need them). An assignment's call is left before it.
    def leave_Assign(self, node: cst.Assign) -> None:
        opener = self._text_read_opener(node.value)
        if opener is not None and len(node.targets) == 1:
            target = node.targets[0].target
            self.reads[opener] = target.value if isinstance(target, cst.Name) else None

    def leave_Call(self, node: cst.Call) -> None:
        callee = callee_name(node)
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
        if self.reads_pass.qualified_name(opener.func) not in OPENERS:
            return None
        mode = mode_argument(opener)
        if mode is None:
            return opener
        text = mode.value.evaluated_value if isinstance(mode.value, cst.SimpleString) else None
        return opener if text in ('r', 'rt') else None


def _reads_text(call: ast.Call) -> bool:
    """Whether `call` (Python's tree) reads a file whole in text mode, `opener(path[, 'r'])
    .read()`, whatever the opener (`_ReadScanner._text_read_opener` asks its name)."""
    func = call.func
    if (call.args or call.keywords or not isinstance(func, ast.Attribute)
            or func.attr != 'read' or not isinstance(func.value, ast.Call)):
        return False
    opener = func.value
    if any(isinstance(argument, ast.Starred) for argument in opener.args):
        return True  # which argument is the mode, the pass tells by their order in the code
    mode = opener.args[1] if len(opener.args) > 1 else next(
        (keyword.value for keyword in opener.keywords if keyword.arg == 'mode'), None)
    return mode is None or (isinstance(mode, ast.Constant) and mode.value in ('r', 'rt'))


def _names_in(node: cst.CSTNode) -> Set[str]:
    collector = _NameCollector()
    node.visit(collector)
    return collector.names


class _NameCollector(Visitor):
    """The identifiers of the Name nodes it visits."""

    def __init__(self) -> None:
        super().__init__()
        self.names: Set[str] = set()

    def visit_Name(self, name: cst.Name) -> None:
        self.names.add(name.value)
