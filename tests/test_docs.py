"""The README and docs/ stay true: every ```sh and ```python block runs as written (with
generated data, in a temporary folder; a block that cannot is marked `<!-- not run: why -->`
and listed as a skip), docs/converters.md's and docs/troubleshooting.md's options, functions
and test files exist, and the damage matrix shown is the one its test checks."""

import argparse
import dataclasses
import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import pytest

from slimdata import cli
from slimdata.cli import convert

DOCS = Path(__file__).resolve().parent.parent / 'docs'
ROOT = DOCS.parent
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


def test_the_dataset_catalogue_names_every_dataset_get_dataset_knows():
    """The README links the table of docs/converters.md "Reading them back" as the catalogue."""
    from slimdata.datasets import dataset_factory
    text = (DOCS / 'converters.md').read_text().split('## Reading them back')[1]
    table = text[text.index('| name | items |'):].split('\n\n')[0]
    named = set(re.findall(r'^\| ([^|]+) \|', table, re.MULTILINE))
    names = {name for cell in named for name in re.findall(r'`(\w+)`', cell)}
    assert names == set(dataset_factory.DATASETS_MAP)
    assert 'docs/converters.md#reading-them-back' in (ROOT / 'README.md').read_text()


@pytest.mark.parametrize('page', ['converters.md', 'troubleshooting.md'])
def test_no_page_uses_the_old_names(page):
    text = (DOCS / page).read_text().split('## Renamed names')[0]  # but where it says so
    old = re.findall(r'--workers \d|workers=\d|pascalvoc\.convert\(|train_shards=', text)
    assert old == []


# ----------------------------------------------------------------------------------------------
# Every ```sh and ```python block of the README and docs/*.md runs as written

PAGES = [ROOT / 'README.md'] + sorted(DOCS.glob('*.md'))
RUN_LANGUAGES = ('sh', 'python')
#: Written on the line before a block that cannot run in a test, with the reason.
NOT_RUN = re.compile(r'<!-- not run: (.+?) -->')
#: Written on the line before a block whose last command is meant to exit with N.
EXITS = re.compile(r'<!-- exits (\d+): .+? -->')
BLOCK_TIMEOUT = 900  # a hang guard only: the longest block trains for 300 steps


@dataclasses.dataclass
class Block:
    """A fenced code block of a page.

    Attributes:
      page: the Markdown file.
      line: the line of its opening fence (1-based).
      language: what follows the fence (sh, python, or '').
      code: its text.
      not_run: why it is not run (its `<!-- not run: ... -->` comment), or None.
      status: the exit status it is meant to end with (`<!-- exits N: ... -->`).
    """
    page: Path
    line: int
    language: str
    code: str
    not_run: Optional[str] = None
    status: int = 0

    @property
    def where(self) -> str:
        return f'{self.page.relative_to(ROOT)}:{self.line}'


def code_blocks(page: Path) -> List[Block]:
    """The fenced blocks of `page` that start in its first column, in order, with the
    comment on the line before each (blank lines between them allowed)."""
    blocks: List[Block] = []
    lines = page.read_text().splitlines()
    comment, current = '', None
    for number, text in enumerate(lines, 1):
        if current is not None:
            if text.startswith('```'):
                blocks.append(current)
                current, comment = None, ''
            else:
                current.code += text + '\n'
        elif text.startswith('```'):
            not_run, exits = NOT_RUN.search(comment), EXITS.search(comment)
            current = Block(page, number, text[3:].strip(), '',
                            not_run.group(1) if not_run else None,
                            int(exits.group(1)) if exits else 0)
        elif text.strip():
            comment = text
    assert current is None, f'{page.relative_to(ROOT)}:{current.line}: a block never closed'
    return blocks


def runnable_blocks(page: Path) -> List[Block]:
    return [block for block in code_blocks(page) if block.language in RUN_LANGUAGES]


#: A block that converts into out/voc2007 itself (the world must not have done it before).
CONVERTS_VOC2007 = re.compile(r'convert.*\Wout/voc2007\b')


