"""`yaml.load` without a Loader gets PyYAML 5's FullLoader (slimdata.port.py3.yaml_load),
ported and run against PyYAML's own reading of the same document."""

import io

import pytest

from port_snippets import port, port_and_run
from slimdata.port import tree

yaml = pytest.importorskip('yaml')

CONFIG = 'TRAIN:\n  SCALES: [600]\n  FLIPPED: true\nEXP_DIR: default\n'


def test_load_without_a_loader_reads_as_pyyaml_5_did():
    ported, notes, namespace = port_and_run(
        'import yaml\n\n\n'
        'def cfg_from_file(stream):\n'
        '    return yaml.load(stream)\n')
    assert 'yaml.load(stream, Loader=yaml.FullLoader)' in ported
    assert [note.line for note in notes] == [5]
    assert namespace['cfg_from_file'](io.StringIO(CONFIG)) == yaml.safe_load(CONFIG)
    with pytest.raises(TypeError):  # what the original does on PyYAML 6
        yaml.load(io.StringIO(CONFIG))  # noqa: S506


def test_a_load_imported_by_name_and_loads_with_a_loader():
    ported, _, namespace = port_and_run('from yaml import load\nvalue = load("a: 1")\n')
    assert 'import yaml\n' in ported and 'load("a: 1", Loader=yaml.FullLoader)' in ported
    assert namespace['value'] == {'a': 1}
    kept = ('import yaml\nvalue = yaml.load("a: 1", Loader=yaml.SafeLoader)\n'
            'other = yaml.load("a: 1", yaml.SafeLoader)\n')
    assert port(kept) == (kept, [])


def test_an_import_after_a_form_feed_is_read_on_its_own_line():
    """A form feed on a line of its own (`str.splitlines` splits there, Python does not) once
    shifted the lines the passes read their bindings from: `Y` of `import yaml as Y` went
    unseen, and its `load` unported."""
    code = 'x = 1\n\x0c\nimport yaml as Y\nz = 3\ncfg = Y.load(open("c"))\n'
    results, problems = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert problems == []
    assert results['m.py'][0] == code.replace('open("c"))', 'open("c"), Loader=Y.FullLoader)')
    assert [note.line for note in results['m.py'][1]] == [5]
