"""slimdata's own calls print no TensorFlow deprecation warning: building the README's
provider, and the tf.data bridge, are quiet; the user's own calls to the same deprecated
functions still warn, as TensorFlow means them to.

TensorFlow warns once per function per process, so each case runs in a fresh interpreter,
on records converted here.
"""

import subprocess
import sys

import pytest

from slimdata.datasets import pascalvoc, synthetic

HANG = 300  # a hang guard only
DEPRECATED = 'is deprecated and will be removed'

PROVIDER = '''
import tensorflow as tf
from slimdata import slim
from slimdata.datasets import dataset_factory
tf.compat.v1.disable_eager_execution()
dataset = dataset_factory.get_dataset('pascalvoc_2007', 'trainval', {folder!r})
provider = slim.dataset_data_provider.DatasetDataProvider(dataset, num_readers=2)
image, shape, bboxes, labels = provider.get(['image', 'shape', 'object/bbox', 'object/label'])
'''
BRIDGE = '''
from slimdata import tfdata
from slimdata.datasets import dataset_factory
dataset = dataset_factory.get_dataset('pascalvoc_2007', 'trainval', {folder!r})
for batch in tfdata.padded_batch(tfdata.to_tf_data(dataset, items=['image'], num_epochs=1), 4):
    pass
'''
# The same functions slimdata calls, called by the user: TensorFlow's warnings stay.
USER = '''
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
tf.compat.v1.TFRecordReader()
tf.compat.v1.train.string_input_producer(['x.tfrecord'])
'''


@pytest.fixture(scope='module')
def voc2007(tmp_path_factory):
    base = tmp_path_factory.mktemp('voc')
    synthetic.make_voc_tree(str(base / 'VOCdevkit'), num_images=8, image_size=(64, 48),
                            splits={'trainval': 1.0})
    pascalvoc.convert_voc(str(base / 'VOCdevkit'), str(base / 'voc2007'), '2007', 'trainval')
    return str(base / 'voc2007')


def python_stderr(code):
    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         timeout=HANG)
    assert run.returncode == 0, run.stderr
    return run.stderr


@pytest.mark.parametrize('program', [PROVIDER, BRIDGE], ids=['provider', 'tf.data bridge'])
def test_slimdata_prints_no_deprecation_warning(voc2007, program):
    stderr = python_stderr(program.format(folder=voc2007))
    assert DEPRECATED not in stderr


def test_the_users_own_deprecated_calls_still_warn():
    stderr = python_stderr('import slimdata._tf\n' + USER)  # slimdata's filter installed
    assert stderr.count(DEPRECATED) >= 2
    assert 'TFRecordReader' in stderr and 'string_input_producer' in stderr
