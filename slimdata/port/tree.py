"""Porting a tree: which files, the passes over each, tf_upgrade_v2 over all, and the writes.

Files it does not change are never written: in place they keep their bytes and times; in a
copy (DST) they are copied as they are. A changed file is written whole under a temporary name
and renamed over the old one; in place, the original goes first to the backup folder.
"""

import dataclasses
import io
import os
import pathlib
import shutil
import tempfile
import tokenize
from typing import Dict, Iterator, List, Optional, Tuple

import libcst as cst

from slimdata import progress
from slimdata.port import upgrade_v2
from slimdata.port.edits import NOT_PORTED, Note, run_pass
from slimdata.port.entry import EntryPass
from slimdata.port.names import NamesPass
from slimdata.port.py3 import Py3Pass, imports_siblings
from slimdata.port.report import FileReport, PortReport, line_map

#: The passes, in order, and the words a file must contain for the pass to have work in it.
PASSES = (
    (NamesPass, ('contrib', 'tf_slim', 'tensorflow.python', 'layers', 'rnn_cell')),
    (Py3Pass, ('collections', 'read()', 'bytes', 'BytesList', 'contextlib2', 'np.int',
               'np.float', 'np.object', 'np.complex', 'np.long', 'np.unicode', 'np.str',
               'numpy.int', 'numpy.float', 'numpy.object')),
    (EntryPass, ('__main__', 'app.run')),
)


class PortError(ValueError):
    """A usage problem: the source is not a folder, the destination exists, ..."""


@dataclasses.dataclass
class _Stage:
    code: str
    notes: List[Note]


def python_files(root: pathlib.Path, skip: Tuple[pathlib.Path, ...] = ()) -> Iterator[str]:
    """The relative paths of the .py files under `root`, hidden folders and caches skipped."""
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(name for name in folders if not name.startswith('.')
                            and name != '__pycache__' and pathlib.Path(folder, name) not in skip)
        for name in sorted(files):
            if name.endswith('.py'):
                yield pathlib.Path(folder, name).relative_to(root).as_posix()


def _port_passes(code: str, report_unknown_contrib: bool, path: str = '',
                 paths: frozenset = frozenset()) -> List[_Stage]:
    stages = []
    for make_pass, words in PASSES:
        # Python 2's implicit relative imports name no word: the pass looks for them itself.
        if any(word in code for word in words) or (
                make_pass is Py3Pass and imports_siblings(code, path, paths)):
            code, notes = run_pass(make_pass(report_unknown_contrib=report_unknown_contrib,
                                             path=path, paths=paths), code)
            stages.append(_Stage(code, notes))
    return stages


def _final_notes(original: str, stages: List[_Stage]) -> List[Note]:
    """Every stage's notes with their lines carried to the last stage's code."""
    notes: List[Note] = []
    codes = [original] + [stage.code for stage in stages]
    maps = [line_map(before, after) for before, after in zip(codes, codes[1:])]
    for index, stage in enumerate(stages):
        for note in stage.notes:
            line = note.line
            for later in maps[index:]:
                line = later(line)
            notes.append(Note(note.kind, line, note.message))
    return _deduplicated(notes)


def _deduplicated(notes: List[Note]) -> List[Note]:
    """Drops tf_upgrade_v2's 'not ported' where slimdata's own says why for the same line."""
    ours = {note.line for note in notes
            if note.kind == NOT_PORTED and not note.message.startswith('tf_upgrade_v2')}
    kept = [note for note in notes if not (note.kind == NOT_PORTED and note.line in ours
                                           and note.message.startswith('tf_upgrade_v2'))]
    return list(dict.fromkeys(kept))


def port_sources(sources: Dict[str, str],
                 tf_upgrade: Optional[str] = 'SAFETY') -> Tuple[Dict[str, Tuple[str, List[Note]]],
                                                                List[str]]:
    """Ports code in memory: {path: code} -> ({path: (new code, notes)}, problems).

    `tf_upgrade`: the mode tf_upgrade_v2 runs in after slimdata's passes ('SAFETY' or
    'DEFAULT', see `upgrade_v2`), or None not to run it.
    """
    staged: Dict[str, List[_Stage]] = {}
    results: Dict[str, Tuple[str, List[Note]]] = {}
    problems = []
    with progress.Progress(len(sources), 'porting', unit='files', delay=1.0) as shown:
        for path, code in sources.items():
            try:
                staged[path] = _port_passes(code, not tf_upgrade, path, frozenset(sources))
            except cst.ParserSyntaxError as error:
                message = f'could not parse (Python 2 code?): {error.message}'
                problems.append(f'{path}:{error.raw_line}: {message}')
                results[path] = (code, [Note(NOT_PORTED, error.raw_line, message)])
            shown.update()
    if tf_upgrade:
        progress.info(f"running TensorFlow's tf_upgrade_v2 ({tf_upgrade.lower()} mode) over "
                      f'{len(staged)} files')
        latest = {path: stages[-1].code if stages else sources[path]
                  for path, stages in staged.items()}
        for path, (code, notes) in upgrade_v2.upgrade(latest, tf_upgrade).items():
            staged[path].append(_Stage(code, notes))
    for path, stages in staged.items():
        final = stages[-1].code if stages else sources[path]
        results[path] = (final, _final_notes(sources[path], stages))
    return results, problems


