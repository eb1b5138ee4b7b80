"""matplotlib.use() as matplotlib 2 ran it, in ported Python 2 files
(slimdata.port.py2.matplotlib_use)."""

import os
import subprocess
import sys

import pytest

from port_snippets import work_lines
from slimdata.port import edits, tree
from slimdata.port.py2.matplotlib_use import MatplotlibUsePass

PLOTS = ("import matplotlib as mpl\n"
         "import matplotlib\n"
         "print 'plotting'\n"
         "mpl.use('TkAgg')\n"
         "matplotlib.use('Agg', warn=False)\n"
         "matplotlib.use('Agg', False, True)\n"
         "def use(name):\n    return name\n"
         "use('TkAgg')\n")


def test_a_python_2_use_gets_matplotlib_2s_force_false():
    results, problems = tree.port_sources({'plots.py': PLOTS}, tf_upgrade=None)
    assert problems == []
    ported, notes = results['plots.py']
    lines = ported.splitlines()
    assert "mpl.use('TkAgg', force=False)" in lines
    assert "matplotlib.use('Agg', force=False)" in lines  # matplotlib 3.3 removed warn
    assert "matplotlib.use('Agg', False, True)" in lines  # force given: left
    assert "use('TkAgg')" in lines  # the file's own use()
    changed = [note.line for note in notes
               if note.kind == edits.CHANGED and 'force=False' in note.message]
    assert changed == [4, 5]


def test_a_python_3_file_is_left_alone():
    code = "import matplotlib\nmatplotlib.use('TkAgg')\nprint('plotting')\n"
    results, _ = tree.port_sources({'plots.py': code}, tf_upgrade=None)
    assert results['plots.py'][0] == code


def test_the_ported_call_runs_headless_where_the_old_one_raises(tmp_path):
    pytest.importorskip('matplotlib')
    results, _ = tree.port_sources({'plots.py': "import matplotlib.pyplot\nimport matplotlib"
                                                "\nprint 'x'\nmatplotlib.use('TkAgg')\n"},
                                   tf_upgrade=None)
    env = {key: value for key, value in os.environ.items()
           if key not in ('DISPLAY', 'WAYLAND_DISPLAY', 'MPLBACKEND')}
    old = subprocess.run([sys.executable, '-c', "import matplotlib.pyplot\nimport matplotlib\n"
                                                "matplotlib.use('TkAgg')\n"],
                         env=env, capture_output=True, text=True, check=False)
    assert old.returncode != 0 and 'headless' in old.stderr  # matplotlib 3's default
    ported = tmp_path / 'plots.py'
    ported.write_text(results['plots.py'][0])
    done = subprocess.run([sys.executable, str(ported)], env=env, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_python_s_tree_shows_the_pass_the_calls_of_use_under_any_name():
    """The pass walks only the statements where Python's tree shows a call of `use`
    (`work_lines`), under the name an import binds it to, here or in a file whose names a
    star import brings; not a word `use` in a comment or docstring."""
    setup = 'from matplotlib import use as choose\nprint "setup"\n'
    plots = ('import matplotlib\nfrom matplotlib import use as backend\nfrom setup import *\n\n\n'
             'def draw(figure):\n'
             '    """Draws `figure`: use it once."""\n'
             '    # use the default backend\n'
             '    return figure\n\n\n'
             'def headless():\n'
             "    backend('Agg')\n"
             "    choose('Agg')\n"
             "    print 'headless'\n")
    results, problems = tree.port_sources({'plots.py': plots, 'setup.py': setup},
                                          tf_upgrade=None)
    assert problems == []
    ported, notes = results['plots.py']
    assert "    backend('Agg', force=False)\n    choose('Agg', force=False)\n" in ported
    assert [note.line for note in notes if 'force=False' in note.message] == [13, 14]
    python_3 = plots.replace("print 'headless'", "print('headless')")
    assert work_lines(MatplotlibUsePass, python_3) == [13]  # `choose` is the star import's
