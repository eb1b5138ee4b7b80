"""docs/converters.md and docs/troubleshooting.md stay true: the options, functions and test
files they name exist, and the damage matrix they show is the one its test checks."""

import argparse
import importlib
import re
from pathlib import Path

import pytest

from slimdata import cli
from slimdata.cli import convert

DOCS = Path(__file__).resolve().parent.parent / 'docs'
TESTS = Path(__file__).resolve().parent


def _convert_options():
    """Every option string of every `slimdata convert KIND`, hidden ones included."""
    parser = cli.build_parser(selected='convert')
    options = set()
    for action in parser._subparsers._group_actions:          # the commands
        convert_parser = action.choices['convert']
        for kinds in convert_parser._subparsers._group_actions:  # the KINDs
            for kind_parser in kinds.choices.values():
                for option in kind_parser._actions:
                    if option.help != argparse.SUPPRESS:
                        options.update(option.option_strings)
    return options


def test_every_option_the_converter_page_names_exists():
    named = set(re.findall(r'(?<![\w-])(--[a-z][a-z_-]+)',
                           (DOCS / 'converters.md').read_text()))
    beam_options = {'--project', '--region', '--temp_location', '--setup_file',
                    '--flink_master', '--environment_type', '--runner'}
    deprecated = {'--workers', '--validation-shards'}
    assert named - _convert_options() - beam_options - deprecated == set()


def test_every_converter_function_the_page_names_exists():
    text = (DOCS / 'converters.md').read_text()
    for kind, converter in convert.CONVERTERS.items():
        function = convert.converter_function(kind)
        assert function in text, function
        module = importlib.import_module(f'slimdata.datasets.{converter.module}')
        assert callable(getattr(module, function))


def test_every_test_file_the_troubleshooting_page_names_exists():
    named = set(re.findall(r'(test_\w+\.py)', (DOCS / 'troubleshooting.md').read_text()))
    assert named and [name for name in sorted(named) if not (TESTS / name).exists()] == []


def test_the_troubleshooting_page_shows_the_damage_matrix():
    from test_damage_matrix import render_matrix
    text = (DOCS / 'troubleshooting.md').read_text()
    start = text.index('<!-- damage matrix: tests/test_damage_matrix.py -->')
    end = text.index('<!-- end of damage matrix -->')
    assert text[start:end].split('\n', 1)[1].strip() == render_matrix()


@pytest.mark.parametrize('page', ['converters.md', 'troubleshooting.md'])
def test_no_page_uses_the_old_names(page):
    text = (DOCS / page).read_text().split('## Renamed names')[0]  # but where it says so
    old = re.findall(r'--workers \d|workers=\d|pascalvoc\.convert\(|train_shards=', text)
    assert old == []
