"""Porting a tree: which files, read how, ported by the pipeline (`pipeline`), and the writes.

What can go wrong is found before anything is written: usage problems (`PortError`: DST not
empty or a file, an output folder that cannot be written, a backup of other files in the way),
then every file read and ported in memory. Files that cannot be read or parsed (an unknown
coding, binary data, too large, too deeply nested) are reported and left as they are; the
others are ported.

The writes leave nothing half done under a final name:

- with DST, the ported copy is built in `DST.port-partial` and renamed DST at the end, so DST
  is whole or absent; a later run removes the partial copy of one that was interrupted;
- in place, each changed file's original goes to the backup folder, then the new file is
  written under a temporary name and renamed over the old one. A marker in the backup folder
  says a run is under way; the same command, run again after an interruption, ports what is
  left (a port of ported code changes nothing) and removes the marker.

Files the port does not change are never written: in place they keep their bytes and times; in
a copy they are copied as they are. Links are kept as links and never followed: a `.py` link
leaving SRC is reported, not ported; in a copy, links keep their targets.
"""

import dataclasses
import hashlib
import io
import json
import os
import pathlib
import re
import shutil
import tempfile
import tokenize
from typing import Dict, List, Optional, Tuple

from slimdata import progress
from slimdata.port.pipeline import port_sources
from slimdata.port.report import FileReport, PortReport

#: Files larger than this are reported, not ported: the syntax trees of the passes take some
#: 20-25 kB of memory per line and 1 ms of CPU per line and pass (measured: a 1 MB file of
#: slim-era code is some 30,000 lines, 0.7 GB).
MAX_FILE_BYTES = 2 ** 20
#: The largest `max_file_bytes` taken (1 GiB: its syntax trees would need some 25 GB).
MAX_FILE_BYTES_LIMIT = 2 ** 30

#: In place: the file in the backup folder saying a port is under way (its options inside).
RUNNING_MARKER = '.slimdata-port-running.json'
#: With DST: the suffix of the folder the copy is built in before it is renamed DST.
PARTIAL_SUFFIX = '.port-partial'
#: In place: the temporary files written before a rename (`.NAME.slimdata-port-XXXX.tmp`).
_TEMPORARY = re.compile(r'\..+\.slimdata-port-\w+\.tmp')


class PortError(ValueError):
    """A usage problem: the source is not a folder, the destination exists, ..."""


@dataclasses.dataclass
class _Tree:
    """What a walk of SRC found, by path relative to it (links never followed)."""
    folders: List[str] = dataclasses.field(default_factory=list)
    files: Dict[str, int] = dataclasses.field(default_factory=dict)  # regular file -> size
    links: Dict[str, str] = dataclasses.field(default_factory=dict)  # link -> its text
    leaving: List[str] = dataclasses.field(default_factory=list)     # links leaving SRC
    problems: List[str] = dataclasses.field(default_factory=list)


def _walk(root: pathlib.Path, skip: Tuple[pathlib.Path, ...]) -> _Tree:
    found = _Tree()
    pending = ['']
    while pending:
        folder = pending.pop()
        try:
            entries = sorted(os.scandir(root / folder), key=lambda entry: entry.name)
        except OSError as error:
            found.problems.append(f'{folder or "."}: could not list the folder '
                                  f'({error.strerror}); nothing in it ported or copied')
            continue
        for entry in entries:
            relative = f'{folder}/{entry.name}' if folder else entry.name
            if pathlib.Path(entry.path) in skip:
                continue
            if entry.is_symlink():
                found.links[relative] = os.readlink(entry.path)
                if not _inside(os.path.realpath(entry.path), root):
                    found.leaving.append(relative)
            elif entry.is_dir(follow_symlinks=False):
                found.folders.append(relative)
                pending.append(relative)
            elif entry.is_file(follow_symlinks=False):
                found.files[relative] = entry.stat(follow_symlinks=False).st_size
            else:
                found.problems.append(f'{relative}: not a regular file (a FIFO, socket or '
                                      'device): not ported or copied')
    return found


