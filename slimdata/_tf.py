"""The one place slimdata imports TensorFlow: a missing install gets one clear message, and
TensorFlow's deprecation warnings about slimdata's own calls are not printed."""

import logging
import sys
from types import FrameType
from typing import Optional

from slimdata import tensorflow_required

tf = tensorflow_required.import_tensorflow("slimdata's TF-Slim API")


class SlimdataDeprecationFilter(logging.Filter):
    """Drops TensorFlow's deprecation warnings raised by a call that slimdata made.

    slimdata is the TF1 queue-era API on purpose: its calls to `TFRecordReader`,
    `string_input_producer` and the like are what it is for, and TensorFlow's "is deprecated,
    use tf.data" lines (about twenty when one provider is built) tell its user nothing they
    can act on. A warning is slimdata's when a frame of a slimdata module (slimdata.*,
    slimdata.datasets.*) is on the stack that logs it; the user's own calls to the same
    functions, and tf_slim's, still warn (TensorFlow warns once per function, as ever).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if 'Instructions for updating' not in str(record.msg):
            return True
        return not _called_from_slimdata(sys._getframe(1))


def _called_from_slimdata(frame: Optional[FrameType]) -> bool:
    while frame is not None:
        name = frame.f_globals.get('__name__', '')
        if name == 'slimdata' or name.startswith('slimdata.'):
            return True
        frame = frame.f_back
    return False


tf.get_logger().addFilter(SlimdataDeprecationFilter())


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
