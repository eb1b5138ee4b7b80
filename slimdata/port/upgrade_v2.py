"""TF1 calls on TensorFlow 2, by TensorFlow's own `tf_upgrade_v2`.

`tf_upgrade_v2` ships with TensorFlow as a command-line tool and keeps comments and formatting
(it edits through `pasta`). It has two modes:

- SAFETY: `import tensorflow as tf` becomes `import tensorflow.compat.v1 as tf`, so every TF1
  call keeps its TF1 meaning. slimdata port's default: ported code runs as it ran.
- DEFAULT: each TF1 call is renamed to its TF2 name where TensorFlow judges that safe (with its
  keyword arguments fixed), else to its `tf.compat.v1` name. Closer to TF2, but it leaves some
  TF1 calls whose TF2 namesake takes other arguments (`tf.image.draw_bounding_boxes`), and
  lists many calls to check by hand.

Two of its slips are mended here. It rewrites import paths that then do not exist
(`from tensorflow.core.example import example_pb2` or `from tensorflow.python.ops import x` ->
`tensorflow.compat.v1.core...`, `tensorflow.compat.v1.python...`): every import line it
changed is resolved on the installed packages (`imports.unresolved`), and one that does not
resolve is put back as it was, its notes dropped (and reported if the original does not
resolve either). And in SAFETY mode it reports members of deprecated TF1 modules
(`tf.app.flags`) that do work through `tensorflow.compat.v1`, which are not reported.

It is run as that command, `python -m tensorflow.tools.compatibility.tf_upgrade_v2_main`, once
over a whole tree, so slimdata imports nothing of it; its detailed log becomes notes: INFO lines
are changes, WARNING lines are to check, ERROR lines are what it could not port.
"""

import pathlib
import re
import subprocess
import sys
import tempfile
from typing import Dict, List, Set, Tuple

import libcst as cst

from slimdata.port.edits import CHANGED, NOT_PORTED, TO_CHECK, Note
from slimdata.port.imports import unresolved
from slimdata.port.installed import resolve_v1

_MODULE = 'tensorflow.tools.compatibility.tf_upgrade_v2_main'
_KINDS = {'INFO': CHANGED, 'WARNING': TO_CHECK, 'ERROR': NOT_PORTED}
_PROCESSING = re.compile(r"^Processing file '(?P<path>.+)'$")
_ENTRY = re.compile(r'^(?P<line>\d+):(?P<column>\d+): (?P<level>INFO|WARNING|ERROR): '
                    r'(?P<message>.*)$')
_PARSE_FAILURE = 'ERROR: Failed to parse.'
_DEPRECATED_MEMBER = re.compile(r"Using member tf\.(?P<member>[\w.]+)\s+in deprecated module")
_V1_ALIAS = re.compile(r'^import tensorflow\.compat\.v1 as (\w+)\s*$', re.MULTILINE)


class UpgradeError(RuntimeError):
    """tf_upgrade_v2 could not be run (TensorFlow missing, or the tool failed)."""


def upgrade(sources: Dict[str, str], mode: str = 'SAFETY') -> Dict[str, Tuple[str, List[Note]]]:
    """Runs tf_upgrade_v2 in `mode` (SAFETY or DEFAULT) over `sources` (relative path -> code).

    Returns, for each path, the upgraded code and tf_upgrade_v2's notes (line numbers of the
    code given). A file tf_upgrade_v2 cannot parse comes back unchanged, with a NOT_PORTED note.
    """
    if not sources:
        return {}
    with tempfile.TemporaryDirectory(prefix='slimdata-port-') as work:
        source_tree, output_tree = pathlib.Path(work, 'in'), pathlib.Path(work, 'out')
        report_file = pathlib.Path(work, 'report.txt')
        for relative, code in sources.items():
            path = source_tree / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(code, encoding='utf-8')
        command = [sys.executable, '-m', _MODULE, '--intree', str(source_tree),
                   '--outtree', str(output_tree), '--reportfile', str(report_file),
                   '--copyotherfiles', 'False', '--no_upgrade_compat_v1_import', '--mode', mode]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0 or not report_file.exists():
            raise UpgradeError(f'tf_upgrade_v2 failed (exit status {result.returncode}): '
                               f'{result.stderr.strip()[-2000:]}')
        notes = _parse_report(report_file.read_text(encoding='utf-8'), source_tree)
        upgraded = {}
        for relative, code in sources.items():
            output = output_tree / relative
            new_code = output.read_text(encoding='utf-8') if output.exists() else code
            new_code, reverted, unresolved = _imports_put_back(code, new_code)
            file_notes = [note for note in notes.get(relative, []) if note.line not in reverted]
            file_notes += unresolved
            if mode == 'SAFETY':
                new_code = _simplify_compat(new_code)
                file_notes = [note for note in file_notes if not _works_in_v1(note)]
            upgraded[relative] = (new_code, file_notes)
        return upgraded


