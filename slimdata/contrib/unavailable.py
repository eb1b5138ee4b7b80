"""Stand-ins for `tf.contrib` modules and names without a successor, by import.

`from slimdata.contrib.unavailable import quantize as contrib_quantize` binds
`Unavailable('tensorflow.contrib.quantize')` (a name deeper down is spelled with `__` for each
dot: `quantize__python__quant_ops`). `slimdata port` writes such a line where old code
imported a contrib name that has no successor and that the file still uses: one import line
for one import line, so the script runs until it reaches a use (see `Unavailable`).
"""

from typing import Dict, Optional

from slimdata.contrib import Unavailable

_CONTRIB = 'tensorflow.contrib'

#: Old names (a key covers the names under it too) without a successor, and why.
UNPORTABLE: Dict[str, str] = {
    _CONTRIB: 'tf.contrib was removed in TensorFlow 2 and this name has no successor in '
              'tf_slim or TensorFlow that slimdata port knows',
    f'{_CONTRIB}.quantize': 'tf.contrib.quantize (quantization-aware training) has no '
                            'successor in TensorFlow 2 (the TensorFlow Model Optimization '
                            'Toolkit replaces it for Keras models)',
    f'{_CONTRIB}.legacy_seq2seq': 'this tf.contrib.legacy_seq2seq name has no successor '
                                  '(slimdata.contrib.legacy_seq2seq has rnn_decoder, '
                                  'attention_decoder, sequence_loss and '
                                  'sequence_loss_by_example; not the seq2seq models)',
    f'{_CONTRIB}.seq2seq': 'tf.contrib.seq2seq has no successor that works on TensorFlow 2.21 '
                           '(TensorFlow Addons, its successor, ended in 2024 and supports up '
                           'to TensorFlow 2.15)',
    f'{_CONTRIB}.rnn': 'this tf.contrib.rnn name is not one of the TF1 cells that tf-keras '
                       'keeps (slimdata.contrib.rnn), or tf-keras is not installed',
    'tensorflow.nn.rnn_cell': 'the TF1 RNN cells need Keras 2 on TensorFlow 2.21: install '
                              "tf-keras of TensorFlow's version (pip install --no-deps "
                              'tf-keras==2.21.*) and port again',
    f'{_CONTRIB}.tpu': 'tf.contrib.tpu has no drop-in successor (tf.distribute.TPUStrategy '
                       'works differently; slimdata.contrib.estimator.tpu has TPUEstimator, '
                       'TPUEstimatorSpec, TPUConfig and RunConfig as they ran with '
                       'use_tpu=False)',
    'tensorflow.estimator': "this tf.estimator name is not covered by slimdata.contrib."
                            "estimator, tf.estimator's successor (it has Estimator, "
                            'EstimatorSpec, ModeKeys, RunConfig, TrainSpec, EvalSpec, '
                            'train_and_evaluate, WarmStartSettings, inputs.numpy_input_fn and '
                            'the session hooks; not the canned estimators, exporters, '
                            'SavedModel export, inputs.pandas_input_fn or '
                            'tf.estimator.experimental)',
    f'{_CONTRIB}.learn': 'tf.contrib.learn was removed in TensorFlow 2 (tf.estimator was its '
                         'successor, and is gone too)',
    f'{_CONTRIB}.metrics.python.ops.set_ops': 'tf.contrib set_ops moved to tf.sets '
                                              '(different function names)',
    'tensorflow.python': 'private TensorFlow module without a public successor that slimdata '
                         'port knows; it works only while TensorFlow keeps it',
}


def unportable_reason(name: str) -> Optional[str]:
    """Why `name` (qualified) cannot be ported, or None if it is not known to be unportable."""
    parts = name.split('.')
    for length in range(len(parts), 0, -1):
        reason = UNPORTABLE.get('.'.join(parts[:length]))
        if reason:
            return reason
    return None


def attribute_for(name: str) -> str:
    """The attribute of this module that stands for `tensorflow.contrib.<...>` `name`."""
    return name[len('tensorflow.contrib.'):].replace('.', '__')


def __getattr__(attribute: str) -> Unavailable:
    if attribute.startswith('__'):
        raise AttributeError(attribute)
    return Unavailable('tensorflow.contrib.' + attribute.replace('__', '.'))
