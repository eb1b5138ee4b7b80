"""OpenCV 2's names, which OpenCV 3 removed with its `cv2.cv` module: their OpenCV 3 names.

TF1-era text detectors draw and fit rotated boxes with OpenCV 2 (`cv2.cv.BoxPoints(rect)`,
seglink's and pixel_link's pylib): on any OpenCV a wheel installs today that is
"module 'cv2' has no attribute 'cv'". The same functions and constants under their new names:

- `cv2.cv.BoxPoints` -> `cv2.boxPoints` (the same four corners: a float32 array where OpenCV 2
  gave a tuple of pairs; `np.int0(points)` and indexing read both alike);
- `cv2.cv.CV_FOURCC` -> `cv2.VideoWriter_fourcc`;
- the constants: `CV_AA` -> `LINE_AA`, `CV_FILLED` -> `FILLED`, `CV_LOAD_IMAGE_COLOR` ->
  `IMREAD_COLOR` (and kin), colour conversions `CV_BGR2RGB` -> `COLOR_BGR2RGB`, capture
  properties `CV_CAP_PROP_FPS` -> `CAP_PROP_FPS`, and the others OpenCV 3 kept without `CV_`
  (`CV_INTER_LINEAR`, `CV_THRESH_BINARY`, `CV_RETR_EXTERNAL`, ...), whether written on `cv2`
  or on `cv2.cv`;
- any other name of `cv2.cv` is reported.
"""

import re
from typing import Optional

import libcst as cst

from slimdata.port.edits import CHANGED, NOT_PORTED, code_of
from slimdata.port.spelling import SpellingAware

#: OpenCV 2 names -> OpenCV 3's, where more than the `CV_` prefix changed.
RENAMES = {
    'BoxPoints': 'boxPoints', 'CV_FOURCC': 'VideoWriter_fourcc', 'CV_AA': 'LINE_AA',
    'CV_FILLED': 'FILLED', 'CV_LOAD_IMAGE_COLOR': 'IMREAD_COLOR',
    'CV_LOAD_IMAGE_GRAYSCALE': 'IMREAD_GRAYSCALE', 'CV_LOAD_IMAGE_UNCHANGED': 'IMREAD_UNCHANGED',
    'CV_LOAD_IMAGE_ANYDEPTH': 'IMREAD_ANYDEPTH', 'CV_LOAD_IMAGE_ANYCOLOR': 'IMREAD_ANYCOLOR',
}
# A colour conversion code (`CV_BGR2RGB`, `CV_RGB2GRAY`, `CV_BGR2HSV_FULL`): `COLOR_` + the rest.
_COLOR = re.compile(r'CV_((?:BGR|RGB|GRAY|HSV|HLS|LAB|LUV|XYZ|YUV|YCrCb|BGRA|RGBA)\w*2\w+)$')
# Constants OpenCV 3 kept, less their `CV_` prefix.
_KEPT = re.compile(r'CV_((?:CAP_PROP|INTER|THRESH|RETR|CHAIN_APPROX|WINDOW|EVENT|FONT|'
                   r'MORPH|ADAPTIVE_THRESH|DIST|TM)_\w+)$')


def opencv_3_name(old: str) -> Optional[str]:
    """OpenCV 3's name of OpenCV 2's `old` (an attribute of cv2 or cv2.cv), or None."""
    if old in RENAMES:
        return RENAMES[old]
    color = _COLOR.match(old)
    if color:
        return f'COLOR_{color.group(1)}'
    kept = _KEPT.match(old)
    return kept.group(1) if kept else None


class OpenCVNamesPass(SpellingAware):
    """Renames OpenCV 2's names to OpenCV 3's (see the module docstring)."""

    NAME = 'OpenCV names'
    TRIGGER = re.compile(r'\bcv2?\.(?:cv\.|CV_)|\bcv2\.cv\b')
    # Its work is at a name of cv2.cv (`cv` under any name bound to it) or a `CV_` constant.
    FILTERS_STATEMENTS = True
    STATEMENTS = re.compile(r'\bcv\b|\bCV_')

    def visit_Module(self, node: cst.Module) -> None:
        self.learn_spelling(node)

    def leave_Attribute(self, original: cst.Attribute,
                        updated: cst.Attribute) -> cst.BaseExpression:
        name = self.qualified_name(original) or ''
        parent, _, old = name.rpartition('.')
        if parent not in ('cv2', 'cv2.cv') or (parent == 'cv2' and not old.startswith('CV_')):
            return updated
        new = opencv_3_name(old)
        cv2 = _cv2_expression(original.value) if parent == 'cv2.cv' else original.value
        if new is None or cv2 is None:
            if parent == 'cv2.cv':
                self.note(NOT_PORTED, original, f'{code_of(original)}: OpenCV 3 removed cv2.cv'
                                                + (f'; use cv2.{new}' if new else ''))
            return updated
        replacement = cst.Attribute(value=cv2, attr=cst.Name(new))
        self.note(CHANGED, original, f'{code_of(original)} -> {code_of(replacement)} (OpenCV 3 '
                                     "removed OpenCV 2's name)")
        return replacement


def _cv2_expression(cv: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`cv2` of `cv2.cv` (the expression for the module cv2.cv is an attribute of), or None."""
    if isinstance(cv, cst.Attribute) and cv.attr.value == 'cv':
        return cv.value
    return None
