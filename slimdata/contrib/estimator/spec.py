"""What a `model_fn` returns and what `train_and_evaluate` is given: `ModeKeys`, `EstimatorSpec`,
`TrainSpec`, `EvalSpec`, `WarmStartSettings`, with TensorFlow 1.15's checks and messages."""

from typing import Any, Dict, NamedTuple, Optional, Sequence

from slimdata._tf import tf

v1 = tf.compat.v1
# Names for the base classes of hooks and listeners, which mypy needs (TensorFlow's are Any).
Hook: Any = v1.train.SessionRunHook
SaverListener: Any = v1.train.CheckpointSaverListener


class ModeKeys:
    """The mode a `model_fn` or `input_fn` is called in (the values are TF1's)."""
    TRAIN = 'train'
    EVAL = 'eval'
    PREDICT = 'infer'


#: The key of the loss in `evaluate`'s results, which a model's metrics may not use.
LOSS_METRIC_KEY = 'loss'
#: The key of the checkpoint's global step in `evaluate`'s results.
GLOBAL_STEP_KEY = 'global_step'


def check_hooks(hooks: Optional[Sequence[Any]], what: str = 'hooks') -> tuple:
    """`hooks` as a tuple, or ValueError naming `what` if one is not a SessionRunHook."""
    hooks = tuple(hooks or ())
    for hook in hooks:
        if not isinstance(hook, v1.train.SessionRunHook):
            raise ValueError(f'All {what} must be SessionRunHook instances, given: {hook!r}')
    return hooks


def _check_in_graph(value: Any, name: str) -> None:
    graph = v1.get_default_graph()
    for element in tf.nest.flatten(value):
        if isinstance(element, (tf.Tensor, tf.Operation)) and element.graph is not graph:
            raise ValueError(f'{name} must be from the default graph, given: {element}')


def _scalar_loss(loss: Any) -> tf.Tensor:
    if not isinstance(loss, tf.Tensor):
        raise TypeError(f'loss must be Tensor, given: {loss!r}')
    if loss.shape.num_elements() not in (None, 1):
        raise ValueError(f'Loss must be scalar, given: {loss}')
    return loss if loss.shape.rank == 0 else tf.reshape(loss, [])


def _check_metric_ops(eval_metric_ops: Dict[str, Any]) -> None:
    if not isinstance(eval_metric_ops, dict):
        raise TypeError(f'eval_metric_ops must be a dict, given: {eval_metric_ops!r}')
    for key, metric in eval_metric_ops.items():
        if not (isinstance(metric, tuple) and len(metric) == 2):
            raise TypeError(f'Values of eval_metric_ops must be (metric_value, update_op) '
                            f'tuples, given: {metric!r} for key: {key}')


class EstimatorSpec(NamedTuple('EstimatorSpec', [
        ('mode', str), ('predictions', Any), ('loss', Any), ('train_op', Any),
        ('eval_metric_ops', Dict[str, Any]), ('export_outputs', Any),
        ('training_chief_hooks', tuple), ('training_hooks', tuple), ('scaffold', Any),
        ('evaluation_hooks', tuple), ('prediction_hooks', tuple)])):
    """What a `model_fn` returns: the ops and tensors an Estimator runs in `mode`.

    `mode`: a ModeKeys value. `predictions`: a Tensor or dict of Tensors (PREDICT needs it).
    `loss`: a scalar Tensor (TRAIN and EVAL need it). `train_op`: the op of one training step
    (TRAIN needs it). `eval_metric_ops`: name -> (value, update_op), as `tf.metrics.*` return.
    `export_outputs`: in PREDICT, signature name -> `export.PredictOutput` (or
    ClassificationOutput, RegressionOutput): the signatures `export_saved_model` writes. The
    hooks: run by `train` (the chief's and every worker's), `evaluate` and `predict`.
    `scaffold`: a `tf.train.Scaffold` (init ops, saver, init_fn).
    """

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                export_outputs=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None, evaluation_hooks=None, prediction_hooks=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError(f'mode must be one of ModeKeys, given: {mode!r}')
        if train_op is None and mode == ModeKeys.TRAIN:
            raise ValueError('Missing train_op.')
        if loss is None and mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise ValueError('Missing loss.')
        if predictions is None and mode == ModeKeys.PREDICT:
            raise ValueError('Missing predictions.')
        if loss is not None:
            loss = _scalar_loss(loss)
        if train_op is not None and not isinstance(train_op, (tf.Tensor, tf.Operation)):
            raise TypeError(f'train_op must be Operation or Tensor, given: {train_op!r}')
        if predictions is not None and not isinstance(predictions, (tf.Tensor, dict)):
            raise TypeError(f'predictions must be Tensor or dict of Tensor, given: '
                            f'{predictions!r}')
        eval_metric_ops = dict(eval_metric_ops or {})
        _check_metric_ops(eval_metric_ops)
        for name, value in (('loss', loss), ('train_op', train_op), ('predictions', predictions),
                            ('eval_metric_ops', eval_metric_ops)):
            _check_in_graph(value, name)
        if scaffold is not None and not isinstance(scaffold, v1.train.Scaffold):
            raise TypeError(f'scaffold must be tf.train.Scaffold. Given: {scaffold!r}')
        return super().__new__(
            cls, mode, predictions, loss, train_op, eval_metric_ops, export_outputs,
            check_hooks(training_chief_hooks, 'training_chief_hooks'),
            check_hooks(training_hooks, 'training_hooks'), scaffold,
            check_hooks(evaluation_hooks, 'evaluation_hooks'),
            check_hooks(prediction_hooks, 'prediction_hooks'))