def port_tree(source: str, destination: Optional[str] = None, backup: Optional[str] = None,
              dry_run: bool = False, tf_upgrade: Optional[str] = 'SAFETY') -> PortReport:
    """Ports the Python files of the tree `source` into `destination`, or in place.

    Args:
      source: the folder to port.
      destination: a folder that must not exist yet: the tree is copied there and the copy
        ported. None ports in place.
      backup: in place, the folder that receives the original of every file changed (default:
        `<source>.port-backup` beside it); it must not hold files of an earlier run.
      dry_run: report only; write nothing.
      tf_upgrade: the mode of TensorFlow's tf_upgrade_v2, run after slimdata's passes
        ('SAFETY': TF1 calls through `import tensorflow.compat.v1 as tf`; 'DEFAULT': TF1
        calls renamed one by one), or None not to run it.

    Returns:
      The PortReport. Raises PortError for usage problems, before anything is written.
    """
    root = pathlib.Path(source).resolve()
    if not root.is_dir():
        raise PortError(f'{source} is not a folder')
    target = pathlib.Path(destination).resolve() if destination else root
    backup_root = pathlib.Path(backup).resolve() if backup else root.with_name(
        root.name + '.port-backup')
    if destination:
        if target.exists() and any(target.iterdir()):
            raise PortError(f'{destination} exists and is not empty: give a new folder')
        if target == root or root in target.parents:
            raise PortError(f'{destination} is inside {source}: give a folder outside it')
    sources, encodings = {}, {}
    problems = []
    relatives = list(python_files(root, skip=(backup_root, target)))
    for relative in relatives:
        try:
            sources[relative], encodings[relative] = _read_source(root / relative)
        except (UnicodeDecodeError, SyntaxError) as error:
            problems.append(f'{relative}: {_decoding_problem(error)}; not ported')
    results, parse_problems = port_sources(sources, tf_upgrade)
    problems += parse_problems
    files = [FileReport(path, code != sources[path], notes)
             for path, (code, notes) in sorted(results.items()) if notes or code != sources[path]]
    changed = {file.path: results[file.path][0] for file in files if file.changed}
    if not destination and changed and not dry_run:
        clashes = [path for path in changed if (backup_root / path).exists()]
        if clashes:
            raise PortError(f'the backup folder {backup_root} already holds {clashes[0]} (an '
                            'earlier port?): move it away or give --backup-dir')
    report = PortReport(str(root), str(target), str(backup_root) if not destination else '',
                        len(relatives), files, problems, dry_run)
    if not dry_run:
        _write(root, target, backup_root if not destination else None,
               {path: code.encode(encodings[path]) for path, code in changed.items()})
    return report


def _read_source(path: pathlib.Path) -> Tuple[str, str]:
    """(text, encoding) of a Python file: UTF-8, or what its coding declaration says (PEP 263);
    written back in the same encoding."""
    data = path.read_bytes()
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding), encoding


def _decoding_problem(error: Exception) -> str:
    where = (f' ({error.reason} at byte {error.start})'
             if isinstance(error, UnicodeDecodeError) else '')
    return f'not UTF-8 text{where}, and no coding declaration (PEP 263) says what it is'


def _write(root: pathlib.Path, target: pathlib.Path, backup: Optional[pathlib.Path],
           changed: Dict[str, bytes]) -> None:
    if target != root:
        shutil.copytree(root, target, symlinks=True, dirs_exist_ok=True)
    for relative, code in changed.items():
        path = target / relative
        if backup is not None:
            (backup / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, backup / relative)
        with tempfile.NamedTemporaryFile('wb', dir=path.parent, prefix=f'.{path.name}.',
                                         delete=False) as temporary:
            temporary.write(code)
        shutil.copymode(path, temporary.name)
        os.replace(temporary.name, path)
