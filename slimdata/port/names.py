"""The names pass: contrib / tf_slim / private-op / tf.layers names to their successors.

- imports and `NAME = tf.contrib.slim`-style aliases whose module moved are rewritten to import
  the successor under the same name, so the rest of the file is left as it is;
- other uses (`tf.contrib.layers.xavier_initializer()`) are rewritten in place and the
  successor's module imported;
- private `tensorflow.python` functions become their `tf.compat.v1` names, and the private
  import goes once nothing uses it;
- `tf.layers.<layer>(...)` calls become tf_slim layer calls, arguments translated.
"""

import re
from collections import Counter
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst
from libcst.helpers import ensure_type
from libcst.metadata import (
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

from slimdata.contrib.unavailable import UNPORTABLE, attribute_for, unportable_reason
from slimdata.port import rules
from slimdata.port.edits import (
    CHANGED,
    NOT_PORTED,
    TO_CHECK,
    Context,
    Note,
    PortTransformer,
    code_of,
    dotted,
    import_statement,
    root_name,
)
from slimdata.port.installed import checked_successor, importable, is_module, module_of, public_name
from slimdata.port.spelling import SpellingAware

_TF_LAYERS = 'tensorflow.layers.'
_STAND_INS = 'slimdata.contrib.unavailable'


class NamesPass(SpellingAware, PortTransformer):
    """Renames old contrib / tf_slim / private / tf.layers names (see the module docstring)."""

    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider, ParentNodeProvider)
    NAME = 'names'
    # Its work is on names imported from modules named so, or on these calls.
    TRIGGER = re.compile(r'contrib|tf_slim|tensorflow\.python|\blayers\b|rnn_cell'
                         r'|\bestimator\b')

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        self.report_unknown_contrib = context.report_unknown_contrib
        self.tf_alias = 'tf'
        self.rebound: Set[str] = set()        # names whose import this pass rewrites
        self.private_uses: Dict[str, int] = {}  # private module alias -> uses left as they are
        self.private_imports: Dict[str, Tuple[str, int]] = {}  # alias -> (module, line)
        self.stand_ins: Dict[str, Tuple[str, int]] = {}  # bound -> (contrib name, line)

    # -- set-up ------------------------------------------------------------------------------

    def visit_Module(self, node: cst.Module) -> None:
        self.tf_alias = self.learn_spelling(node).alias or 'tf'
        node.visit(_BindingScanner(self))

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        unused = {alias for alias, left in self.private_uses.items() if left == 0}
        for alias in sorted(unused):
            module, line = self.private_imports[alias]
            self.notes.append(Note(CHANGED, line, f'removed the import of {module} (no use left)'))
        if unused:
            updated = updated.visit(_PrivateImportRemover(unused))
        return self._settle_stand_ins(updated)

    def _settle_stand_ins(self, module: cst.Module) -> cst.Module:
        """Keeps the `Unavailable` stand-in of a contrib import only where a use of it is left
        (its other uses were ported to successors); reports it then, else removes it."""
        if not self.stand_ins:
            return module
        counter = _NameCounter()
        module.visit(counter)
        unused = set()
        for bound, (name, line) in self.stand_ins.items():
            if counter.uses[bound] > 1:  # the stand-in's own import is one
                reason = unportable_reason(name)
                self.notes.append(Note(NOT_PORTED, line, f'{name}: {reason} (its uses raise an '
                                                         'ImportError saying so)'))
            else:
                unused.add(bound)
                self.notes.append(Note(CHANGED, line, f'removed the import of {name}: every use '
                                                      'of it was ported'))
        return module.visit(_StandInRemover(unused)) if unused else module

    def tf_name(self, path: str) -> cst.BaseExpression:
        if self.spelling.alias is None:
            self.need_import('import tensorflow as tf')
        return dotted(f'{self.tf_alias}.{path}')

    # -- imports -----------------------------------------------------------------------------

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine):
        if len(original.body) != 1:
            return updated
        statement = original.body[0]
        if isinstance(statement, cst.ImportFrom):
            new_lines = self._port_import_from(statement)
        elif isinstance(statement, cst.Import):
            new_lines = self._port_import(statement)
        elif isinstance(statement, cst.Assign):
            new_lines = self._port_alias_assignment(original, statement)
        else:
            return updated
        if new_lines is None:
            return updated
        if not new_lines:
            return cst.RemovalSentinel.REMOVE
        lines = [cst.parse_statement(line + '\n') for line in new_lines]
        lines[0] = lines[0].with_changes(leading_lines=original.leading_lines)
        lines[-1] = lines[-1].with_changes(trailing_whitespace=original.trailing_whitespace)
        return cst.FlattenSentinel(lines)

    def _port_import_from(self, statement: cst.ImportFrom) -> Optional[List[str]]:
        if statement.relative or statement.module is None or isinstance(statement.names,
                                                                          cst.ImportStar):
            return None
        module = self.spelling.canonical(code_of(statement.module))
        kept, new_lines = [], []
        for alias in statement.names:
            name = code_of(alias.name)
            bound = alias.evaluated_alias or name
            target = checked_successor(f'{module}.{name}')
            if target is None:
                kept_line = self._unported_import(statement, f'{module}.{name}', bound)
                if kept_line is True:
                    kept.append(alias)
                elif kept_line:
                    new_lines.extend(kept_line)
                continue
            parent, _, last = importable(target).rpartition('.')
            new_lines.append(import_statement(parent, last, bound))
            self.note(CHANGED, statement, f'{module}.{name} -> {target}')
        if len(kept) == len(statement.names):
            return None
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            new_lines.insert(0, code_of(statement.with_changes(names=kept)).strip())
        return new_lines

    def _port_import(self, statement: cst.Import) -> Optional[List[str]]:
        kept, new_lines = [], []
        for alias in statement.names:
            name = self.spelling.canonical(code_of(alias.name))
            target = None if _is_own_import(alias) else checked_successor(name)
            bound = alias.evaluated_alias or name.split('.')[0]
            if target is None:
                kept_line = (self._unported_import(statement, name, bound)
                             if alias.asname else True)
                if kept_line is True:
                    kept.append(alias)
                elif kept_line:
                    new_lines.extend(kept_line)
                continue
            self.note(CHANGED, statement, f'{name} -> {target}')
            if alias.asname is None and '.' in name:
                # `import a.b.c` binds `a`; the uses of a.b.c are renamed where they are.
                new_lines.append(f'import {name.split(".")[0]}')
                continue
            parent, _, last = importable(target).rpartition('.')
            bound = alias.evaluated_alias or name
            new_lines.append(import_statement(parent, last, bound))
        if len(kept) == len(statement.names):
            return None
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            new_lines.insert(0, code_of(statement.with_changes(names=kept)).strip())
        return list(dict.fromkeys(new_lines))

    def _unported_import(self, statement: cst.CSTNode, name: str,
                         bound: str) -> Union[bool, List[str]]:
        """What becomes of the import of `name`, which has no successor: True keeps it.

        A contrib name cannot import on TensorFlow 2. Nothing in the file uses it: the import
        goes ([]). Something does: `bound` is imported from `slimdata.contrib.unavailable`, an
        `Unavailable` standing for it, which raises an ImportError naming it and the reason
        when the code reaches a use (a script whose only use is behind an option, such as
        slim's `--quantize_delay`, then runs), and the line is reported as not ported.
        """
        if not name.startswith('tensorflow.contrib') or self._guarded(statement):
            return True
        if self._unused(statement, bound):
            self.note(CHANGED, statement, f'removed the import of {name}: no successor, and '
                                          'nothing in the file uses it')
            return []
        self.stand_ins[bound] = (name, self.line_of(statement))
        return [import_statement(_STAND_INS, attribute_for(name), bound)]

    def _unused(self, statement: cst.CSTNode, bound: str) -> bool:
        """Whether nothing reads the name `bound` that the import `statement` binds (LibCST's
        scope analysis: an attribute, a keyword or a parameter of the same name is not a
        use of it)."""
        scope = self._resolved(ScopeProvider).get(statement)
        return scope is not None and not any(
            assignment.references for assignment in scope.assignments[bound]
            if assignment.node is statement)

    def _guarded(self, statement: cst.CSTNode) -> bool:
        """Whether `statement` is in a `try:` that handles its ImportError: the code already
        does without the contrib module on TensorFlow 2 (the OD API's `contrib_lookup`), so the
        import stays as it is."""
        node = self.get_metadata(ParentNodeProvider, statement, None)
        while node is not None and not isinstance(node, cst.Module):
            if isinstance(node, cst.Try) and any(
                    handler.type is None or re.search(r'\b(ImportError|ModuleNotFoundError|'
                                                      r'Exception|BaseException)\b',
                                                      code_of(handler.type))
                    for handler in node.handlers):
                return True
            node = self.get_metadata(ParentNodeProvider, node, None)
        return False

    def _port_alias_assignment(self, line: cst.SimpleStatementLine,
                               statement: cst.Assign) -> Optional[List[str]]:
        """`slim = tf.contrib.slim` at module level -> `from slimdata import slim` (any name
        with a successor: `arg_scope = tf.contrib.framework.arg_scope` -> an import too)."""
        target = self._alias_target(statement.value)
        if target is None:
            return None
        parent, _, last = importable(target).rpartition('.')
        # _alias_target accepts only `NAME = value`
        bound = ensure_type(statement.targets[0].target, cst.Name).value
        self.note(CHANGED, line, f'{code_of(statement.value)} -> {target}')
        return [import_statement(parent, last, bound)]

    def _alias_target(self, value: cst.BaseExpression) -> Optional[str]:
        """The successor of what `value` names if it is all of a module-level `NAME = value`."""
        assign = self.get_metadata(ParentNodeProvider, value)
        if not (isinstance(assign, cst.Assign) and assign.value is value
                and isinstance(value, cst.Attribute) and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)):
            return None
        line = self.get_metadata(ParentNodeProvider, assign)
        if (not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1
                or not isinstance(self.get_metadata(ParentNodeProvider, line), cst.Module)):
            return None
        name = self.qualified_name(value)
        target = checked_successor(name) if name else None
        root = root_name(value)
        if target is None or root is None or root.value in self.rebound or '.' not in target:
            return None
        if not is_module(importable(target).rpartition('.')[0]):
            return None  # an attribute of a class (`ModeKeys.TRAIN`) is not imported from it
        return target

    # -- names in expressions -------------------------------------------------------------------

    def leave_Attribute(self, original: cst.Attribute,
                        updated: cst.Attribute) -> cst.BaseExpression:
        root = root_name(original)
        name = self.qualified_name(original)
        if root is None or name is None:
            return updated
        if isinstance(original.value, cst.Name) and root.value in self.private_uses:
            return self._port_private(original, updated, name, root.value)
        parent = self.get_metadata(ParentNodeProvider, original)
        if isinstance(parent, cst.Attribute) and parent.value is original:
            return updated  # the outermost attribute of the chain decides
        if name.startswith(_TF_LAYERS):
            if not (isinstance(parent, cst.Call) and parent.func is original):
                # A call is ported or reported by leave_Call; any other use (a base class,
                # `tf.layers.Layer`) has no tf_slim counterpart.
                self._note_tf_layers(original, code_of(original))
            return updated
        if root.value in self.rebound or self._alias_target(original) is not None:
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

    def _port_private(self, original: cst.Attribute, updated: cst.Attribute, name: str,
                      alias: str) -> cst.BaseExpression:
        path = public_name(name)
        if path is None:
            self.private_uses[alias] += 1
            self.note(NOT_PORTED, original, f'{name}: {UNPORTABLE["tensorflow.python"]}')
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

    # -- tf.layers ---------------------------------------------------------------------------

    def _note_tf_layers(self, node: cst.CSTNode, what: str) -> None:
        """A `tf.layers` use left as it is: it runs with Keras 2 as `tf.keras` (tf-keras)."""
        if is_module('tf_keras'):
            self.note(TO_CHECK, node, f'{what}: {rules.TF_LAYERS_WITH_KERAS_2}')
        else:
            self.note(NOT_PORTED, node, f'{what}: {rules.TF_LAYERS_UNPORTABLE}')

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        name = self.qualified_name(original.func)
        if not name or not name.startswith(_TF_LAYERS):
            return updated
        layer = name[len(_TF_LAYERS):]
        port = rules.TF_LAYERS.get(layer)
        arguments = _layer_arguments(port, updated.args) if port else None
        if port is None or arguments is None:
            self._note_tf_layers(original, f'tf.layers.{layer}')
            return updated
        self.need_import('import tf_slim')
        self.note(CHANGED, original, f'tf.layers.{layer}(...) -> {port.target}(...)')
        return updated.with_changes(func=dotted(port.target), args=arguments)


