"""Python 2's indentation with tabs and spaces mixed (slimdata.port.indentation)."""

import ast
import random
from typing import List

import libcst

from slimdata.port import edits, indentation, tree

# Python 2 read the tab as 8 columns: `return` is in the `if` block, as the second program
# (spaces only) says; the tab inside the docstring is content.
MIXED = ("def clip(x):\n"
         "    '''Clip\n\tat zero.'''\n"
         "    if x < 0:\n"
         "\tprint 'negative'\n"
         "        return 0\n"
         "    return x\n")
SPACES = ("def clip(x):\n"
          "    '''Clip\n\tat zero.'''\n"
          "    if x < 0:\n"
          "        print('negative')\n"
          "        return 0\n"
          "    return x\n")


def test_tabs_are_python_2s_eight_columns():
    results, problems = tree.port_sources({'m.py': MIXED}, tf_upgrade=None)
    assert problems == []
    ported, notes = results['m.py']
    assert ast.dump(ast.parse(ported)) == ast.dump(ast.parse(SPACES))
    assert '\tat zero.' in ported  # the string's content kept
    assert [(note.kind, note.line) for note in notes if 'tab' in note.message] == [
        (edits.CHANGED, 5)]  # the first line whose meaning depends on the tab's width


def test_a_python_3_file_with_consistent_tabs_is_left_alone():
    code = "def f(x):\n\tif x:\n\t\treturn 1\n\treturn 2\n"
    results, problems = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert problems == [] and results['m.py'][0] == code


# Indentations of tabs and spaces for the generated programs: Python reads some of their
# mixes and LibCST not all of them.
_INDENTS = ['', ' ', '  ', '    ', '\t', '\t ', ' \t', '\t\t', '        ', '\t    ', '    \t',
            '            ', '\t\t ', '         ']
_HEADERS = ['if x:', 'for i in x:', 'def f(a):', 'class C:', 'while x:', 'try:', 'with x:',
            '@d\ndef g():']


def _program(rng: random.Random) -> str:
    """A program of nested blocks, each indented by a random mix of tabs and spaces (and,
    now and then, a line of a block by another): `else`, `elif`, `except`, `finally`,
    decorators, bodies on their header's line, strings and brackets going on over lines,
    comments and blank lines anywhere."""
    lines: List[str] = []

    def block(depth: int, indent: str) -> None:
        for _ in range(rng.randint(1, 3)):
            own = indent if rng.random() < 0.8 else rng.choice(_INDENTS)
            kind = rng.random()
            if depth < 4 and kind < 0.45:
                header = rng.choice(_HEADERS)
                lines.extend(own + part for part in header.split('\n'))
                if rng.random() < 0.1:
                    lines[-1] += ' pass'
                    continue
                block(depth + 1, rng.choice(_INDENTS))
                clauses = {'if x:': [rng.choice(['elif y:', 'else:'])] * (rng.random() < 0.5),
                           'try:': ['except E:'] + ['finally:'] * (rng.random() < 0.5)}
                for clause in clauses.get(header, []):
                    lines.append(own + clause)
                    block(depth + 1, rng.choice(_INDENTS))
            elif kind < 0.55:
                lines.extend([own + 'y = """a', rng.choice(_INDENTS) + 'b"""'])
            elif kind < 0.62:
                lines.append(rng.choice(_INDENTS) + '# note')
            elif kind < 0.7:
                lines.extend([own + 'z = (1,', rng.choice(_INDENTS) + '2)'])
            elif kind < 0.75:
                lines.append('')
            else:
                lines.append(own + rng.choice(['a = 1', 'pass', 'x += 1']))

    block(0, '')
    return '\n'.join(lines) + '\n'


def _libcst_refuses(code: str) -> bool:
    try:
        libcst.parse_module(code)
    except libcst.ParserSyntaxError as error:
        return 'tokenizer error' in str(error)
    return False


def test_the_blocks_tell_where_libcst_refuses_a_mix_python_reads():
    """On generated programs that Python compiles, `libcst_may_refuse` (which reads the
    blocks' indentation on Python's tree) says so exactly where LibCST's tokenizer refuses
    the program: it is then parsed to be sure; elsewhere the file is parsed only where the
    passes read it."""
    rng = random.Random(7)
    said, refused = [], []
    for _ in range(4000):
        code = _program(rng)
        try:
            tree = ast.parse(code)
            compile(code, 'generated.py', 'exec')
        except SyntaxError:
            continue
        said.append(indentation.libcst_may_refuse(code, tree))
        refused.append(_libcst_refuses(code))
    assert len(said) > 1000 and sum(refused) >= 5
    assert said == refused


def test_a_mix_libcst_reads_is_not_parsed_whole_before_the_passes(monkeypatch):
    """A file mixing tabs and spaces whose blocks nest as written is left to the passes,
    which parse only what they read; one whose blocks do not is parsed whole first."""
    checked = []
    monkeypatch.setattr(indentation, 'libcst_refusal_line', lambda code, context=None,
                        real=indentation.libcst_refusal_line: checked.append(1) or real(
                            code, context))
    nested = ('import tensorflow as tf\nslim = tf.contrib.slim\n\n\ndef f(x):\n'
              '\t if x:\n\t     return slim.flatten(x)\n\t return x\n\n\ndef g(y):\n'
              '    return y\n')
    results, problems = tree.port_sources({'m.py': nested}, tf_upgrade=None)
    assert problems == [] and checked == []
    assert '\t if x:\n\t     return slim.flatten(x)\n\t return x\n' in results['m.py'][0]
    not_nested = nested.replace('\t     return slim', ' ' * 13 + 'return slim')
    results, problems = tree.port_sources({'m.py': not_nested}, tf_upgrade=None)
    assert problems == [] and checked == [1]
    assert ' ' * 9 + 'if x:\n' + ' ' * 13 + 'return slim.flatten(x)\n' in results['m.py'][0]
