"""TensorFlow 0.x's API where TensorFlow 1.0 changed it: names, keywords, argument orders.

Research code of 2016 was written for TensorFlow 0.x (smallcorgi/Faster-RCNN_TF, the most
copied TensorFlow port of py-faster-rcnn: `tf.concat(3, [a, b])`, `tf.pack`, `tf.mul`).
TensorFlow 1.0 renamed names (`tf.mul` -> `tf.multiply`, `tf.pack` -> `tf.stack`, the
summaries under `tf.summary`) and keywords (`concat_dim=` -> `axis=`), and put the axis of
`tf.concat` and `tf.split` last; it shipped `tf_upgrade.py` for the move. This pass follows that
script's tables (`RENAMES`, `KEYWORDS`, `ORDERS`), under every spelling of TensorFlow, and
changes a name or keyword only where the installed `tf.compat.v1` lacks it and has its
successor (TF 1.x kept some: `reduction_indices=` still works):

- a renamed name -> its TensorFlow 1 name;
- a keyword the installed function lacks -> its TensorFlow 1 keyword;
- `tf.concat(3, values)`, `tf.split(0, 2, x)` (an integer first: TensorFlow 0.x's order) ->
  the arguments by keyword in that order, `tf.concat(axis=3, values=values)`, as tf_upgrade
  wrote them; `tf.concat(dim, values)` with a name first, in a file where the pass changed
  TensorFlow 0.x code, is reported (TensorFlow 1 code passes a name of a list first);
- the cross-entropy losses given logits and labels by position (TensorFlow 1 takes them by
  keyword only) -> by keyword, in TensorFlow 0.x's order (logits first);
- `tf.reverse(x, [True, False, True])` (TensorFlow 0.x took a boolean per dimension) -> the
  indices of the reversed dimensions, `tf.reverse(x, [0, 2])`;
- where the installed TensorFlow still has a TensorFlow 0.x function with its order
  (`tf.compat.v1.op_scope(values, name)`), its calls are left as they are.
"""

import ast
import functools
import inspect
import re
from typing import Dict, List, Optional, Sequence, Tuple, cast

import libcst as cst

from slimdata.port import installed
from slimdata.port.edits import CHANGED, NO_BINDINGS, NOT_PORTED, Context, code_of
from slimdata.port.facts import MatchedLines, node_lines, words_pattern
from slimdata.port.spelling import SpellingAware

#: TensorFlow 0.x's names -> TensorFlow 1's (paths under `tensorflow.`; tf_upgrade's table).
RENAMES: Dict[str, str] = {
    'mul': 'multiply', 'sub': 'subtract', 'neg': 'negative', 'inv': 'reciprocal',
    'pack': 'stack', 'unpack': 'unstack', 'select': 'where', 'complex_abs': 'abs',
    'batch_matmul': 'matmul', 'listdiff': 'setdiff1d', 'list_diff': 'setdiff1d',
    'op_scope': 'name_scope',
    'scalar_summary': 'summary.scalar', 'histogram_summary': 'summary.histogram',
    'audio_summary': 'summary.audio', 'image_summary': 'summary.image',
    'merge_summary': 'summary.merge', 'merge_all_summaries': 'summary.merge_all',
    'contrib.deprecated.scalar_summary': 'summary.scalar',
    'contrib.deprecated.histogram_summary': 'summary.histogram',
    'train.SummaryWriter': 'summary.FileWriter',
    'image.per_image_whitening': 'image.per_image_standardization',
    'all_variables': 'global_variables', 'GraphKeys.VARIABLES': 'GraphKeys.GLOBAL_VARIABLES',
    'initialize_all_variables': 'global_variables_initializer',
    'initialize_variables': 'variables_initializer',
    'initialize_local_variables': 'local_variables_initializer',
    **{f'batch_{name}': name for name in (
        'matrix_diag', 'matrix_transpose', 'matrix_determinant', 'matrix_inverse', 'cholesky',
        'cholesky_solve', 'matrix_solve', 'matrix_triangular_solve', 'matrix_solve_ls',
        'self_adjoint_eig', 'self_adjoint_eigvals', 'svd', 'fft', 'ifft', 'fft2d', 'ifft2d',
        'fft3d', 'ifft3d')},
    'batch_matrix_band_part': 'matrix_band_part', 'batch_matrix_set_diag': 'matrix_set_diag',
}