def _layer_arguments(port: rules.LayerPort,
                     arguments: Sequence[cst.Arg]) -> Optional[List[cst.Arg]]:
    """The tf_slim call's arguments for a tf.layers call's, or None if one cannot be mapped."""
    new: List[cst.Arg] = []
    given = set()
    for index, argument in enumerate(arguments):
        if argument.star:
            return None
        keyword = argument.keyword.value if argument.keyword else (
            port.parameters[index] if index < len(port.parameters) else None)
        if keyword == port.parameters[0]:
            new.append(argument.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT))
            continue
        mapped = _map_argument(port, keyword, argument.value)
        if mapped is None:
            return None
        if mapped is _DROP:
            continue
        new_keyword, value = mapped
        given.add(new_keyword)
        new.append(cst.Arg(value=value, keyword=cst.Name(new_keyword), equal=_EQUAL,
                           comma=argument.comma,
                           whitespace_after_arg=argument.whitespace_after_arg))
    for keyword, code in port.defaults.items():
        if keyword not in given:
            new.append(cst.Arg(value=cst.parse_expression(code), keyword=cst.Name(keyword),
                               equal=_EQUAL))
    last = len(new) - 1
    return [argument.with_changes(comma=cst.MaybeSentinel.DEFAULT) if index == last
            else argument if isinstance(argument.comma, cst.Comma)
            else argument.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(' ')))
            for index, argument in enumerate(new)]


