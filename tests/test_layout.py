"""The package's layers: the record layer imports no TensorFlow, nothing imports TF internals.

DESIGN.md §1: `slimdata.records` (TFRecord files, Examples, the writer, dataset_info.json)
imports no TensorFlow, so converter workers and `slimdata count|verify|index` start fast and
run without it; the project uses only TensorFlow's public API.
"""

import ast
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
RECORDS = ROOT / 'slimdata' / 'records'
PORT_FIXTURE = ROOT / 'tests' / 'port_fixture'
TF_FREE_COMMANDS = ('count', 'verify', 'index')


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
    code = (f'import sys, importlib\n'
            f'for name in {modules!r}:\n'
            f'    importlib.import_module(name)\n'
            f'    assert "tensorflow" not in sys.modules, name + " imported tensorflow"\n'
            f'from slimdata import cli\n'
            f'cli.build_parser()\n'
            f'assert "tensorflow" not in sys.modules, "building the parser imported tensorflow"')
    subprocess.run([sys.executable, '-c', code], check=True)
