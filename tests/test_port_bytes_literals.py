"""str literals where a BytesList needs bytes become bytes literals
(slimdata.port.py3.bytes_literals), ported and run."""


from port_snippets import port, run


def test_str_literal_where_bytes_list_needs_bytes():
    code, _ = port("import tensorflow as tf\n"
                    "f = tf.train.Feature(bytes_list=tf.train.BytesList(value=['png']))\n"
                    "def bytes_feature(v):\n    return v\n"
                    "g = bytes_feature('jpeg')\n")
    namespace = run(code)
    assert namespace['f'].bytes_list.value == [b'png']
    assert namespace['g'] == b'jpeg'
