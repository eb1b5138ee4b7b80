"""OpenCV 2's names -> OpenCV 3's (slimdata.port.py3.opencv_names). OpenCV is no dependency of
slimdata: where it is installed, every name the port writes is checked to be there, and
BoxPoints's replacement run; the expectations otherwise are OpenCV 3's documented names."""

import pytest

from port_snippets import kinds, port
from slimdata.port import edits
from slimdata.port.py3 import opencv_names

# seglink's tf_extended/seglink.py and pylib's util/img.py (seglink, pixel_link).
SOURCE = ('import cv2\nimport numpy as np\n\n\n'
          'def corners(rect, image):\n'
          '    points = np.int0(cv2.cv.BoxPoints(rect))\n'
          '    cv2.polylines(image, [points], True, (0, 255, 0), 1, cv2.CV_AA)\n'
          '    gray = cv2.cvtColor(image, cv2.cv.CV_BGR2GRAY)\n'
          '    image_bgr = cv2.imread("x", cv2.CV_LOAD_IMAGE_COLOR)\n'
          '    return points, gray, image_bgr, cv2.cv.CV_CAP_PROP_FPS\n')
OLD_NAMES = ['BoxPoints', 'CV_FOURCC', 'CV_AA', 'CV_FILLED', 'CV_LOAD_IMAGE_COLOR',
             'CV_BGR2GRAY', 'CV_RGB2BGR', 'CV_BGR2HSV_FULL', 'CV_CAP_PROP_FPS',
             'CV_INTER_LINEAR', 'CV_THRESH_BINARY', 'CV_RETR_EXTERNAL', 'CV_CHAIN_APPROX_SIMPLE']


def test_opencv_2_names_become_opencv_3_names():
    code, notes = port(SOURCE)
    for new in ('np.intp(cv2.boxPoints(rect))', 'cv2.LINE_AA)', 'cv2.COLOR_BGR2GRAY)',
                'cv2.IMREAD_COLOR)', 'cv2.CAP_PROP_FPS\n'):
        assert new in code
    assert 'cv2.cv.' not in code and 'CV_' not in code
    # np.int0 too (numpy 2 removed it): line 6 twice.
    assert sorted(note.line for note in kinds(notes, edits.CHANGED)) == [6, 6, 7, 8, 9, 10]


def test_a_cv2_cv_name_without_a_known_successor_is_reported():
    code, notes = port('import cv2\nseq = cv2.cv.CreateMemStorage()\n')
    [note] = notes
    assert note.kind == edits.NOT_PORTED and note.line == 2 and 'cv2.cv' in note.message


def test_every_name_written_is_in_the_installed_opencv():
    cv2 = pytest.importorskip('cv2')
    for old in OLD_NAMES:
        assert hasattr(cv2, opencv_names.opencv_3_name(old)), old
    rect = ((10.0, 20.0), (8.0, 4.0), 30.0)
    code, _ = port(SOURCE)
    namespace: dict = {}
    exec(compile(code, 'ported.py', 'exec'), namespace)  # noqa: S102
    import numpy as np
    image = np.zeros((40, 40, 3), np.uint8)
    points = namespace['corners'](rect, image)[0]
    assert points.shape == (4, 2) and image.any()  # the box was drawn
