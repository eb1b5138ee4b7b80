"""What the port's tests of one pass share: a snippet ported in memory, and run."""

from slimdata.port import tree


def port(code: str, path: str = 'module.py'):
    """(ported code, notes) of `code` ported alone, without tf_upgrade_v2; no problem."""
    results, problems = tree.port_sources({path: code}, tf_upgrade=None)
    assert problems == []
    return results[path]


def run(code: str) -> dict:
    """The namespace `code` leaves when executed."""
    namespace: dict = {'__name__': 'ported'}
    exec(compile(code, 'ported.py', 'exec'), namespace)  # noqa: S102
    return namespace


def port_and_run(code: str):
    """(ported code, notes, the namespace the ported code leaves)."""
    ported, notes = port(code, 'm.py')
    return ported, notes, run(ported)


def kinds(notes, kind):
    return [note for note in notes if note.kind == kind]
