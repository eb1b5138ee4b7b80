"""A value `.encode(...)` made, compared with what may be text: bytes never equal text.

`s.encode('ascii')` gave a str in Python 2 and gives bytes in Python 3, which equal no text
(`b'Car' != 'Car'`). Compared with anything but a bytes literal or another encoding (`==`,
`!=`, `in`, `not in`), directly or through a name its scope binds only to encodings, the test
that held in Python 2 is now always false, without an error (Zehaos/MobileNet's KITTI
converter: `type_txt = obj_anno[0].encode('ascii')`, then `if type_txt in CLASSES`, a dict of
str keys: every object was dropped and the records written all the same). Which side to
change cannot be read from the code, so each is reported: not ported in a Python 2 file
(`Context.python_2`), to check in another (Python 3 code may compare bytes it read).

Read from Python's tree alone: the pass adds notes and walks nothing.
"""

import ast
import re
from collections import Counter
from typing import Iterator, List, Set, Tuple

import libcst as cst

from slimdata.port.edits import NOT_PORTED, TO_CHECK, Note, PortTransformer

_EQUALITY = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


class EncodedComparisonsPass(PortTransformer):
    """Reports a value `.encode()` made compared with text (see the module docstring)."""

    NAME = 'encoded comparisons'
    TRIGGER = re.compile(r'\.encode\(')

    def visit_Module(self, node: cst.Module) -> bool:
        tree = self.facts.python_tree() if self.facts is not None else None
        kind = NOT_PORTED if self.context.python_2 else TO_CHECK
        then = 'a str in Python 2' if self.context.python_2 else 'not text'
        for line, value, comparison in encoded_compared(tree) if tree is not None else ():
            self.notes.append(Note(kind, line, f'{value} is bytes ({then}): `{comparison}` '
                                               "compares it with what may be text, which bytes "
                                               "never equal (b'a' != 'a'); decode it, or "
                                               'compare bytes'))
        return False


def encoded_compared(tree: ast.Module) -> Iterator[Tuple[int, str, str]]:
    """(line, value, comparison) of each comparison of a value `.encode(...)` made, directly
    or through a name its scope binds only to encodings, with anything but bytes."""
    for scope in [tree, *(node for node in ast.walk(tree) if isinstance(node, _SCOPES))]:
        nodes = list(_own_nodes(scope))
        encoded = _names_only_encoded(nodes)
        for node in nodes:
            if isinstance(node, ast.Compare):
                found = _encoded_side(node, encoded)
                if found is not None:
                    yield node.lineno, ast.unparse(found), ast.unparse(node)


def _encoded_side(comparison: ast.Compare, encoded: Set[str]):
    """The operand of an equality or membership test of `comparison` that is an encoding (or a
    name of `encoded`) while the other is not bytes, or None."""
    operands = [comparison.left, *comparison.comparators]
    for index, operator in enumerate(comparison.ops):
        if isinstance(operator, _EQUALITY):
            pair = operands[index:index + 2]
            for side, other in (pair, pair[::-1]):
                is_encoded = _is_encoding(side) or (isinstance(side, ast.Name)
                                                    and side.id in encoded)
                if is_encoded and not _is_bytes(other):
                    return side
    return None


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `scope`, less those of the functions, classes and lambdas inside it."""
    todo: List[ast.AST] = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))


def _names_only_encoded(nodes: List[ast.AST]) -> Set[str]:
    """The names that only assignments of a `.encode(...)` among `nodes` bind."""
    stores = Counter(node.id for node in nodes
                     if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store))
    encodings = Counter(node.targets[0].id for node in nodes
                        if isinstance(node, ast.Assign) and len(node.targets) == 1
                        and isinstance(node.targets[0], ast.Name) and _is_encoding(node.value))
    return {name for name, count in encodings.items() if stores[name] == count}


def _is_encoding(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == 'encode')


def _is_bytes(node: ast.AST) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, bytes)) or _is_encoding(node)
