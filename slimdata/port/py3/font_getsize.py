"""`font.getsize(text)` -> `font.getbbox(text)[2:]`: Pillow 10 removed the fonts' `getsize`.

Pillow 10 (2023) removed `FreeTypeFont.getsize` and `ImageFont.getsize` (the Object Detection
API's `visualization_utils` measures its labels with it, in every evaluation). Pillow 9's
`getsize(text)` was the text's size plus its offset, `(size + offset)`, and `getbbox(text)` is
`(offset, offset + size)`: its last two values are the same pair (for the bitmap font the offset
is 0 in both). So a call with the text alone (and the `direction`, `features`, `language`
keywords, which both take) becomes `getbbox(...)[2:]`; with `stroke_width` or more positional
arguments (`getbbox`'s second is `mode`) it is reported, not changed.

Only in a file that names `ImageFont`, and only where the receiver is not a module imported
(`os.path.getsize(path)` is a file's size): a value the file computed, or one of
`PIL.ImageFont`'s fonts.
"""

import re

import libcst as cst
from libcst.metadata import QualifiedNameProvider, QualifiedNameSource

from slimdata.port.edits import CHANGED, NO_BINDINGS, NOT_PORTED, PortTransformer, code_of

_SAME_KEYWORDS = frozenset(('direction', 'features', 'language'))


class FontGetsizePass(PortTransformer):
    """Measures text with `getbbox` where Pillow 10 removed `getsize` (see the module
    docstring)."""

    NAME = 'font getsize'
    TRIGGER = re.compile(r'\.getsize\(')
    FILTERS_STATEMENTS = True  # its work is at the calls its trigger matches
    BINDINGS = NO_BINDINGS

    def visit_Module(self, node: cst.Module) -> bool:
        return re.search(r'\bImageFont\b', self.source) is not None

    def _is_font_method(self, func: cst.Attribute) -> bool:
        names = self.get_metadata(QualifiedNameProvider, func, set())
        return all(name.source is not QualifiedNameSource.IMPORT
                   or name.name.startswith('PIL.ImageFont.') for name in names)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == 'getsize'
                and self._is_font_method(func)):
            return updated
        positional = [argument for argument in original.args if argument.keyword is None]
        keywords = {argument.keyword.value for argument in original.args if argument.keyword}
        if len(positional) != 1 or positional[0].star or not keywords <= _SAME_KEYWORDS:
            self.note(NOT_PORTED, original, f'{code_of(func)}(...): Pillow 10 removed the '
                                            "fonts' getsize; getbbox differs with these "
                                            'arguments (its last two values are the size)')
            return updated
        self.note(CHANGED, original, f'{code_of(func)}(...) -> .getbbox(...)[2:] (Pillow 10 '
                                     "removed the fonts' getsize; the same width and height)")
        measured = updated.with_changes(func=updated.func.with_changes(attr=cst.Name('getbbox')),
                                        lpar=[], rpar=[])
        return cst.Subscript(measured, [cst.SubscriptElement(cst.Slice(
            lower=cst.Integer('2'), upper=None))], lpar=updated.lpar, rpar=updated.rpar)
