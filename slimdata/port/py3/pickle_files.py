"""Pickles through files opened in text mode, and Python 2's pickles read by Python 3.

- `pickle.load(f)`, `pickle.dump(obj, f)`, `pickle.Unpickler(f)`, `pickle.Pickler(f)` (and
  `cPickle`'s) where `f` is a file opened in text mode in the same scope (`with open(path) as
  f`, `f = tf.gfile.Open(path, 'r')`) or the opener call itself: Python 2's text mode gave
  bytes, Python 3's gives str, which pickle refuses ("a bytes-like object is required", or
  UnicodeDecodeError at the first byte past ASCII). The mode gets its 'b' ('r' -> 'rb',
  'w' -> 'wb', 'a' -> 'ab', 'r+' -> 'rb+'). A name opened more than once in the scope, or a
  mode that is not a literal, is reported, not changed. (models/research/slim's first CIFAR-10
  converter, copied into many repositories: `tf.gfile.Open(filename, 'r')` into
  `cPickle.load`.)
- In a Python 2 file, `pickle.load(...)`, `pickle.loads(...)` and `pickle.Unpickler(...)`
  without an `encoding` get `encoding='latin1'`. The pickles such a program reads were written
  by Python 2, whose `str` was bytes (numpy arrays among them: CIFAR-10's batches); Python 3
  decodes those as ASCII by default and fails at the first byte past it. latin1 maps each byte
  to one character, so every pickle the default reads is read the same (the pickle
  documentation's advice for numpy arrays pickled by Python 2).
- `numpy.load(path).item()`, an object array (a dict of weights saved with `np.save`; Faster
  R-CNN's pretrained VGG16), gets `allow_pickle=True`, which numpy 1.16.3 stopped defaulting
  to ("Object arrays cannot be loaded when allow_pickle=False"), and in a Python 2 file
  `encoding='latin1'` as above.
"""

import ast
import re
from typing import Dict, List, Optional, Set, Tuple, Union, cast

import libcst as cst

from slimdata.port.edits import (
    CHANGED,
    NOT_PORTED,
    Context,
    LookAhead,
    code_of,
    keyword_argument,
    mode_argument,
    with_argument,
    with_mode,
)
from slimdata.port.facts import MatchedLines, bound_by, words_pattern
from slimdata.port.py3.binary_reads import OPENERS
from slimdata.port.qualified import every_statement, first_line
from slimdata.port.spelling import ScopeScanning

_MODULES = ('pickle', 'cPickle', '_pickle', 'six.moves.cPickle')
# The pickle callables that take a file, by the position of their file argument.
_FILE_POSITION = {'load': 0, 'dump': 1, 'Unpickler': 0, 'Pickler': 0}
# Those that read a pickle (and take `encoding`).
_READERS = ('load', 'loads', 'Unpickler')
_CALLS = {f'{module}.{name}': name for module in _MODULES for name in (*_FILE_POSITION, 'loads')}


