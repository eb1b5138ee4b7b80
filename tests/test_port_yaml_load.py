"""`yaml.load` without a Loader gets PyYAML 5's FullLoader (slimdata.port.py3.yaml_load),
ported and run against PyYAML's own reading of the same document."""

import io

import pytest

from port_snippets import port, port_and_run

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
