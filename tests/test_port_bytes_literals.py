"""str literals where a BytesList needs bytes become bytes literals
(slimdata.port.py3.bytes_literals), ported and run."""


from port_snippets import port, port_with_work, run
from slimdata.port.py3.bytes_literals import BytesLiteralsPass


def test_str_literal_where_bytes_list_needs_bytes():
    code, _ = port("import tensorflow as tf\n"
                    "f = tf.train.Feature(bytes_list=tf.train.BytesList(value=['png']))\n"
                    "def bytes_feature(v):\n    return v\n"
                    "g = bytes_feature('jpeg')\n")
    namespace = run(code)
    assert namespace['f'].bytes_list.value == [b'png']
    assert namespace['g'] == b'jpeg'


def test_python_s_tree_shows_the_pass_the_sinks_given_text_only():
    """The pass walks only the statements where Python's tree shows a bytes sink given an
    ASCII str literal, alone, by keyword or in a list (`work_lines`); a sink given a
    variable, bytes or non-ASCII text is no work."""
    code = ('import tensorflow as tf\n\n\n'
            'def bytes_feature(value):\n'
            '    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))\n\n\n'
            'def example(image, name):\n'
            "    return {'image': bytes_feature(image), 'raw': bytes_feature(b'raw'),\n"
            "            'name': bytes_feature(name), 'city': bytes_feature('Zürich')}\n\n\n"
            'def with_text():\n'
            "    first = bytes_feature('png')\n"
            "    second = tf.train.BytesList(value=['a', 'b'])\n"
            "    third = _bytes_list_feature(value='jpeg')\n"
            '    return first, second, third\n')
    notes = port_with_work(BytesLiteralsPass, code, [14, 15, 16], untouched=13)
    assert [note.line for note in notes] == [14, 15, 15, 16]
