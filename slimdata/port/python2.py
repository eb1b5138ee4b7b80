"""The Python 2 stage: 2to3's fixers, on `fissix`, before the LibCST passes.

Python 2.7 was the default interpreter of most TF1-era research code until 2019. This stage
runs on the files written for it:

- those Python 3 cannot parse (a `print` statement, `raise E, "msg"`, `except E, e`,
  backticks, `<>`, `0777`, `10L`, `exec` statements): the LibCST passes cannot read them;
- those that parse but show Python 2 (`PYTHON_2_EVIDENCE`: a builtin Python 3 removed such as
  `xrange(` or `unicode(`, `d.has_key(`, `d.iteritems()`, `sys.maxint`, an import of a module
  Python 3 renamed such as `cPickle` or `urllib2`): they parse, but fail when they run.

It runs the fixers of `FIXERS`, each listed with what it changes: 2to3's own (`fissix` is a
maintained fork of lib2to3, which Python 3.13 removed), less those where the port has a more
careful rule (`LEFT_TO_THE_PORT`). Every change is reported with the line of the original
file it was made at; what a fixer cannot convert is reported as not ported. The file is then
marked Python 2 (`Context.python_2`) for the passes that keep Python 2's semantics.
"""

import ast
import functools
import re
from typing import Callable, Dict, List, Optional, Set, Tuple, Type

from fissix import fixer_base, pygram, pytree, refactor
from fissix.fixes import (
    fix_apply,
    fix_asserts,
    fix_basestring,
    fix_except,
    fix_exec,
    fix_execfile,
    fix_exitfunc,
    fix_filter,
    fix_funcattrs,
    fix_getcwdu,
    fix_has_key,
    fix_imports,
    fix_imports2,
    fix_intern,
    fix_isinstance,
    fix_itertools,
    fix_itertools_imports,
    fix_long,
    fix_map,
    fix_metaclass,
    fix_methodattrs,
    fix_ne,
    fix_next,
    fix_nonzero,
    fix_numliterals,
    fix_operator,
    fix_paren,
    fix_print,
    fix_raise,
    fix_raw_input,
    fix_reduce,
    fix_reload,
    fix_renames,
    fix_repr,
    fix_standarderror,
    fix_sys_exc,
    fix_throw,
    fix_tuple_params,
    fix_types,
    fix_unicode,
    fix_urllib,
    fix_xrange,
    fix_xreadlines,
    fix_zip,
)
from fissix.pgen2 import token
from fissix.pgen2.parse import ParseError
from fissix.pgen2.tokenize import TokenError

from slimdata.port import python2_statements
from slimdata.port.edits import CHANGED, NOT_PORTED, Context, Note
from slimdata.port.facts import MatchedLines, words_pattern
from slimdata.port.patterns import found_in
from slimdata.port.qualified import every_node, last_name

#: The modules the slimdata port's StringIO pass ports (to io.BytesIO where they hold image
#: bytes, reported where uncertain); 2to3 makes them io.StringIO, which holds text only.
_STRING_IO_MODULES = ('StringIO', 'cStringIO')


class _QuickImportMatch(fixer_base.BaseFix):
    """2to3's fixers of renamed modules match each candidate node against one pattern naming
    every module (measured: a third of the stage's fixing time on seglink). A node none of
    whose names is one of those modules cannot match (every branch of the pattern needs one):
    it is refused first."""

    def compile_pattern(self) -> None:
        super().compile_pattern()
        self._module_names = frozenset(re.findall(r"'(\w+)'", self.PATTERN)) - {
            'import', 'from', 'as'}

    def match(self, node):
        if not any(leaf.value in self._module_names for leaf in node.leaves()):
            return False
        return super().match(node)


class _FixImports(_QuickImportMatch, fix_imports.FixImports):
    """2to3's renamed modules, but for StringIO / cStringIO (see `_STRING_IO_MODULES`)."""
    mapping = {old: new for old, new in fix_imports.MAPPING.items()
               if old not in _STRING_IO_MODULES}


class _FixImports2(_QuickImportMatch, fix_imports2.FixImports2):
    """2to3's `fix_imports2`, quicker (`_QuickImportMatch`)."""


class _FixUrllib(_QuickImportMatch, fix_urllib.FixUrllib):
    """2to3's `fix_urllib`, quicker (`_QuickImportMatch`)."""


