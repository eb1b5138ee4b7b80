"""The port's pipeline: the stages each file goes through, in order, sharing one context.

A stage is a LibCST pass (`edits.PortTransformer`), run on a file only when its `has_work`
says so (a trigger built from the pass's own tables), or TensorFlow's `tf_upgrade_v2`, run
once over every file after the passes (it is a command with a start-up cost). `STAGES` is the
whole list; a file's stages share its `edits.Context`.

Each stage numbers its notes in the code it was given; `lines.line_map` carries them to the
ported file. An exception a stage did not expect on one file (a bug of the port) is reported
as "internal error in pass NAME; file left as is" with the file named, and the run goes on
with the other files (the command then exits 1).
"""

import ast
import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple, Type

import libcst as cst

from slimdata import progress
from slimdata.port import lines, py3, upgrade_v2
from slimdata.port.edits import (
    NOT_PORTED,
    Context,
    Note,
    PortTransformer,
    garbage_collection_paused,
    run_pass,
)
from slimdata.port.entry import EntryPass
from slimdata.port.names import NamesPass
from slimdata.port.variables import ResourceVariablesPass

#: The passes over each file, in order.
STAGES: Sequence[Type[PortTransformer]] = (NamesPass, *py3.PASSES, ResourceVariablesPass,
                                           EntryPass)
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


def port_file(text: str, context: Context) -> List[Staged]:
    """The stages of the passes that have work in `text`. Raises `InternalError` naming the
    pass that failed, `cst.ParserSyntaxError` or `RecursionError` for code libcst cannot take."""
    staged: List[Staged] = []
    code = text
    for stage in STAGES:
        if not stage.has_work(code, context):
            continue
        try:
            code, notes = run_pass(stage(context), code)
        except (cst.ParserSyntaxError, RecursionError):
            raise
        except Exception as error:  # any bug of one pass: the file is reported, the run goes on
            raise InternalError(f'internal error in pass {stage.NAME} '
                                f'({type(error).__name__}: {error}); file left as is') from error
        staged.append(Staged(stage.NAME, code, notes))
    return staged


def _unparsable(path: str, code: str) -> Optional[Tuple[int, str]]:
    """(line, why) if Python itself cannot parse `code`, else None.

    Checked with Python's own parser first: its messages are the clearest, it is fast (some
    10 microseconds a line), and it refuses the nesting that would take libcst minutes.
    """
    try:
        ast.parse(code, filename=path)
    except SyntaxError as error:
        return error.lineno or 1, f'could not parse (Python 2 code?): {error.msg}'
    except (RecursionError, MemoryError, ValueError) as error:
        return 1, f'could not parse: {type(error).__name__}: {error}'
    return None


def _ported(path: str, text: str, context: Context
            ) -> Tuple[List[Staged], Optional[Tuple[int, str]]]:
    """(the stages over `text`, None) or ([], (line, why the file is left as is))."""
    failure = _unparsable(path, text)
    if failure is not None:
        return [], failure
    try:
        return port_file(text, context), None
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
    staged: Dict[str, List[Staged]] = {}
    texts: Dict[str, str] = {}
    endings: Dict[str, List[str]] = {}
    results: Dict[str, Tuple[str, List[Note]]] = {}
    problems = []
    paths = frozenset(sources)
    total_lines = sum(_line_count(code) for code in sources.values())
    with progress.Progress(total_lines, 'porting', unit='lines', delay=1.0) as shown:
        for path, code in sources.items():
            texts[path], endings[path] = lines.split_endings(code)
            context = Context(path, paths, report_unknown_contrib=not tf_upgrade)
            with garbage_collection_paused():
                stages, failure = _ported(path, texts[path], context)
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
            results[path] = (lines.restore_endings(texts[path], endings[path], final),
                             _final_notes(texts[path], stages))
    return results, problems


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
