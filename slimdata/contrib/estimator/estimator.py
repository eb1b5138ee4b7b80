"""`Estimator`: TF1's `tf.estimator.Estimator` on `tf.compat.v1.train.MonitoredTrainingSession`.

Each call builds a new graph: the global step, the input (`input_fn`, on the CPU), the model
(`model_fn` in the call's mode), then runs it in a monitored session that restores the latest
checkpoint of `model_dir`. `train` saves checkpoints and summaries there and resumes from them;
`evaluate` runs the metrics' update ops to the end of the input (or `steps` batches) and writes
the results to `model_dir/eval[_name]`; `predict` yields predictions until the input ends;
`export_saved_model` writes the PREDICT graph and a checkpoint's variables as a SavedModel.

The class is the facade: its configuration, checkpoints and the building of the graph; each
run is a class of its own (`train_run`, `evaluate_run`, `predict_run`, `export_run`), which
builds on `_build` (or `_call_model_fn`).
"""

import os
import tempfile
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from slimdata._tf import tf
from slimdata.contrib.estimator.calls import check_model_fn, named_arguments, parse_input
from slimdata.contrib.estimator.evaluate_run import EvaluateRun
from slimdata.contrib.estimator.export_run import ExportRun
from slimdata.contrib.estimator.predict_run import PredictRun
from slimdata.contrib.estimator.run_config import RunConfig
from slimdata.contrib.estimator.spec import EstimatorSpec, ModeKeys, WarmStartSettings
from slimdata.contrib.estimator.train_run import TrainRun

v1 = tf.compat.v1
logging = v1.logging


def _config_with_model_dir(model_dir: Optional[str], config: Optional[RunConfig]) -> RunConfig:
    """`config` (default RunConfig()) whose model_dir is `model_dir`, the config's, or a new
    temporary folder; ValueError when both are given and differ."""
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
    return config if config.model_dir == model_dir else config.replace(model_dir=model_dir)


class Estimator:
    """Trains, evaluates, predicts with and exports the model `model_fn` builds (TF1's Estimator).

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
        config = _config_with_model_dir(model_dir, config)
        check_model_fn(model_fn, params)
        if isinstance(warm_start_from, str):
            warm_start_from = WarmStartSettings(warm_start_from)
        elif warm_start_from is not None and not isinstance(warm_start_from, WarmStartSettings):
            raise ValueError('warm_start_from must be a string or a WarmStartSettings, given: '
                             f'{warm_start_from!r}')
        self._model_fn = model_fn
        self._config = config
        self._model_dir: str = config.model_dir
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

    # -- the graph ----------------------------------------------------------------------------

    def _arguments(self, mode: str) -> Dict[str, Any]:
        """The arguments TF1 passed by name to a model_fn or input_fn that takes them."""
        return {'mode': mode, 'params': self._params_for(mode), 'config': self._config}

    def _call_input_fn(self, input_fn: Callable, mode: str) -> Tuple[Any, Any, List[Any]]:
        with tf.device('/cpu:0'):
            return parse_input(input_fn(**named_arguments(input_fn, self._arguments(mode))))

    def _params_for(self, mode: str) -> Dict[str, Any]:
        """The `params` that `model_fn` and `input_fn` see in `mode` (TPUEstimator adds)."""
        return self._params

    def _call_model_fn(self, features: Any, labels: Any, mode: str) -> EstimatorSpec:
        kwargs = named_arguments(self._model_fn, dict(self._arguments(mode), labels=labels))
        if 'labels' not in kwargs and labels is not None:
            raise ValueError('model_fn does not take labels, but input_fn returns labels.')
        return self._as_estimator_spec(self._model_fn(features=features, **kwargs))

    def _as_estimator_spec(self, spec: Any) -> EstimatorSpec:
        if not isinstance(spec, EstimatorSpec):
            raise ValueError(f'model_fn should return an EstimatorSpec, given: {spec!r}')
        return spec

    def _build(self, input_fn: Callable, mode: str) -> Tuple[Any, EstimatorSpec, List[Any]]:
        """In the current graph: the global step, the input and the model in `mode` (whose
        labels, in PREDICT, are left out as TF1 did); (global step, spec, input hooks)."""
        v1.set_random_seed(self._config.tf_random_seed)
        global_step = v1.train.get_or_create_global_step()
        features, labels, input_hooks = self._call_input_fn(input_fn, mode)
        if mode == ModeKeys.PREDICT:
            labels = None
        return global_step, self._call_model_fn(features, labels, mode), input_hooks

    # -- the runs -----------------------------------------------------------------------------

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
        TrainRun(self, self._warm_start).run(input_fn, hooks, steps, max_steps,
                                             saving_listeners)
        return self

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
        return EvaluateRun(self).run(input_fn, steps, hooks, checkpoint_path, name)

    def predict(self, input_fn: Callable, predict_keys: Optional[Sequence[str]] = None,
                hooks: Optional[Sequence[Any]] = None, checkpoint_path: Optional[str] = None,
                yield_single_examples: bool = True) -> Iterator[Any]:
        """Yields the spec's predictions for each example of `input_fn` until it ends.

        `input_fn`: returns features (labels, if any, are ignored). `predict_keys`: the keys of
        a dict of predictions to yield (default: all). `checkpoint_path`: as in `evaluate`.
        `yield_single_examples`: yield one example at a time (else each batch's values).
        """
        return PredictRun(self).run(input_fn, predict_keys, hooks, checkpoint_path,
                                    yield_single_examples)

    def export_saved_model(self, export_dir_base: str, serving_input_receiver_fn: Callable,
                           assets_extra: Optional[Dict[str, str]] = None, as_text: bool = False,
                           checkpoint_path: Optional[str] = None) -> bytes:
        """Exports the model as a SavedModel in `export_dir_base/<timestamp>`; its path (bytes).

        `serving_input_receiver_fn()`: returns the `export.ServingInputReceiver` whose
        features the model_fn is called with in PREDICT mode; the spec's `export_outputs` are
        the signatures (default: `serving_default`, a PredictOutput of its predictions), on the
        receiver tensors, with the tag `serve`. `assets_extra`: destination (relative to
        `assets.extra`) -> source file to copy there. `as_text`: write saved_model.pbtxt.
        `checkpoint_path`: the checkpoint exported (default: the latest in `model_dir`).
        """
        return ExportRun(self, self._warm_start).run(export_dir_base, serving_input_receiver_fn,
                                                     assets_extra, as_text, checkpoint_path)

    export_savedmodel = export_saved_model