class _FixUnicode(fix_unicode.FixUnicode):
    """`unicode` -> `str`, `unichr` -> `chr`, and a `'\\u'` in a byte string escaped as in
    Python 2; unlike 2to3, `u'...'` keeps its prefix (Python 3 reads it the same: no change)."""

    def transform(self, node, results):
        if node.type == fix_unicode.token.STRING and node.value[:1] in 'uU':
            return None
        return super().transform(node, results)


class _FixAsserts(fix_asserts.FixAsserts):
    """unittest's old names (`self.assertEquals` -> `self.assertEqual`), on `self` only: 2to3
    renames the attribute on anything, and `np.testing.assert_` is no `assertTrue`."""
    PATTERN = ("power< 'self' trailer< '.' meth=(%s)> any* >"
               % '|'.join(map(repr, fix_asserts.NAMES)))


#: The fixers run, with what each changes (the report's words).
FIXERS: Dict[Type[fixer_base.BaseFix], str] = {
    fix_print.FixPrint: 'print statement -> print() call',
    fix_raise.FixRaise: 'raise E, V -> raise E(V)',
    fix_except.FixExcept: 'except E, e -> except E as e',
    fix_exec.FixExec: 'exec statement -> exec() call',
    fix_execfile.FixExecfile: 'execfile() -> exec(compile(open(...).read()))',
    fix_repr.FixRepr: 'backticks -> repr()',
    fix_ne.FixNe: '<> -> !=',
    fix_numliterals.FixNumliterals: 'octal or long literal -> 0o... / int',
    fix_long.FixLong: 'long -> int',
    fix_xrange.FixXrange: 'xrange() -> range() (range() -> list(range()) where a list is needed)',
    fix_has_key.FixHasKey: 'd.has_key(k) -> k in d',
    _FixUnicode: 'unicode -> str, unichr -> chr',
    fix_basestring.FixBasestring: 'basestring -> str',
    _FixImports: 'a module Python 3 renamed -> its new name',
    _FixImports2: 'a module Python 3 renamed -> its new name',
    _FixUrllib: 'urllib / urllib2 -> urllib.request, urllib.parse, urllib.error',
    fix_raw_input.FixRawInput: 'raw_input() -> input()',
    fix_apply.FixApply: 'apply(f, args) -> f(*args)',
    fix_intern.FixIntern: 'intern() -> sys.intern()',
    fix_reduce.FixReduce: 'reduce() -> functools.reduce()',
    fix_reload.FixReload: 'reload() -> importlib.reload()',
    fix_getcwdu.FixGetcwdu: 'os.getcwdu() -> os.getcwd()',
    fix_nonzero.FixNonzero: '__nonzero__ -> __bool__',
    fix_next.FixNext: 'it.next() -> next(it), def next -> def __next__',
    fix_funcattrs.FixFuncattrs: 'f.func_name and kin -> f.__name__ and kin',
    fix_methodattrs.FixMethodattrs: 'm.im_func and kin -> m.__func__ and kin',
    fix_standarderror.FixStandarderror: 'StandardError -> Exception',
    fix_sys_exc.FixSysExc: 'sys.exc_type and kin -> sys.exc_info()',
    fix_throw.FixThrow: 'g.throw(E, V) -> g.throw(E(V))',
    fix_tuple_params.FixTupleParams: 'a tuple parameter -> unpacked in the body',
    fix_types.FixTypes: 'types.StringType and kin -> the builtins',
    fix_renames.FixRenames: 'sys.maxint -> sys.maxsize',
    fix_exitfunc.FixExitfunc: 'sys.exitfunc -> atexit.register',
    fix_isinstance.FixIsinstance: 'isinstance(x, (int, int)) -> isinstance(x, int)',
    fix_xreadlines.FixXreadlines: 'f.xreadlines() -> f',
    fix_metaclass.FixMetaclass: '__metaclass__ -> class C(metaclass=M)',
    fix_itertools.FixItertools: 'itertools.izip and kin -> zip and kin',
    fix_itertools_imports.FixItertoolsImports: 'from itertools import izip and kin: dropped',
    fix_map.FixMap: 'map() -> list(map()) where a list is needed',
    fix_filter.FixFilter: 'filter() -> list(filter()) where a list is needed',
    fix_zip.FixZip: 'zip() -> list(zip()) where a list is needed',
    fix_paren.FixParen: '[x for x in 1, 2] -> [x for x in (1, 2)]',
    fix_operator.FixOperator: 'operator.isCallable and kin -> their Python 3 spellings',
    _FixAsserts: 'self.assertEquals and kin -> self.assertEqual and kin',
}

