"""matplotlib.use() as matplotlib 2 ran it, in ported Python 2 files
(slimdata.port.py2.matplotlib_use)."""

import os
import subprocess
import sys

import pytest

from slimdata.port import edits, tree

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
