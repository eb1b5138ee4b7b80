"""`tf.contrib.tfprof`: its `model_analyzer` on TensorFlow's `tf.compat.v1.profiler`, and
`ProfileContext` for code that only turns it off."""

import contextlib
from typing import Optional

# An attribute of the package, as `tf.contrib.tfprof.model_analyzer` was: deeplab's eval.py
# reaches it as `contrib_tfprof.model_analyzer` after `from tensorflow.contrib import tfprof`.
from slimdata.contrib.tfprof import model_analyzer  # noqa: F401


class ProfileContext(contextlib.AbstractContextManager):
    """`tf.contrib.tfprof.ProfileContext`: TensorFlow 2 has no public successor.

    deeplab's train.py always enters one, `enabled` only when asked to profile. Disabled, it
    does nothing, as before; enabled, it raises NotImplementedError saying what to use instead
    (TensorFlow 2's `tf.profiler.experimental` works on functions, not v1 sessions).
    """

    def __init__(self, profile_dir: Optional[str] = None, trace_steps=None, dump_steps=None,
                 enabled: bool = True, debug: bool = False) -> None:
        if enabled:
            raise NotImplementedError(
                'tf.contrib.tfprof.ProfileContext has no successor on TensorFlow 2 '
                '(slimdata.contrib.tfprof); profile with tf.profiler.experimental instead')
        self.profile_dir = profile_dir

    def __exit__(self, *exception) -> None:
        return None