#: 2to3's fixers not run, and why.
LEFT_TO_THE_PORT = {
    'fix_dict': "the port's dict views pass (`d.iteritems()` -> views, and list() only where "
                'the list may matter; 2to3 wraps every keys() / values() / items() in list())',
    'fix_import': "the port's relative imports pass (a sibling module only, and the module "
                  'still runs as a script)',
    'fix_imports for StringIO, cStringIO': "the port's StringIO pass (io.BytesIO where they "
                                           'hold image bytes; 2to3 writes io.StringIO, text)',
    'fix_future': 'kept: `from __future__` lines are valid Python 3, and say which Python 2 '
                  'semantics (division) the file had',
    'fix_input': "2to3's eval(input()) keeps an eval of what the user types",
    'fix_buffer, fix_idioms, fix_set_literal, fix_ws_comma': 'optional in 2to3 too (style, or '
                                                             'not the same meaning)',
}

_REMOVED_BUILTINS = ('xrange', 'unicode', 'unichr', 'basestring', 'long', 'raw_input',
                     'execfile', 'intern', 'getcwdu')
#: What marks a file Python 3 can parse as written for Python 2 (built from the fixers'
#: tables: the renamed modules, the removed builtins).
#: Python 2's `urllib` functions, which Python 3 moved to `urllib.request` / `parse` / `error`
#: (`urllib.urlretrieve`: the module imports in Python 3, the name does not).
_URLLIB_MOVED = sorted(name for _, names in fix_urllib.MAPPING['urllib'] for name in names
                       if not name.startswith('_'))
PYTHON_2_EVIDENCE = re.compile(
    r'\b(?:' + '|'.join(_REMOVED_BUILTINS) + r')\s*\(|\bbasestring\b|\.has_key\(|\bsys\.maxint\b'
    r'|\burllib\.(?:' + '|'.join(_URLLIB_MOVED) + r')\b'
    r'|(?m:^[ \t]*from[ \t]+urllib[ \t]+import[ \t]+\(?[ \t]*(?:' + '|'.join(_URLLIB_MOVED)
    + r')\b)'
    r'|\.iter(?:items|values|keys)\(\)|\bStandardError\b|\.im_func\b|\.func_name\b'
    r'|(?m:^[ \t]*(?:import|from)[ \t]+(?:'
    + '|'.join(sorted({*fix_imports.MAPPING, *fix_imports2.MAPPING, 'urllib2'})) + r')\b)')


def shows_python_2(code: str) -> bool:
    """Whether `code` is Python 2 by its own text: Python 3 cannot parse it, or it shows
    `PYTHON_2_EVIDENCE` outside the guards of code written for both Pythons (`_guarded_lines`:
    `try: import queue` / `except ImportError: import Queue as queue`, `if six.PY2:`)."""
    return read_for_python_2(code)[0]


def read_for_python_2(code: str) -> Tuple[bool, Optional[ast.Module]]:
    """(`shows_python_2(code)`, Python 3's tree of `code`, or None where it does not parse):
    the tree, which the check parses anyway, can serve the stages after it."""
    try:
        tree = ast.parse(code)
    except SyntaxError:  # what Python 2 code has
        return True, None
    except (ValueError, RecursionError, MemoryError):
        # Refused for another reason (nesting too deep): no Python 2 matter, the pipeline's
        # own check reports it.
        return PYTHON_2_EVIDENCE.search(code) is not None, None
    # Most files show none: `found_in` answers that four times as fast as the search (the
    # evidence's alternatives start with `\b`, which `re` tries at every position).
    if not found_in(PYTHON_2_EVIDENCE, code):
        return False, tree
    guarded: Optional[Set[int]] = None
    for match in PYTHON_2_EVIDENCE.finditer(code):
        if guarded is None:  # only for a file with evidence: one walk of its tree
            guarded = _guarded_lines(tree)
        if code.count('\n', 0, match.start()) + 1 not in guarded:
            return True, tree
    return False, tree


#: What a `try` catches when it tries one Python's name, then the other's.
_COMPATIBILITY_ERRORS = frozenset(('ImportError', 'ModuleNotFoundError', 'NameError',
                                   'AttributeError', 'Exception', 'BaseException'))
#: Names a test of the Python version reads (`sys.version_info`, `six.PY2`, `PY3`, ...).
_VERSION_NAMES = re.compile(r'^(?:version_info|version|PY\d*|python_version|hexversion)$')


