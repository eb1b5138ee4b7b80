"""Pillow 10's removed font getsize (slimdata.port.py3.font_getsize), run."""

from PIL import ImageFont

from port_snippets import kinds, port, run

# visualization_utils.draw_bounding_box_on_image of the Object Detection API (2019), in short.
PROGRAM = '''import os
from PIL import ImageFont

def label_sizes(display_str_list, font):
    display_str_heights = [font.getsize(ds)[1] for ds in display_str_list]
    text_width, text_height = font.getsize(display_str_list[0])
    return display_str_heights, (text_width, text_height)

free_type = label_sizes(['Hello 123', 'gy'], ImageFont.load_default())
bitmap = ImageFont.load_default_imagefont().getsize('Hello')
file_size = os.path.getsize(__file__)
stroked = lambda font: font.getsize('x', stroke_width=2)
'''


def _pillow_9_getsize(font, text):
    """Pillow 9's getsize, from the fonts' core measure: the size plus the offset."""
    if isinstance(font, ImageFont.FreeTypeFont):
        size, offset = font.font.getsize(text)
        return size[0] + offset[0], size[1] + offset[1]
    return tuple(font.font.getsize(text))


def test_font_getsize_measures_as_pillow_9_did(tmp_path):
    ported, notes = port(PROGRAM)
    assert [note.line for note in kinds(notes, 'changed')] == [5, 6, 10]
    assert [note.line for note in kinds(notes, 'not ported')] == [12]
    assert 'os.path.getsize(__file__)' in ported and ".getsize('x', stroke_width=2)" in ported
    script = tmp_path / 'ported.py'
    script.write_text(ported)
    namespace = run(ported.replace('__file__', repr(str(script))))
    free_type = ImageFont.load_default()
    expected = [_pillow_9_getsize(free_type, text) for text in ('Hello 123', 'gy')]
    assert namespace['free_type'] == ([size[1] for size in expected], expected[0])
    assert namespace['bitmap'] == _pillow_9_getsize(ImageFont.load_default_imagefont(), 'Hello')
    assert namespace['file_size'] == script.stat().st_size


def test_a_file_without_imagefont_is_left():
    code = 'def size(thing):\n    return thing.getsize("x")\n'
    assert port(code) == (code, [])
