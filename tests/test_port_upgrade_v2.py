"""What slimdata port mends of tf_upgrade_v2's report (slimdata.port.upgrade_v2): members of
deprecated TF1 modules that tensorflow.compat.v1 still has are not reported as not ported."""

import pytest

from slimdata.port import edits, upgrade_v2

# tf_upgrade_v2's words for FastMaskRCNN's `FLAGS = tf.app.flags.FLAGS ` (a space after it: the
# member is then followed by two).
FLAGS_NOTE = ('Using member tf.app.flags.FLAGS  in deprecated module tf.app.flags. tf.flags and '
              'tf.app.flags have been removed, please use the argparse or absl modules if you '
              'need command line parsing.')


def test_a_member_compat_v1_has_is_not_reported_whatever_the_spaces_after_it():
    for message in (FLAGS_NOTE, FLAGS_NOTE.replace('FLAGS  in', 'FLAGS in')):
        assert upgrade_v2._works_in_v1(edits.Note(edits.NOT_PORTED, 1, message))
    gone = FLAGS_NOTE.replace('app.flags.FLAGS', 'app.flags.no_such_member')
    assert not upgrade_v2._works_in_v1(edits.Note(edits.NOT_PORTED, 1, gone))


@pytest.mark.slow
def test_tf_app_flags_with_a_space_after_it_ports_with_nothing_reported():
    code = ('import tensorflow as tf\n\n'
            'FLAGS = tf.app.flags.FLAGS \n'
            "tf.app.flags.DEFINE_integer('steps', 1, 'steps')\n")
    [(ported, notes)] = upgrade_v2.upgrade({'m.py': code}, 'SAFETY').values()
    assert ported.startswith('import tensorflow.compat.v1 as tf\n')
    assert [note for note in notes if note.kind == edits.NOT_PORTED] == []
