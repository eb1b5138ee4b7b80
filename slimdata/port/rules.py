"""What `slimdata port` renames: the one table of old names and their successors.

Names are fully qualified, as Python resolves them through the file's imports
(`tf.contrib.slim` under `import tensorflow as tf` is `tensorflow.contrib.slim`).

`NAME_RULES` maps an old name to its successor. A key ending in `.*` moves a whole module: the
name itself and every name under it (`tf_slim.data.*` -> `slimdata.*` makes
`tf_slim.data.tfexample_decoder.Image` `slimdata.tfexample_decoder.Image`); a key without it
renames that one name. The longest matching key wins. Every successor is tested to exist in
tf_slim 1.1.0 / slimdata / TensorFlow (tests/test_port_rules.py), name by name.

`UNPORTABLE` gives the reason reported for old names that have no successor (kept with the
stand-ins in `slimdata.contrib.unavailable`, whose errors say it at run time). `PRIVATE_MODULES`
says where TensorFlow's private modules' functions live in the public API, `TF_LAYERS` how each
`tf.layers` call becomes a tf_slim layer call.
"""

from typing import Dict, NamedTuple, Optional, Tuple

#: tf_slim's data modules: slimdata has a module of the same name for each.
DATA_MODULES = ('data_decoder', 'data_provider', 'dataset', 'dataset_data_provider',
                'parallel_reader', 'prefetch_queue', 'tfexample_decoder')

#: The facade: everything of tf_slim, its data modules replaced by slimdata's.
FACADE = 'slimdata.slim'

# tf.contrib.framework names that tf_slim exports at its top level (arg scopes, variables).
_FRAMEWORK_NAMES = (
    'add_arg_scope', 'add_model_variable', 'arg_scope', 'arg_scoped_arguments',
    'assert_global_step', 'assert_or_get_global_step', 'assign_from_checkpoint',
    'assign_from_checkpoint_fn', 'assign_from_values', 'assign_from_values_fn',
    'create_global_step', 'current_arg_scope', 'filter_variables', 'get_global_step',
    'get_local_variables', 'get_model_variables', 'get_or_create_global_step',
    'get_trainable_variables', 'get_unique_variable', 'get_variable_full_name', 'get_variables',
    'get_variables_by_name', 'get_variables_by_suffix', 'get_variables_to_restore',
    'global_variable', 'has_arg_scope', 'local_variable', 'model_variable', 'variable',
    'VariableDeviceChooser')

# tf.contrib.layers names that tf_slim exports (layers, initializers, regularizers).
_LAYERS_NAMES = (
    'adaptive_clipping_fn', 'apply_regularization', 'avg_pool2d', 'avg_pool3d', 'batch_norm',
    'bias_add', 'conv1d', 'conv2d', 'conv2d_in_plane', 'conv2d_transpose', 'conv3d',
    'conv3d_transpose', 'convolution', 'convolution1d', 'convolution2d',
    'convolution2d_in_plane', 'convolution2d_transpose', 'convolution3d',
    'convolution3d_transpose', 'dense_to_sparse', 'dropout', 'elu', 'flatten',
    'fully_connected', 'gdn', 'GDN', 'group_norm', 'images_to_sequence', 'instance_norm',
    'l1_l2_regularizer', 'l1_regularizer', 'l2_regularizer', 'layer_norm',
    'legacy_fully_connected', 'legacy_linear', 'legacy_relu', 'linear', 'max_pool2d',
    'max_pool3d', 'maxout', 'one_hot_encoding', 'optimize_loss', 'OPTIMIZER_CLS_NAMES',
    'OPTIMIZER_SUMMARIES', 'pool', 'recompute_grad', 'relu', 'relu6', 'repeat', 'rev_block',
    'RevBlock', 'scale_gradient', 'separable_conv2d', 'separable_convolution2d',
    'sequence_to_images', 'softmax', 'spatial_softmax', 'stack', 'sum_regularizer',
    'summarize_activation', 'summarize_activations', 'summarize_collection',
    'summarize_tensor', 'summarize_tensors', 'unit_norm', 'variance_scaling_initializer',
    'xavier_initializer', 'xavier_initializer_conv2d')