def _inside(path: str, root: pathlib.Path) -> bool:
    return path == str(root) or path.startswith(str(root) + os.sep)


def python_files(found: _Tree) -> List[str]:
    """The .py files of a walk, except those in hidden folders and caches."""
    return sorted(path for path in found.files if path.endswith('.py') and not any(
        part.startswith('.') or part == '__pycache__' for part in path.split('/')[:-1]))


@dataclasses.dataclass
class _Plan:
    """Where a port reads and writes, checked before anything is written."""
    root: pathlib.Path
    target: pathlib.Path
    backup: Optional[pathlib.Path]   # in place only
    partial: Optional[pathlib.Path]  # with DST only
    existing: bool = False           # DST holds files: only this port of SRC may be there


def _plan(source: str, destination: Optional[str], backup: Optional[str]) -> _Plan:
    root = pathlib.Path(source).resolve()
    if not root.is_dir():
        raise PortError(f'{source} is not a folder')
    if destination is None:
        backup_root = (pathlib.Path(backup).resolve() if backup
                       else root.with_name(root.name + '.port-backup'))
        if backup_root.exists() and not backup_root.is_dir():
            raise PortError(f'the backup folder {backup_root} is a file')
        if backup_root == root or backup_root in root.parents:
            raise PortError(f'the backup folder {backup_root} holds {source}: give another')
        _check_writable(backup_root, 'the backup folder')
        return _Plan(root, root, backup_root, None)
    if not destination:
        raise PortError("DST is '': give the folder to write the ported copy to, or no DST "
                        'to port SRC in place')
    target = pathlib.Path(destination).resolve()
    if target.exists() and not target.is_dir():
        raise PortError(f'{destination} is a file: give a new folder')
    if target == root or root in target.parents:
        raise PortError(f'{destination} is inside {source}: give a folder outside it')
    _check_writable(target.parent, 'the folder of DST')  # the copy is made there, renamed DST
    # A DST that is not empty is refused, unless it is this port of SRC (the same command
    # run again): that is decided once the port is made in memory (`_difference`).
    return _Plan(root, target, None, target.with_name(target.name + PARTIAL_SUFFIX),
                 existing=target.exists() and any(target.iterdir()))


def _check_writable(path: pathlib.Path, what: str) -> None:
    """PortError unless `path` is a folder this process may write in, or can be made one (its
    first existing ancestor is such a folder)."""
    folder = path
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise PortError(f'{what} {path} cannot be made: {folder} is a file')
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PortError(f'{what} {path}: no permission to write in {folder}')


