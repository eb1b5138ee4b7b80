"""The package's layers: one way down, the record layer without TensorFlow, no TF internals.

    slimdata.cli  ->  slimdata.datasets (datasets/)  ->  slimdata.records

The command line loads the converters and descriptors; they use the record layer; nothing
imports upwards (no converter parses arguments, the record layer knows neither). The record
layer imports no TensorFlow and nothing of the package root but its leaf modules (`version`,
`progress`, `deprecation`), so converter workers and `slimdata count|verify|index` start fast
and run without it; the project uses only TensorFlow's public API.
"""

import ast
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
RECORDS = ROOT / 'slimdata' / 'records'
PORT_FIXTURE = ROOT / 'tests' / 'port_fixture'
DATASETS = ROOT / 'datasets'
CLI = ROOT / 'slimdata' / 'cli'
TF_FREE_COMMANDS = ('count', 'verify', 'index', 'inspect', 'convert')
#: The modules of the package root the record layer may import: leaves that import nothing
#: of slimdata. (And `slimdata._tf`, TensorFlow itself, only inside functions: see
#: test_record_modules_import_tensorflow_only_inside_functions.)
RECORD_LAYER_LEAVES = ('slimdata.version', 'slimdata.progress', 'slimdata.deprecation')


def _python_files():
    for folder in ('slimdata', 'datasets', 'train_examples', 'benchmarks', 'tests'):
        # tests/port_fixture holds old TF1 code on purpose: what `slimdata port` ports.
        yield from sorted(path for path in (ROOT / folder).rglob('*.py')
                          if PORT_FIXTURE not in path.parents)


def _imported_modules(tree):
    """(module name, the function it is imported in or None) of every import in `tree`."""
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name)
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module:
                found.append((child.module, function))
            visit(child, function)

    visit(tree, None)
    return found


def _slimdata_imports(path):
    """The slimdata modules a file imports (anywhere in it), `from slimdata import x` read
    as `slimdata.x`."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(f'{node.module}.{alias.name}' if node.module == 'slimdata'
                         else node.module for alias in node.names)
    return {name for name in found if name.split('.')[0] == 'slimdata'}


@pytest.mark.parametrize('path', sorted(DATASETS.glob('*.py')), ids=lambda path: path.name)
def test_datasets_import_neither_the_command_line_nor_argparse(path):
    imported = _slimdata_imports(path)
    assert [name for name in imported if name.startswith('slimdata.cli')] == []
    assert 'argparse' not in {module for module, _ in _imported_modules(ast.parse(
        path.read_text()))}


@pytest.mark.parametrize('path', sorted(RECORDS.glob('*.py')), ids=lambda path: path.name)
def test_the_record_layer_imports_only_itself_and_leaf_modules(path):
    outside = [name for name in _slimdata_imports(path)
               if not name.startswith('slimdata.records')
               and name not in (*RECORD_LAYER_LEAVES, 'slimdata._tf')]
    assert outside == []


def test_nothing_below_the_command_line_imports_it_or_the_datasets():
    upward = {str(path.relative_to(ROOT)): sorted(
                  name for name in _slimdata_imports(path)
                  if name.startswith(('slimdata.cli', 'slimdata.datasets')))
              for path in sorted((ROOT / 'slimdata').rglob('*.py'))
              if CLI not in path.parents and path.name != '__main__.py'}
    assert {path: names for path, names in upward.items() if names} == {}


@pytest.mark.parametrize('path', sorted((ROOT / 'slimdata' / 'contrib').rglob('*.py')),
                         ids=lambda path: path.relative_to(ROOT).as_posix())
def test_contrib_imports_nothing_of_the_port(path):
    """Ported code imports slimdata.contrib at run time; the port (LibCST, its rules) is the
    tool that wrote it, and is not loaded by it."""
    port = sorted(name for name in _slimdata_imports(path)
                  if name == 'slimdata.port' or name.startswith('slimdata.port.'))
    assert port == [], f'{path.relative_to(ROOT)} imports {port}'


@pytest.mark.parametrize('leaf', RECORD_LAYER_LEAVES)
def test_the_leaf_modules_import_nothing_of_slimdata(leaf):
    path = ROOT / (leaf.replace('.', '/') + '.py')
    assert _slimdata_imports(path) == set()


def test_no_file_imports_tensorflow_internals():
    offenders = [f'{path.relative_to(ROOT)}: {module}'
                 for path in _python_files()
                 for module, _ in _imported_modules(ast.parse(path.read_text()))
                 if module.split('.')[:2] == ['tensorflow', 'python']]
    assert offenders == []


@pytest.mark.parametrize('path', sorted(RECORDS.glob('*.py')), ids=lambda path: path.name)
def test_record_modules_import_tensorflow_only_inside_functions(path):
    module_level = [module for module, function in _imported_modules(ast.parse(path.read_text()))
                    if function is None and (module.split('.')[0] in ('tensorflow', 'tf_slim')
                                             or module == 'slimdata._tf')]
    assert module_level == []


def test_importing_the_record_layer_and_tf_free_commands_loads_no_tensorflow():
    modules = [f'slimdata.records.{path.stem}' for path in sorted(RECORDS.glob('*.py'))]
    modules += [f'slimdata.cli.{name}' for name in TF_FREE_COMMANDS]
    modules += ['slimdata.cli.convert_options', *RECORD_LAYER_LEAVES]
    modules += [f'slimdata.datasets.{path.stem}' for path in sorted(DATASETS.glob('*.py'))
                if path.stem not in ('__init__', 'dataset_utils', 'dataset_factory')]
    code = (f'import sys, importlib\n'
            f'for name in {modules!r}:\n'
            f'    importlib.import_module(name)\n'
            f'    assert "tensorflow" not in sys.modules, name + " imported tensorflow"\n'
            f'from slimdata import cli\n'
            f'cli.build_parser()\n'
            f'assert "tensorflow" not in sys.modules, "building the parser imported tensorflow"')
    subprocess.run([sys.executable, '-c', code], check=True)
