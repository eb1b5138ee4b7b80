"""The port's pipeline: the stages each file goes through, in order, sharing one context.

`STAGES` is the list of the stages over each file: the Python 2 stage (2to3's fixers, on files
written for Python 2, `python2`; then their indentation's tabs, `indentation`), then the LibCST
passes (`edits.PortTransformer`), which need code Python 3 parses. Each runs on a file only
when its `has_work` says so (a trigger built from the stage's own tables); a file's stages
share its `edits.Context`. Then TensorFlow's `tf_upgrade_v2` runs once over every file (it is
a command with a start-up cost).

The LibCST passes share one syntax tree of the file (`edits.ParsedFile`): parsed once, its
code rendered again only after a pass that changed it. Each stage numbers its notes in the
code it was given; `lines.line_map` carries them to the ported file. An exception a stage did
not expect on one file (a bug of the port) is reported as "internal error in pass NAME; file
left as is" with the file named, and the run goes on with the other files (the command then
exits 1).
"""

import ast
import dataclasses
from typing import (
    Dict,
    List,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Set,
    Tuple,
    Type,
    TypeGuard,
    Union,
    cast,
)

import libcst as cst

from slimdata import progress
from slimdata.port import lines, py2, py3, upgrade_v2
from slimdata.port.data_format import DataFormatPass
from slimdata.port.edits import (
    CHANGED,
    NOT_PORTED,
    Context,
    Note,
    ParsedFile,
    PortTransformer,
    garbage_collection_paused,
    objects_alive_frozen,
)
from slimdata.port.entry import EntryPass
from slimdata.port.flags import FlagDefaultsPass
from slimdata.port.indentation import IndentationStage
from slimdata.port.layers import LayersPass
from slimdata.port.names import NamesPass
from slimdata.port.python2 import Python2ParseError, Python2Stage, read_for_python_2
from slimdata.port.python2_imports import python_2_by_imports
from slimdata.port.scopes import ScopeValuesPass
from slimdata.port.star_imports import star_imported_names
from slimdata.port.tensorflow_0 import TensorFlow0Pass
from slimdata.port.variables import ResourceVariablesPass


class TextStage(Protocol):
    """A stage over one file's text: the Python 2 stage, the indentation's tabs."""

    NAME: str

    def has_work(self, code: str, context: Context) -> bool: ...

    def port(self, code: str, context: Context) -> Tuple[str, List[Note]]: ...


#: A stage over one file: on its text, or a LibCST pass (on its tree).
Stage = Union[TextStage, Type[PortTransformer]]

#: The stages over each file, in order: the Python 2 stage and the indentation's tabs (on the
#: text), then the LibCST passes.
STAGES: Sequence[Stage] = (Python2Stage, IndentationStage, TensorFlow0Pass, NamesPass, LayersPass,
                           *py3.PASSES, *py2.PASSES, FlagDefaultsPass, DataFormatPass,
                           ScopeValuesPass,
                           ResourceVariablesPass, EntryPass)
#: The name of the tree-wide stage in the report.
TF_UPGRADE = 'tf_upgrade_v2'


@dataclasses.dataclass
class Staged:
    """What one stage made of a file: its code, and its notes (lines of the code it got)."""
    stage: str
    code: str
    notes: List[Note]


class InternalError(Exception):
    """A stage failed on a file in a way it did not expect: the port's bug, not the file's."""


class Unparsable(ValueError):
    """Code the port cannot read: `line`, `why`."""

    def __init__(self, line: int, why: str) -> None:
        super().__init__(why)
        self.line, self.why = line, why


