"""A tree's modules ran under Python 2 with the files that import them (slimdata.port.
python2_imports): seglink's `datasets/dataset_utils.py` shows no Python 2 of its own, but
its `str` values were bytes in the Python 2 program that imported it."""

import subprocess
import sys

from slimdata.port import python2, tree
from slimdata.port.python2_imports import python_2_by_imports

CONVERTER = '''from datasets import dataset_utils

name = 'image_0.jpg'
print dataset_utils.bytes_feature(name).bytes_list.value[0]
'''
UTILS = '''import tensorflow as tf
from datasets.helpers import as_list


def bytes_feature(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=as_list(value)))
'''
HELPERS = '''def as_list(value):
    return value if isinstance(value, list) else [value]
'''
PYTHON_3_TOOL = '''import tensorflow as tf


def bytes_feature(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))
'''


def test_a_module_a_python_2_program_imports_is_ported_as_python_2(tmp_path):
    """Without the imports, dataset_utils.py would be left as Python 3 code and the converter
    would fail as seglink's did ("expected bytes, str found"); the ported program runs and
    stores the name's UTF-8 bytes, as Python 2 did. A Python 3 module no Python 2 file imports
    is left alone."""
    sources = {'convert.py': CONVERTER, 'datasets/__init__.py': '',
               'datasets/dataset_utils.py': UTILS, 'datasets/helpers.py': HELPERS,
               'tools/export.py': PYTHON_3_TOOL}
    results, problems = tree.port_sources(sources, tf_upgrade=None)
    assert problems == []
    utils, notes = results['datasets/dataset_utils.py']
    assert 'BytesList(value=to_bytes(as_list(value)))' in utils
    assert [(note.line, note.message) for note in notes if note.line == 1] == [
        (1, 'ported as Python 2 code, though nothing in it shows Python 2: convert.py '
            '(Python 2) imports datasets/dataset_utils.py')]
    assert results['tools/export.py'] == (PYTHON_3_TOOL, [])
    for path, (code, _) in results.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(code)
    done = subprocess.run([sys.executable, 'convert.py'], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "b'image_0.jpg'"


def _marked(sources):
    return python_2_by_imports(sources, {path for path, code in sources.items()
                                         if python2.shows_python_2(code)})


def test_what_imports_what_and_in_which_direction():
    """Importers of a Python 2 file could not run under Python 3; what they import ran in
    their interpreter; a module a Python 2 file does not reach is not marked, even when a
    Python 3 file imports both."""
    py2 = 'print "x"\n'
    marked = _marked({
        'a/main.py': py2 + 'import sibling\nfrom pkg.sub import leaf\n',  # implicit relative
        'a/sibling.py': 'from . import near\n',
        'a/near.py': '',
        'pkg/__init__.py': '', 'pkg/sub/__init__.py': '', 'pkg/sub/leaf.py': 'x = 1\n',
        'runner.py': 'import a.main as entry, os\n',  # imports a Python 2 file
        'shared.py': 'y = 2\n',
        'app3.py': 'import shared\nimport runner\n',  # imports runner: runs Python 2's code
        'other/sibling.py': 'z = 3\n',  # another `sibling`: not the one main.py imports
        'lone.py': 'import shared\n',  # imports nothing Python 2
    })
    assert sorted(marked) == ['a/near.py', 'a/sibling.py', 'app3.py', 'pkg/__init__.py',
                              'pkg/sub/__init__.py', 'pkg/sub/leaf.py', 'runner.py',
                              'shared.py']  # importing pkg.sub.leaf runs the packages' too
    assert marked['a/near.py'] == ('a/main.py (Python 2) imports a/sibling.py, which imports '
                                   'a/near.py')
    assert marked['runner.py'] == 'a/main.py (Python 2) is imported by runner.py'


def test_a_single_name_not_beside_the_file_is_looked_up_at_the_root_only():
    py2 = 'print "x"\n'
    assert _marked({'tools/run.py': py2 + 'import utils\n', 'nets/utils.py': ''}) == {}
    assert list(_marked({'tools/run.py': py2 + 'import utils\n', 'utils.py': ''})) == [
        'utils.py']
    assert list(_marked({'run.py': py2 + 'from nets import (utils,\n  other)\n',
                         'nets/utils.py': '', 'nets/other.py': ''})) == ['nets/utils.py']


def test_a_module_ported_as_python_2_but_left_as_it_was_has_no_change_noted():
    """FastMaskRCNN's report headed such files "(unchanged)" and counted, among its changes,
    the line saying they were read as Python 2: how a file was read is no change."""
    sources = {'main.py': 'import helper\nprint "x"\n',
               'helper.py': 'VALUE = 1\n',
               'divides.py': 'import main\nhalf = 3 / 2\n'}
    results, _ = tree.port_sources(sources, tf_upgrade=None)
    assert results['helper.py'] == ('VALUE = 1\n', [])
    code, notes = results['divides.py']
    assert code != sources['divides.py']  # 3 / 2 floors, as in Python 2
    assert any('ported as Python 2 code' in note.message for note in notes)