_DROP = object()
_EQUAL = cst.AssignEqual(cst.SimpleWhitespace(''), cst.SimpleWhitespace(''))


def _map_argument(port: rules.LayerPort, keyword: Optional[str], value: cst.BaseExpression):
    """(new keyword, new value) for one old argument, _DROP, or None if it cannot be mapped."""
    if keyword == 'use_bias':
        literal = code_of(value)
        if literal == 'True':
            return _DROP
        return ('biases_initializer', cst.Name('None')) if literal == 'False' else None
    if keyword == 'kernel_initializer' and code_of(value) == 'None':
        return _DROP
    rename = port.renames.get(keyword) if keyword else None
    if rename is None:
        return None
    new_keyword, _, template = rename.partition(':')
    if keyword in port.values:
        if not isinstance(value, cst.SimpleString):
            return None
        old = value.evaluated_value  # a str, or the bytes of b'...', which no value maps
        replacement = port.values[keyword].get(old) if isinstance(old, str) else None
        if replacement is None:
            return None
        value = cst.SimpleString(repr(replacement))
    elif template:
        simple = isinstance(value, (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.Call))
        value = cst.parse_expression(
            template.format(code_of(value) if simple else f'({code_of(value)})'))
    return new_keyword, value


def _is_own_import(alias: cst.ImportAlias) -> bool:
    """Whether `alias` is the bare `import tf_slim` this pass writes for tf_slim's names: it is
    kept (its data names are renamed where used), so that a second port changes nothing."""
    return alias.asname is None and code_of(alias.name) == 'tf_slim'


