"""Names a file gets from a star import of another file of the tree
(slimdata.port.star_imports), and the passes reading them."""

import subprocess
import sys

from slimdata.port import edits, tree
from slimdata.port.star_imports import star_imported_names

TREE = {
    'hyper_parameters.py': 'from __future__ import print_function\nimport tensorflow as tf\n'
                           'import os.path\n_private = 1\n',
    'resnet.py': 'import numpy as np\nfrom hyper_parameters import *\n'
                 'from matplotlib import pyplot as plt, cm\nimport cv2 as _cv2\n'
                 'try:\n    import cPickle as pickle\nexcept ImportError:\n    import pickle\n',
    'train.py': 'from resnet import *\n\nx = np.float(3)\n',
    'listed.py': "import numpy as np\n__all__ = ['f']\n",
    'uses_listed.py': 'from listed import *\n',
    'other_np.py': 'import other as np\n',
    'clash.py': 'from resnet import *\nfrom other_np import *\n',
    'loop_a.py': 'import json\nfrom loop_b import *\n',
    'loop_b.py': 'import csv\nfrom loop_a import *\n',
    'package/__init__.py': 'import yaml\n',
    'from_package.py': 'from package import *\n',
    'package/util.py': 'import numpy as np\n',
    'package/model.py': 'from .util import *\n',
    'package/implicit.py': 'from util import *\n',  # Python 2's implicit relative import
}


def test_the_names_of_star_imports_through_the_tree():
    found = star_imported_names(TREE)
    resnet = {'np': 'numpy', 'tf': 'tensorflow', 'os': 'os', 'plt': 'matplotlib.pyplot',
              'cm': 'matplotlib.cm'}
    assert found['train.py'] == resnet  # through resnet's own star import; not a
    # `from __future__` feature, a private name or a conditional import
    assert found['resnet.py'] == {'tf': 'tensorflow', 'os': 'os'}
    assert 'uses_listed.py' not in found  # __all__ lists what it exports
    assert found['clash.py'] == {name: qualified for name, qualified in resnet.items()
                                 if name != 'np'}  # two modules bind np differently
    assert found['loop_a.py'] == {'csv': 'csv'} and found['loop_b.py'] == {'json': 'json'}
    assert found['package/model.py'] == found['package/implicit.py'] == {'np': 'numpy'}
    assert found['from_package.py'] == {'yaml': 'yaml'}  # its __init__.py
    assert 'hyper_parameters.py' not in found


PROGRAM = {
    'helpers.py': 'import numpy as np\n',
    'train.py': ('from helpers import *\n\n\ndef scale(values, np=None):\n'
                 '    return np.float if np else 2\n\n\n'
                 'print(np.asarray([1.5]).astype(np.float).dtype, scale([1]))\n'),
}


def test_a_name_from_a_star_import_is_ported_where_the_file_binds_it_nowhere(tmp_path):
    results, problems = tree.port_sources(PROGRAM, tf_upgrade=None)
    assert problems == []
    ported, notes = results['train.py']
    assert '.astype(float).dtype' in ported
    assert 'return np.float if np else 2' in ported  # np is the parameter there
    assert [(note.kind, note.line) for note in notes] == [(edits.CHANGED, 8)]
    for path, code in PROGRAM.items():
        (tmp_path / path).write_text(code)
    original = subprocess.run([sys.executable, 'train.py'], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
    assert original.returncode != 0 and "has no attribute 'float'" in original.stderr
    (tmp_path / 'train.py').write_text(ported)
    done = subprocess.run([sys.executable, 'train.py'], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == 'float64 2\n'
