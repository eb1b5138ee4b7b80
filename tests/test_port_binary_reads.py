"""image bytes read in text mode get mode "rb" (slimdata.port.py3.binary_reads), ported and run."""

from port_snippets import kinds, port, run
from slimdata.port import edits


def test_image_read_in_text_mode_becomes_binary(tmp_path):
    image = tmp_path / 'a.jpg'
    image.write_bytes(b'\xff\xd8\xff\xe0 not utf-8 \x80\x81')
    code, notes = port(
        'import tensorflow as tf\n\n\ndef read(path):\n'
        "    image_data = tf.io.gfile.GFile(path, 'r').read()\n"
        '    return image_data\n\n\n'
        'def read_text(path):\n'
        '    return tf.io.gfile.GFile(path).read()\n')
    assert "GFile(path, 'rb')" in code
    assert run(code)['read'](str(image)) == image.read_bytes()
    [note] = kinds(notes, edits.NOT_PORTED)
    assert note.line == 10 and "mode 'rb'" in note.message
