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
from typing import Dict, Optional, Set

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
        self._imports_learnt = False

    def visit_Module(self, node: cst.Module) -> None:
        self._learn_imports(node)

    def _learn_imports(self, module: cst.Module) -> None:
        """The file's spelling of TensorFlow, and what each of its imports becomes (once:
        before the walk for `names_to_visit`, or as it starts)."""
        if self._imports_learnt:
            return
        self._imports_learnt = True
        self.learn_spelling(module)
        for statement, name, bound, rewritten in imported_names(self, module, self.spelling):
            if rewritten and checked_successor(name) is not None:
                self.rebound.add(bound)
            elif name in rules.PRIVATE_MODULES:
                self.private_import(statement, name, bound)

    def names_to_visit(self, names: Set[str]) -> Set[str]:
        """Less the names the walk has nothing to do for: those whose every use
        `leave_Attribute` leaves as it is, unreported (`slim` of `slim = tf.contrib.slim` or
        `import tensorflow.contrib.slim as slim`, used in most statements of slim-era code;
        walking them was most of the pass's cost)."""
        assert self.facts is not None, 'called with the facts of the tree'
        self._learn_imports(self.facts.module)
        chains = self.facts.attribute_chains()
        if chains is None:
            return names
        return {name for name in names if not self._uses_left_alone(name, chains)}

    def _uses_left_alone(self, name: str, chains: Dict[str, Set[str]]) -> bool:
        """Whether no attribute chain on `name` has work under any qualified name it can have
        (`chain_names`)."""
        if name in self.private_uses or self.facts is None:
            return False
        return not any(self._has_work_on(name, qualified)
                       for qualified in self.chain_names(name, chains))

    def _has_work_on(self, root: str, name: str) -> bool:
        """Whether `leave_Attribute` may change or report a chain on `root` named `name` (and
        `leave_SimpleStatementLine` an alias of it)."""
        if root in self.rebound:
            return rules.successor(name) is not None and checked_successor(name) is None
        if name.startswith(TF_LAYERS):
            return False
        return checked_successor(name) is not None or self._unportable_reason(name) is not None

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
        reason = self._unportable_reason(name)
        if reason is not None:
            self.note(NOT_PORTED, node, f'{name}: {reason}')

    def _unportable_reason(self, name: str) -> Optional[str]:
        """Why the use of `name`, which the pass leaves, is reported; None: it is not."""
        reason = unportable_reason(name)
        if name.startswith('tensorflow.python') or (
                reason is None and not name.startswith('tensorflow.contrib')):
            return None
        missing = rules.successor(name)
        generic = reason in (None, UNPORTABLE['tensorflow.contrib'])
        if missing and generic:
            reason = (f'{missing} (its successor by the rules) is not in the installed '
                      'tf_slim / TensorFlow')
        return reason if missing or not generic or self.report_unknown_contrib else None
