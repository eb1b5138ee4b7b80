"""A channels-first layout chosen for a whole program, run on a CPU
(slimdata.port.data_format, slimdata.contrib.data_format)."""

import logging
import os
import subprocess
import sys

import pytest

from port_snippets import work_lines
from slimdata.contrib import data_format
from slimdata.port import edits, tree
from slimdata.port.data_format import DataFormatPass

# SSD-Tensorflow's train_ssd_network.py in small: the layout named once, read everywhere.
PROGRAM = '''import tensorflow as tf

DATA_FORMAT = 'NCHW'
DATA_FORMAT_NCHW = 'NCHW'
tf.app.flags.DEFINE_string('data_format', 'channels_first', 'layout')
tf.app.flags.DEFINE_string('order', 'NCHW', 'not a layout flag')


def pool(images, data_format='NCHW'):
    if data_format == DATA_FORMAT_NCHW:
        images = tf.transpose(images, [0, 3, 1, 2])
    size = [1, 1, 2, 2] if data_format == 'NCHW' else [1, 2, 2, 1]
    return tf.nn.max_pool(images, size, size, 'SAME', data_format=data_format)


def fixed(images):
    return tf.nn.max_pool(images, [1, 1, 2, 2], [1, 1, 2, 2], 'SAME', data_format='NCHW')


if __name__ == '__main__':
    pooled = pool(tf.ones([1, 4, 4, 3]), DATA_FORMAT)
    with tf.Session() as session:
        print(list(session.run(pooled).shape))
'''


def _ported():
    results, problems = tree.port_sources({'train.py': PROGRAM})
    assert problems == []
    return results['train.py']


def test_a_layout_named_once_is_chosen_when_it_runs_and_a_fixed_one_is_reported():
    ported, notes = _ported()
    assert "DATA_FORMAT = data_format_for_this_machine('NCHW')" in ported
    assert "DATA_FORMAT_NCHW = 'NCHW'" in ported  # a constant naming the layout, not a choice
    assert ("DEFINE_string('data_format', data_format_for_this_machine('channels_first'), "
            in ported)
    assert "DEFINE_string('order', 'NCHW', " in ported
    assert "def pool(images, data_format=data_format_for_this_machine('NCHW')):" in ported
    assert "if data_format == DATA_FORMAT_NCHW:" in ported  # comparisons are left
    assert "data_format == 'NCHW' else" in ported
    assert ("from slimdata.contrib.data_format import data_format_for_this_machine"
            in ported.splitlines())
    by_kind = {kind: sorted(note.line for note in notes if note.kind == kind
                            and ('NCHW' in note.message or 'channels' in note.message))
               for kind in (edits.CHANGED, edits.NOT_PORTED)}
    lines = ported.splitlines()
    assert by_kind == {  # each by its line in the ported file
        edits.CHANGED: [number for number, line in enumerate(lines, 1)
                        if 'data_format_for_this_machine(' in line],
        edits.NOT_PORTED: [number for number, line in enumerate(lines, 1)
                           if "data_format='NCHW')" in line]}
    assert len(by_kind[edits.CHANGED]) == 3 and len(by_kind[edits.NOT_PORTED]) == 1


@pytest.mark.slow
def test_the_ported_program_runs_on_a_cpu_where_the_original_stops(tmp_path):
    tf = pytest.importorskip('tensorflow')
    if tf.config.list_physical_devices('GPU'):
        pytest.skip('a GPU runs both layouts')
    (tmp_path / 'original.py').write_text(
        PROGRAM.replace('import tensorflow as tf', 'import tensorflow.compat.v1 as tf\n'
                                                   'tf.disable_eager_execution()'))
    # TensorFlow's own CPU kernels take NHWC only; its oneDNN ones, which it turns on by
    # itself on some x86 CPUs (AVX-512 and later), take NCHW too: the original is run on its
    # own kernels, the ported program on both.
    default_kernels = {**os.environ, 'TF_ENABLE_ONEDNN_OPTS': '0'}
    original = subprocess.run([sys.executable, 'original.py'], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300, env=default_kernels)
    assert original.returncode != 0 and 'NHWC' in original.stderr
    ported, _ = _ported()
    (tmp_path / 'ported.py').write_text(ported)
    for environment in (default_kernels, {**os.environ, 'TF_ENABLE_ONEDNN_OPTS': '1'}):
        done = subprocess.run([sys.executable, 'ported.py'], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300, env=environment)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == '[1, 2, 2, 3]'  # pooled in NHWC: 4x4 -> 2x2
        assert "data format 'NCHW' -> 'NHWC'" in done.stderr


@pytest.mark.parametrize('gpu, layout, chosen', [
    (True, 'NCHW', 'NCHW'), (False, 'NCHW', 'NHWC'), (False, 'channels_first', 'channels_last'),
    (False, 'NCDHW', 'NDHWC'), (False, 'NHWC', 'NHWC'), (True, 'channels_last', 'channels_last'),
])
def test_the_layout_for_this_machine(monkeypatch, caplog, gpu, layout, chosen):
    monkeypatch.setattr(data_format, '_gpu_visible', lambda: gpu)
    data_format._say_once.cache_clear()
    with caplog.at_level(logging.WARNING, logger='slimdata'):
        assert [data_format.data_format_for_this_machine(layout) for _ in range(3)] == [chosen] * 3
    said = [record.getMessage() for record in caplog.records]
    assert said == ([] if chosen == layout else
                    [f'data format {layout!r} -> {chosen!r}: TensorFlow sees no GPU, and its '
                     'CPU convolution and pooling take channels-last only'])


def test_python_s_tree_shows_the_pass_the_layouts_it_may_change_not_comparisons():
    """The pass walks only the statements where Python's tree shows a channels-first literal
    it may change or report (`work_lines`): an assignment's, a parameter's default, a call's
    argument; not the comparisons that read the layout."""
    lines = PROGRAM.split('\n')
    expected = [number for number, line in enumerate(lines, 1) if "'NCHW'" in line
                or "'channels_first'" in line]
    expected.remove(lines.index("    size = [1, 1, 2, 2] if data_format == 'NCHW' else "
                                '[1, 2, 2, 1]') + 1)
    assert work_lines(DataFormatPass, PROGRAM) == expected
    reading = ("def pool(images, data_format):\n    if data_format == 'NCHW':\n"
               "        return 1\n    return 'NCHW' in data_format\n")
    assert work_lines(DataFormatPass, reading) == []
    assert tree.port_sources({'m.py': reading}, tf_upgrade=None)[0]['m.py'] == (reading, [])