_AXIS = {'reduction_indices': 'axis'}
#: Keywords TensorFlow 1.0 renamed, by TensorFlow 1's function (tf_upgrade's table).
KEYWORDS: Dict[str, Dict[str, str]] = {
    'matmul': {'adj_x': 'adjoint_a', 'adj_y': 'adjoint_b'},
    'concat': {'concat_dim': 'axis'},
    'split': {'split_dim': 'axis', 'num_split': 'num_or_size_splits'},
    'sparse_concat': {'concat_dim': 'axis'}, 'sparse_split': {'split_dim': 'axis'},
    'reverse_sequence': {'seq_dim': 'seq_axis', 'batch_dim': 'batch_axis'},
    'squeeze': {'squeeze_dims': 'axis'}, 'expand_dims': {'dim': 'axis'},
    'argmax': {'dimension': 'axis'}, 'argmin': {'dimension': 'axis'},
    'sparse_reduce_sum': {'reduction_axes': 'axis'},
    'sparse_reduce_sum_sparse': {'reduction_axes': 'axis'},
    'nn.sigmoid_cross_entropy_with_logits': {'targets': 'labels'},
    'nn.weighted_cross_entropy_with_logits': {'targets': 'labels'},
    **{f'reduce_{name}': _AXIS for name in ('all', 'any', 'max', 'mean', 'min', 'prod', 'sum',
                                            'logsumexp', 'join')},
    'count_nonzero': _AXIS,
}

#: TensorFlow 0.x's positional order of the functions TensorFlow 1.0 reordered (by TensorFlow
#: 0.x's name), as TensorFlow 1's keywords.
ORDERS: Dict[str, Tuple[str, ...]] = {
    'concat': ('axis', 'values', 'name'),
    'split': ('axis', 'num_or_size_splits', 'value', 'name'),
    'nn.softmax_cross_entropy_with_logits': ('logits', 'labels', 'dim', 'name'),
    'nn.sparse_softmax_cross_entropy_with_logits': ('logits', 'labels', 'name'),
    'nn.sigmoid_cross_entropy_with_logits': ('logits', 'labels', 'name'),
    'op_scope': ('values', 'name', 'default_name'),
}
#: The functions whose TensorFlow 0.x order shows in an integer first (the axis); for the
#: others any positional argument is TensorFlow 0.x's (TensorFlow 1 takes keywords only).
_AXIS_FIRST = frozenset(('concat', 'split'))

_RENAMED = frozenset(path.rsplit('.', 1)[-1] for path in RENAMES)
#: The last names of the functions whose calls the pass may change.
_CALLED = _RENAMED | {path.rsplit('.', 1)[-1] for path in (*KEYWORDS, *ORDERS, 'reverse')}
_OLD_KEYWORDS = frozenset(old for renames in KEYWORDS.values() for old in renames)
#: The last names of the functions whose positional arguments the pass may reorder.
_ORDERED = {path.rsplit('.', 1)[-1]: order for path, order in ORDERS.items()}


@functools.lru_cache(maxsize=None)
def _in_installed(path: str) -> bool:
    return installed.resolve_v1(path) is not None


@functools.lru_cache(maxsize=None)
def _signature(path: str) -> Tuple[inspect.Parameter, ...]:
    """The parameters of the installed `tf.compat.v1.<path>`, in order (none if unknown)."""
    try:
        return tuple(inspect.signature(installed.resolve_v1(path)).parameters.values())
    except (TypeError, ValueError):
        return ()


def _parameters(path: str) -> Optional[frozenset]:
    """The keyword parameters of the installed `tf.compat.v1.<path>`, or None (unknown)."""
    parameters = _signature(path)
    if not parameters or any(parameter.kind == parameter.VAR_KEYWORD
                             for parameter in parameters):
        return None
    return frozenset(parameter.name for parameter in parameters)


def _positional_names(path: str) -> Tuple[str, ...]:
    """The names of the installed `tf.compat.v1.<path>`'s positional parameters, in order."""
    return tuple(parameter.name for parameter in _signature(path)
                 if parameter.kind == parameter.POSITIONAL_OR_KEYWORD)


def renamed(old: str) -> Optional[str]:
    """TensorFlow 1's path of TensorFlow 0.x's `old` where the installed TensorFlow needs it
    (it lacks `old` and has the new one), else None."""
    new = RENAMES.get(old)
    return new if new is not None and not _in_installed(old) and _in_installed(new) else None