# tf.contrib.metrics names that tf_slim.metrics exports.
_METRICS_NAMES = (
    'aggregate_metric_map', 'aggregate_metrics', 'auc_using_histogram', 'cohen_kappa',
    'streaming_accuracy', 'streaming_auc', 'streaming_concat', 'streaming_covariance',
    'streaming_false_negatives', 'streaming_false_positives', 'streaming_mean',
    'streaming_mean_absolute_error', 'streaming_mean_cosine_distance', 'streaming_mean_iou',
    'streaming_mean_relative_error', 'streaming_mean_squared_error', 'streaming_mean_tensor',
    'streaming_pearson_correlation', 'streaming_percentage_less', 'streaming_precision',
    'streaming_precision_at_thresholds', 'streaming_recall', 'streaming_recall_at_k',
    'streaming_recall_at_thresholds', 'streaming_root_mean_squared_error',
    'streaming_sensitivity_at_specificity', 'streaming_sparse_average_precision_at_k',
    'streaming_sparse_precision_at_k', 'streaming_sparse_recall_at_k',
    'streaming_specificity_at_sensitivity', 'streaming_true_negatives',
    'streaming_true_positives')

# tf.contrib.training names that tf_slim.training exports.
_TRAINING_NAMES = ('add_gradients_summaries', 'clip_gradient_norms', 'clip_gradient_norms_fn',
                   'create_train_op', 'multiply_gradients', 'train')

# contrib names that TensorFlow's public API took over (path under tensorflow.compat.v1,
# where TF1 code keeps its TF1 meaning).
_CONTRIB_PUBLIC = {
    'framework.is_tensor': 'is_tensor',
    'framework.sort': 'sort',
    'framework.argsort': 'argsort',
    'framework.load_checkpoint': 'train.load_checkpoint',
    'framework.list_variables': 'train.list_variables',
    'framework.load_variable': 'train.load_variable',
    'framework.init_from_checkpoint': 'train.init_from_checkpoint',
    'lookup.HashTable': 'lookup.StaticHashTable',
    'lookup.KeyValueTensorInitializer': 'lookup.KeyValueTensorInitializer',
    'lookup.TextFileInitializer': 'lookup.TextFileInitializer',
    'lookup.TextFileIndex': 'lookup.TextFileIndex',
    'lookup.MutableHashTable': 'lookup.experimental.MutableHashTable',
    'lookup.MutableDenseHashTable': 'lookup.experimental.DenseHashTable',
}

# tf.contrib.lookup's table constructors, which TensorFlow 2 does not export (slimdata.contrib).
_LOOKUP_FUNCTIONS = ('index_table_from_tensor', 'index_to_string_table_from_tensor',
                     'index_table_from_file', 'index_to_string_table_from_file')

# tf.contrib.training's evaluation loop, which tf_slim.evaluation exports.
_EVALUATION_NAMES = ('StopAfterNEvalsHook', 'SummaryAtEndHook', 'checkpoints_iterator',
                     'evaluate_once', 'evaluate_repeatedly', 'get_or_create_eval_step',
                     'wait_for_new_checkpoint')

# tf.contrib.data names that were aliases of tf.data.experimental's (TF 1.12-1.15), which
# tf.compat.v1.data.experimental still has under the same names.
_DATA_EXPERIMENTAL_NAMES = (
    'Counter', 'CsvDataset', 'Optional', 'RandomDataset', 'Reducer', 'SqlDataset',
    'TFRecordWriter', 'bucket_by_sequence_length', 'choose_from_datasets', 'copy_to_device',
    'dense_to_sparse_batch', 'enumerate_dataset', 'get_next_as_optional', 'get_single_element',
    'group_by_reducer', 'group_by_window', 'ignore_errors', 'make_batched_features_dataset',
    'make_csv_dataset', 'make_saveable_from_iterator', 'map_and_batch', 'parallel_interleave',
    'parse_example_dataset', 'prefetch_to_device', 'rejection_resample', 'sample_from_datasets',
    'scan', 'shuffle_and_repeat', 'unbatch', 'unique')