def positive(value: Optional[int], name: str) -> Optional[int]:
    """`value`, or ValueError (TF1's message) naming `name` when it is given and not > 0."""
    if value is not None and value <= 0:
        raise ValueError(f'Must specify {name} > 0, given: {value}')
    return value


class TrainSpec(NamedTuple('TrainSpec', [('input_fn', Any), ('max_steps', Optional[int]),
                                         ('hooks', tuple)])):
    """The training half of `train_and_evaluate`.

    `input_fn`: the training input (see `Estimator.train`). `max_steps`: the global step
    training stops at (None: until the input ends). `hooks`: SessionRunHooks for training.
    """

    def __new__(cls, input_fn, max_steps=None, hooks=None):
        if not callable(input_fn):
            raise TypeError(f'`input_fn` must be callable, given: {input_fn!r}')
        return super().__new__(cls, input_fn, positive(max_steps, 'max_steps'),
                               check_hooks(hooks))


class Exporter:
    """The base of `EvalSpec`'s exporters (see `exporters`): `name`, the export folder's name
    under `model_dir/export`, and `export(estimator, export_path, checkpoint_path,
    eval_result, is_the_final_export)`, called after each evaluation, which exports (or not)
    and returns the export's path, or None."""

    @property
    def name(self) -> str:
        raise NotImplementedError(f'{type(self).__name__}.name')

    def export(self, estimator: Any, export_path: str, checkpoint_path: str,
               eval_result: Dict[str, Any], is_the_final_export: bool) -> Any:
        raise NotImplementedError(f'{type(self).__name__}.export')


def _check_exporters(exporters: Any) -> tuple:
    """`exporters` (None, an Exporter or an iterable of them) as a tuple, their names strings
    and unique; TypeError or ValueError (TF1's messages) otherwise."""
    if not exporters:
        return ()
    if isinstance(exporters, Exporter):
        exporters = [exporters]
    try:
        exporters = tuple(exporters)
    except TypeError:
        exporters = (exporters,)
    if not all(isinstance(exporter, Exporter) for exporter in exporters):
        raise TypeError(f'`exporters` must be an Exporter, an iterable of Exporter, or `None`, '
                        f'found {exporters!r}.')
    names = [exporter.name for exporter in exporters]
    for name in names:
        if not name or not isinstance(name, str):
            raise ValueError(f'An Exporter must have a string name that is not empty. All '
                             f'exporter names: {names}')
    if len(set(names)) != len(names):
        raise ValueError(f'`exporters` must have unique names. All exporter names: {names}')
    return exporters


class EvalSpec(NamedTuple('EvalSpec', [
        ('input_fn', Any), ('steps', Optional[int]), ('name', Optional[str]), ('hooks', tuple),
        ('exporters', tuple), ('start_delay_secs', int), ('throttle_secs', int)])):
    """The evaluation half of `train_and_evaluate`.

    `input_fn`: the evaluation input. `steps`: batches per evaluation (None: to the end of
    the input). `name`: the evaluation's name (results go to `model_dir/eval_<name>`).
    `hooks`: SessionRunHooks for evaluation. `exporters`: an Exporter or a list of them,
    called after each evaluation (names unique). `start_delay_secs`, `throttle_secs`: an
    evaluator task's wait before its first evaluation and the least time between two
    evaluations (also locally: a checkpoint saved sooner than `throttle_secs` after the last
    evaluation is not evaluated).
    """

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        if not callable(input_fn):
            raise TypeError(f'`input_fn` must be callable, given: {input_fn!r}')
        if start_delay_secs < 0:
            raise ValueError(f'Must specify start_delay_secs >= 0, given: {start_delay_secs}')
        if throttle_secs < 0:
            raise ValueError(f'Must specify throttle_secs >= 0, given: {throttle_secs}')
        return super().__new__(cls, input_fn, positive(steps, 'steps'), name,
                               check_hooks(hooks), _check_exporters(exporters),
                               start_delay_secs, throttle_secs)


class WarmStartSettings(NamedTuple):
    """Which variables a new model starts from, as `tf.compat.v1.train.warm_start` takes them.

    `ckpt_to_initialize_from`: a checkpoint or its folder. `vars_to_warm_start`: a regular
    expression or list of variable names. `var_name_to_vocab_info`: name -> `VocabInfo`.
    `var_name_to_prev_var_name`: name -> the variable's name in the checkpoint.
    """
    ckpt_to_initialize_from: str
    vars_to_warm_start: Any = '.*'
    var_name_to_vocab_info: Optional[Dict[str, Any]] = None
    var_name_to_prev_var_name: Optional[Dict[str, str]] = None
