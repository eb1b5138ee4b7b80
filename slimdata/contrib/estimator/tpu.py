"""`TPUEstimator` as TF1 ran it with `use_tpu=False`: an Estimator on CPU or GPU.

TPU-era code builds its model for `TPUEstimator` and runs it off a TPU with `use_tpu=False`:
`params['batch_size']` is then the mode's whole batch size (train, eval or predict), the
model_fn may return a `TPUEstimatorSpec` (its `eval_metrics` is `(metric_fn, tensors)`, its
`scaffold_fn` builds the Scaffold, its `host_call` runs with each step) or an `EstimatorSpec`.
`TPUConfig` and the TPU `RunConfig` are accepted with their TF1 arguments; running on a TPU
(`use_tpu=True`) is not covered.
"""

from typing import Any, Callable, Dict, NamedTuple, Optional

from slimdata._tf import tf
from slimdata.contrib.estimator import run_config
from slimdata.contrib.estimator.estimator import Estimator
from slimdata.contrib.estimator.spec import EstimatorSpec, Hook, ModeKeys

v1 = tf.compat.v1

_BATCH_SIZE_KEY = 'batch_size'
_RESERVED_PARAMS_KEYS = (_BATCH_SIZE_KEY, 'context')


class InputPipelineConfig:
    """TF1's values of `TPUConfig.per_host_input_for_training`."""
    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


class TPUConfig(NamedTuple):
    """TF1's TPU settings; kept for code that sets them (they change nothing off a TPU)."""
    iterations_per_loop: int = 2
    num_shards: Optional[int] = None
    num_cores_per_replica: Optional[int] = None
    per_host_input_for_training: Any = True
    tpu_job_name: Optional[str] = None
    initial_infeed_sleep_secs: Optional[int] = None
    input_partition_dims: Any = None
    eval_training_input_configuration: int = InputPipelineConfig.PER_HOST_V1
    experimental_host_call_every_n_steps: int = 1
    experimental_allow_per_host_v2_parallel_get_next: bool = False
    experimental_feed_hook: Any = None


class RunConfig(run_config.RunConfig):
    """TF1's `tf.contrib.tpu.RunConfig`: a RunConfig with a `tpu_config`.

    `tpu_config`: a TPUConfig (default: TPUConfig()). `evaluation_master`, `master`,
    `cluster`: where a TPU would be; kept, unused off a TPU. Other arguments: RunConfig's.
    """

    def __init__(self, tpu_config: Optional[TPUConfig] = None,
                 evaluation_master: Optional[str] = None, master: Optional[str] = None,
                 cluster: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._tpu_config = tpu_config or TPUConfig()
        self._tpu_values = dict(tpu_config=tpu_config, evaluation_master=evaluation_master,
                                master=master, cluster=cluster)

    @property
    def tpu_config(self) -> TPUConfig:
        return self._tpu_config

    @property
    def cluster(self) -> Any:
        return self._tpu_values['cluster']

    def _copy(self, values: Dict[str, Any]) -> 'RunConfig':
        return type(self)(**self._tpu_values, **values)


class TPUEstimatorSpec(NamedTuple('TPUEstimatorSpec', [
        ('mode', str), ('predictions', Any), ('loss', Any), ('train_op', Any),
        ('eval_metrics', Any), ('export_outputs', Any), ('scaffold_fn', Any),
        ('host_call', Any), ('training_hooks', tuple), ('evaluation_hooks', tuple),
        ('prediction_hooks', tuple)])):
    """What a TPUEstimator's model_fn returns (TF1's fields).

    `eval_metrics`: `(metric_fn, tensors)`, `tensors` a list or dict passed to `metric_fn`,
    which returns the `eval_metric_ops`. `scaffold_fn`: a function returning the Scaffold.
    `host_call`: `(fn, tensors)` whose ops run with each step. The rest: EstimatorSpec's.
    """

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metrics=None,
                export_outputs=None, scaffold_fn=None, host_call=None, training_hooks=None,
                evaluation_hooks=None, prediction_hooks=None):
        for name, call in (('eval_metrics', eval_metrics), ('host_call', host_call)):
            if call is not None and not (isinstance(call, (tuple, list)) and len(call) == 2
                                         and callable(call[0])):
                raise ValueError(f'TPUEstimatorSpec.{name} should be tuple of (fn, tensors), '
                                 f'given: {call!r}')
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metrics,
                               export_outputs, scaffold_fn, host_call,
                               tuple(training_hooks or ()), tuple(evaluation_hooks or ()),
                               tuple(prediction_hooks or ()))

    def as_estimator_spec(self) -> EstimatorSpec:
        """The EstimatorSpec that runs this spec off a TPU."""
        eval_metric_ops = _call(self.eval_metrics) if self.eval_metrics else None
        hooks = (_HostCallHook(_call(self.host_call)),) if self.host_call else ()
        return EstimatorSpec(
            mode=self.mode, predictions=self.predictions, loss=self.loss,
            train_op=self.train_op, eval_metric_ops=eval_metric_ops,
            export_outputs=self.export_outputs,
            scaffold=self.scaffold_fn() if self.scaffold_fn else None,
            training_hooks=self.training_hooks + hooks,
            evaluation_hooks=self.evaluation_hooks + hooks,
            prediction_hooks=self.prediction_hooks + hooks)


