"""slimdata's data modules under `tf_slim.data`'s names, so `tf_slim` -> `slimdata.slim` works.

Every import form of the data modules resolves to slimdata's module objects (the very
`slimdata.tfexample_decoder`, not a copy)::

    from slimdata.slim.data import tfexample_decoder
    import slimdata.slim.data.tfexample_decoder
    from slimdata.slim.data.tfexample_decoder import TFExampleDecoder

Each module is registered in `sys.modules` under its `slimdata.slim.data.<name>` alias, which
the import system looks up before searching for a file.
"""

import sys

from slimdata import (
    data_decoder,
    data_provider,
    dataset,
    dataset_data_provider,
    parallel_reader,
    prefetch_queue,
    test_utils,
    tfexample_decoder,
)

#: tf_slim.data's module names, each with slimdata's module of that name.
MODULES = {
    'data_decoder': data_decoder,
    'data_provider': data_provider,
    'dataset': dataset,
    'dataset_data_provider': dataset_data_provider,
    'parallel_reader': parallel_reader,
    'prefetch_queue': prefetch_queue,
    'test_utils': test_utils,
    'tfexample_decoder': tfexample_decoder,
}

for _name, _module in MODULES.items():
    sys.modules[f'{__name__}.{_name}'] = _module
del _name, _module
