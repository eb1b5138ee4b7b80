"""`scipy.misc`, which SciPy emptied: its names moved, or removed with what replaces them.

TF1-era code reads, resizes and saves images with `scipy.misc.imread` / `imresize` / `imsave`
(Pillow underneath), removed in SciPy 1.2 and 1.3; the dataset functions (`face`, `ascent`)
and `derivative` went in 1.12. No SciPy that installs beside numpy 2 has them.

- `from scipy.misc import ...` of names that moved (`logsumexp` and the combinatorics to
  `scipy.special`, the datasets to `scipy.datasets`), all to one module -> imported from it:
  the same functions;
- every other use is reported with what replaces it: no rewrite is certain, since imresize and
  imsave rescaled the values to 0-255 first and took (height, width) where Pillow takes
  (width, height).
"""

import re
from typing import Dict

import libcst as cst

from slimdata.port.edits import CHANGED, NOT_PORTED, code_of
from slimdata.port.spelling import SpellingAware

#: Names SciPy moved out of scipy.misc: the module that has them.
MOVED: Dict[str, str] = {
    **dict.fromkeys(('comb', 'factorial', 'factorial2', 'factorialk', 'logsumexp'),
                    'scipy.special'),
    'pade': 'scipy.interpolate',
    **dict.fromkeys(('face', 'ascent', 'electrocardiogram'), 'scipy.datasets'),
}
_RESCALED = ('it rescaled the values to 0-255 and made them uint8 first, unless they were '
             'uint8 already')
#: Names SciPy removed from scipy.misc without a successor: what does their job.
REMOVED: Dict[str, str] = {
    'imread': 'numpy.asarray(PIL.Image.open(path)) (mode= and flatten= were '
              "PIL's .convert(mode) and .convert('F'))",
    'imsave': f'PIL.Image.fromarray(array).save(path), where {_RESCALED}',
    'imresize': 'numpy.asarray(PIL.Image.fromarray(array).resize((width, height), '
                'PIL.Image.BILINEAR)), where imresize took (height, width), a percentage or '
                f'a fraction, and {_RESCALED}',
    'imrotate': 'PIL.Image.fromarray(array).rotate(angle, resample=PIL.Image.BILINEAR)',
    'imfilter': "PIL's ImageFilter", 'imshow': 'matplotlib.pyplot.imshow',
    'toimage': f'PIL.Image.fromarray(array), where {_RESCALED}',
    'fromimage': 'numpy.asarray(image)',
    'bytescale': 'rescale to 0-255 and cast to numpy.uint8',
    'derivative': 'no successor in SciPy before scipy.differentiate (1.15)',
    'central_diff_weights': 'no successor in SciPy', 'lena': 'scipy.datasets.ascent',
}


class ScipyMiscPass(SpellingAware):
    """Imports the moved names of scipy.misc from their modules, reports the rest (see the
    module docstring)."""

    NAME = 'scipy.misc'
    TRIGGER = re.compile(r'\bmisc\b')
    # Its work is at imports of scipy.misc and the uses of what they bind.
    FILTERS_STATEMENTS = True

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        module = code_of(original.module) if original.module and not original.relative else ''
        if module != 'scipy.misc' or isinstance(original.names, cst.ImportStar):
            return updated
        names = [code_of(alias.name) for alias in original.names]
        targets = {MOVED.get(name) for name in names}
        if len(targets) == 1 and None not in targets:
            target = targets.pop()
            self.note(CHANGED, original, f'from scipy.misc import {", ".join(names)} -> from '
                                         f'{target} import ... (SciPy moved them there)')
            new_module = cst.parse_expression(str(target))
            assert isinstance(new_module, cst.Attribute)
            return updated.with_changes(module=new_module)
        for name in names:
            self._report(original, name)
        return updated

    def leave_Attribute(self, original: cst.Attribute,
                        updated: cst.Attribute) -> cst.BaseExpression:
        name = original.attr.value
        if ((name in MOVED or name in REMOVED) and isinstance(original.value, (cst.Name,
                                                                               cst.Attribute))
                and self.qualified_name(original) == f'scipy.misc.{name}'):
            self._report(original, name)
        return updated

    def _report(self, node: cst.CSTNode, name: str) -> None:
        if name in MOVED:
            self.note(NOT_PORTED, node, f'scipy.misc.{name}: SciPy moved it to '
                                        f'{MOVED[name]}.{name}')
        elif name in REMOVED:
            self.note(NOT_PORTED, node, f'scipy.misc.{name}: SciPy removed it; use '
                                        f'{REMOVED[name]}')
