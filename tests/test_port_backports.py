"""contextlib2 becomes contextlib, and imp slimdata.contrib.imp, where the successor has every
name (slimdata.port.py3.backports), ported and run."""

import importlib
import sys
import warnings

from port_snippets import port_and_run
from slimdata.contrib import imp as slimdata_imp
from slimdata.port import tree


def test_contextlib2_becomes_contextlib_when_it_has_every_name():
    ported, notes, namespace = port_and_run(
        'import contextlib2\n'
        'with contextlib2.ExitStack() as stack:\n'
        '    closed = []\n'
        '    stack.callback(closed.append, 1)\n'
        'with contextlib2.suppress(KeyError):\n'
        '    {}["x"]\n')
    assert ported.startswith('import contextlib as contextlib2\n')
    assert namespace['closed'] == [1]


def test_contextlib2_kept_and_reported_for_a_name_contextlib_lacks():
    code = 'import contextlib2\nstack = contextlib2.ContextStack\n'
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    ported, notes = results['m.py']
    assert ported == code
    assert [note.kind for note in notes] == ['not ported']
    assert 'ContextStack' in notes[0].message


def _real_imp():
    """Python's own imp module (3.11 and before), the reference, or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', DeprecationWarning)
            return importlib.import_module('imp')
    except ImportError:
        return None


def test_imp_becomes_slimdata_contrib_imp_and_loads_as_imp_did(tmp_path, monkeypatch):
    config = tmp_path / 'settings.cfg'  # imp.load_source took any suffix
    config.write_text('import sys\nRUNS = getattr(sys.modules[__name__], "RUNS", 0) + 1\n')
    ported, notes, namespace = port_and_run(
        'import imp\n\n\n'
        'def settings(path):\n'
        "    return imp.load_source('slimdata_test_settings', path)\n\n\n"
        'def fresh(name):\n'
        '    return imp.new_module(name)\n')
    assert ported.startswith('import slimdata.contrib.imp as imp\n')
    assert [note.line for note in notes] == [1]
    monkeypatch.delitem(sys.modules, 'slimdata_test_settings', raising=False)
    first = namespace['settings'](str(config))
    again = namespace['settings'](str(config))
    # imp ran the file again in the module already loaded: the same module, RUNS 2.
    observed = (first is again, again.RUNS, sys.modules['slimdata_test_settings'] is again,
                again.__file__ == str(config), type(namespace['fresh']('m')).__name__)
    assert observed == (True, 2, True, True, 'module')
    real = _real_imp()
    if real is not None:  # the same with Python's own imp
        del sys.modules['slimdata_test_settings']
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', DeprecationWarning)
            first = real.load_source('slimdata_test_settings', str(config))
            again = real.load_source('slimdata_test_settings', str(config))
        assert (first is again, again.RUNS, sys.modules['slimdata_test_settings'] is again,
                again.__file__ == str(config), type(real.new_module('m')).__name__) == observed


def test_a_module_whose_code_raises_is_not_left_in_sys_modules(tmp_path):
    broken = tmp_path / 'broken.py'
    broken.write_text('raise RuntimeError("no")\n')
    try:
        slimdata_imp.load_source('slimdata_test_broken', str(broken))
    except RuntimeError:
        pass
    else:
        raise AssertionError('the error of the module was not raised')
    assert 'slimdata_test_broken' not in sys.modules


def test_load_dynamic_loads_an_extension_module(monkeypatch):
    import _bisect
    monkeypatch.delitem(sys.modules, '_bisect')
    module = slimdata_imp.load_dynamic('_bisect', _bisect.__file__)
    assert module.bisect_left([1, 2, 3], 2) == 1 and sys.modules['_bisect'] is module


def test_from_imp_import_reload_and_a_name_the_successor_lacks():
    ported, _, namespace = port_and_run('from imp import reload\nimport json\n'
                                        'json = reload(json)\n')
    assert ported.startswith('from slimdata.contrib.imp import reload\n')
    assert namespace['json'].dumps([1]) == '[1]'
    code = 'import imp\nfound = imp.find_module\n'
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    ported, notes = results['m.py']
    assert ported == code
    assert [(note.kind, note.line) for note in notes] == [('not ported', 1)]
    assert 'imp.find_module is not in slimdata.contrib.imp' in notes[0].message


def test_a_module_of_the_tree_named_imp_is_left_alone():
    sources = {'imp.py': 'def load_source(*args):\n    return args\n',
               'main.py': 'import imp\nx = imp.load_source(1)\n'}
    results, _ = tree.port_sources(sources, tf_upgrade=None)
    assert results['main.py'] == (sources['main.py'], [])
