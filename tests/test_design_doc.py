"""docs/design.md stays true: every file, module, name, command and option it names exists,
its record-layout tables are the converters' own FEATURES, and the code cites its sections.

Nothing here imports TensorFlow: modules and names are looked up in the source tree (files,
and the names each file binds, read with `ast`), the command line's parsers are built as
`slimdata COMMAND --help` builds them, and the converters' modules are TensorFlow-free.
"""

import argparse
import ast
import functools
import importlib
import json
import re
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Set, Tuple

from slimdata import cli

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / 'docs' / 'design.md'
TEXT = DOC.read_text()

#: Folders whose files the document names by path.
TREE_FOLDERS = ('slimdata', 'datasets', 'tests', 'benchmarks', 'train_examples', 'docs')
_PATH = re.compile(r'(?<![\w./-])((?:%s)/(?:[\w-][\w.-]*/?)*)' % '|'.join(TREE_FOLDERS))
_DOTTED = re.compile(r'(?<![\w.])(slimdata(?:\.\w+)+)')
_HEADING = re.compile(r'^#+ (.+)$', re.MULTILINE)
_CITATION = re.compile(r'docs/design\.md,? "([^"]+)"')
_LAYOUT_BLOCK = re.compile(r'<!-- layout: ([\w.]+) -->\n(.*?)\n<!-- end of layout -->',
                           re.DOTALL)


# ----------------------------------------------------------------------------------------------
# Files and modules

def _named_paths():
    """The paths the document names (a sentence's full stop is not part of one)."""
    return {path.rstrip('.') for path in _PATH.findall(TEXT)}


def test_every_path_the_document_names_exists():
    named = _named_paths()
    assert named, 'the document names no file'
    missing = sorted(path for path in named if not (ROOT / path).exists())
    assert missing == []


def test_the_document_names_every_module_by_its_path():
    """A module added to the package is placed on the map (a package's __init__.py is named
    by its folder)."""
    named = _named_paths()
    modules = [path.relative_to(ROOT).as_posix() for folder in ('slimdata', 'datasets')
               for path in sorted((ROOT / folder).rglob('*.py'))]
    unnamed = [module for module in modules if module not in named and not (
        module.endswith('/__init__.py') and module[:-len('__init__.py')] in named)]
    assert unnamed == [], 'docs/design.md does not place these modules on its map'


def test_every_link_of_the_document_leads_to_a_file():
    targets = {target for target in re.findall(r'\]\(([^)#\s]+)[^)]*\)', TEXT)
               if '://' not in target}
    assert sorted(target for target in targets if not (DOC.parent / target).exists()) == []


def _module_file(dotted: str) -> Optional[Path]:
    """The source file of the module `dotted` (slimdata.datasets is datasets/), or None."""
    parts = dotted.split('.')
    if parts[:2] == ['slimdata', 'datasets']:
        path = ROOT.joinpath('datasets', *parts[2:])
    else:
        path = ROOT.joinpath('slimdata', *parts[1:])
    if path.with_suffix('.py').is_file():
        return path.with_suffix('.py')
    if (path / '__init__.py').is_file():
        return path / '__init__.py'
    return None


