"""contextlib2 becomes contextlib where it has every name
(slimdata.port.py3.backports), ported and run."""


from port_snippets import port_and_run
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
