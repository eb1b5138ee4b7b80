"""`yaml.load(stream)` without a Loader, which PyYAML 6 refuses.

PyYAML 5.1 deprecated `yaml.load` and `yaml.load_all` without a `Loader`, using its FullLoader
for them, and 6.0 made the argument required ("load() missing 1 required positional argument:
'Loader'"). TF1-era configuration readers call it so (Faster R-CNN's `cfg_from_file`):
`yaml.load(stream)` -> `yaml.load(stream, Loader=yaml.FullLoader)`, what PyYAML 5.1-5.4 did
for that call. (Before 5.1 it used `yaml.Loader`, which builds any Python object a document
names; FullLoader builds the plain types and the Python ones a configuration holds.)
"""

import re

import libcst as cst

from slimdata.port.edits import CHANGED, code_of, keyword_argument, with_argument
from slimdata.port.spelling import SpellingAware

_LOADS = frozenset(('yaml.load', 'yaml.load_all'))


class YamlLoadPass(SpellingAware):
    """Gives `yaml.load` / `yaml.load_all` calls without a Loader PyYAML 5's FullLoader."""

    NAME = 'yaml load'
    TRIGGER = re.compile(r'\byaml\b')
    # Its work is at calls of yaml, or of what an import from it binds (`load`).
    FILTERS_STATEMENTS = True

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if (self.qualified_name(original.func) not in _LOADS
                or len([argument for argument in original.args if argument.keyword is None]) != 1
                or any(argument.keyword is not None and argument.keyword.value == 'Loader'
                       or argument.star for argument in original.args)):
            return updated
        if isinstance(original.func, cst.Attribute):
            loader = f'{code_of(original.func.value)}.FullLoader'
        else:  # `from yaml import load`
            self.need_import('import yaml')
            loader = 'yaml.FullLoader'
        self.note(CHANGED, original, f'{code_of(original.func)}(..., Loader={loader}): PyYAML 6 '
                                     'requires a Loader; FullLoader is what PyYAML 5 used '
                                     'without one')
        return with_argument(updated, keyword_argument('Loader', cst.parse_expression(loader)))
