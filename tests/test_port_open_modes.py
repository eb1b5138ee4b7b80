"""Mode 'U' and Python 2's file() (slimdata.port.py3.open_modes), run."""

import subprocess
import sys

from slimdata.port import tree

PROGRAM = '''import io

def lines(path):
    with file(path, 'rU') as stream:
        return stream.read().splitlines()

def binary(path):
    return io.open(path, mode='rbU').read()

print(lines('data.txt'), binary('data.txt'))
'''


def test_mode_u_and_file_run_after_the_port(tmp_path):
    results, problems = tree.port_sources({'m.py': PROGRAM}, tf_upgrade=None)
    assert problems == []
    ported, notes = results['m.py']
    assert "open(path, 'r')" in ported and "io.open(path, mode='rb')" in ported
    assert sorted(note.line for note in notes) == [4, 4, 8]
    (tmp_path / 'm.py').write_text(ported)
    data = b'a\r\nb\rc\n'
    (tmp_path / 'data.txt').write_bytes(data)
    done = subprocess.run([sys.executable, 'm.py'], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # Universal newlines in text mode, the bytes as they are in binary mode.
    assert done.stdout.strip() == f"{['a', 'b', 'c']} {data!r}"


def test_a_file_name_of_the_module_is_not_the_builtin():
    code = 'def file(name):\n    return name\n\nx = file("a")\n'
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert results['m.py'] == (code, [])