def port_tree(source: str, destination: Optional[str] = None, backup: Optional[str] = None,
              dry_run: bool = False, tf_upgrade: Optional[str] = 'SAFETY',
              max_file_bytes: int = MAX_FILE_BYTES) -> PortReport:
    """Ports the Python files of the tree `source` into `destination`, or in place.

    Args:
      source: the folder to port.
      destination: a folder that must not exist yet (or be empty): the tree is copied there
        and the copy ported. None ports in place.
      backup: in place, the folder that receives the original of every file changed (default:
        `<source>.port-backup` beside it); it must not hold other versions of those files.
      dry_run: report only; write nothing.
      tf_upgrade: the mode of TensorFlow's tf_upgrade_v2, run after slimdata's passes
        ('SAFETY': TF1 calls through `import tensorflow.compat.v1 as tf`; 'DEFAULT': TF1
        calls renamed one by one), or None not to run it.
      max_file_bytes: larger files are reported, not ported.

    Returns:
      The PortReport. Raises PortError for usage problems, before anything is written.
    """
    if not 0 < max_file_bytes <= MAX_FILE_BYTES_LIMIT:
        raise PortError(f'max_file_bytes={max_file_bytes}: expected 1 to '
                        f'{MAX_FILE_BYTES_LIMIT} bytes')
    plan = _plan(source, destination, backup)
    resuming = plan.backup is not None and not dry_run and _check_resumable(plan.backup,
                                                                            tf_upgrade)
    found = _walk(plan.root, skip=tuple(path for path in (plan.backup, plan.partial) if path))
    if resuming:
        _remove_temporaries(plan, found)
    elif plan.backup is not None and not dry_run:
        _remove_backup_temporaries(plan.backup)  # a run killed as it wrote its marker
    problems = list(found.problems)
    problems += [f'{path}: a link leaving {source} (to {found.links[path]}): not followed, '
                 'not ported' for path in found.leaving if path.endswith('.py')]
    relatives = python_files(found)
    sources, encodings, digests = {}, {}, {}
    for relative in relatives:
        try:
            sources[relative], encodings[relative], digests[relative] = _read_source(
                plan.root / relative, found.files[relative], max_file_bytes)
        except _Unreadable as error:
            problems.append(f'{relative}: {error}; not ported')
    results, parse_problems = port_sources(sources, tf_upgrade)
    problems += parse_problems
    changed: Dict[str, bytes] = {}
    for path, (code, _) in results.items():
        if code != sources[path]:
            try:
                changed[path] = code.encode(encodings[path])
            except UnicodeEncodeError as error:
                problems.append(f'{path}: the ported code has {error.object[error.start]!r}, '
                                f'which its encoding {encodings[path]} cannot write; not '
                                'ported')
    files = [FileReport(path, path in changed, notes)
             for path, (code, notes) in sorted(results.items())
             if notes or path in changed]
    if plan.backup is not None and changed and not dry_run:
        _check_backup(plan, changed)
    report = PortReport(str(plan.root), str(plan.target),
                        str(plan.backup) if plan.backup is not None else '',
                        len(relatives), files, problems, dry_run,
                        [path for path in found.leaving if not path.endswith('.py')])
    if dry_run:
        return report
    if plan.existing:
        difference = _difference(plan, found, changed)
        if difference is not None:
            raise PortError(f'{destination} exists and is not empty, and is not the port of '
                            f'{source} as it is now ({difference}): give a new folder')
        report.already_done = True
    elif plan.partial is not None:
        _write_copy(plan, found, changed, report.problems)
    elif changed:
        _write_in_place(plan, changed, digests, tf_upgrade, report.problems)
    else:
        _remove_marker(plan.backup)
    return report


def _difference(plan: _Plan, found: _Tree, changed: Dict[str, bytes]) -> Optional[str]:
    """None if DST holds exactly the copy this port would write (the same command run
    again); else the first difference, for the message."""
    held = _walk(plan.target, skip=())
    for kind, ours, theirs in (('folder', found.folders, held.folders),
                               ('file', found.files, held.files),
                               ('link', found.links, held.links)):
        # Python's byte-code caches, written when the ported code ran, are not a difference.
        extra = sorted(path for path in set(theirs) - set(ours)
                       if '__pycache__' not in path.split('/'))
        if extra:
            return f'it holds the {kind} {extra[0]}, which the port would not write'
        missing = sorted(set(ours) - set(theirs))
        if missing:
            return f'it lacks the {kind} {missing[0]}'
    for relative, text in found.links.items():
        if held.links[relative] != _link_text(plan, relative, text):
            return f'the link {relative} points elsewhere'
    for relative in found.files:
        expected = changed.get(relative)
        if expected is None:
            expected = (plan.root / relative).read_bytes()
        if held.files[relative] != len(expected) or (
                (plan.target / relative).read_bytes() != expected):
            return f'{relative} differs'
    return None


class _Unreadable(ValueError):
    """A file that is not Python text the port can read."""