class PickleFilesPass(ScopeScanning):
    """Gives files that pickle reads or writes a binary mode, and Python 2's pickles the
    encoding they need (see the module docstring)."""

    NAME = 'pickle files'
    TRIGGER = re.compile(r'ickle|load\(.*\)\.item\(\)')  # pickle, cPickle, Unpickler
    # Its work is in the scopes of what its trigger matches (`work_lines`).
    FILTERS_STATEMENTS = True

    def __init__(self, context) -> None:
        super().__init__(context)
        self.binary_modes: Dict[cst.Call, Tuple[str, str]] = {}  # opener -> (new mode, user)
        self.unclear: Dict[cst.Call, str] = {}                   # pickle call -> why

    @classmethod
    def work_lines(cls, tree: ast.Module, code: str, context: Context) -> MatchedLines:
        """The lines of the scope of each use of pickle: a file's opener is often in a
        statement of its own, in the same scope (`scan_scope`). Every line of the innermost
        function holding the use (its `def` line to its end), or of the file where a use is in
        none (the module's scope is in any of its statements). A use is a match of the trigger
        or of a name an import of it binds (`pkl` of `import cPickle as pkl`), outside the
        imports."""
        statements = list(every_statement(tree.body))
        matches = _match_starts(code, cls.TRIGGER)
        imports = [statement for statement in statements
                   if isinstance(statement, (ast.Import, ast.ImportFrom))
                   and any(_holds(statement, match) for match in matches)]
        if any(alias.name == '*' for statement in imports for alias in statement.names):
            return _every_line(code)  # its names are not known
        aliases = {name for statement in imports for name in bound_by(statement)}
        if aliases:
            matches += _match_starts(code, re.compile(words_pattern(aliases)))
        functions = [(statement.lineno, cast(int, statement.end_lineno), first_line(statement))
                     for statement in statements
                     if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))]
        lines: Set[int] = set()
        for match in matches:
            if any(_holds(statement, match) for statement in imports):
                continue
            line = match[0]
            holding = [function for function in functions
                       if function[0] <= line <= function[1]]
            if not holding:
                return _every_line(code)
            _, last, first = max(holding)  # the innermost: the last to start
            lines.update(range(first, last + 1))
        return MatchedLines(list(lines))

    def scan_scope(self, statements: Union[cst.Module, cst.BaseSuite],
                   function: Optional[cst.FunctionDef]) -> None:
        """Finds the text-mode openers of the files pickle gets in a scope (not in the
        functions inside it)."""
        scanner = _FileScanner(self, function)
        statements.visit(scanner)
        for call, user, given, openers in scanner.files:
            text_openers = [opener for opener in openers if _mode_of(opener) != 'binary']
            if not text_openers:
                continue
            new_mode = _binary_mode(_mode_of(text_openers[0]))
            if len(openers) > 1:
                self.unclear[call] = f'{given} is opened more than once in this scope'
            elif new_mode is None:
                self.unclear[call] = f'the mode of {code_of(text_openers[0])} is not clear'
            else:
                self.binary_modes[text_openers[0]] = (new_mode, user)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if (self.attribute_read(original) == 'item'
                and self.qualified_name(original.func) == 'numpy.load'):
            return self._object_array_load(original, updated)
        if original in self.unclear:
            self.note(NOT_PORTED, original, f'pickle needs a file opened in binary mode '
                                            f"('rb', 'wb'): {self.unclear[original]}")
        if original in self.binary_modes:
            return self._with_binary_mode(original, updated, *self.binary_modes[original])
        if _CALLS.get(self.qualified_name(original.func) or '') in _READERS:
            return self._python_2_encoding(original, updated)
        return updated

    def _python_2_encoding(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """`updated` with `encoding='latin1'` in a Python 2 file, where it has no encoding."""
        if not self.context.python_2 or _keyword(original, 'encoding'):
            return updated
        self.note(CHANGED, original, f"{code_of(original.func)}(..., encoding='latin1'): a "
                                     "pickle Python 2 wrote holds its str as bytes (numpy "
                                     'arrays too), which Python 3 decodes as ASCII')
        return with_argument(updated, keyword_argument('encoding', cst.SimpleString("'latin1'")))

    def _object_array_load(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not _keyword(original, 'allow_pickle'):
            self.note(CHANGED, original, f'{code_of(original.func)}(..., allow_pickle=True): '
                                         '.item() of an object array, which numpy 1.16.3 '
                                         'stopped loading by default')
            updated = with_argument(updated, keyword_argument('allow_pickle', cst.Name('True')))
        return self._python_2_encoding(original, updated)

    def _with_binary_mode(self, original: cst.Call, updated: cst.Call, new_mode: str,
                          user: str) -> cst.Call:
        self.note(CHANGED, original, f"{code_of(original.func)}(..., {new_mode!r}): the file "
                                     f'goes to {user}, which needs a binary file (Python 2\'s '
                                     "text mode gave bytes, Python 3's gives str)")
        return with_mode(updated, new_mode)


class _FileScanner(LookAhead):
    """In one scope: the names bound to opener calls so far (each with the `with` statement
    binding it, if one does), and the files given to pickle with the openers they may come
    from: the one of the innermost `with` around the call binding the name, else every one
    bound before it."""

    def __init__(self, pickle_pass: PickleFilesPass, parent: Optional[cst.CSTNode]) -> None:
        super().__init__(pickle_pass, parent)
        self.pickle_pass = pickle_pass
        self.opened: Dict[str, List[Tuple[cst.Call, Optional[cst.With]]]] = {}
        # (pickle call, 'pickle.load', the file's name or its opener call, its openers)
        self.files: List[Tuple[cst.Call, str, Union[str, cst.Call], List[cst.Call]]] = []
        self.with_statements: List[cst.With] = []

    def visit_With(self, node: cst.With) -> None:
        self.with_statements.append(node)

    def leave_With(self, original_node: cst.With) -> None:
        self.with_statements.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # its own scope

    # On leaving, not visiting: the children's parents are known by then (qualified names).
    def leave_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            self._bind(node.asname.name.value, node.item, self.with_statements[-1])

    def leave_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._bind(target.target.value, node.value, None)

    def _bind(self, name: str, value: cst.BaseExpression, block: Optional[cst.With]) -> None:
        if isinstance(value, cst.Call) and self.pickle_pass.qualified_name(value.func) in OPENERS:
            self.opened.setdefault(name, []).append((value, block))

    def leave_Call(self, node: cst.Call) -> None:
        qualified = self.pickle_pass.qualified_name(node.func) or ''
        position = _FILE_POSITION.get(_CALLS.get(qualified, ''))
        if position is None:
            return
        given = _argument(node, position, 'file')
        if isinstance(given, cst.Name):
            bound = self.opened.get(given.value, [])
            around = [opener for opener, block in bound if block in self.with_statements]
            self.files.append((node, qualified, given.value,
                               around[-1:] or [opener for opener, _ in bound]))
        elif (isinstance(given, cst.Call)
              and self.pickle_pass.qualified_name(given.func) in OPENERS):
            self.files.append((node, qualified, given, [given]))


def _match_starts(code: str, pattern: 're.Pattern[str]') -> List[Tuple[int, int]]:
    """(line, column) of the start of each match of `pattern` in `code`, the column in UTF-8
    bytes as Python's tree counts it."""
    starts = []
    line, line_start = 1, 0
    for match in pattern.finditer(code):
        start = match.start()
        newlines = code.count('\n', line_start, start)
        if newlines:
            line += newlines
            line_start = code.rindex('\n', 0, start) + 1
        starts.append((line, len(code[line_start:start].encode('utf-8'))))
    return starts


def _holds(statement: ast.stmt, position: Tuple[int, int]) -> bool:
    """Whether `statement`'s code holds `position` (line, column in UTF-8 bytes)."""
    return ((statement.lineno, statement.col_offset) <= position
            < (cast(int, statement.end_lineno), cast(int, statement.end_col_offset)))


def _every_line(code: str) -> MatchedLines:
    return MatchedLines(list(range(1, code.count('\n') + 2)))


def _keyword(call: cst.Call, keyword: str) -> bool:
    return any(argument.keyword is not None and argument.keyword.value == keyword
               for argument in call.args)


def _argument(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    """The argument of `call` at `position` or named `keyword`, or None."""
    for index, argument in enumerate(call.args):
        if argument.keyword is not None:
            if argument.keyword.value == keyword:
                return argument.value
        elif index == position and not argument.star:
            return argument.value
    return None


def _mode_of(opener: cst.Call) -> Optional[str]:
    """The mode `opener` opens its file in: 'r' when it gives none, 'binary' when its mode
    has a 'b', None when the mode is not a literal."""
    mode = mode_argument(opener)
    if mode is None:
        return 'r'
    if not isinstance(mode.value, cst.SimpleString):
        return None
    text = str(mode.value.evaluated_value)
    return 'binary' if 'b' in text else text


def _binary_mode(mode: Optional[str]) -> Optional[str]:
    """'r' -> 'rb', 'wt' -> 'wb', 'r+' -> 'rb+', ...; None where it is unclear."""
    if mode is None:
        return None
    mode = mode.replace('t', '')
    if not mode or mode[0] not in 'rwax':
        return None
    return mode[0] + 'b' + mode[1:]
