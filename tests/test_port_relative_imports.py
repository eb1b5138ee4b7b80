"""Python 2's implicit relative imports made explicit
(slimdata.port.py3.relative_imports), ported and run."""

import subprocess
import sys

from slimdata.port import tree


def test_implicit_relative_imports_of_a_package_init_run(tmp_path):
    sources = {'pkg/__init__.py': 'import fsns\nfrom sub import thing\nimport os\n',
               'pkg/fsns.py': 'import fsns_helper\nvalue = fsns_helper.one\n',
               'pkg/fsns_helper.py': 'one = 1\n', 'pkg/sub/__init__.py': 'thing = 2\n',
               'other/__init__.py': 'from __future__ import absolute_import\nimport helper\n',
               'other/helper.py': ''}
    results, problems = tree.port_sources(sources, tf_upgrade=None)
    assert problems == []
    assert results['pkg/__init__.py'][0] == ('from . import fsns\nfrom .sub import thing\n'
                                             'import os\n')
    assert results['other/__init__.py'][0] == sources['other/__init__.py']  # absolute_import
    again, _ = tree.port_sources({path: code for path, (code, _) in results.items()},
                                 tf_upgrade=None)
    assert {path: code for path, (code, _) in again.items()} == {
        path: code for path, (code, _) in results.items()}  # a second port changes nothing
    for path, (code, _) in results.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(code)
    assert results['pkg/fsns.py'][0].startswith(
        'if __package__:\n    from . import fsns_helper\nelse:\n    import fsns_helper\n')
    done = subprocess.run([sys.executable, '-c', 'import pkg; print(pkg.fsns.value, pkg.thing)'],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == '1 2', done.stderr
    # The module also runs as a script from its folder, where its sibling is top-level.
    done = subprocess.run([sys.executable, '-c', 'import fsns; print(fsns.value)'],
                          cwd=tmp_path / 'pkg', capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == '1', done.stderr
