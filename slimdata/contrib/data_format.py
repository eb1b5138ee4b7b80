"""The layout a TF1 program chose for a GPU, where this machine can run it.

Research code of the TF1 era trained on GPUs and often fixed its layout in one place:
`DATA_FORMAT = 'NCHW'` (balancap/SSD-Tensorflow's train_ssd_network.py), or a `data_format`
flag or parameter defaulting to it. TensorFlow's own CPU kernels of convolution, depthwise
convolution and pooling take channels-last only ("The Conv2D op currently only supports the
NHWC tensor format on the CPU", 2.16 to 2.21), so such a program stops at its first step on a
machine without a GPU (but where TensorFlow runs oneDNN's kernels, which take both: it turns
them on by itself on some x86 CPUs, AVX-512 and later; `TF_ENABLE_ONEDNN_OPTS=0` turns them
off). Channels-last runs on every CPU. `slimdata port` writes
`data_format_for_this_machine('NCHW')` where a program names its layout: the code reads that
name everywhere else (`if data_format == 'NCHW'`: its transposes and axes), so it runs in
either layout.
"""

import functools
import logging

LOGGER = logging.getLogger('slimdata')

#: Each channels-first layout, and the channels-last one a CPU runs.
CHANNELS_LAST = {'NCHW': 'NHWC', 'NCDHW': 'NDHWC', 'channels_first': 'channels_last'}


def data_format_for_this_machine(data_format: str) -> str:
    """`data_format` where TensorFlow sees a GPU or it is channels-last already; else its
    channels-last twin (`CHANNELS_LAST`: 'NCHW' -> 'NHWC'), said once in the log."""
    if data_format not in CHANNELS_LAST or _gpu_visible():
        return data_format
    _say_once(data_format)
    return CHANNELS_LAST[data_format]


@functools.lru_cache(maxsize=1)
def _gpu_visible() -> bool:
    import tensorflow as tf  # only where a program asks: TensorFlow is optional here
    return bool(tf.config.list_physical_devices('GPU'))


@functools.lru_cache(maxsize=None)
def _say_once(data_format: str) -> None:
    LOGGER.warning('data format %r -> %r: TensorFlow sees no GPU, and its CPU convolution '
                   'and pooling take channels-last only', data_format, CHANNELS_LAST[data_format])
