"""The names pass's part for TensorFlow's private modules (`tensorflow.python.ops...`).

A private function with a public name becomes it (`control_flow_ops.cond` ->
`tf.compat.v1.cond`); one without is left and reported. The private import goes once nothing
uses it: every use of its alias is counted, those left as they are and any other read of the
name (`ops = array_ops`), so an import still needed stays.
"""

from typing import Dict, Set, Tuple, Union

import libcst as cst
from libcst.metadata import ParentNodeProvider

from slimdata.contrib.unavailable import UNPORTABLE
from slimdata.port.edits import CHANGED, NOT_PORTED, ImportRemover, Note, code_of
from slimdata.port.installed import exists, public_name
from slimdata.port.spelling import SpellingAware


class PrivateNames(SpellingAware):
    """Ports the uses of private TensorFlow modules' aliases (a part of `NamesPass`).

    `private_import` is told each private module the file imports; `port_private` ports one
    use; `remove_unused_private_imports` ends the pass.
    """

    def __init__(self, context) -> None:
        super().__init__(context)
        self.private_uses: Dict[str, int] = {}  # private module alias -> uses left as they are
        self.private_imports: Dict[str, Tuple[str, int]] = {}  # alias -> (module, line)

    def private_import(self, statement: cst.CSTNode, module: str, bound: str) -> None:
        """Notes that `statement` imports the private `module` as `bound`."""
        self.private_uses.setdefault(bound, 0)
        self.private_imports[bound] = (module, self.line_of(statement))

    def port_private(self, original: cst.Attribute, updated: cst.Attribute, name: str,
                     alias: str) -> cst.BaseExpression:
        """`alias.function` (qualified `name`) -> its public name, or left and reported."""
        path = public_name(name)
        if path is None:
            self.private_uses[alias] += 1
            self.note(NOT_PORTED, original, f'{name}: ' + (
                UNPORTABLE['tensorflow.python'] if exists(name) else
                'private TensorFlow name that this TensorFlow no longer has, without a public '
                'successor that slimdata port knows: it fails where it runs'))
            return updated
        self.note(CHANGED, original, f'{code_of(original)} -> tf.compat.v1.{path}')
        return self.tf_name(f'compat.v1.{path}')

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if original.value in self.private_uses:
            parent = self.get_metadata(ParentNodeProvider, original)
            in_attribute = isinstance(parent, cst.Attribute) and (parent.value is original
                                                                  or parent.attr is original)
            if not in_attribute and not self._in_import(original):
                self.private_uses[original.value] += 1
        return updated

    def _in_import(self, node: cst.CSTNode) -> bool:
        while node is not None and not isinstance(node, cst.BaseStatement):
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                return True
            node = self.get_metadata(ParentNodeProvider, node, None)
        return False

    def remove_unused_private_imports(self, module: cst.Module) -> cst.Module:
        """`module` without the private imports no use is left of, each removal noted."""
        unused = {alias for alias, left in self.private_uses.items() if left == 0}
        for alias in sorted(unused):
            private_module, line = self.private_imports[alias]
            self.notes.append(Note(CHANGED, line,
                                   f'removed the import of {private_module} (no use left)'))
        return module.visit(_PrivateImportRemover(unused)) if unused else module


class _PrivateImportRemover(ImportRemover):
    """Removes the imports of private modules that nothing uses any more."""

    def __init__(self, unused: Set[str]) -> None:
        super().__init__()
        self.unused = unused

    def _keep(self, alias: cst.ImportAlias) -> bool:
        bound = alias.evaluated_alias or code_of(alias.name)
        return bound not in self.unused

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        return self._filter(updated)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        module = code_of(updated.module) if updated.module else ''
        return self._filter(updated) if module.startswith('tensorflow.python') else updated

    def _filter(self, node: Union[cst.Import, cst.ImportFrom]):
        if isinstance(node.names, cst.ImportStar):
            return node
        names = [alias for alias in node.names if self._keep(alias)]
        if len(names) == len(node.names):
            return node
        if not names:
            return cst.RemoveFromParent()
        names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return node.with_changes(names=names)