def _read_source(path: pathlib.Path, size: int, limit: int) -> Tuple[str, str, bytes]:
    """(text, encoding, digest of the bytes) of a Python file: UTF-8, or what its coding
    declaration says (PEP 263); written back in the same encoding. The digest tells, before
    the file is replaced, whether it was edited since it was read."""
    if size > limit:
        raise _Unreadable(f'too large ({size / 2 ** 20:.1f} MB; the limit is '
                          f'{limit / 2 ** 20:.1f} MB, see --max-file-size)')
    try:
        with open(path, 'rb') as stream:
            data = stream.read(limit + 1)
    except OSError as error:
        raise _Unreadable(f'could not be read ({error.strerror})') from error
    if len(data) > limit:
        raise _Unreadable(f'too large (it grew past {limit / 2 ** 20:.1f} MB while read)')
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        if not str(error).startswith('invalid or missing encoding declaration'):
            raise _Unreadable(f'its coding declaration is not usable ({error})') from error
        encoding = 'utf-8'  # no declaration, and the first lines are not UTF-8
    nul = data.find(0)
    if nul >= 0:
        raise _Unreadable(f'holds NUL bytes (at byte {nul}): binary data, not Python')
    try:
        return data.decode(encoding), encoding, _digest(data)
    except LookupError as error:  # a codec that is not a text encoding (rot13)
        raise _Unreadable(f'its coding declaration names no text encoding ({error})') from error
    except UnicodeDecodeError as error:
        line = data.count(b'\n', 0, error.start) + 1
        utf8 = encoding.startswith('utf-8')
        raise _Unreadable(
            f'not {"UTF-8" if utf8 else encoding} text ({error.reason} at byte {error.start}, '
            f'line {line})' + (', and no coding declaration (PEP 263) names another encoding'
                               if utf8 else ', though its coding declaration says it is')
        ) from error


def _check_resumable(backup: pathlib.Path, tf_upgrade: Optional[str]) -> bool:
    """Whether an in-place port was interrupted: then it is resumed, only with the options
    it ran with."""
    marker = backup / RUNNING_MARKER
    if not marker.exists():
        return False
    try:
        options = json.loads(marker.read_text(encoding='utf-8'))
    except (OSError, ValueError) as error:
        raise PortError(f'{marker} (left by an interrupted port) cannot be read: {error}; '
                        'remove it if the tree is as you want it') from error
    if options.get('tf_upgrade') != tf_upgrade:
        earlier = (options.get('tf_upgrade') or 'off').lower()
        raise PortError(f'an interrupted port with --tf-upgrade {earlier} left {marker}: run '
                        'the same command again to finish it, or restore the originals from '
                        f'{backup} and remove the marker')
    progress.info(f'resuming the port interrupted earlier ({marker})')
    return True


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _remove_backup_temporaries(backup: pathlib.Path) -> None:
    """The temporaries a killed in-place port left in its backup folder (even one killed as
    it wrote its marker, which leaves nothing to resume)."""
    if backup.is_dir():
        for path in backup.rglob('.*.tmp'):
            if _TEMPORARY.fullmatch(path.name):
                path.unlink()


def _remove_temporaries(plan: _Plan, found: _Tree) -> None:
    """The temporary files an interrupted in-place port left, in the tree and the backup."""
    assert plan.backup is not None, 'only an in-place port resumes'
    for relative in [path for path in found.files
                     if _TEMPORARY.fullmatch(path.rpartition('/')[2])]:
        del found.files[relative]
        (plan.root / relative).unlink()
    _remove_backup_temporaries(plan.backup)


def _check_backup(plan: _Plan, changed: Dict[str, bytes]) -> None:
    """No backup holds another version of a file about to change (an earlier port's original
    of a file edited since): it would be lost. A backup equal to the file is that file's, left
    by an interrupted run."""
    assert plan.backup is not None, 'only an in-place port has a backup'
    for path in changed:
        saved = plan.backup / path
        if saved.exists() and saved.read_bytes() != (plan.root / path).read_bytes():
            raise PortError(f'the backup folder {plan.backup} already holds another version '
                            f'of {path} (an earlier port?): move it away or give --backup-dir')