# tf.contrib.data's batching transformations, which became `batch(..., drop_remainder=True)`.
_DATA_BATCHING = ('batch_and_drop_remainder', 'padded_batch_and_drop_remainder')

# tf.contrib.tpu's Estimator names, which slimdata.contrib.estimator.tpu has (use_tpu=False).
_TPU_ESTIMATOR_NAMES = ('TPUEstimator', 'TPUEstimatorSpec', 'TPUConfig', 'RunConfig',
                        'InputPipelineConfig')

_CONTRIB = 'tensorflow.contrib'
_CONTRIB_SLIM_PY = 'tensorflow.contrib.slim.python.slim'
_CONTRIB_LAYERS_PY = 'tensorflow.contrib.layers.python.layers'
_CONTRIB_FRAMEWORK_OPS = 'tensorflow.contrib.framework.python.ops'


def _build_name_rules() -> Dict[str, str]:
    rules = {
        # Data: slimdata's modules, which work on modern TensorFlow.
        'tf_slim': FACADE,
        'tf_slim.data.*': 'slimdata.*',
        f'{_CONTRIB}.slim': FACADE,
        f'{_CONTRIB}.slim.*': f'{FACADE}.*',
        f'{_CONTRIB_SLIM_PY}.data.*': 'slimdata.*',
        f'{_CONTRIB_SLIM_PY}.*': 'tf_slim.*',
        f'{_CONTRIB}.slim.nets.*': 'tf_slim.nets.*',
        f'{_CONTRIB}.slim.python.slim.nets.*': 'tf_slim.nets.*',
        # tf.contrib.layers and tf.contrib.framework: tf_slim's.
        # tf_slim exports all of tf_slim.layers at its top level; its attribute `layers` is
        # the module tf_slim/layers/layers.py (not the package), so names go to the top level.
        f'{_CONTRIB}.layers': 'tf_slim',
        f'{_CONTRIB_LAYERS_PY}': 'tf_slim',
        # tf_slim exports contrib's variables functions at its top level (`tf_slim.ops` is
        # TensorFlow's framework ops module, not tf_slim/ops).
        f'{_CONTRIB_FRAMEWORK_OPS}.variables.*': 'tf_slim.*',
        f'{_CONTRIB_FRAMEWORK_OPS}.arg_scope': 'tf_slim.arg_scope',
        f'{_CONTRIB_FRAMEWORK_OPS}.add_arg_scope': 'tf_slim.add_arg_scope',
        f'{_CONTRIB}.metrics': 'tf_slim.metrics',
        f'{_CONTRIB}.losses.*': 'tf_slim.losses.*',
        # contrib names that moved into TensorFlow itself.
        f'{_CONTRIB}.util.constant_value': 'tensorflow.get_static_value',
        f'{_CONTRIB}.util.make_tensor_proto': 'tensorflow.make_tensor_proto',
        f'{_CONTRIB}.util.make_ndarray': 'tensorflow.make_ndarray',
        f'{_CONTRIB}.framework.nest.*': 'tensorflow.nest.*',
        # Successors written for slimdata where TensorFlow 2 has none (slimdata.contrib).
        f'{_CONTRIB}.training.HParams': 'slimdata.contrib.training.HParams',
        f'{_CONTRIB}.training.python.training.hparam.HParams': 'slimdata.contrib.training.HParams',
        f'{_CONTRIB}.tfprof.*': 'slimdata.contrib.tfprof.*',
        f'{_CONTRIB}.legacy_seq2seq.*': 'slimdata.contrib.legacy_seq2seq.*',
        f'{_CONTRIB}.opt.MovingAverageOptimizer': 'slimdata.contrib.opt.MovingAverageOptimizer',
        # The TF1 RNN cells: Keras 2's (tf-keras), through slimdata.contrib.rnn.
        f'{_CONTRIB}.rnn.*': 'slimdata.contrib.rnn.*',
        'tensorflow.nn.rnn_cell.*': 'slimdata.contrib.rnn.*',
        # tf.estimator (removed in TensorFlow 2.16) and TPUEstimator as it ran off a TPU.
        'tensorflow.estimator.*': 'slimdata.contrib.estimator.*',
        f'{_CONTRIB}.tpu.python.tpu.tpu_estimator.*': 'slimdata.contrib.estimator.tpu.*',
        f'{_CONTRIB}.tpu.python.tpu.tpu_config.*': 'slimdata.contrib.estimator.tpu.*',
    }
    # tf.estimator's export modules and exporters by their private paths (TF 1.x before 1.13,
    # then tensorflow_estimator's), which slimdata.contrib.estimator has under public names.
    for package in ('tensorflow.python.estimator', 'tensorflow_estimator.python.estimator'):
        for module in ('export', 'export_lib', 'export_output'):
            rules[f'{package}.export.{module}.*'] = 'slimdata.contrib.estimator.export.*'
        rules[f'{package}.exporter.*'] = 'slimdata.contrib.estimator.*'
    for name in _TPU_ESTIMATOR_NAMES:
        rules[f'{_CONTRIB}.tpu.{name}'] = f'slimdata.contrib.estimator.tpu.{name}'
    for name, public in _CONTRIB_PUBLIC.items():
        rules[f'{_CONTRIB}.{name}'] = f'tensorflow.compat.v1.{public}'
    for name in _DATA_EXPERIMENTAL_NAMES:
        rules[f'{_CONTRIB}.data.{name}'] = f'tensorflow.compat.v1.data.experimental.{name}'
    for name in _DATA_BATCHING:
        rules[f'{_CONTRIB}.data.{name}'] = f'slimdata.contrib.data.{name}'
    for name in _LOOKUP_FUNCTIONS:
        rules[f'{_CONTRIB}.lookup.{name}'] = f'slimdata.contrib.lookup.{name}'
    for module in DATA_MODULES:
        rules[f'tf_slim.{module}.*'] = f'slimdata.{module}.*'
        rules[f'{_CONTRIB}.slim.{module}.*'] = f'slimdata.{module}.*'
    # tf.contrib.layers' modules: tf_slim exports each at its top level (tf_slim.layers is the
    # module layers.py), which is how ported code reaches them by attribute.
    rules[f'{_CONTRIB_LAYERS_PY}.layers.*'] = 'tf_slim.layers.*'
    for module in ('initializers', 'regularizers', 'utils', 'optimizers', 'normalization'):
        rules[f'{_CONTRIB_LAYERS_PY}.{module}.*'] = f'tf_slim.{module}.*'
        rules[f'{_CONTRIB}.layers.{module}.*'] = f'tf_slim.{module}.*'
    for name in _FRAMEWORK_NAMES:
        rules[f'{_CONTRIB}.framework.{name}'] = f'tf_slim.{name}'
        rules[f'{_CONTRIB_FRAMEWORK_OPS}.{name}'] = f'tf_slim.{name}'
        rules[f'{_CONTRIB_FRAMEWORK_OPS}.arg_scope.{name}'] = f'tf_slim.{name}'
    for name in _LAYERS_NAMES:
        rules[f'{_CONTRIB}.layers.{name}'] = f'tf_slim.{name}'
    for name in _METRICS_NAMES:
        rules[f'{_CONTRIB}.metrics.{name}'] = f'tf_slim.metrics.{name}'
    for name in _TRAINING_NAMES:
        rules[f'{_CONTRIB}.training.{name}'] = f'tf_slim.training.{name}'
    for name in _EVALUATION_NAMES:
        rules[f'{_CONTRIB}.training.{name}'] = f'tf_slim.evaluation.{name}'
    return rules