def _guarded_lines(tree: ast.Module) -> Set[int]:
    """The lines of the statements that choose between Python 2's names and Python 3's: a
    `try` with a handler of `_COMPATIBILITY_ERRORS` (or a bare one), an `if` testing the
    Python version. Code written for both Pythons keeps its Python 2 names there."""
    lines: Set[int] = set()
    for node in every_node(tree):
        guarded: ast.stmt
        if isinstance(node, ast.Try) and any(
                handler.type is None or _COMPATIBILITY_ERRORS & {
                    last_name(exception) for exception in (
                        handler.type.elts if isinstance(handler.type, ast.Tuple)
                        else [handler.type])}
                for handler in node.handlers):
            guarded = node
        elif isinstance(node, ast.If) and any(
                _VERSION_NAMES.match(last_name(part)) for part in every_node(node.test)):
            guarded = node
        else:
            continue
        lines.update(range(guarded.lineno, (guarded.end_lineno or guarded.lineno) + 1))
    return lines


class Python2Stage:
    """Runs 2to3's `FIXERS` on a Python 2 file and reports each change."""

    NAME = 'python 2'

    @classmethod
    def has_work(cls, code: str, context: Context) -> bool:
        if context.python_2:
            return True
        return (context.shows_python_2 if context.shows_python_2 is not None
                else shows_python_2(code))

    @classmethod
    def port(cls, code: str, context: Context) -> Tuple[str, List[Note]]:
        """(the code with 2to3's fixes, their notes). Raises `Python2ParseError` when `code` is
        neither Python 3 nor Python 2."""
        notes: List[Note] = []
        if context.python_2_by_imports:
            notes.append(Note(CHANGED, 1, 'ported as Python 2 code, though nothing in it shows '
                                          f'Python 2: {context.python_2_by_imports}'))
        context.python_2 = True
        new = _fixed(code if code.endswith('\n') else code + '\n', context, notes)
        if not code.endswith('\n'):
            new = new[:-1]
            context.python_tree = None  # a tree of the code with its line end
        return new, sorted(dict.fromkeys(notes), key=lambda note: note.line)


def _fixed(code: str, context: Context, notes: List[Note]) -> str:
    """`code` with the fixers' changes, their notes added to `notes`: on a copy with the
    statements they do not need set aside (`python2_statements`), or on the whole file when
    that copy fails (fissix cannot parse it, the fixers moved a placeholder, or the result is
    no Python 3: what the fixers needed was in a statement set aside). Raises
    `Python2ParseError` when fissix cannot parse `code`."""
    tool, path = _tool(), context.path
    needed = _needed_text()
    if needed is not None:
        if _ADDS_IMPORTS.search(code):
            needed = (*needed, _EVERY_IMPORT)
        copy, set_aside = python2_statements.set_aside(
            code, MatchedLines.matching(code, *needed).any_in)
        tool.notes = []
        try:
            fixed = python2_statements.put_back(str(tool.refactor_code(copy, path)), code,
                                                set_aside)
        except (ParseError, TokenError, IndentationError):
            fixed = None
        if fixed is not None and _python_3_parses(fixed, context):
            notes.extend(tool.notes)
            return fixed
    tool.notes = []
    try:
        tree = tool.refactor_code(code, path)
    except (ParseError, TokenError, IndentationError) as error:
        raise Python2ParseError(_line_of(error), f'could not parse as Python 3 or as '
                                                 f'Python 2 ({error})') from error
    notes.extend(tool.notes)
    return str(tree)


def _python_3_parses(code: str, context: Context) -> bool:
    """Whether Python 3 parses `code`, its indentation's tabs read as Python 2 did (the
    indentation stage expands them next); its tree is left in `context` for the LibCST passes
    (the parse then costs nothing more); one left there already is taken (the fixers may have
    changed nothing)."""
    if context.python_tree_of(code) is not None:
        return True
    parse_errors = (SyntaxError, ValueError, RecursionError, MemoryError)
    try:
        context.python_tree = (code, ast.parse(code))
    except TabError:
        try:
            ast.parse(code.expandtabs(8))  # a tree of other code: not left
        except parse_errors:
            return False
    except parse_errors:
        return False
    return True


