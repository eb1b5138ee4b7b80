"""The names pass: contrib / tf_slim / private-op names to their successors.

- imports and `NAME = tf.contrib.slim`-style aliases whose module moved are rewritten to import
  the successor under the same name, so the rest of the file is left as it is
  (`slimdata.port.name_imports`);
- other uses (`tf.contrib.layers.xavier_initializer()`) are rewritten in place and the
  successor's module imported (here);
- private `tensorflow.python` functions become their `tf.compat.v1` names, and the private
  import goes once nothing uses it (`slimdata.port.private_names`).

`tf.layers` names are the next pass's (`slimdata.port.layers`).
"""

import re

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider, QualifiedNameProvider

from slimdata.contrib.unavailable import UNPORTABLE, unportable_reason
from slimdata.port import rules
from slimdata.port.edits import CHANGED, NOT_PORTED, Context, code_of, dotted, root_name
from slimdata.port.installed import checked_successor, module_of
from slimdata.port.layers import TF_LAYERS
from slimdata.port.name_imports import ImportRewriting, imported_names
from slimdata.port.private_names import PrivateNames


class NamesPass(ImportRewriting, PrivateNames):
    """Renames old contrib / tf_slim / private names (see the module docstring)."""

    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider, ParentNodeProvider)
    NAME = 'names'
    # Every name of its tables (rules.NAME_RULES, UNPORTABLE, PRIVATE_MODULES) holds one of
    # these words, under any spelling of TensorFlow.
    TRIGGER = re.compile(r'contrib|tf_slim|tensorflow\.python|rnn_cell|\bestimator\b')
    FILTERS_STATEMENTS = True

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        self.report_unknown_contrib = context.report_unknown_contrib

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)
        for statement, name, bound, rewritten in imported_names(self, node, self.spelling):
            if rewritten and checked_successor(name) is not None:
                self.rebound.add(bound)
            elif name in rules.PRIVATE_MODULES:
                self.private_import(statement, name, bound)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        return self.settle_stand_ins(self.remove_unused_private_imports(updated))

    def leave_Attribute(self, original: cst.Attribute,
                        updated: cst.Attribute) -> cst.BaseExpression:
        root = root_name(original)
        name = self.qualified_name(original)
        if root is None or name is None:
            return updated
        if isinstance(original.value, cst.Name) and root.value in self.private_uses:
            return self.port_private(original, updated, name, root.value)
        parent = self.get_metadata(ParentNodeProvider, original)
        if isinstance(parent, cst.Attribute) and parent.value is original:
            return updated  # the outermost attribute of the chain decides
        if name.startswith(TF_LAYERS):
            return updated  # the tf.layers pass's
        if root.value in self.rebound or self.alias_target(original) is not None:
            if rules.successor(name) is not None and checked_successor(name) is None:
                self._report_unportable_use(original, name)  # the new module lacks this name
            return updated
        target = checked_successor(name)
        if target is None:
            self._report_unportable_use(original, name)
            return updated
        self.note(CHANGED, original, f'{code_of(original)} -> {target}')
        if target.startswith('tensorflow.'):
            return self.tf_name(target[len('tensorflow.'):])
        self.need_import(f'import {module_of(target)}')
        return dotted(target)

    def _report_unportable_use(self, node: cst.CSTNode, name: str) -> None:
        reason = unportable_reason(name)
        if name.startswith('tensorflow.python') or (
                reason is None and not name.startswith('tensorflow.contrib')):
            return
        missing = rules.successor(name)
        generic = reason in (None, UNPORTABLE['tensorflow.contrib'])
        if missing and generic:
            reason = (f'{missing} (its successor by the rules) is not in the installed '
                      'tf_slim / TensorFlow')
        if missing or not generic or self.report_unknown_contrib:
            self.note(NOT_PORTED, node, f'{name}: {reason}')
