"""image bytes read in text mode get mode "rb" (slimdata.port.py3.binary_reads), ported and run."""

from port_snippets import kinds, port, port_with_work, run
from slimdata.port import edits
from slimdata.port.py3.binary_reads import BinaryReadsPass


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


CONVERTER = '''import tensorflow as tf


def _bytes_feature(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def to_example(path, label):
    payload = open(path).read()
    height, width = 2, 3
    shape = [height, width, label]
    for _ in range(2):
        shape.append(len(shape))
    return tf.train.Example(features=tf.train.Features(feature={
        'shape': tf.train.Feature(int64_list=tf.train.Int64List(value=shape)),
        'encoded': _bytes_feature(payload)}))


def unrelated(path):
    text = open(path).read()
    return text.split()


MODULE_PAYLOAD = open(__file__).read()
SINK = tf.train.BytesList(value=[MODULE_PAYLOAD.encode() if isinstance(MODULE_PAYLOAD, str)
                                 else MODULE_PAYLOAD])
'''


def test_a_read_whose_value_goes_into_a_bytes_sink_statements_later_becomes_binary(tmp_path):
    """The scan of a function reads the statements holding a read or a bytes sink, however
    many others lie between; a read whose value goes nowhere of the kind is left."""
    image = tmp_path / 'a.jpg'
    image.write_bytes(b'\xff\xd8\xff\xe0 not utf-8 \x80\x81')
    code, notes = port(CONVERTER)
    assert "payload = open(path, 'rb').read()" in code
    assert "text = open(path).read()" in code  # open(), not TensorFlow's: not reported
    assert "MODULE_PAYLOAD = open(__file__, 'rb').read()" in code  # goes into BytesList
    changed = sorted(note.line for note in kinds(notes, edits.CHANGED) if "'rb'" in note.message)
    lines = code.splitlines()
    assert changed == [number for number, line in enumerate(lines, 1) if "'rb')" in line]
    converter = tmp_path / 'converter.py'
    converter.write_text(code)
    namespace = {'__name__': 'converter', '__file__': str(converter)}
    exec(compile(code, str(converter), 'exec'), namespace)  # noqa: S102
    example = namespace['to_example'](str(image), 1)
    assert example.features.feature['encoded'].bytes_list.value[0] == image.read_bytes()


def test_python_s_tree_shows_the_pass_the_whole_file_reads_in_text_mode_only():
    """The pass walks only the statements where Python's tree shows a file read whole in text
    mode (`work_lines`): not the reads of a file object or in mode 'rb'."""
    code = ('import tensorflow as tf\n\n\n'
            'def label_names(path):\n'
            "    with tf.gfile.Open(path, 'rb') as f:\n"
            '        lines = f.read()\n'
            "    return lines.split(b'\\n'), open(path, 'rb').read(), open(path).read(5)\n\n\n"
            'def images(path, mode):\n'
            '    image_data = open(path).read()\n'
            "    encoded_jpg = tf.gfile.GFile(path, 'r').read()\n"
            "    seg_data = open(path, mode='rt').read()\n"
            '    unknown = open(path, mode).read()\n'
            '    return image_data, encoded_jpg, seg_data, unknown\n')
    notes = port_with_work(BinaryReadsPass, code, [11, 12, 13], untouched=10)
    assert [note.line for note in kinds(notes, edits.CHANGED)] == [11, 12, 13]
