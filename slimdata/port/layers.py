"""The tf.layers pass: `tf.layers.<layer>(...)` calls to tf_slim layer calls, arguments
translated by `slimdata.port.rules.TF_LAYERS`.

TF1's `tf.layers` is gone with Keras 3. A call whose layer and arguments the table maps
becomes the tf_slim call (`tf.layers.dense(x, 10, name='logits')` ->
`tf_slim.fully_connected(x, num_outputs=10, scope='logits', activation_fn=None)`); any other
use (a layer the table lacks, an argument it cannot map, `tf.layers.Layer` as a base class) is
left as it is and reported: to check when tf-keras is installed (it runs with Keras 2 as
`tf.keras`), else not ported.
"""

import re
from typing import List, Optional, Sequence

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider, QualifiedNameProvider

from slimdata.port import rules
from slimdata.port.edits import CHANGED, NOT_PORTED, TO_CHECK, code_of, dotted, root_name
from slimdata.port.facts import MatchedLines
from slimdata.port.installed import is_module
from slimdata.port.spelling import SpellingAware

TF_LAYERS = 'tensorflow.layers.'


class LayersPass(SpellingAware):
    """Ports `tf.layers` calls to tf_slim's and reports the uses it cannot port."""

    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider, ParentNodeProvider)
    NAME = 'tf.layers'
    TRIGGER = re.compile(r'\blayers\b')
    FILTERS_STATEMENTS = True

    def lines_to_visit(self) -> Optional[MatchedLines]:
        """No line where no name of the file may be tf.layers' (`may_name`; `slim.layers`,
        `tf.contrib.layers`, `tf.keras.layers` are not): every change and note of the pass is
        at such a name."""
        if not self.may_name(TF_LAYERS):
            return MatchedLines([])
        return super().lines_to_visit()

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)

    def leave_Attribute(self, original: cst.Attribute,
                        updated: cst.Attribute) -> cst.BaseExpression:
        parent = self.get_metadata(ParentNodeProvider, original)
        if isinstance(parent, cst.Attribute) and parent.value is original:
            return updated  # the outermost attribute of the chain decides
        if isinstance(parent, cst.Call) and parent.func is original:
            return updated  # a call is ported or reported by leave_Call
        name = self.qualified_name(original) if root_name(original) is not None else None
        if name is not None and name.startswith(TF_LAYERS):
            # A base class, `tf.layers.Layer`, ...: no tf_slim counterpart.
            self._note_tf_layers(original, code_of(original))
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        name = self.qualified_name(original.func)
        if not name or not name.startswith(TF_LAYERS):
            return updated
        layer = name[len(TF_LAYERS):]
        port = rules.TF_LAYERS.get(layer)
        arguments = _layer_arguments(port, updated.args) if port else None
        if port is None or arguments is None:
            self._note_tf_layers(original, f'tf.layers.{layer}')
            return updated
        self.need_import('import tf_slim')
        self.note(CHANGED, original, f'tf.layers.{layer}(...) -> {port.target}(...)')
        return updated.with_changes(func=dotted(port.target), args=arguments)

    def _note_tf_layers(self, node: cst.CSTNode, what: str) -> None:
        """A `tf.layers` use left as it is: it runs with Keras 2 as `tf.keras` (tf-keras)."""
        if is_module('tf_keras'):
            self.note(TO_CHECK, node, f'{what}: {rules.TF_LAYERS_WITH_KERAS_2}')
        else:
            self.note(NOT_PORTED, node, f'{what}: {rules.TF_LAYERS_UNPORTABLE}')


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
        new.append(cst.Arg(value=value, keyword=cst.Name(new_keyword), equal=_equal(),
                           comma=argument.comma,
                           whitespace_after_arg=argument.whitespace_after_arg))
    for keyword, code in port.defaults.items():
        if keyword not in given:
            new.append(cst.Arg(value=cst.parse_expression(code), keyword=cst.Name(keyword),
                               equal=_equal()))
    last = len(new) - 1
    return [argument.with_changes(comma=cst.MaybeSentinel.DEFAULT) if index == last
            else argument if isinstance(argument.comma, cst.Comma)
            else argument.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(' ')))
            for index, argument in enumerate(new)]


_DROP = object()


def _equal() -> cst.AssignEqual:
    """A keyword's `=` without spaces: a new node each time, since the passes after this one
    work on the same tree, where a node found twice would have two parents and positions."""
    return cst.AssignEqual(cst.SimpleWhitespace(''), cst.SimpleWhitespace(''))


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
