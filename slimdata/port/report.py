"""The report of `slimdata port`: every change and every line not ported, by file and line.

Lines are numbered in the ported files (`lines.line_map` carries each pass's numbers there).
"""

import dataclasses
from typing import List

from slimdata import progress
from slimdata.port.edits import CHANGED, NOT_PORTED, TO_CHECK, Note

_ORDER = {CHANGED: 0, NOT_PORTED: 1, TO_CHECK: 2}


@dataclasses.dataclass
class FileReport:
    """What happened to one file: `notes` name lines of the ported file, in line order (the
    text report and the JSON one alike)."""
    path: str
    changed: bool
    notes: List[Note]

    def __post_init__(self) -> None:
        self.notes = sorted(self.notes, key=lambda note: (note.line, _ORDER[note.kind]))


@dataclasses.dataclass
class PortReport:
    """What `slimdata port` did to a tree.

    `problems`: files not ported (unreadable, unparsable, links leaving the tree) and other
    failures, one line each naming the file. `links_not_followed`: links to folders or data
    outside the tree, kept as links.
    """
    source: str
    destination: str
    backup: str
    files_scanned: int
    files: List[FileReport]
    problems: List[str]
    dry_run: bool = False
    links_not_followed: List[str] = dataclasses.field(default_factory=list)
    #: DST already held this port of SRC (a second run of the same command): nothing written.
    already_done: bool = False

    def count(self, kind: str) -> int:
        return sum(1 for file in self.files for note in file.notes if note.kind == kind)

    @property
    def changed_files(self) -> List[FileReport]:
        return [file for file in self.files if file.changed]

    def format(self) -> str:
        """The report as text: a summary, then per file its notes, then what was not ported."""
        where = ('(dry run: nothing written)' if self.dry_run
                 else f'-> {self.destination} (it already holds this port: nothing written)'
                 if self.already_done
                 else f'-> {self.destination}' if self.destination != self.source
                 else f'in place (originals in {self.backup})')
        lines = [f'slimdata port {self.source} {where}',
                 f'{self.files_scanned} Python files, {len(self.changed_files)} changed: '
                 f'{self.count(CHANGED)} changes, {self.count(NOT_PORTED)} lines not ported, '
                 f'{self.count(TO_CHECK)} to check (line numbers of the ported files)']
        for file in self.files:
            lines.append('')
            lines.append(f'{file.path}' + ('' if file.changed else ' (unchanged)'))
            for note in file.notes:
                lines.append(f'  {note.line:>5}  {note.kind:<10}  {note.message}')
        not_ported = [(file.path, note) for file in self.files for note in file.notes
                      if note.kind == NOT_PORTED]
        if not_ported:
            lines += ['', 'Not ported (edit these by hand):']
            lines += [f'  {path}:{note.line}: {note.message}' for path, note in not_ported]
        if self.links_not_followed:
            lines += ['', 'Links leaving the tree (not followed; kept as links):']
            lines += [f'  {path}' for path in self.links_not_followed]
        if self.problems:
            lines += ['', 'Problems:'] + [f'  {problem}' for problem in self.problems]
        # File names and the code quoted in notes come from the tree: a newline or an ESC in
        # them must neither split a line of the report nor drive the terminal.
        return '\n'.join(progress.printable(line) for line in lines) + '\n'

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)
