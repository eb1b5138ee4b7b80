"""Python 2's StringIO holding image bytes becomes io.BytesIO
(slimdata.port.py3.string_io), ported and run."""

import io

import numpy as np
from PIL import Image

from port_snippets import kinds, port, run
from slimdata.port import edits


def test_python_2_string_io_holding_an_image_becomes_bytes_io():
    old = ('import StringIO\nimport numpy as np\nfrom PIL import Image as PILImage\n\n\n'
           'def encode(pixels):\n    buffer = StringIO.StringIO()\n'
           "    PILImage.fromarray(pixels).save(buffer, 'PNG')\n    return buffer.getvalue()\n\n\n"
           'def decode(data):\n    return np.asarray(PILImage.open(StringIO.StringIO(data)))\n')
    code, notes = port(old)
    assert code.startswith('from io import BytesIO\n') and 'StringIO' not in code
    assert [note.line for note in notes] == [1, 7, 13]
    namespace = run(code)
    pixels = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(namespace['encode'](pixels)))),
                          pixels)
    assert np.array_equal(namespace['decode'](namespace['encode'](pixels)), pixels)


def test_python_2_string_io_of_uncertain_use_is_reported():
    old = 'import StringIO\n\n\ndef text():\n    return StringIO.StringIO()\n'
    code, notes = port(old)
    assert code == old
    [note] = kinds(notes, edits.NOT_PORTED)
    assert note.line == 1 and 'io.BytesIO' in note.message