#: Grammar keywords that open fissix's patterns but are not what a fixer needs to see: each
#: fixer behind them needs a word kept on its own (`_needed_text`) or Python 2 syntax, which a
#: copy without it would keep (and the copy is refused: it is no Python 3).
#: - def, lambda: fix_next (`def next`: next), fix_nonzero (`__nonzero__`), fix_map and
#:   fix_filter (map, filter), fix_tuple_params (`def f((a, b))`: syntax);
#: - try: fix_except, on `except E, e` only (except); for: fix_paren (`for x in 1, 2]`: syntax);
#: - global: fix_next (`global next`); import, from: an import a fixer renames names a module
#:   it renames (a word kept); `from __future__` lines are kept (fissix reads print_function
#:   there), and every import where a fixer may add one (`_ADDS_IMPORTS`).
_PATTERN_KEYWORDS = frozenset(('def', 'lambda', 'try', 'for', 'global', 'import', 'from'))
#: Words the fixers need besides the keys of the bottom matcher: except (`except E, e`: kept
#: with its statement, not refused in the copy), the names behind `_PATTERN_KEYWORDS`.
_NEEDED_WORDS = frozenset(('except', 'next', '__nonzero__'))
#: The matcher's keys that are no word (grammar symbols, tokens), and the word or text the
#: fixer behind each needs: fix_print, fix_metaclass; fix_repr, fix_unicode (a '\u' escape in
#: a byte string).
_WORDS_OF_SYMBOLS = {'print_stmt': 'print', 'classdef': '__metaclass__'}
_TEXT_OF_SYMBOLS = {'BACKQUOTE': '`', 'STRING': r'\\[uU]'}
#: The words of the fixers that add an import unless the file has it (`touch_import`) or look
#: for one (`sys.exitfunc`: `import sys`): where one is in a file, its imports are kept.
_ADDS_IMPORTS = re.compile(words_pattern({
    word for fixer in (fix_reduce.FixReduce, fix_intern.FixIntern, fix_reload.FixReload,
                       fix_operator.FixOperator, fix_exitfunc.FixExitfunc)
    for word in re.findall(r"'(\w+)'", fixer.PATTERN)} - {'sys', 'operator', 'import', 'as'}))
_EVERY_IMPORT = re.compile(r'(?m:^[ \t]*(?:import|from)\b)')


@functools.lru_cache(maxsize=1)
def _needed_text() -> Optional[Tuple['re.Pattern[str]', ...]]:
    """What marks a line the fixers need: each word the bottom matcher's patterns start at
    (read from fissix's own automaton, so a new fixer's words come with it), the text of the
    fixers outside the matcher (`_OUTSIDE_THE_MATCHER`), and the `from __future__` lines (the
    other imports: `_ADDS_IMPORTS`).
    None (every file whole) when the matcher holds a key this table does not know."""
    words = set(_NEEDED_WORDS) | set(fix_asserts.NAMES)
    texts = ['<>', _LITERALS, r'(?m:^[ \t]*from[ \t]+__future__\b)']
    names = {number: name for name, number in pygram.python_grammar.symbol2number.items()}
    for key in _tool().BM.root.transition_table:
        if isinstance(key, str):
            if key not in _PATTERN_KEYWORDS:
                words.add(key)
            continue
        name = names.get(key, token.tok_name.get(key))
        if name in _WORDS_OF_SYMBOLS:
            words.add(_WORDS_OF_SYMBOLS[name])
        elif name in _TEXT_OF_SYMBOLS:
            texts.append(_TEXT_OF_SYMBOLS[name])
        else:
            return None
    # One pattern each: their alternation searches slower than all of them one by one.
    return (re.compile(words_pattern(words)), *map(re.compile, dict.fromkeys(texts)))


class Python2ParseError(ValueError):
    """A file neither Python 3 nor Python 2 can parse: `line`, `why`."""

    def __init__(self, line: int, why: str) -> None:
        super().__init__(why)
        self.line = line
        self.why = why


def _line_of(error: Exception) -> int:
    context = getattr(error, 'context', None)  # ParseError: (prefix, (line, column))
    if context and isinstance(context[1], tuple):
        return context[1][0]
    position = error.args[1] if len(error.args) > 1 else None  # TokenError: (message, (l, c))
    return position[0] if isinstance(position, tuple) else 1


@functools.lru_cache(maxsize=1)
def _tool() -> '_Tool':
    """The one tool every file goes through: making it compiles the fixers' patterns, which
    costs more than most files' fixes (measured: two thirds of the stage's time on seglink,
    made once per file)."""
    return _Tool()


#: What the fixers outside fissix's bottom matcher (`fix_ne`, `fix_numliterals`, `_FixAsserts`)
#: need in a file's text: `<>`, a long or octal literal (not `0.01`), unittest's old names.
#: They are tried on every node of a walk of the whole tree, made only for a file that holds
#: one (a tenth of the stage's time).
#: (A digit first, then what comes before it: a search for it is quick.)
_LITERALS = r'[0-9](?<![\w.][0-9])(?:(?<=0)[0-9]|\w*[lL]\b)'
_OUTSIDE_THE_MATCHER = re.compile(f'<>|{_LITERALS}|{words_pattern(fix_asserts.NAMES)}')


