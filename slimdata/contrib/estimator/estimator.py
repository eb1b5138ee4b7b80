"""`Estimator`: TF1's `tf.estimator.Estimator` on `tf.compat.v1.train.MonitoredTrainingSession`.

Each call builds a new graph: the global step, the input (`input_fn`, on the CPU), the model
(`model_fn` in the call's mode), then runs it in a monitored session that restores the latest
checkpoint of `model_dir`. `train` saves checkpoints and summaries there and resumes from them;
`evaluate` runs the metrics' update ops to the end of the input (or `steps` batches) and writes
the results to `model_dir/eval[_name]`; `predict` yields predictions until the input ends.
"""

import functools
import inspect
import os
import tempfile
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from slimdata._tf import tf
from slimdata.contrib.estimator.run_config import RunConfig
from slimdata.contrib.estimator.spec import (
    GLOBAL_STEP_KEY,
    LOSS_METRIC_KEY,
    EstimatorSpec,
    Hook,
    ModeKeys,
    WarmStartSettings,
    check_hooks,
)

v1 = tf.compat.v1
logging = v1.logging

_MODEL_FN_ARGS = {'features', 'labels', 'mode', 'params', 'config'}


def fn_args(fn: Callable) -> Tuple[str, ...]:
    """The argument names `fn` can be called with by name, as TF1's `fn_args`: a partial's
    bound keywords are left out, as are a method's `self` and `*args` / `**kwargs`."""
    parameters = inspect.signature(fn).parameters
    bound = fn.keywords if isinstance(fn, functools.partial) else {}
    return tuple(name for name, parameter in parameters.items()
                 if name not in bound and parameter.kind not in (
                     inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD))


def _check_model_fn(model_fn: Callable, params: Optional[Dict[str, Any]]) -> None:
    if not callable(model_fn):
        raise ValueError(f'model_fn must be callable, given: {model_fn!r}')
    args = set(fn_args(model_fn))
    if 'features' not in args:
        raise ValueError(f'model_fn ({model_fn}) must include features argument.')
    if params is not None and 'params' not in args:
        raise ValueError(f'model_fn ({model_fn}) does not include params argument, but params '
                         f'({params}) is passed to Estimator.')
    unexpected = args - _MODEL_FN_ARGS - {'self'}
    if unexpected:
        raise ValueError(f'model_fn ({model_fn}) has following not expected args: '
                         f'{sorted(unexpected)}')


def _check_steps(value: Optional[int], name: str) -> None:
    if value is not None and value <= 0:
        raise ValueError(f'Must specify {name} > 0, given: {value}')


class _DatasetInitializerHook(Hook):
    """Initializes the iterator of an input_fn's Dataset once the session exists."""

    def __init__(self, iterator: Any) -> None:
        self._iterator = iterator

    def after_create_session(self, session: Any, coord: Any) -> None:
        session.run(self._iterator.initializer)


class _StopAfterNEvalsHook(Hook):
    """Stops an evaluation after `num_evals` runs of its update ops."""

    def __init__(self, num_evals: int) -> None:
        self._num_evals = num_evals
        self._done = 0

    def after_run(self, run_context: Any, run_values: Any) -> None:
        self._done += 1
        if self._done >= self._num_evals:
            run_context.request_stop()


def parse_input(result: Any) -> Tuple[Any, Any, List[Any]]:
    """(features, labels, hooks) of what an input_fn returned: a Dataset (of features or of
    (features, labels)), a (features, labels) pair of tensors or dicts, or features alone."""
    hooks = []
    if isinstance(result, tf.data.Dataset):
        iterator = v1.data.make_initializable_iterator(result)
        hooks.append(_DatasetInitializerHook(iterator))
        result = iterator.get_next()
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise ValueError('input_fn should return (features, labels) as a len 2 tuple, '
                             f'given a {type(result).__name__} of {len(result)}')
        return result[0], result[1], hooks
    return result, None, hooks


def _write_results(folder: str, results: Dict[str, Any], step: int) -> None:
    """Writes the scalar results of an evaluation as summaries of step `step` to `folder`."""
    values = [v1.Summary.Value(tag=key, simple_value=float(value))
              for key, value in sorted(results.items())
              if key != GLOBAL_STEP_KEY and np.ndim(value) == 0
              and np.issubdtype(np.asarray(value).dtype, np.number)]
    with tf.Graph().as_default():  # the TF1 FileWriter refuses eager execution
        writer = v1.summary.FileWriter(folder)
        writer.add_summary(v1.Summary(value=values), step)
        writer.close()