NAME_RULES: Dict[str, str] = _build_name_rules()

def successor(name: str) -> Optional[str]:
    """The new qualified name of `name` by NAME_RULES, or None when no rule covers it."""
    parts = name.split('.')
    for length in range(len(parts), 0, -1):
        prefix = '.'.join(parts[:length])
        rest = parts[length:]
        if not rest and prefix in NAME_RULES:
            return NAME_RULES[prefix]
        target = NAME_RULES.get(prefix + '.*')
        if target is not None:
            return '.'.join([target[:-2]] + rest)
    return None


# Private modules (`from tensorflow.python.ops import array_ops`) and the public namespaces of
# tf.compat.v1 that hold their functions under the same names ('' is tf itself). A private
# `array_ops.unstack` becomes `tf.unstack` when `tf.compat.v1.unstack` exists.
_OPS = 'tensorflow.python.ops'
_FRAMEWORK = 'tensorflow.python.framework'
PRIVATE_MODULES: Dict[str, Tuple[str, ...]] = {
    f'{_OPS}.array_ops': ('',),
    f'{_OPS}.array_ops_stack': ('',),
    f'{_OPS}.check_ops': ('', 'debugging'),
    f'{_OPS}.clip_ops': ('',),
    f'{_OPS}.control_flow_ops': ('',),
    f'{_OPS}.data_flow_ops': ('',),
    f'{_OPS}.functional_ops': ('',),
    f'{_OPS}.image_ops': ('image',),
    f'{_OPS}.init_ops': ('',),
    f'{_OPS}.linalg_ops': ('', 'linalg'),
    f'{_OPS}.logging_ops': ('',),
    f'{_OPS}.math_ops': ('', 'math'),
    f'{_OPS}.nn': ('nn',),
    f'{_OPS}.nn_ops': ('nn',),
    f'{_OPS}.random_ops': ('', 'random'),
    f'{_OPS}.sparse_ops': ('', 'sparse'),
    f'{_OPS}.state_ops': ('',),
    f'{_OPS}.string_ops': ('', 'strings'),
    f'{_OPS}.summary_ops': ('summary',),
    f'{_OPS}.variable_scope': ('',),
    f'{_OPS}.variables': ('',),
    f'{_FRAMEWORK}.constant_op': ('',),
    f'{_FRAMEWORK}.dtypes': ('',),
    f'{_FRAMEWORK}.errors': ('errors',),
    f'{_FRAMEWORK}.ops': ('',),
    f'{_FRAMEWORK}.sparse_tensor': ('',),
    f'{_FRAMEWORK}.tensor_shape': ('',),
    'tensorflow.python.platform.app': ('app',),
    'tensorflow.python.platform.flags': ('flags',),
    'tensorflow.python.platform.gfile': ('gfile',),
    'tensorflow.python.platform.tf_logging': ('logging',),
    'tensorflow.python.training.training': ('train',),
}

