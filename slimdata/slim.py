"""The facade: everything of `tf_slim`, with its data modules replaced by slimdata's.

Old code did `slim = tf.contrib.slim` (or `import tf_slim as slim`); with::

    from slimdata import slim

`slim.conv2d`, `slim.arg_scope`, `slim.learning.train`, `slim.queues`, ... are tf_slim's,
and `slim.dataset`, `slim.tfexample_decoder`, `slim.dataset_data_provider`,
`slim.parallel_reader`, `slim.prefetch_queue`, `slim.data_decoder`, `slim.data_provider`
(and `slim.data.<module>`) are slimdata's, which work on modern TensorFlow.
"""

import types

import tf_slim as _tf_slim

from slimdata import (data_decoder, data_provider, dataset, dataset_data_provider,
                      parallel_reader, prefetch_queue, tfexample_decoder)

_DATA_MODULES = {
    'data_decoder': data_decoder,
    'data_provider': data_provider,
    'dataset': dataset,
    'dataset_data_provider': dataset_data_provider,
    'parallel_reader': parallel_reader,
    'prefetch_queue': prefetch_queue,
    'tfexample_decoder': tfexample_decoder,
}

globals().update({name: value for name, value in vars(_tf_slim).items()
                  if not name.startswith('__')})
globals().update(_DATA_MODULES)
data = types.ModuleType('slimdata.slim.data', 'slimdata data modules under their tf_slim names.')
data.__dict__.update(_DATA_MODULES)

del types
