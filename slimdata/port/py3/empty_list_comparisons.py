"""`x == []` and `x != []` where `x` may be a numpy array: an error since numpy 1.25.

py-faster-rcnn's evaluation code and its TensorFlow ports test `if dets == []:`, where `dets`
is either the empty list it started as or an array of detections. Until numpy 1.25 an array
compared with `[]` gave `False` (the shapes do not broadcast: "elementwise comparison failed",
a warning), or an empty array, whose truth was `False` too. Since then the comparison is
elementwise: "operands could not be broadcast together with shapes (1,5) (0,)", or the truth
of an empty array, an error in numpy 2.2.

In a file that imports numpy, `x == []` -> `(isinstance(x, list) and x == [])` and `x != []`
-> `(not (isinstance(x, list) and x == []))`: what the comparison meant for lists and arrays
alike, written where `x` is a name, an attribute or a subscript (read twice, it gives the same
value twice).
"""

import re

import libcst as cst

from slimdata.port.edits import CHANGED, Context, PortTransformer, code_of


class EmptyListComparisonsPass(PortTransformer):
    """Rewrites comparisons with `[]` to what they meant for arrays (see the module
    docstring)."""

    NAME = 'empty list comparisons'
    TRIGGER = re.compile(r'[=!]=\s*\[\s*\]')
    FILTERS_STATEMENTS = True

    @classmethod
    def has_work(cls, code: str, context: Context) -> bool:
        return 'numpy' in code and super().has_work(code, context)

    def leave_Comparison(self, original: cst.Comparison,
                         updated: cst.Comparison) -> cst.BaseExpression:
        if len(original.comparisons) != 1:
            return updated
        target = original.comparisons[0]
        if not (isinstance(target.operator, (cst.Equal, cst.NotEqual))
                and isinstance(target.comparator, cst.List) and not target.comparator.elements
                and isinstance(original.left, (cst.Name, cst.Attribute, cst.Subscript))):
            return updated
        value = code_of(updated.left)
        meant = f'isinstance({value}, list) and {value} == []'
        new = f'({meant})' if isinstance(target.operator, cst.Equal) else f'(not ({meant}))'
        self.note(CHANGED, original, f'{code_of(original)} -> {new}: numpy 1.25 compares an '
                                     'array with [] elementwise (an error for most shapes); '
                                     'an array was never equal to []')
        return cst.parse_expression(new)