class TensorFlow0Pass(SpellingAware):
    """Ports TensorFlow 0.x's calls to TensorFlow 1's (see the module docstring)."""

    NAME = 'TensorFlow 0.x'
    TRIGGER = re.compile(r'\.' + words_pattern(_RENAMED) + '|' + words_pattern(_OLD_KEYWORDS)
                         + r'\s*=|\b(?:concat|split)\(\s*-?\d|\breverse\(|'
                         r'cross_entropy_with_logits\(')
    FILTERS_STATEMENTS = True
    # Its work is at what its trigger matches, and at any concat or split (whose order it
    # reports in a file where it changed TensorFlow 0.x code).
    STATEMENTS = re.compile(TRIGGER.pattern + r'|\b(?:concat|split)\(')
    BINDINGS = NO_BINDINGS

    @classmethod
    def work_lines(cls, tree: ast.Module, code: str, context: Context) -> MatchedLines:
        """The lines of what the pass may change or report (`_may_port`), in the statements
        its text matches: most `concat` and `split` calls are TensorFlow 1's, a list first."""
        return node_lines(tree, code, (ast.Attribute, ast.Call), _may_port, cls.STATEMENTS)

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)
        # Calls whose order the pass cannot tell: reported if the file shows TensorFlow 0.x
        # in code the pass changes (a name in a docstring is no evidence).
        self.unclear: List[Tuple[cst.Call, str]] = []

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if any(note.kind == CHANGED for note in self.notes):
            for call, message in self.unclear:
                self.note(NOT_PORTED, call, message)
        return updated

    def _path(self, node: cst.BaseExpression) -> str:
        """The path under `tensorflow.` that `node` names, or ''."""
        name = self.qualified_name(node) or ''
        return name[len('tensorflow.'):] if name.startswith('tensorflow.') else ''

    def leave_Attribute(self, original: cst.Attribute,
                        updated: cst.Attribute) -> cst.BaseExpression:
        if original.attr.value not in _RENAMED:
            return updated  # checked first: a qualified name costs the file's scope analysis
        old = self._path(original)
        new = renamed(old)
        if new is None:
            return updated
        written = code_of(original)
        if not written.endswith('.' + old):
            self.note(NOT_PORTED, original, f'{written}: TensorFlow 1.0 renamed tf.{old} to '
                                            f'tf.{new}')
            return updated
        replacement = cst.parse_expression(written[:-len(old)] + new)
        self.note(CHANGED, original, f'{written} -> {code_of(replacement)} (TensorFlow 1.0 '
                                     'renamed it)')
        return replacement

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not (isinstance(original.func, cst.Attribute)
                and original.func.attr.value in _CALLED):
            return updated
        old = self._path(original.func)
        if not old:
            return updated
        path = renamed(old) or old  # the function the call ends up calling
        updated = self._with_keywords(original, updated, path)
        if old in ORDERS:
            return self._by_keyword(original, updated, path, old)
        if path == 'reverse':
            return self._reversed_dimensions(original, updated)
        return updated

    def _with_keywords(self, original: cst.Call, updated: cst.Call, path: str) -> cst.Call:
        """`updated` with the keywords TensorFlow 1.0 renamed that the installed function
        lacks renamed."""
        renames = KEYWORDS.get(path, {})
        parameters = _parameters(path) if renames else None
        if parameters is None:
            return updated
        arguments = []
        for argument in updated.args:
            keyword = argument.keyword.value if argument.keyword is not None else ''
            new = renames.get(keyword)
            if new is not None and keyword not in parameters and new in parameters:
                self.note(CHANGED, original, f'{code_of(original.func)}({keyword}=...) -> '
                                             f'{new}= (TensorFlow 1.0 renamed the keyword)')
                argument = argument.with_changes(keyword=cst.Name(new))
            arguments.append(argument)
        return updated.with_changes(args=arguments)

    def _by_keyword(self, original: cst.Call, updated: cst.Call, path: str,
                    old: str) -> cst.Call:
        """The positional arguments of a reordered function, by keyword in TensorFlow 0.x's
        order, where they are TensorFlow 0.x's."""
        positional = [argument for argument in updated.args
                      if argument.keyword is None and not argument.star]
        if not positional or any(argument.star for argument in updated.args):
            return updated
        order = ORDERS[old]
        if _positional_names(path)[:len(positional)] == order[:len(positional)]:
            return updated  # the installed function takes them in this order (tf.op_scope)
        parameters = _parameters(path)
        if path in _AXIS_FIRST and not _is_integer(positional[0].value):
            named = {argument.keyword.value for argument in updated.args if argument.keyword}
            if len(positional) >= 2 and not named & set(order) and not isinstance(
                    positional[0].value, (cst.List, cst.Tuple, cst.ListComp)):
                self.unclear.append((original, f'{code_of(original.func)}('
                                     f'{code_of(positional[0].value)}, ...): TensorFlow 0.x '
                                     'took the axis first, TensorFlow 1 takes it last, and '
                                     'this file is written for TensorFlow 0.x elsewhere: '
                                     'check the order'))
            return updated
        if (len(positional) > len(order) or parameters is None
                or not set(order[:len(positional)]) <= parameters):
            self.note(NOT_PORTED, original, f'{code_of(original.func)}(...): TensorFlow 1.0 '
                                            'reordered its arguments; these are not the ones '
                                            'the port rewrites')
            return updated
        in_order = iter(order)
        arguments = [argument.with_changes(
            keyword=cst.Name(next(in_order)),
            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(''),
                                  whitespace_after=cst.SimpleWhitespace('')))
                     if argument.keyword is None else argument for argument in updated.args]
        given = ', '.join(f'{keyword}=' for keyword in order[:len(positional)])
        self.note(CHANGED, original, f"{code_of(original.func)}(...): TensorFlow 0.x's "
                                     f'positional arguments -> {given} (tf.{old} {_why(old)})')
        return updated.with_changes(args=arguments)

    def _reversed_dimensions(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """`tf.reverse(x, [True, False, True])` -> `tf.reverse(x, [0, 2])`."""
        if len(updated.args) < 2 or updated.args[1].star or updated.args[0].keyword or (
                updated.args[1].keyword is not None and updated.args[1].keyword.value != 'dims'):
            return updated
        flags = _booleans(updated.args[1].value)
        if flags is None:
            return updated
        dimensions = cst.parse_expression(
            '[' + ', '.join(str(index) for index, flag in enumerate(flags) if flag) + ']')
        self.note(CHANGED, original, f'{code_of(original.func)}(x, '
                                     f'{code_of(updated.args[1].value)}) -> '
                                     f'{code_of(dimensions)} (TensorFlow 0.x took a boolean '
                                     'per dimension, TensorFlow 1 the dimensions)')
        second = updated.args[1].with_changes(value=dimensions)
        if second.keyword is not None:
            second = second.with_changes(keyword=cst.Name('axis'))
        return updated.with_changes(args=[updated.args[0], second, *updated.args[2:]])


def _may_port(node: ast.AST) -> bool:
    """Whether the pass may change or report `node` of Python's tree (an attribute or a
    call): a renamed name, a renamed keyword, positional arguments whose order TensorFlow 1.0
    changed (`_by_keyword`), booleans given to `reverse`."""
    if isinstance(node, ast.Attribute):
        return node.attr in _RENAMED
    func = cast(ast.Call, node).func
    if not isinstance(func, ast.Attribute) or func.attr not in _CALLED:
        return False
    call = cast(ast.Call, node)
    values = [*call.args, *(keyword.value for keyword in call.keywords)]
    if func.attr == 'reverse':
        return any(_boolean_literals(value) for value in values)
    keywords = {keyword.arg for keyword in call.keywords}
    if keywords & _OLD_KEYWORDS:
        return True
    order = _ORDERED.get(func.attr)
    if (order is None or not call.args or None in keywords
            or any(isinstance(argument, ast.Starred) for argument in call.args)):
        return False
    if func.attr not in _AXIS_FIRST:
        return True  # any positional argument is TensorFlow 0.x's
    first = call.args[0]
    # An integer first is TensorFlow 0.x's order; a name first may be reported.
    return _is_integer_literal(first) or (
        len(call.args) >= 2 and not keywords & set(order)
        and not isinstance(first, (ast.List, ast.Tuple, ast.ListComp)))


def _is_integer_literal(node: ast.expr) -> bool:
    """`_is_integer` on Python's tree."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _boolean_literals(node: ast.expr) -> bool:
    """Whether `node` is a list or tuple of `True` / `False` (`_booleans` on Python's tree)."""
    return isinstance(node, (ast.List, ast.Tuple)) and bool(node.elts) and all(
        isinstance(element, ast.Constant) and type(element.value) is bool
        for element in node.elts)


def _why(old: str) -> str:
    if old in _AXIS_FIRST:
        return 'took the axis first; TensorFlow 1.0 takes it last'
    if old == 'op_scope':
        return 'took its values first; tf.name_scope takes its name first'
    return 'took logits and labels by position; TensorFlow 1.0 by keyword only'


def _is_integer(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)


def _booleans(node: cst.BaseExpression) -> Optional[Sequence[bool]]:
    """The values of a list or tuple of `True` / `False` literals, or None."""
    if not isinstance(node, (cst.List, cst.Tuple)) or not node.elements:
        return None
    values = [element.value.value for element in node.elements
              if isinstance(element.value, cst.Name)]
    if len(values) != len(node.elements) or not set(values) <= {'True', 'False'}:
        return None
    return [value == 'True' for value in values]
