"""`tf.contrib.tfprof.model_analyzer` on `tf.compat.v1.profiler`, which took its place.

The option dicts are the profiler's builders' (same keys as contrib's); `print_model_analysis`
is `tf.compat.v1.profiler.profile` under its old argument names, and returns what it returns
(a `TFGraphNodeProto`; a `MultiGraphNodeProto` for the 'code' and 'op' views).
"""

from slimdata._tf import tf

_BUILDER = tf.compat.v1.profiler.ProfileOptionBuilder
TRAINABLE_VARS_PARAMS_STAT_OPTIONS = _BUILDER.trainable_variables_parameter()
FLOAT_OPS_OPTIONS = _BUILDER.float_operation()
PRINT_ALL_TIMING_MEMORY = _BUILDER.time_and_memory()


def print_model_analysis(graph, run_meta=None, op_log=None, tfprof_cmd: str = 'scope',
                         tfprof_options=TRAINABLE_VARS_PARAMS_STAT_OPTIONS):
    """Prints (to where `tfprof_options['output']` says) and returns the analysis of `graph`.

    Args:
      graph: the tf.Graph to analyse.
      run_meta: a RunMetadata of a step, for time and memory; None for static analysis.
      op_log: an OpLogProto of extra op information, or None.
      tfprof_cmd: the view: 'scope', 'graph', 'code' or 'op'.
      tfprof_options: the option dict (the constants above, or a profiler builder's).
    """
    return tf.compat.v1.profiler.profile(graph=graph, run_meta=run_meta, op_log=op_log,
                                         cmd=tfprof_cmd, options=tfprof_options)