class _Tool(refactor.RefactoringTool):
    """fissix's RefactoringTool with the fixers of `FIXERS`, each change noted by line in
    `notes` (set for each file: fixers start each tree afresh, `start_tree`)."""

    def __init__(self) -> None:
        self.notes: List[Note] = []
        super().__init__([])
        # fissix walks the whole tree for its pre-order fixers outside the bottom matcher even
        # when there are none (a table of empty lists): none, no walk.
        assert not self.bmi_pre_order, 'no pre-order fixer outside the bottom matcher'
        self.bmi_pre_order_heads: Dict[int, List[fixer_base.BaseFix]] = {}
        self._post_order_heads: Dict[int, List[fixer_base.BaseFix]] = (
            self.bmi_post_order_heads)

    def refactor_code(self, code: str, name: str) -> pytree.Node:
        """The tree of `code` with the fixers' changes; the post-order walk of the fixers
        outside the bottom matcher only where the text can hold their work."""
        self.bmi_post_order_heads = (self._post_order_heads if _OUTSIDE_THE_MATCHER.search(code)
                                     else {})
        return self.refactor_string(code, name)

    def get_fixers(self):
        pre_order: List[fixer_base.BaseFix] = []
        post_order: List[fixer_base.BaseFix] = []
        for fixer_class, what in FIXERS.items():
            fixer = fixer_class(self.options, self.fixer_log)
            _record(fixer, what, self)
            (pre_order if fixer.order == 'pre' else post_order).append(fixer)
        pre_order.sort(key=lambda fixer: fixer.run_order)
        post_order.sort(key=lambda fixer: fixer.run_order)
        return pre_order, post_order

    def log_error(self, msg, *args, **kwds):
        raise  # noqa: PLE0704 - fissix's hook, called in an except block: the error goes up


def _record(fixer: fixer_base.BaseFix, what: str, tool: '_Tool') -> None:
    """Makes `fixer` note each change it makes, and what it cannot convert, by line, in the
    notes of the file `tool` is on."""
    transform: Callable = fixer.transform

    def transform_noted(node: pytree.Base, results):
        # The node's own text, not its parent's: a parent can be a whole function or module,
        # and rendering it twice per fix made the stage quadratic (a third of its time).
        before, line, parent = str(node), _start_line(node), node.parent
        new = transform(node, results)
        if new is not None:  # replaces `node`
            changed = _changed_line(before, str(new), line)
        elif node.parent is not parent:  # the fixer replaced it in its parent itself
            changed = node.get_lineno() or 1
        else:
            changed = _changed_line(before, str(node), line)
        if changed is not None:
            tool.notes.append(Note(CHANGED, changed, f'{what} (2to3 {_fixer_name(fixer)})'))
        return new

    def cannot_convert(node: pytree.Base, reason=None):
        tool.notes.append(Note(NOT_PORTED, node.get_lineno() or 1,
                               f'2to3 {_fixer_name(fixer)} could not convert this'
                               + (f': {reason}' if reason else '')))

    def warning(node: pytree.Base, reason):
        tool.notes.append(Note(NOT_PORTED, node.get_lineno() or 1,
                               f'2to3 {_fixer_name(fixer)}: {reason}'))

    fixer.transform = transform_noted
    fixer.cannot_convert = cannot_convert
    fixer.warning = warning


def _start_line(node: pytree.Base) -> int:
    """The line where `str(node)` starts (its prefix, comments and blank lines included)."""
    return (node.get_lineno() or 1) - node.prefix.count('\n')


def _changed_line(before: str, after: str, start: int):
    """The line of the first difference of two texts starting at line `start`, or None."""
    if before == after:
        return None
    offset = next((index for index, (old, new) in enumerate(zip(before, after)) if old != new),
                  min(len(before), len(after)))
    return start + before.count('\n', 0, offset)


def _fixer_name(fixer: fixer_base.BaseFix) -> str:
    """2to3's name of `fixer` (`fix_imports`): of the fissix class it is or derives from."""
    module = next(cls.__module__ for cls in type(fixer).__mro__
                  if cls.__module__.startswith('fissix.fixes.'))
    return module.rsplit('.', 1)[-1]