def _bindings(body: Sequence[ast.stmt]) -> Iterator[Tuple[str, ast.AST]]:
    """(name, the statement binding it) of the names a module or class body binds, those
    bound under `if` and `try` at that level included."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name, node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        yield name.id, node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                yield (alias.asname or alias.name).split('.')[0], node
        elif isinstance(node, (ast.If, ast.Try)):
            blocks = [node.body, node.orelse] + (
                [node.finalbody] + [handler.body for handler in node.handlers]
                if isinstance(node, ast.Try) else [])
            for block in blocks:
                yield from _bindings(block)


@functools.lru_cache(maxsize=None)
def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


def _binds(body: Sequence[ast.stmt], names: List[str]) -> bool:
    """Whether `names[0]` is bound in `body` and, if it is a class, the rest in it."""
    if not names:
        return True
    for name, node in _bindings(body):
        if name != names[0]:
            continue
        if isinstance(node, ast.ClassDef):
            return _binds(node.body, names[1:])
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and \
                node.module.split('.')[0] == 'slimdata':
            return _resolves(f'{node.module}.{".".join(names)}')
        return len(names) == 1  # a function's or a value's attributes are not followed
    return False


def _resolves(dotted: str) -> bool:
    """Whether `dotted` is a slimdata module, or a name its longest module prefix binds."""
    parts = dotted.split('.')
    for length in range(len(parts), 0, -1):
        path = _module_file('.'.join(parts[:length]))
        if path is not None:
            return _binds(_parsed(path).body, parts[length:])
    return False


def test_every_slimdata_name_the_document_names_exists():
    named = set(_DOTTED.findall(TEXT))
    assert len(named) > 20, 'the document names few dotted slimdata names'
    assert sorted(name for name in named if not _resolves(name)) == []


def test_the_name_check_finds_what_is_missing():
    """The lookup itself: what exists resolves, what does not is reported."""
    assert _resolves('slimdata.records.writer.SplitSource.size_of')
    assert _resolves('slimdata.datasets.pascalvoc.FEATURES')
    assert _resolves('slimdata.slim.data.tfexample_decoder.TFExampleDecoder')
    assert _resolves('slimdata.patch_tf_slim')
    assert not _resolves('slimdata.records.writer.no_such_function')
    assert not _resolves('slimdata.no_such_module')
    assert not _resolves('slimdata.records.writer.SplitSource.no_such_field')


# ----------------------------------------------------------------------------------------------
# The command line

def _subparsers(parser: argparse.ArgumentParser) -> dict:
    return parser._subparsers._group_actions[0].choices if parser._subparsers else {}


def _options(parser: argparse.ArgumentParser) -> Set[str]:
    return {option for action in parser._actions for option in action.option_strings}


@functools.lru_cache(maxsize=None)
def _command_parsers() -> dict:
    """'count' -> its parser, ..., and ('convert', KIND) -> each KIND's parser."""
    parsers = {}
    for module_name in cli.COMMANDS:
        command = module_name.replace('_', '-')
        parser = _subparsers(cli.build_parser(selected=module_name))[command]
        parsers[command] = parser
        for kind, kind_parser in _subparsers(parser).items():
            parsers[(command, kind)] = kind_parser
    return parsers


TOP_LEVEL_OPTIONS = _options(cli.build_parser())


def _command_lines() -> Iterator[str]:
    """The command lines the document shows: code spans and code-block lines that start
    with `slimdata `."""
    for span in re.findall(r'`([^`\n]+)`', re.sub(r'```.*?```', '', TEXT, flags=re.DOTALL)):
        if span.startswith('slimdata '):
            yield span
    for block in re.findall(r'```.*?\n(.*?)```', TEXT, flags=re.DOTALL):
        for line in block.splitlines():
            if line.strip().startswith('slimdata '):
                yield line.strip()


def _problems_of(line: str) -> List[str]:
    line = line.split(' | ')[0]  # what a pipe feeds is another program's
    words = [word.strip('[],;') for word in line.split()[1:]]
    words = words[:words.index('--')] if '--' in words else words  # Beam's options follow
    parsers = _command_parsers()
    positional = [word for word in words if word and not word.startswith('-')]
    if not positional:
        return []
    command = positional[0]
    if '|' in command:  # `slimdata count|verify ...`: several commands at once
        return [f'{line}: no command {name!r}' for name in command.split('|')
                if name not in parsers]
    if command not in parsers:
        return [f'{line}: no command {command!r}']
    chosen = [parsers[command]]
    kinds = [key for key in parsers if isinstance(key, tuple) and key[0] == command]
    if kinds:
        kind = positional[1] if len(positional) > 1 else 'KIND'
        if (command, kind) in parsers:
            chosen = [parsers[(command, kind)]]
        elif kind == 'KIND':
            chosen = [parsers[key] for key in kinds]  # an option of any KIND
        else:
            return [f'{line}: no {command} KIND {kind!r}']
    known = TOP_LEVEL_OPTIONS.union(*(_options(parser) for parser in chosen))
    return [f'{line}: no option {flag}' for flag in
            (word.split('=')[0] for word in words if word.startswith('-'))
            if flag not in known]


def test_every_command_line_the_document_shows_exists():
    lines = list(_command_lines())
    assert len(lines) > 10, 'the document shows few command lines'
    assert [problem for line in lines for problem in _problems_of(line)] == []