#: Private functions whose public name differs from their own (path under tf.compat.v1).
PRIVATE_RENAMES: Dict[str, str] = {
    f'{_OPS}.math_ops.mul': 'multiply',
    f'{_OPS}.math_ops.sub': 'subtract',
    f'{_OPS}.math_ops.neg': 'negative',
    f'{_FRAMEWORK}.tensor_util.constant_value': 'get_static_value',
    f'{_FRAMEWORK}.tensor_util.make_tensor_proto': 'make_tensor_proto',
    f'{_FRAMEWORK}.tensor_util.MakeNdarray': 'make_ndarray',
    'tensorflow.python.pywrap_tensorflow.NewCheckpointReader': 'train.NewCheckpointReader',
}


class LayerPort(NamedTuple):
    """How one `tf.layers` function becomes a tf_slim layer call.

    `target`: the tf_slim function. `parameters`: the old function's parameters in order (to
    name positional arguments). `renames`: old keyword -> new keyword; a value of the form
    'new:template' also rewrites the value, `{}` standing for the old value's code
    (parenthesised unless it is a name, number or call).
    `defaults`: new keyword -> code, passed when the old argument was absent because the two
    functions' defaults differ. `values`: keyword -> {old literal: new literal}.
    """
    target: str
    parameters: Tuple[str, ...]
    renames: Dict[str, str]
    defaults: Dict[str, str]
    values: Dict[str, Dict[str, str]] = {}