def _write_in_place(plan: _Plan, changed: Dict[str, bytes], digests: Dict[str, bytes],
                    tf_upgrade: Optional[str], problems: List[str]) -> None:
    """Each changed file's original to the backup, then the port over it; a file edited since
    it was read is left as it is now (its port would undo the edit) and reported."""
    assert plan.backup is not None, 'a plan without DST has a backup'
    marker = plan.backup / RUNNING_MARKER
    plan.backup.mkdir(parents=True, exist_ok=True)
    _write_atomically(marker, json.dumps({'tf_upgrade': tf_upgrade}).encode())
    with progress.Progress(len(changed), 'writing', unit='files', delay=1.0) as shown:
        for relative, code in changed.items():
            path = plan.root / relative
            current = path.read_bytes()
            if _digest(current) != digests[relative]:
                problems.append(f'{relative}: edited while the port ran; left as it is now, '
                                'not ported (run the same command again to port it)')
                continue
            saved = plan.backup / relative
            if not saved.exists():
                saved.parent.mkdir(parents=True, exist_ok=True)
                _write_atomically(saved, current, like=path, times=True)
            _write_atomically(path, code, like=path)
            shown.update()
    _remove_marker(plan.backup)


def _remove_marker(backup: Optional[pathlib.Path]) -> None:
    if backup is not None and (backup / RUNNING_MARKER).exists():
        (backup / RUNNING_MARKER).unlink()


def _write_atomically(path: pathlib.Path, data: bytes, like: Optional[pathlib.Path] = None,
                      times: bool = False) -> None:
    """`data` under a temporary name beside `path`, then renamed `path`: never half written.
    `like`: a file whose permissions (and with `times`, times) the new one takes."""
    with tempfile.NamedTemporaryFile('wb', dir=path.parent, suffix='.tmp', delete=False,
                                     prefix=f'.{path.name}.slimdata-port-') as temporary:
        temporary.write(data)
    try:
        if like is not None:
            (shutil.copystat if times else shutil.copymode)(like, temporary.name)
        os.replace(temporary.name, path)
    except BaseException:
        os.unlink(temporary.name)
        raise


def _write_copy(plan: _Plan, found: _Tree, changed: Dict[str, bytes],
                problems: List[str]) -> None:
    """The ported copy, built in the partial folder and renamed DST when whole."""
    partial = plan.partial
    assert partial is not None, 'a plan with DST has a partial folder'
    if partial.exists() or partial.is_symlink():
        progress.info(f'removing {partial}, the partial copy of an interrupted port')
        shutil.rmtree(partial) if partial.is_dir() and not partial.is_symlink() else (
            partial.unlink())
    partial.parent.mkdir(parents=True, exist_ok=True)
    partial.mkdir()
    try:
        for folder in found.folders:
            (partial / folder).mkdir()
        with progress.Progress(sum(found.files.values()), 'copying', unit='B',
                               unit_scale=True, delay=1.0) as shown:
            for relative, size in found.files.items():
                _copy_file(plan.root / relative, partial / relative, changed.get(relative),
                           problems, relative)
                shown.update(size)
        for relative, text in found.links.items():
            os.symlink(_link_text(plan, relative, text), partial / relative)
        for folder in reversed(found.folders):
            shutil.copystat(plan.root / folder, partial / folder)
        shutil.copystat(plan.root, partial)
        os.replace(partial, plan.target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def _copy_file(source: pathlib.Path, copy: pathlib.Path, ported: Optional[bytes],
               problems: List[str], relative: str) -> None:
    try:
        if ported is None:
            shutil.copy2(source, copy)
        else:
            copy.write_bytes(ported)
            shutil.copymode(source, copy)
    except OSError as error:
        problems.append(f'{relative}: could not be copied ({error.strerror}); not in the copy')


def _link_text(plan: _Plan, relative: str, text: str) -> str:
    """What a link of SRC points to in the copy: the same file as in SRC, or the copy of the
    same file when it is inside SRC."""
    folder = (plan.root / relative).parent
    aimed = os.path.normpath(folder / text)
    if _inside(aimed, plan.root):
        return os.path.relpath(aimed, folder) if os.path.isabs(text) else text
    return text if os.path.isabs(text) else aimed