def test_every_option_the_document_names_alone_exists():
    every_option = TOP_LEVEL_OPTIONS.union(*(_options(parser)
                                             for parser in _command_parsers().values()))
    alone = {match.split('=')[0] for match in
             re.findall(r'`(--?[A-Za-z][\w-]*(?:=\S*)?)(?: [^`]*)?`', TEXT)}
    assert alone, 'the document names no option'
    assert sorted(alone - every_option) == []


def test_the_command_check_finds_what_is_missing():
    assert _problems_of('slimdata convert voc SRC OUT --year 2007 --split trainval') == []
    assert _problems_of('slimdata convert KIND SRC OUT --label-mode fine') == []
    assert _problems_of('slimdata verify --decode out') == []
    assert _problems_of('slimdata count|verify PATH') == []
    assert _problems_of('slimdata count|frobnicate PATH') != []
    assert _problems_of('slimdata convert voc SRC OUT --label-mode fine') != []
    assert _problems_of('slimdata verify --no-such-flag out') != []
    assert _problems_of('slimdata frobnicate out') != []


# ----------------------------------------------------------------------------------------------
# Record layouts

def render_layout(name: str) -> str:
    """The table of a converter module's FEATURES and its descriptor's items, as the
    document shows them (`python tests/test_design_doc.py MODULE` prints it). `name` is a
    module (its FEATURES) or a module's layout without a descriptor (`module.NAME_FEATURES`)."""
    try:
        module, features = importlib.import_module(name), 'FEATURES'
    except ModuleNotFoundError:
        module_name, features = name.rsplit('.', 1)
        module = importlib.import_module(module_name)
    rows = ['| key | kind | dtype | shape | default |', '|---|---|---|---|---|']
    for key, spec in getattr(module, features).items():
        if spec['kind'] == 'VarLen':
            rows.append(f'| `{key}` | VarLen | {spec["dtype"]} | any length | none |')
            continue
        default = spec['default_value']
        shown = 'none (required)' if default is None else f'`{json.dumps(default)}`'
        rows.append(f'| `{key}` | FixedLen | {spec["dtype"]} | `{json.dumps(spec["shape"])}` '
                    f'| {shown} |')
    if features == 'FEATURES':
        items = getattr(module, 'ITEMS_TO_DESCRIPTIONS', None) or module._ITEMS_TO_DESCRIPTIONS
        rows += ['', 'Descriptor items: ' + ', '.join(f'`{item}`' for item in items) + '.']
    return '\n'.join(rows)


LAYOUT_MODULES = ('slimdata.datasets.classification', 'slimdata.datasets.pascalvoc',
                  'slimdata.datasets.detection.OD_API_FEATURES',
                  'slimdata.datasets.segmentation', 'slimdata.datasets.imagenet')


def test_the_layout_tables_are_the_converters_features():
    blocks = dict(_LAYOUT_BLOCK.findall(TEXT))
    assert sorted(blocks) == sorted(LAYOUT_MODULES)
    for module_name, block in blocks.items():
        assert block.strip() == render_layout(module_name), module_name


# ----------------------------------------------------------------------------------------------
# Citations

def _python_files() -> Iterator[Path]:
    for folder in ('slimdata', 'datasets', 'tests', 'benchmarks', 'train_examples'):
        yield from sorted((ROOT / folder).rglob('*.py'))


def test_the_code_cites_sections_that_exist():
    headings = set(_HEADING.findall(TEXT))
    citations = {(str(path.relative_to(ROOT)), section) for path in _python_files()
                 for section in _CITATION.findall(path.read_text())}
    assert citations, 'no file cites docs/design.md'
    assert sorted(cited for cited in citations if cited[1] not in headings) == []


def test_no_file_cites_the_contract_outside_the_repository():
    """The original DESIGN.md is not in the repository: a citation of its sections leads
    nowhere; docs/design.md is the design document to cite."""
    offenders = [str(path.relative_to(ROOT)) for path in _python_files()
                 if path != Path(__file__).resolve() and 'DESIGN.md' in path.read_text()]
    assert offenders == []


if __name__ == '__main__':
    import sys
    for name in sys.argv[1:] or LAYOUT_MODULES:
        print(f'<!-- layout: {name} -->\n{render_layout(name)}\n<!-- end of layout -->\n')
