"""The port's pipeline: its stages in order, each run where its trigger says, and a pass that
fails on one file reported without ending the run."""

import libcst as cst
import pytest

from slimdata import cli
from slimdata.port import edits, pipeline
from slimdata.port.edits import PortTransformer


class _Broken(PortTransformer):
    """A pass with a bug: it raises on every file holding `x`."""

    NAME = 'broken'

    @classmethod
    def has_work(cls, code, context):
        return 'x' in code

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        raise KeyError('a bug')


@pytest.fixture
def broken_pass(monkeypatch):
    monkeypatch.setattr(pipeline, 'STAGES', (*pipeline.STAGES, _Broken))


def test_a_pass_that_raises_leaves_its_file_as_is_and_the_run_goes_on(broken_pass):
    sources = {'a.py': 'x = 1\n', 'b.py': 'import tf_slim as slim\ny = slim.dataset.Dataset\n'}
    results, problems = pipeline.port_sources(sources, tf_upgrade=None)
    assert problems == ["a.py:1: internal error in pass broken (KeyError: 'a bug'); file left "
                        'as is']
    why = problems[0][len('a.py:1: '):]
    assert results['a.py'] == ('x = 1\n', [edits.Note(edits.NOT_PORTED, 1, why)])
    assert results['b.py'][0] == 'from slimdata import slim\ny = slim.dataset.Dataset\n'


def test_the_command_names_the_file_and_exits_1(broken_pass, tmp_path, capsys):
    root = tmp_path / 'repo'
    root.mkdir()
    (root / 'a.py').write_text('x = 1\n')
    (root / 'b.py').write_text('import tf_slim as slim\ny = slim.dataset.Dataset\n')
    status = cli.main(['port', str(root), str(tmp_path / 'out'), '--tf-upgrade', 'off'])
    out = capsys.readouterr().out
    assert status == 1
    assert 'a.py:1: internal error in pass broken' in out and 'file left as is' in out
    assert (tmp_path / 'out' / 'a.py').read_text() == 'x = 1\n'
    assert (tmp_path / 'out' / 'b.py').read_text().startswith('from slimdata import slim\n')


def test_every_stage_has_a_name_and_a_trigger_of_its_own():
    names = [stage.NAME for stage in pipeline.STAGES]
    assert all(names) and len(set(names)) == len(names)
    assert all(stage.has_work('', edits.Context('m.py')) is False for stage in pipeline.STAGES)