def port_file(text: str, context: Context) -> List[Staged]:
    """The stages that have work in `text`. Raises `InternalError` naming the stage that
    failed, `Unparsable` (or `cst.ParserSyntaxError`, `RecursionError`) for code it cannot
    read."""
    staged: List[Staged] = []
    code = text
    parsed: Optional[ParsedFile] = None  # `code`'s tree, once a LibCST pass has work
    # Python's tree of `code`, parsed once before the LibCST passes (they then share it).
    python_tree: Optional[ast.Module] = None
    for stage in STAGES:
        if _on_tree(stage) and python_tree is None:
            python_tree = _python_tree(context, code)
        if not stage.has_work(code, context):
            continue
        try:
            if _on_tree(stage):
                parsed = parsed or ParsedFile(code, python_tree, context.libcst_module_of(code))
                notes = stage.port(parsed, context)
                code, context.tree_facts = parsed.code, parsed.facts
            else:  # a text stage (TypeGuard narrows only the other branch)
                code, notes = cast(TextStage, stage).port(code, context)
                parsed = None
        except Python2ParseError as error:
            raise Unparsable(error.line, error.why) from error
        except (cst.ParserSyntaxError, RecursionError):
            raise
        except Exception as error:  # any bug of one pass: the file is reported, the run goes on
            raise InternalError(f'internal error in pass {stage.NAME} '
                                f'({type(error).__name__}: {error}); file left as is') from error
        staged.append(Staged(stage.NAME, code, notes))
    return staged


def _on_tree(stage: Stage) -> TypeGuard[Type[PortTransformer]]:
    return isinstance(stage, type) and issubclass(stage, PortTransformer)


def _python_tree(context: Context, code: str) -> ast.Module:
    """Python's own tree of `code` (the one a text stage left in `context`, if of the same
    code), left in `context` for the passes' triggers; raises `Unparsable` when Python cannot
    parse it.

    Checked with Python's own parser first: its messages are the clearest, it is fast (some
    10 microseconds a line), and it refuses the nesting that would take libcst minutes.
    """
    tree = context.python_tree_of(code)
    if tree is not None:
        return tree
    try:
        tree = ast.parse(code, filename=context.path)
    except SyntaxError as error:
        raise Unparsable(error.lineno or 1, f'could not parse: {error.msg}') from error
    except (RecursionError, MemoryError, ValueError) as error:
        raise Unparsable(1, f'could not parse: {type(error).__name__}: {error}') from error
    context.python_tree = (code, tree)
    return tree


def _ported(text: str, context: Context
            ) -> Tuple[List[Staged], Optional[Tuple[int, str]]]:
    """(the stages over `text`, None) or ([], (line, why the file is left as is))."""
    try:
        return port_file(text, context), None
    except Unparsable as error:
        return [], (error.line, error.why)
    except cst.ParserSyntaxError as error:
        return [], (error.raw_line, f'could not parse (libcst): {error.message}')
    except RecursionError:
        return [], (1, 'nested too deeply for the syntax tree of slimdata port')
    except InternalError as error:
        return [], (1, str(error))


def _line_count(code: str) -> int:
    return code.count('\n') + (not code.endswith('\n'))


def port_sources(sources: Dict[str, str],
                 tf_upgrade: Optional[str] = 'SAFETY') -> Tuple[Dict[str, Tuple[str, List[Note]]],
                                                                List[str]]:
    """Ports code in memory: {path: code} -> ({path: (new code, notes)}, problems).

    `tf_upgrade`: the mode tf_upgrade_v2 runs in after slimdata's passes ('SAFETY' or
    'DEFAULT', see `upgrade_v2`), or None not to run it. Each line kept keeps its line ending
    (the passes and tf_upgrade_v2 see LF).
    """
    with objects_alive_frozen():
        return _port_sources(sources, tf_upgrade)