_PADDING = {'valid': 'VALID', 'same': 'SAME', 'VALID': 'VALID', 'SAME': 'SAME'}
_DATA_FORMAT = {'channels_last': 'NHWC', 'channels_first': 'NCHW'}
_DENSE_RENAMES = {'units': 'num_outputs', 'activation': 'activation_fn',
                  'kernel_initializer': 'weights_initializer',
                  'bias_initializer': 'biases_initializer',
                  'kernel_regularizer': 'weights_regularizer',
                  'bias_regularizer': 'biases_regularizer', 'trainable': 'trainable',
                  'name': 'scope', 'reuse': 'reuse'}

TF_LAYERS: Dict[str, LayerPort] = {
    'dropout': LayerPort(
        'tf_slim.dropout', ('inputs', 'rate', 'noise_shape', 'seed', 'training', 'name'),
        {'rate': 'keep_prob:1 - {}', 'noise_shape': 'noise_shape', 'seed': 'seed',
         'training': 'is_training', 'name': 'scope'},
        {'is_training': 'False'}),
    'flatten': LayerPort('tf_slim.flatten', ('inputs', 'name'), {'name': 'scope'}, {}),
    'dense': LayerPort(
        'tf_slim.fully_connected',
        ('inputs', 'units', 'activation', 'use_bias', 'kernel_initializer', 'bias_initializer',
         'kernel_regularizer', 'bias_regularizer', 'activity_regularizer', 'kernel_constraint',
         'bias_constraint', 'trainable', 'name', 'reuse'),
        _DENSE_RENAMES, {'activation_fn': 'None'}),
    'conv2d': LayerPort(
        'tf_slim.conv2d',
        ('inputs', 'filters', 'kernel_size', 'strides', 'padding', 'data_format',
         'dilation_rate', 'activation', 'use_bias', 'kernel_initializer', 'bias_initializer',
         'kernel_regularizer', 'bias_regularizer', 'activity_regularizer', 'kernel_constraint',
         'bias_constraint', 'trainable', 'name', 'reuse'),
        {**_DENSE_RENAMES, 'filters': 'num_outputs', 'kernel_size': 'kernel_size',
         'strides': 'stride', 'padding': 'padding', 'data_format': 'data_format',
         'dilation_rate': 'rate'},
        {'activation_fn': 'None', 'padding': "'VALID'"},
        {'padding': _PADDING, 'data_format': _DATA_FORMAT}),
    'max_pooling2d': LayerPort(
        'tf_slim.max_pool2d', ('inputs', 'pool_size', 'strides', 'padding', 'data_format', 'name'),
        {'pool_size': 'kernel_size', 'strides': 'stride', 'padding': 'padding',
         'data_format': 'data_format', 'name': 'scope'},
        {}, {'padding': _PADDING, 'data_format': _DATA_FORMAT}),
    'average_pooling2d': LayerPort(
        'tf_slim.avg_pool2d', ('inputs', 'pool_size', 'strides', 'padding', 'data_format', 'name'),
        {'pool_size': 'kernel_size', 'strides': 'stride', 'padding': 'padding',
         'data_format': 'data_format', 'name': 'scope'},
        {}, {'padding': _PADDING, 'data_format': _DATA_FORMAT}),
}

#: Why a `tf.layers` name not in TF_LAYERS is not ported.
TF_LAYERS_UNPORTABLE = ('tf.layers is gone with Keras 3 (tf.compat.v1.layers raises); this '
                        'layer has no tf_slim call with the same arguments that slimdata port '
                        'knows; with tf-keras installed (pip install --no-deps '
                        '"tf-keras==<your TensorFlow version>") and ported again, it runs')
#: What to check about such a name when tf-keras is installed.
TF_LAYERS_WITH_KERAS_2 = ("left as it is: it runs with Keras 2 as tf.keras, which the ported "
                          'scripts choose (TF_USE_LEGACY_KERAS=1, tf-keras is installed); code '
                          'that imports this module from elsewhere must set '
                          'TF_USE_LEGACY_KERAS=1 before it first uses tf.keras')
