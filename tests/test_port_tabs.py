"""Python 2's indentation with tabs and spaces mixed (slimdata.port.indentation)."""

import ast

from slimdata.port import edits, tree

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