def _imports_put_back(before: str, after: str) -> Tuple[str, Set[int], List[Note]]:
    """`after` with each import line tf_upgrade_v2 changed into one that does not resolve
    put back as it was in `before`: (code, the lines put back, notes for those whose original
    does not resolve either). tf_upgrade_v2 edits an import in its line, so lines match; were
    they not to, the `tensorflow.compat.v1.` it added is taken out instead."""
    old_lines = before.splitlines(keepends=True)
    new_lines = after.splitlines(keepends=True)
    aligned = len(old_lines) == len(new_lines)
    reverted: Set[int] = set()
    notes: List[Note] = []
    for index, line in enumerate(new_lines):
        if (aligned and line == old_lines[index]) or unresolved(line) is None:
            continue
        original = (old_lines[index] if aligned
                    else line.replace('tensorflow.compat.v1.', 'tensorflow.'))
        if original == line:
            continue
        new_lines[index] = original
        reverted.add(index + 1)
        missing = unresolved(original)
        if missing:
            notes.append(Note(NOT_PORTED, index + 1,
                              f'{missing} does not import on the installed packages'))
    return ''.join(new_lines), reverted, notes


class _CompatSimplifier(cst.CSTTransformer):
    """`tf.compat.v1.cond` -> `tf.cond` where `tf` is `tensorflow.compat.v1` (the same object:
    compat.v1 holds compat.v1 again), as slimdata's passes spell it before SAFETY mode."""

    def __init__(self, alias: str) -> None:
        super().__init__()
        self.alias = alias

    def leave_Attribute(self, original: cst.Attribute,
                        updated: cst.Attribute) -> cst.BaseExpression:
        inner = updated.value
        if (isinstance(inner, cst.Attribute) and inner.attr.value == 'v1'
                and isinstance(inner.value, cst.Attribute) and inner.value.attr.value == 'compat'
                and isinstance(inner.value.value, cst.Name)
                and inner.value.value.value == self.alias):
            return updated.with_changes(value=inner.value.value)
        return updated


def _simplify_compat(code: str) -> str:
    alias = _V1_ALIAS.search(code)
    if alias is None or f'{alias.group(1)}.compat.v1.' not in code:
        return code
    return cst.parse_module(code).visit(_CompatSimplifier(alias.group(1))).code


def _works_in_v1(note: Note) -> bool:
    """Whether `note` reports a deprecated member that tensorflow.compat.v1 still has."""
    found = _DEPRECATED_MEMBER.search(note.message) if note.kind == NOT_PORTED else None
    return found is not None and resolve_v1(found.group('member')) is not None


def _one_line(message: str) -> str:
    """A tf_upgrade_v2 message without the escaped line breaks of the code it quotes."""
    return message.replace('\\n', '').strip()


def _parse_report(report: str, source_tree: pathlib.Path) -> Dict[str, List[Note]]:
    """Notes by relative path from the 'Detailed log' of a tf_upgrade_v2 report."""
    notes: Dict[str, List[Note]] = {}
    current = None
    _, _, detailed = report.partition('Detailed log follows:')
    for text in detailed.splitlines():
        processing = _PROCESSING.match(text)
        if processing:
            relative = pathlib.Path(processing.group('path')).relative_to(source_tree)
            current = notes.setdefault(relative.as_posix(), [])
            continue
        if current is None:
            continue
        entry = _ENTRY.match(text)
        if entry:
            current.append(Note(_KINDS[entry.group('level')], int(entry.group('line')),
                                'tf_upgrade_v2: ' + _one_line(entry.group('message'))))
        elif text.strip() == _PARSE_FAILURE:
            current.append(Note(NOT_PORTED, 1, 'tf_upgrade_v2 could not parse this file'))
        elif text.strip() and not text.startswith('-') and current:
            last = current[-1]
            if last.message.startswith('tf_upgrade_v2: ') and not text.startswith(' '):
                current[-1] = Note(last.kind, last.line, f'{last.message} {text.strip()}')
    return notes
