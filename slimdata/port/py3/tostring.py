"""`x.tostring()` -> `x.tobytes()`: the method every library that had it renamed.

numpy 2.3 removed `ndarray.tostring` and the scalars' `tostring` (deprecated since 1.19;
TextBoxes-TensorFlow's converter calls it on a `numpy.str_` read from a `.mat` file), Python
3.9 removed `array.array.tostring`, Pillow 3 removed `Image.tostring`: in each `tobytes` is the
same method under its new name, with the same arguments. So the call is renamed whatever its
receiver, unless the file defines a `tostring` of its own (then it is the file's method).
"""

import re

import libcst as cst

from slimdata.port.edits import CHANGED, NO_BINDINGS, PortTransformer, code_of, defines


class ToStringPass(PortTransformer):
    """Renames `.tostring(...)` calls to `.tobytes(...)` (see the module docstring)."""

    NAME = 'tostring'
    TRIGGER = re.compile(r'\.tostring\(')
    FILTERS_STATEMENTS = True  # its work is at the calls its trigger matches
    BINDINGS = NO_BINDINGS

    def visit_Module(self, node: cst.Module) -> bool:
        return not defines(self.source, 'tostring')  # else its calls are the file's own

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        func = updated.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == 'tostring'):
            return updated
        self.note(CHANGED, original, f'{code_of(original.func)}() -> .tobytes() (numpy 2.3, '
                                     'Python 3.9 array and Pillow 3 removed tostring)')
        return updated.with_changes(func=func.with_changes(attr=cst.Name('tobytes')))
