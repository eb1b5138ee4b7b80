"""The one place slimdata imports TensorFlow, so a missing install gets one clear message."""

import importlib

INSTALL_HINT = (
    'slimdata needs TensorFlow for this module, and it is not installed. Install it with '
    '`pip install slimdata[cpu]` (CPU build), `pip install slimdata[gpu]` (CUDA build), '
    'or `pip install tensorflow` yourself; `slimdata.records` and `slimdata count|verify|index|'
    'inspect|show` work without it.')


def import_tensorflow():
    """Returns the `tensorflow` module, or raises ImportError saying what to install."""
    try:
        return importlib.import_module('tensorflow')
    except ModuleNotFoundError as error:
        if error.name != 'tensorflow':
            raise
        raise ImportError(INSTALL_HINT) from error


tf = import_tensorflow()


def require_graph_mode(api_name: str) -> None:
    """Raises RuntimeError when a queue-based API is called under eager execution.

    Queue runners only exist in graph mode; TF2 starts in eager mode, so this is the first
    thing a ported script hits. The message says both ways out.
    """
    if tf.executing_eagerly():
        raise RuntimeError(
            f'{api_name} builds a TF1 queue-runner input pipeline, which needs graph mode, but '
            'eager execution is enabled (the TensorFlow 2 default). Either call '
            '`tf.compat.v1.disable_eager_execution()` at the start of your program (or build '
            'the pipeline inside `with tf.Graph().as_default():`), or, for TF2 eager code, use '
            'the tf.data bridge `slimdata.tfdata` with the same Dataset descriptor.')