class _BindingScanner(cst.CSTVisitor):
    """Finds the names whose import the pass rewrites, and the aliases of private modules."""

    def __init__(self, names_pass: NamesPass) -> None:
        super().__init__()
        self.names_pass = names_pass

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = code_of(alias.name)
            bound = alias.evaluated_alias or name.split('.')[0]
            self._bind(node, self.names_pass.spelling.canonical(name), bound,
                       rewritten=(alias.asname is not None or '.' not in name)
                       and not _is_own_import(alias))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = self.names_pass.spelling.canonical(code_of(node.module))
        for alias in node.names:
            name = code_of(alias.name)
            self._bind(node, f'{module}.{name}',
                       alias.evaluated_alias or name, rewritten=True)

    def _bind(self, node: cst.CSTNode, name: str, bound: str, rewritten: bool) -> None:
        if rewritten and checked_successor(name) is not None:
            self.names_pass.rebound.add(bound)
        elif name in rules.PRIVATE_MODULES:
            self.names_pass.private_uses.setdefault(bound, 0)
            self.names_pass.private_imports[bound] = (name, self.names_pass.line_of(node))


class _NameCounter(cst.CSTVisitor):
    """Counts the Name nodes of each identifier that may read a variable: not an attribute's
    name (`config.quantize`), nor a keyword argument's (`build(quantize=False)`)."""

    def __init__(self) -> None:
        super().__init__()
        self.uses: Counter = Counter()

    def visit_Name(self, node: cst.Name) -> None:
        self.uses[node.value] += 1

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False


class _StandInRemover(cst.CSTTransformer):
    """Removes the stand-in imports (`from slimdata.contrib.unavailable import ...`) of
    unused names."""

    def __init__(self, unused: Set[str]) -> None:
        super().__init__()
        self.unused = unused

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        if (original.module is None or code_of(original.module) != _STAND_INS
                or isinstance(original.names, cst.ImportStar)):
            return updated
        bound = {alias.evaluated_alias or code_of(alias.name)
                 for alias in original.names}
        return cst.RemoveFromParent() if bound <= self.unused else updated


class _PrivateImportRemover(cst.CSTTransformer):
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