def _port_sources(sources: Dict[str, str], tf_upgrade: Optional[str]
                  ) -> Tuple[Dict[str, Tuple[str, List[Note]]], List[str]]:
    staged: Dict[str, List[Staged]] = {}
    texts: Dict[str, str] = {}
    endings: Dict[str, List[str]] = {}
    results: Dict[str, Tuple[str, List[Note]]] = {}
    problems = []
    paths = frozenset(sources)
    for path, code in sources.items():
        texts[path], endings[path] = lines.split_endings(code)
    evident, trees = _read_for_python_2(texts)
    by_imports = python_2_by_imports(sources, evident)
    star_imported = star_imported_names(sources)
    total_lines = sum(_line_count(code) for code in sources.values())
    with progress.Progress(total_lines, 'porting', unit='lines', delay=1.0) as shown:
        for path, code in sources.items():
            context = Context(path, paths, report_unknown_contrib=not tf_upgrade,
                              python_2=path in by_imports, shows_python_2=path in evident,
                              python_2_by_imports=by_imports.get(path, ''),
                              python_tree=trees.pop(path, None),
                              star_imported=star_imported.get(path, {}))
            with garbage_collection_paused():
                stages, failure = _ported(texts[path], context)
            if failure is None:
                staged[path] = stages
            else:
                problems.append(f'{path}:{failure[0]}: {failure[1]}')
                results[path] = (code, [Note(NOT_PORTED, *failure)])
            shown.update(_line_count(code))
    if tf_upgrade and staged:
        progress.info(f"running TensorFlow's tf_upgrade_v2 ({tf_upgrade.lower()} mode) over "
                      f'{len(staged)} files')
        latest = {path: stages[-1].code if stages else texts[path]
                  for path, stages in staged.items()}
        for path, (code, notes) in upgrade_v2.upgrade(latest, tf_upgrade).items():
            staged[path].append(Staged(TF_UPGRADE, code, notes))
    for path, stages in staged.items():
        final = stages[-1].code if stages else texts[path]
        with garbage_collection_paused():
            notes = _final_notes(texts[path], stages)
            if final == texts[path]:  # how a file was read is no change of one left as it was
                notes = [note for note in notes if note.kind != CHANGED]
            results[path] = (lines.restore_endings(texts[path], endings[path], final), notes)
    return results, problems


#: The lines whose Python trees `_read_for_python_2` keeps for the stages: some 1.2 KB a line,
#: so about 35 MB at most.
KEPT_TREE_LINES = 30_000


def _read_for_python_2(texts: Mapping[str, str]
                       ) -> Tuple[Set[str], Dict[str, Tuple[str, ast.Module]]]:
    """(the paths whose text shows Python 2, {path: (text, Python's tree of it)}): each file is
    read once for it, a parse and a search, before the stages, since a file's importers decide
    too (`python2_imports`). The trees are kept for the stages, which would parse the same
    text again, up to `KEPT_TREE_LINES` lines in all."""
    evident: Set[str] = set()
    trees: Dict[str, Tuple[str, ast.Module]] = {}
    kept_lines = 0
    for path, text in texts.items():
        shows, tree = read_for_python_2(text)
        if shows:
            evident.add(path)
        lines = _line_count(text)
        if tree is not None and kept_lines + lines <= KEPT_TREE_LINES:
            trees[path] = (text, tree)
            kept_lines += lines
    return evident, trees


def _final_notes(original: str, stages: List[Staged]) -> List[Note]:
    """Every stage's notes with their lines carried to the last stage's code."""
    notes: List[Tuple[str, Note]] = []
    codes = [original] + [stage.code for stage in stages]
    maps = [lines.line_map(before, after) for before, after in zip(codes, codes[1:])]
    for index, stage in enumerate(stages):
        for note in stage.notes:
            line = note.line
            for later in maps[index:]:
                line = later(line)
            notes.append((stage.stage, Note(note.kind, line, note.message)))
    return _deduplicated(notes)


def _deduplicated(notes: List[Tuple[str, Note]]) -> List[Note]:
    """Drops tf_upgrade_v2's 'not ported' where slimdata's own says why for the same line."""
    ours = {note.line for stage, note in notes if note.kind == NOT_PORTED and stage != TF_UPGRADE}
    kept = [note for stage, note in notes
            if not (stage == TF_UPGRADE and note.kind == NOT_PORTED and note.line in ours)]
    return list(dict.fromkeys(kept))