def build_world(folder: Path, blocks: List[Block]) -> None:
    """What the pages' snippets assume is there, generated small: a VOCdevkit (VOC2007
    detection with trainval and test, VOC2012 segmentation); it converted to
    demo_out/records/voc2007 (what `make demo` leaves) and, unless one of `blocks` does it,
    to out/voc2007; MNIST converted to out/mnist and copied as another tool's old_records/;
    a YOLO export (Roboflow's layout) in my_yolo_export/ and a labelImg folder of classes
    mask and no-mask (XMLs beside their images) in my_labelimg_folder/, and VOC's folders
    without ImageSets (a CVAT export) in my_cvat_export/;
    the training examples, docs/show/ for the pictures, and .venv: the virtualenv running
    this test."""
    from slimdata.datasets import classification, pascalvoc, synthetic
    from test_classification import build_mnist
    from test_yolo import build_tree as build_yolo

    devkit = str(folder / 'VOCdevkit')
    synthetic.make_voc_tree(devkit, num_images=16, image_size=(96, 72),
                            splits={'train': 0.5, 'val': 0.25, 'test': 0.25})
    synthetic.make_voc_seg_tree(devkit, num_images=8, image_size=(96, 72))
    outputs = ['demo_out/records/voc2007'] + (
        [] if any(CONVERTS_VOC2007.search(block.code) for block in blocks) else ['out/voc2007'])
    for output in outputs:
        pascalvoc.convert_voc(devkit, str(folder / output), '2007', ['trainval', 'test'])
    build_mnist(str(folder / 'mnist_idx'))
    classification.convert_mnist_idx(str(folder / 'mnist_idx'), str(folder / 'out/mnist'))
    (folder / 'old_records').mkdir()
    for number, shard in enumerate(sorted((folder / 'out/mnist').glob('train-*.tfrecord'))):
        shutil.copy(shard, folder / f'old_records/mnist_train_{number:03d}.tfrecord')
    build_yolo(folder / 'my_yolo_export')  # "an export of your own" (README, own-data.md)
    _labelimg_folder(Path(devkit) / 'VOC2007', folder / 'my_labelimg_folder')
    for part in ('Annotations', 'JPEGImages'):  # a CVAT export: VOC's folders, no ImageSets
        shutil.copytree(Path(devkit) / 'VOC2007' / part, folder / 'my_cvat_export' / part)
    (folder / 'docs/show').mkdir(parents=True)
    (folder / 'train_examples').symlink_to(ROOT / 'train_examples')
    (folder / '.venv').symlink_to(sys.prefix)


def _labelimg_folder(voc: Path, folder: Path) -> None:
    """The generated VOC images with their XMLs side by side, as labelImg leaves them, each
    object renamed mask or no-mask (a user's own classes)."""
    import xml.etree.ElementTree as ElementTree
    folder.mkdir()
    for number, xml in enumerate(sorted((voc / 'Annotations').glob('*.xml'))):
        tree = ElementTree.parse(xml)
        for index, name in enumerate(tree.getroot().iterfind('object/name')):
            name.text = ('mask', 'no-mask')[(number + index) % 2]
        tree.write(folder / xml.name)
        shutil.copy(voc / 'JPEGImages' / f'{xml.stem}.jpg', folder)


def run_block(block: Block, folder: Path) -> subprocess.CompletedProcess:
    """Runs `block` in `folder` as a reader would: sh with bash (stopping at the first
    failing command), python as a script; the virtualenv's programs first on PATH."""
    env = dict(os.environ, PATH=os.pathsep.join([os.path.dirname(sys.executable),
                                                 os.environ.get('PATH', '')]))
    command = (['bash', '-e', '-o', 'pipefail', '-c', block.code] if block.language == 'sh'
               else [sys.executable, '-c', block.code])
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True,
                          timeout=BLOCK_TIMEOUT)


def test_code_blocks_are_found_with_their_lines_and_comments(tmp_path):
    page = tmp_path / 'page.md'
    page.write_text('# t\n\n```sh\necho a\n```\n<!-- not run: needs a GPU -->\n\n```python\n'
                    'x = 1\n```\n<!-- exits 1: a cell is marked -->\n```sh\nfalse\n```\n'
                    '```\noutput\n```\n')
    blocks = code_blocks(page)
    assert [(b.line, b.language, b.code, b.not_run, b.status) for b in blocks] == [
        (3, 'sh', 'echo a\n', None, 0), (8, 'python', 'x = 1\n', 'needs a GPU', 0),
        (12, 'sh', 'false\n', None, 1), (15, '', 'output\n', None, 0)]
    assert run_block(blocks[2], tmp_path).returncode == 1  # sh stops at a failing command


@pytest.mark.slow
@pytest.mark.parametrize('page', PAGES, ids=lambda page: page.name)
def test_every_block_of_the_page_runs_as_written(page, tmp_path):
    """The page's blocks run in order in one folder, as a reader goes down the page."""
    blocks = [block for block in runnable_blocks(page) if block.not_run is None]
    if not blocks:
        pytest.skip(f'{page.name}: no block to run')
    build_world(tmp_path, blocks)
    for block in blocks:
        run = run_block(block, tmp_path)
        assert run.returncode == block.status, (
            f'{block.where}: the ```{block.language} block exited {run.returncode} (expected '
            f'{block.status})\n--- stdout\n{run.stdout[-3000:]}\n--- stderr\n'
            f'{run.stderr[-3000:]}')


NOT_RUN_BLOCKS = [block for page in PAGES for block in runnable_blocks(page) if block.not_run]


@pytest.mark.parametrize('block', NOT_RUN_BLOCKS, ids=lambda block: block.where)
def test_blocks_not_run_are_listed_with_their_reason(block):
    """Each block marked `not run` is a skip of its own (pytest -rs lists them)."""
    assert len(block.not_run) > 10, f'{block.where}: say why the block cannot run'
    pytest.skip(f'{block.where} not run: {block.not_run}')