def _call(call: Any) -> Any:
    fn, tensors = call
    return fn(**tensors) if isinstance(tensors, dict) else fn(*tensors)


class _HostCallHook(Hook):
    """Runs a host_call's ops with each step (on a TPU they ran on the host)."""

    def __init__(self, outputs: Any) -> None:
        self._outputs = outputs

    def before_run(self, run_context: Any) -> Any:
        return v1.train.SessionRunArgs(self._outputs)


class TPUEstimator(Estimator):
    """TF1's `TPUEstimator` with `use_tpu=False`.

    `model_fn`, `model_dir`, `config` (RunConfig or the TPU RunConfig), `params`,
    `warm_start_from`: as for Estimator; `params` must not hold 'batch_size' or 'context'.
    `train_batch_size`, `eval_batch_size`, `predict_batch_size`: `params['batch_size']` in
    each mode (left out when None). `use_tpu`: must be False. `batch_axis`, `eval_on_tpu`,
    `export_to_tpu`, `export_to_cpu`, `embedding_config_spec` and later TF1 arguments are
    accepted and change nothing off a TPU.
    """

    def __init__(self, model_fn: Optional[Callable] = None, model_dir: Optional[str] = None,
                 config: Optional[run_config.RunConfig] = None,
                 params: Optional[Dict[str, Any]] = None, use_tpu: bool = True,
                 train_batch_size: Optional[int] = None, eval_batch_size: Optional[int] = None,
                 predict_batch_size: Optional[int] = None, batch_axis: Any = None,
                 eval_on_tpu: bool = True, export_to_tpu: bool = True,
                 export_to_cpu: bool = True, warm_start_from: Any = None,
                 embedding_config_spec: Any = None, **later_arguments: Any) -> None:
        if use_tpu:
            raise ValueError('TPUEstimator use_tpu=True: running on a TPU is not covered by '
                             'slimdata.contrib.estimator; pass use_tpu=False to run the model '
                             'on CPU or GPU as TF1 did')
        if model_fn is None:
            raise ValueError('model_fn must be provided.')
        params = dict(params or {})
        reserved = [key for key in _RESERVED_PARAMS_KEYS if key in params]
        if reserved:
            raise ValueError(f'{reserved} are reserved keys but existed in params {params}.')
        for name, size in (('train_batch_size', train_batch_size),
                           ('eval_batch_size', eval_batch_size),
                           ('predict_batch_size', predict_batch_size)):
            if size is not None and (not isinstance(size, int) or size <= 0):
                raise ValueError(f'{name} must be a positive integer, given: {size!r}')
        self._batch_sizes = {ModeKeys.TRAIN: train_batch_size, ModeKeys.EVAL: eval_batch_size,
                             ModeKeys.PREDICT: predict_batch_size}
        super().__init__(model_fn, model_dir, config, params, warm_start_from)

    def _params_for(self, mode: str) -> Dict[str, Any]:
        params = dict(self._params)
        if self._batch_sizes[mode] is not None:
            params[_BATCH_SIZE_KEY] = self._batch_sizes[mode]
        return params

    def _as_estimator_spec(self, spec: Any) -> EstimatorSpec:
        if isinstance(spec, TPUEstimatorSpec):
            return spec.as_estimator_spec()
        return super()._as_estimator_spec(spec)