def _batch_length(predictions: Dict[str, np.ndarray]) -> int:
    lengths = {}
    for key, value in predictions.items():
        if np.ndim(value) == 0:
            raise ValueError(f'Prediction {key!r} is a scalar: with yield_single_examples, '
                             'every prediction needs a batch dimension')
        lengths[key] = len(value)
    if len(set(lengths.values())) > 1:
        raise ValueError(f'Batch length of predictions should be same: {lengths}')
    return next(iter(lengths.values()))


class Estimator:
    """Trains, evaluates and predicts with the model that `model_fn` builds (TF1's Estimator).

    `model_fn(features, labels, mode, params, config)`: builds the model and returns an
    `EstimatorSpec`; only `features` is required, the other arguments are passed when named.
    `model_dir`: where checkpoints and summaries go (else `config.model_dir`, else a new
    temporary folder). `config`: a `RunConfig`. `params`: a dict passed to `model_fn` and
    `input_fn` (as `params`). `warm_start_from`: a checkpoint (or its folder) or
    `WarmStartSettings` that a model without a checkpoint of its own starts from.
    """

    def __init__(self, model_fn: Callable, model_dir: Optional[str] = None,
                 config: Optional[RunConfig] = None, params: Optional[Dict[str, Any]] = None,
                 warm_start_from: Any = None) -> None:
        if config is None:
            config = RunConfig()
        elif not isinstance(config, RunConfig):
            raise ValueError(f'config must be an instance of RunConfig, but provided {config}.')
        if model_dir and config.model_dir and os.path.normpath(model_dir) != os.path.normpath(
                config.model_dir):
            raise ValueError(f'model_dir are set both in constructor and RunConfig, but with '
                             f'different values. In constructor: {model_dir}, in RunConfig: '
                             f'{config.model_dir}')
        model_dir = model_dir or config.model_dir
        if not model_dir:
            model_dir = tempfile.mkdtemp()
            logging.warning('Using temporary folder as model directory: %s', model_dir)
        if config.model_dir != model_dir:
            config = config.replace(model_dir=model_dir)
        _check_model_fn(model_fn, params)
        if isinstance(warm_start_from, str):
            warm_start_from = WarmStartSettings(warm_start_from)
        elif warm_start_from is not None and not isinstance(warm_start_from, WarmStartSettings):
            raise ValueError('warm_start_from must be a string or a WarmStartSettings, given: '
                             f'{warm_start_from!r}')
        self._model_fn = model_fn
        self._config = config
        self._model_dir = model_dir
        self._params = dict(params or {})
        self._warm_start = warm_start_from

    @property
    def model_dir(self) -> str:
        return self._model_dir

    @property
    def config(self) -> RunConfig:
        return self._config

    @property
    def params(self) -> Dict[str, Any]:
        return dict(self._params)

    @property
    def model_fn(self) -> Callable:
        """`model_fn` bound to this Estimator's config: call it with (features, labels, mode)."""
        return lambda features, labels, mode, config=None: self._call_model_fn(
            features, labels, mode)

    # -- checkpoints --------------------------------------------------------------------------

    def latest_checkpoint(self) -> Optional[str]:
        """The path of the latest checkpoint in `model_dir`, or None."""
        return v1.train.latest_checkpoint(self._model_dir)

    def _checkpoint(self) -> str:
        path = self.latest_checkpoint()
        if not path:
            raise ValueError(f'Could not find trained model in model_dir: {self._model_dir}.')
        return path

    def get_variable_names(self) -> List[str]:
        """The names of the variables in the latest checkpoint."""
        return [name for name, _ in v1.train.list_variables(self._checkpoint())]

    def get_variable_value(self, name: str) -> np.ndarray:
        """The value of variable `name` in the latest checkpoint."""
        return v1.train.load_variable(self._checkpoint(), name)

    def eval_dir(self, name: Optional[str] = None) -> str:
        """Where `evaluate(name=name)` writes its results."""
        return os.path.join(self._model_dir, 'eval' if not name else 'eval_' + name)

    def _global_step_saved(self) -> Optional[int]:
        path = self.latest_checkpoint()
        return int(v1.train.load_variable(path, v1.GraphKeys.GLOBAL_STEP)) if path else None

    # -- the graph ----------------------------------------------------------------------------

    def _call_input_fn(self, input_fn: Callable, mode: str) -> Tuple[Any, Any, List[Any]]:
        args = fn_args(input_fn)
        kwargs: Dict[str, Any] = {}
        if 'mode' in args:
            kwargs['mode'] = mode
        if 'params' in args:
            kwargs['params'] = self._params_for(mode)
        if 'config' in args:
            kwargs['config'] = self._config
        with tf.device('/cpu:0'):
            return parse_input(input_fn(**kwargs))

    def _params_for(self, mode: str) -> Dict[str, Any]:
        """The `params` that `model_fn` and `input_fn` see in `mode` (TPUEstimator adds)."""
        return self._params

    def _call_model_fn(self, features: Any, labels: Any, mode: str) -> EstimatorSpec:
        args = fn_args(self._model_fn)
        kwargs: Dict[str, Any] = {}
        if 'labels' in args:
            kwargs['labels'] = labels
        elif labels is not None:
            raise ValueError('model_fn does not take labels, but input_fn returns labels.')
        if 'mode' in args:
            kwargs['mode'] = mode
        if 'params' in args:
            kwargs['params'] = self._params_for(mode)
        if 'config' in args:
            kwargs['config'] = self._config
        spec = self._model_fn(features=features, **kwargs)
        return self._as_estimator_spec(spec)

    def _as_estimator_spec(self, spec: Any) -> EstimatorSpec:
        if not isinstance(spec, EstimatorSpec):
            raise ValueError(f'model_fn should return an EstimatorSpec, given: {spec!r}')
        return spec

    def _build(self, input_fn: Callable, mode: str) -> Tuple[Any, EstimatorSpec, List[Any]]:
        """In the current graph: the global step, the input and the model in `mode`."""
        v1.set_random_seed(self._config.tf_random_seed)
        global_step = v1.train.get_or_create_global_step()
        features, labels, input_hooks = self._call_input_fn(input_fn, mode)
        return global_step, self._call_model_fn(features, labels, mode), input_hooks

    def _scaffold(self, spec: EstimatorSpec) -> Any:
        scaffold = spec.scaffold or v1.train.Scaffold()
        if scaffold.saver is None and not v1.get_collection(v1.GraphKeys.SAVERS):
            v1.add_to_collection(v1.GraphKeys.SAVERS, v1.train.Saver(
                sharded=True, max_to_keep=self._config.keep_checkpoint_max,
                keep_checkpoint_every_n_hours=self._config.keep_checkpoint_every_n_hours,
                defer_build=True, save_relative_paths=True))
        return scaffold

    def _device_fn(self) -> Any:
        config = self._config
        if config.device_fn is not None:
            return config.device_fn
        if config.num_ps_replicas > 0:
            return v1.train.replica_device_setter(
                ps_tasks=config.num_ps_replicas, merge_devices=True,
                worker_device=f'/job:{config.task_type}/task:{config.task_id}',
                cluster=config.cluster_spec)
        return None

    # -- train --------------------------------------------------------------------------------

    def train(self, input_fn: Callable, hooks: Optional[Sequence[Any]] = None,
              steps: Optional[int] = None, max_steps: Optional[int] = None,
              saving_listeners: Optional[Sequence[Any]] = None) -> 'Estimator':
        """Trains on the batches of `input_fn` and returns this Estimator.

        `input_fn([params], [config], [mode])`: returns a Dataset of (features, labels) or of
        features, or (features, labels) tensors (queue-based input runs too). `hooks`:
        SessionRunHooks. `steps`: train that many steps more than the checkpoint's global
        step; `max_steps`: stop at that global step (and do nothing when the checkpoint is
        there already); neither: until the input ends. `saving_listeners`:
        CheckpointSaverListeners called around each checkpoint save.
        """
        if steps is not None and max_steps is not None:
            raise ValueError('Can not provide both steps and max_steps.')
        _check_steps(steps, 'steps')
        _check_steps(max_steps, 'max_steps')
        if max_steps is not None:
            saved = self._global_step_saved()
            if saved is not None and max_steps <= saved:
                logging.info('Skipping training since max_steps has already saved.')
                return self
        hooks = list(check_hooks(hooks))
        if steps is not None or max_steps is not None:
            hooks.append(v1.train.StopAtStepHook(steps, max_steps))
        listeners = list(saving_listeners or ())
        for listener in listeners:
            if not isinstance(listener, v1.train.CheckpointSaverListener):
                raise TypeError('saving_listeners must be a list of CheckpointSaverListener, '
                                f'given: {listener!r}')
        with tf.Graph().as_default() as graph, graph.device(self._device_fn()):
            global_step, spec, input_hooks = self._build(input_fn, ModeKeys.TRAIN)
            v1.summary.scalar('loss', spec.loss)
            if self._warm_start is not None:
                logging.info('Warm-starting with WarmStartSettings: %s', self._warm_start)
                v1.train.warm_start(*self._warm_start)
            loss = self._train_with_spec(spec, global_step, hooks + input_hooks, listeners)
        logging.info('Loss for final step: %s.', loss)
        return self

    def _saver_hooks(self, spec: EstimatorSpec, scaffold: Any, worker_hooks: List[Any],
                     listeners: List[Any]) -> List[Any]:
        """The chief's CheckpointSaverHook (the listeners joined to it), if none is given."""
        config = self._config
        given = [hook for hook in worker_hooks + list(spec.training_chief_hooks)
                 if isinstance(hook, v1.train.CheckpointSaverHook)]
        if given:
            # As TF1 did: the listeners join the first given saver hook (its only store).
            given[0]._listeners.extend(listeners)
            return []
        if not (config.save_checkpoints_secs or config.save_checkpoints_steps):
            if listeners:
                raise ValueError('There should be a CheckpointSaverHook to use '
                                 'saving_listeners. Please set one of the RunConfig.'
                                 'save_checkpoints_steps or RunConfig.save_checkpoints_secs.')
            return []
        return [v1.train.CheckpointSaverHook(
            self._model_dir, save_secs=config.save_checkpoints_secs,
            save_steps=config.save_checkpoints_steps, scaffold=scaffold, listeners=listeners,
            save_graph_def=config.checkpoint_save_graph_def)]

    def _train_with_spec(self, spec: EstimatorSpec, global_step: Any, hooks: List[Any],
                         listeners: List[Any]) -> Any:
        config = self._config
        worker_hooks = hooks + [v1.train.NanTensorHook(spec.loss)]
        if config.log_step_count_steps:
            worker_hooks.append(v1.train.LoggingTensorHook(
                {'loss': spec.loss, 'step': global_step},
                every_n_iter=config.log_step_count_steps))
        worker_hooks.extend(spec.training_hooks)
        scaffold = self._scaffold(spec)
        chief_hooks = self._saver_hooks(spec, scaffold, worker_hooks, listeners)
        loss = None
        with v1.train.MonitoredTrainingSession(
                master=config.master, is_chief=config.is_chief,
                checkpoint_dir=self._model_dir, scaffold=scaffold, hooks=worker_hooks,
                chief_only_hooks=chief_hooks + list(spec.training_chief_hooks),
                save_checkpoint_secs=0, save_summaries_steps=config.save_summary_steps,
                config=config.training_session_config(),
                max_wait_secs=config.session_creation_timeout_secs,
                log_step_count_steps=config.log_step_count_steps) as session:
            while not session.should_stop():
                _, loss = session.run([spec.train_op, spec.loss])
        if loss is None:
            logging.warning('Training with estimator made no steps. Perhaps input is empty or '
                            'misspecified.')
        return loss

    # -- evaluate -----------------------------------------------------------------------------

    def _restore_from(self, checkpoint_path: Optional[str], what: str) -> Optional[str]:
        path = checkpoint_path or self.latest_checkpoint()
        if not path:
            logging.info('Could not find trained model in model_dir: %s, running '
                         'initialization to %s.', self._model_dir, what)
        return path

    def _session(self, scaffold: Any, checkpoint: Optional[str], master: str,
                 hooks: List[Any]) -> Any:
        creator = v1.train.ChiefSessionCreator(
            scaffold=scaffold, checkpoint_filename_with_path=checkpoint, master=master,
            config=self._config.session_config or v1.ConfigProto(allow_soft_placement=True))
        return v1.train.MonitoredSession(session_creator=creator, hooks=hooks)

    def evaluate(self, input_fn: Callable, steps: Optional[int] = None,
                 hooks: Optional[Sequence[Any]] = None, checkpoint_path: Optional[str] = None,
                 name: Optional[str] = None) -> Dict[str, Any]:
        """Evaluates the model of a checkpoint and returns its metrics, 'loss', 'global_step'.

        Runs the update ops of the spec's `eval_metric_ops` (and of the mean loss) on each
        batch of `input_fn` until it ends, or for `steps` batches, then their values.
        `checkpoint_path`: the checkpoint (default: the latest in `model_dir`; without one, the
        initialized model). `name`: results also go, as summaries, to `model_dir/eval_<name>`
        (`model_dir/eval` without a name).
        """
        _check_steps(steps, 'steps')
        hooks = list(check_hooks(hooks))
        if steps is not None:
            hooks.append(_StopAfterNEvalsHook(steps))
        checkpoint = self._restore_from(checkpoint_path, 'evaluate')
        with tf.Graph().as_default():
            global_step, spec, input_hooks = self._build(input_fn, ModeKeys.EVAL)
            if LOSS_METRIC_KEY in spec.eval_metric_ops:
                raise ValueError(f'Metric with name "{LOSS_METRIC_KEY}" is not allowed, because '
                                 'Estimator already defines a default metric with the same '
                                 'name.')
            metrics = dict(spec.eval_metric_ops)
            metrics[LOSS_METRIC_KEY] = v1.metrics.mean(spec.loss)
            update = tf.group([update for _, update in metrics.values()])
            values = {key: value for key, (value, _) in metrics.items()}
            values[GLOBAL_STEP_KEY] = global_step
            final = v1.train.FinalOpsHook(values)
            logging.info('Starting evaluation of %s', checkpoint or 'the initialized model')
            with self._session(self._scaffold(spec), checkpoint, self._config.evaluation_master,
                               input_hooks + hooks + list(spec.evaluation_hooks) + [final]
                               ) as session:
                while not session.should_stop():
                    session.run(update)
        results = final.final_ops_values
        logging.info('Saving dict for global step %d: %s', results[GLOBAL_STEP_KEY], results)
        _write_results(self.eval_dir(name), results, int(results[GLOBAL_STEP_KEY]))
        return results

    # -- predict ------------------------------------------------------------------------------

    def predict(self, input_fn: Callable, predict_keys: Optional[Sequence[str]] = None,
                hooks: Optional[Sequence[Any]] = None, checkpoint_path: Optional[str] = None,
                yield_single_examples: bool = True) -> Iterator[Any]:
        """Yields the spec's predictions for each example of `input_fn` until it ends.

        `input_fn`: returns features (labels, if any, are ignored). `predict_keys`: the keys of
        a dict of predictions to yield (default: all). `checkpoint_path`: as in `evaluate`.
        `yield_single_examples`: yield one example at a time (else each batch's values).
        """
        hooks = list(check_hooks(hooks))
        checkpoint = self._restore_from(checkpoint_path, 'predict')
        with tf.Graph().as_default():
            v1.set_random_seed(self._config.tf_random_seed)
            v1.train.get_or_create_global_step()
            features, _, input_hooks = self._call_input_fn(input_fn, ModeKeys.PREDICT)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT)
            predictions = _select(spec.predictions, predict_keys)
            with self._session(self._scaffold(spec), checkpoint, self._config.master,
                               input_hooks + hooks + list(spec.prediction_hooks)) as session:
                while not session.should_stop():
                    values = session.run(predictions)
                    yield from _examples(values, yield_single_examples)

    def export_saved_model(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError('Estimator.export_saved_model: exporting SavedModels is not '
                                  'covered by slimdata.contrib.estimator')

    export_savedmodel = export_saved_model


def _select(predictions: Any, keys: Optional[Sequence[str]]) -> Any:
    if keys is None:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError(f'predict_keys argument is not valid in case of non-dict predictions '
                         f'(predict_keys: {keys})')
    missing = [key for key in keys if key not in predictions]
    if missing:
        raise ValueError(f'Expected to run at least one output from {sorted(predictions)}, '
                         f'provided {list(keys)}: {missing} are not predictions')
    return {key: predictions[key] for key in keys}


def _examples(values: Any, single: bool) -> Iterator[Any]:
    if not single:
        yield values
    elif not isinstance(values, dict):
        yield from values
    else:
        for index in range(_batch_length(values)):
            yield {key: value[index] for key, value in values.items()}
