"""How a file names TensorFlow: every TF1 spelling reduced to one qualified name.

Old code reaches TensorFlow's TF1 API under several spellings, and a rule must fire under each:

- `import tensorflow as tf` (TF1 itself): `tf.contrib.slim` is `tensorflow.contrib.slim`;
- `import tensorflow.compat.v1 as tf`, `from tensorflow.compat import v1 as tf`, any alias:
  the same name is `tensorflow.compat.v1.contrib.slim`;
- `tf = tf.compat.v1` (or `tf = tf2.compat.v1`) at module level after an import: LibCST
  names it `tf.contrib.slim` (a local name) beside the import's.

`canonical` maps each to the name the rules are written in (`tensorflow.contrib.slim`), and
`SpellingAware` gives a pass that one qualified name for a node.
"""

import dataclasses
import itertools
from typing import Dict, FrozenSet, Iterator, Optional, Set, Union

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from slimdata.port.edits import PortTransformer, code_of, dotted

COMPAT_V1 = 'tensorflow.compat.v1'
_TENSORFLOW_MODULES = ('tensorflow', COMPAT_V1, 'tensorflow.compat.v2')


@dataclasses.dataclass(frozen=True)
class Spelling:
    """The names a module binds to TensorFlow.

    `alias`: a module-level name bound to TensorFlow or its `compat.v1` / `compat.v2` (either
    way `<alias>.compat.v1.<name>` reaches a TF1 name), or None when the file imports none.
    `compat_aliases`: names assigned `<tensorflow>.compat.v1` at module level (`tf = tf.compat.v1`).
    `tf1`: whether the file imports TensorFlow's TF1 API (anything but only `compat.v2`).
    """
    alias: Optional[str]
    compat_aliases: FrozenSet[str]
    tf1: bool

    def canonical(self, name: str) -> str:
        """`name` (qualified through the file's imports) as the rules spell it."""
        root, dot, rest = name.partition('.')
        if root in self.compat_aliases:
            name = 'tensorflow' + dot + rest
        if name == COMPAT_V1 or name.startswith(COMPAT_V1 + '.'):
            return 'tensorflow' + name[len(COMPAT_V1):]
        return name


def _module_imports(module: cst.Module):
    """(module name, bound name) of each module-level import of a TensorFlow module."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    name = code_of(alias.name)
                    if name in _TENSORFLOW_MODULES:
                        yield name, alias.evaluated_alias or name.split('.')[0]
            elif (isinstance(small, cst.ImportFrom) and small.module is not None
                  and not small.relative and code_of(small.module) == 'tensorflow.compat'
                  and not isinstance(small.names, cst.ImportStar)):
                for alias in small.names:
                    version = code_of(alias.name)
                    if version in ('v1', 'v2'):
                        yield (f'tensorflow.compat.{version}',
                               alias.evaluated_alias or version)


def _compat_assignments(module: cst.Module, tensorflow_names: FrozenSet[str]):
    """Names assigned `<a TensorFlow name>.compat.v1` by a module-level statement."""
    for statement in module.body:
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                and isinstance(statement.body[0], cst.Assign)):
            continue
        assign = statement.body[0]
        value = code_of(assign.value).replace(' ', '')
        root, _, rest = value.partition('.')
        if root in tensorflow_names and rest == 'compat.v1':
            for target in assign.targets:
                if isinstance(target.target, cst.Name):
                    yield target.target.value


def spelling_of(module: cst.Module) -> Spelling:
    """How `module` names TensorFlow (see the module docstring)."""
    imports = list(_module_imports(module))
    bound = frozenset(name for _, name in imports)
    compat = frozenset(_compat_assignments(module, bound))
    alias = next((name for _, name in imports), None)
    tf1 = any(module_name != 'tensorflow.compat.v2' for module_name, _ in imports)
    return Spelling(alias, compat, tf1)


class SpellingAware(PortTransformer):
    """A `PortTransformer` whose `qualified_name` answers under every spelling of `Spelling`.

    Call `self.learn_spelling(module)` in `visit_Module` before anything asks for names.
    """

    spelling = Spelling(None, frozenset(), False)

    def learn_spelling(self, module: cst.Module) -> Spelling:
        self.spelling = spelling_of(module)
        return self.spelling

    def chain_names(self, root: str, chains: Dict[str, Set[str]]) -> Iterator[str]:
        """The qualified names (as the rules spell them) the attribute chains on `root` may
        have (`chains`: `TreeFacts.attribute_chains`, of the pass's `facts`): through each
        import of `root` in the file, a star import of it from the tree, or as written."""
        assert self.facts is not None, 'called with the facts of the tree'
        roots = {root, *self.facts.imported_as(root)}
        if root in self.context.star_imported:
            roots.add(self.context.star_imported[root])
        return (self.spelling.canonical(new_root + chain[len(root):])
                for chain in chains.get(root, ()) for new_root in roots)

    def may_name(self, prefix: str) -> bool:
        """Whether a name of the file may have a qualified name (as the rules spell it) that
        starts with `prefix`, by Python's tree, before the walk: an attribute chain
        (`chain_names`) or an imported name, star imports of the tree included. True without
        Python's tree. A pass whose every change is at such names has nothing to do where
        this is False."""
        if self.facts is None or (chains := self.facts.attribute_chains()) is None:
            return True
        self.learn_spelling(self.facts.module)
        imported = [qualified for bound in self.facts.imported_names().values()
                    for qualified in bound]
        # A name from a star import may be used bare (`dense(x)`).
        names = itertools.chain(map(self.spelling.canonical, imported),
                                map(self.spelling.canonical, self.context.star_imported.values()),
                                *(self.chain_names(root, chains) for root in chains))
        return any(name.startswith(prefix) for name in names)

    def qualified_name(self, node: cst.CSTNode) -> Optional[str]:
        """The one qualified name of `node` (as the rules spell it), or None."""
        names = self.get_metadata(QualifiedNameProvider, node, set())
        found = {self.spelling.canonical(name.name) for name in names}
        return next(iter(found)) if len(found) == 1 else None

    def tf_name(self, path: str) -> cst.BaseExpression:
        """The expression for `tensorflow.<path>` in this file: under its TensorFlow alias, or
        `tf.<path>` with `import tensorflow as tf` added when it imports none."""
        if self.spelling.alias is None:
            self.need_import('import tensorflow as tf')
        return dotted(f'{self.spelling.alias or "tf"}.{path}')


class ScopeScanning(SpellingAware):
    """A `SpellingAware` pass that reads each scope, the module and each function, before its
    walk gets there (a file opened in one statement and used in another), in `scan_scope`."""

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)
        self.scan_scope(node, None)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scan_scope(node.body, node)

    def scan_scope(self, statements: Union[cst.Module, cst.BaseSuite],
                   function: Optional[cst.FunctionDef]) -> None:
        """Reads the `statements` of a scope (the module, or the body of `function`): run a
        `LookAhead` over them whose parent is `function`, and stop at nested functions."""
        raise NotImplementedError
