"""`train_and_evaluate`: TF1's loop of training and evaluation, on one machine or a cluster.

On one machine (no cluster in `TF_CONFIG`) it trains, evaluating each new checkpoint at least
`EvalSpec.throttle_secs` after the previous evaluation, and the last one. In a cluster each task
runs its part, as TensorFlow 1.15 did: `chief` and `worker` start their server and train
(workers `(index + 1) * 5` s later, at most 60 s or `experimental_max_worker_delay_secs`), `ps`
serves the variables until it is ended, and `evaluator` evaluates each new checkpoint of the
shared `model_dir` until one reaches `TrainSpec.max_steps`. After each evaluation (locally and
on the evaluator task) the EvalSpec's exporters are called on the evaluated checkpoint, each
exporting to `model_dir/export/<its name>`.
"""

import os
import time
from typing import Any, Dict, List, Optional, Tuple

from slimdata._tf import tf
from slimdata.contrib.estimator.estimator import Estimator
from slimdata.contrib.estimator.run_config import TaskType
from slimdata.contrib.estimator.spec import GLOBAL_STEP_KEY, EvalSpec, SaverListener, TrainSpec

v1 = tf.compat.v1
logging = v1.logging

_DELAY_SECS_PER_WORKER = 5
_MAX_DELAY_SECS = 60


class _Evaluator:
    """Evaluates the latest checkpoint of an Estimator once per new checkpoint, then calls the
    EvalSpec's exporters on it (the final export: the checkpoint at `max_steps`)."""

    def __init__(self, estimator: Estimator, eval_spec: EvalSpec,
                 max_steps: Optional[int] = None) -> None:
        self._estimator = estimator
        self._spec = eval_spec
        self._max_steps = max_steps
        self._last: Optional[str] = None
        self.metrics: Optional[Dict[str, Any]] = None
        self.export_results: List[Any] = []

    def evaluate(self) -> bool:
        """Evaluates the latest checkpoint if it is new; whether it did."""
        latest = self._estimator.latest_checkpoint()
        if not latest:
            logging.info('Estimator is not trained yet. Will start an evaluation when a '
                         'checkpoint is ready.')
            return False
        if latest == self._last:
            logging.info('No new checkpoint ready for evaluation. Skip the current '
                         'evaluation pass as evaluation results are expected to be same for '
                         'the same checkpoint.')
            return False
        try:
            self.metrics = self._estimator.evaluate(
                self._spec.input_fn, steps=self._spec.steps, name=self._spec.name,
                checkpoint_path=latest, hooks=self._spec.hooks)
        except (tf.errors.NotFoundError, ValueError):
            if tf.io.gfile.exists(f'{latest}.index'):
                raise
            # The trainers keep only the newest `keep_checkpoint_max` checkpoints: one found
            # here can be deleted before it is restored (the Saver then says ValueError) or
            # while it is (NotFoundError). The next pass takes a newer one.
            logging.warning('Checkpoint %s was deleted before it could be evaluated (the '
                            'trainer keeps only the newest keep_checkpoint_max); the next '
                            'evaluation takes a newer one.', latest)
            return False
        self._last = latest
        self.export_results = self._export(latest, self.metrics)
        return True

    def _export(self, checkpoint: str, metrics: Dict[str, Any]) -> List[Any]:
        """Each exporter's result for the evaluated `checkpoint`, exported to
        `model_dir/export/<exporter name>` (as TF 1.15 did)."""
        final = self._max_steps is not None and metrics[GLOBAL_STEP_KEY] >= self._max_steps
        base = os.path.join(self._estimator.model_dir, 'export')
        return [exporter.export(self._estimator, os.path.join(base, exporter.name), checkpoint,
                                metrics, final)
                for exporter in self._spec.exporters]


class _EvaluateEachCheckpoint(SaverListener):
    """Evaluates after checkpoint saves at least `throttle_secs` apart, and after the last.

    The first save (the one the session's creation makes) is not evaluated, as in TF1.
    """

    def __init__(self, evaluator: _Evaluator, throttle_secs: int) -> None:
        self._evaluator = evaluator
        self._throttle_secs = throttle_secs

    def begin(self) -> None:
        self._timer = v1.train.SecondOrStepTimer(every_secs=self._throttle_secs)
        self._first = True

    def after_save(self, session: Any, global_step_value: int) -> None:
        if self._first:
            self._first = False
            return
        if self._timer.should_trigger_for_step(global_step_value):
            self._evaluate(global_step_value)
        else:
            logging.info('Skip the current checkpoint eval due to throttle secs (%s secs).',
                         self._throttle_secs)

    def end(self, session: Any, global_step_value: int) -> None:
        if global_step_value != self._timer.last_triggered_step():
            self._evaluate(global_step_value)

    def _evaluate(self, global_step_value: int) -> None:
        self._timer.update_last_triggered_step(global_step_value)
        if not self._evaluator.evaluate():
            raise RuntimeError('There was no new checkpoint after the training.')


def train_and_evaluate(estimator: Estimator, train_spec: TrainSpec,
                       eval_spec: EvalSpec) -> Tuple[Optional[Dict[str, Any]], List[Any]]:
    """Trains `estimator` by `train_spec` and evaluates it by `eval_spec` (see the module).

    Returns (the last evaluation's metrics, its exporters' results) on one machine, as TF 1.15
    did; (None, []) for a task of a cluster (the evaluator task exports too).
    """
    if not isinstance(estimator, Estimator):
        raise TypeError(f'`estimator` must have type `tf.estimator.Estimator`. Got: '
                        f'{type(estimator)}')
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f'`train_spec` must have type `tf.estimator.TrainSpec`. Got: '
                        f'{type(train_spec)}')
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f'`eval_spec` must have type `tf.estimator.EvalSpec`. Got: '
                        f'{type(eval_spec)}')
    config = estimator.config
    if not config.cluster_spec.jobs and config.task_type != TaskType.EVALUATOR:
        logging.info('Running training and evaluation locally (non-distributed).')
        return _run_local(estimator, train_spec, eval_spec)
    runs = {TaskType.CHIEF: _run_training, TaskType.WORKER: _run_training,
            TaskType.PS: _run_ps, TaskType.EVALUATOR: _run_evaluator}
    if config.task_type not in runs:
        raise ValueError(f'Task type {config.task_type!r} is not supported. Supported task '
                         f'types are {sorted(runs)}')
    runs[config.task_type](estimator, train_spec, eval_spec)
    return None, []


def _run_local(estimator: Estimator, train_spec: TrainSpec,
               eval_spec: EvalSpec) -> Tuple[Optional[Dict[str, Any]], List[Any]]:
    evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
    estimator.train(train_spec.input_fn, hooks=train_spec.hooks, max_steps=train_spec.max_steps,
                    saving_listeners=[_EvaluateEachCheckpoint(evaluator,
                                                              eval_spec.throttle_secs)])
    return evaluator.metrics, evaluator.export_results


def _server(estimator: Estimator) -> Any:
    config = estimator.config
    server = v1.train.Server(config.cluster_spec, job_name=config.task_type,
                             task_index=config.task_id,
                             config=config.training_session_config(), start=False,
                             protocol=config.protocol)
    server.start()
    return server


def _run_training(estimator: Estimator, train_spec: TrainSpec, eval_spec: EvalSpec) -> None:
    config = estimator.config
    _server(estimator)
    if config.task_type == TaskType.WORKER:
        most = config.experimental_max_worker_delay_secs
        delay = min(_MAX_DELAY_SECS if most is None else most,
                    (config.task_id + 1) * _DELAY_SECS_PER_WORKER)
        if delay > 0:
            logging.info('Waiting %d secs before starting training.', delay)
            time.sleep(delay)  # TF1's staggered start, so workers do not all hit the ps at once
    estimator.train(train_spec.input_fn, hooks=train_spec.hooks, max_steps=train_spec.max_steps)


def _run_ps(estimator: Estimator, train_spec: TrainSpec, eval_spec: EvalSpec) -> None:
    _server(estimator).join()


def _run_evaluator(estimator: Estimator, train_spec: TrainSpec, eval_spec: EvalSpec) -> None:
    if eval_spec.start_delay_secs:
        logging.info('Waiting %f secs before starting eval.', eval_spec.start_delay_secs)
        time.sleep(eval_spec.start_delay_secs)  # TF1's documented start delay
    evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
    while True:
        start = time.time()
        if evaluator.evaluate() and evaluator.metrics is not None:
            step = evaluator.metrics[GLOBAL_STEP_KEY]
            if train_spec.max_steps is not None and step >= train_spec.max_steps:
                logging.info('Exiting evaluation, global_step=%s >= train max_steps=%s', step,
                             train_spec.max_steps)
                return
        wait = eval_spec.throttle_secs - (time.time() - start)
        if wait > 0:
            logging.info('Waiting %f secs before starting next eval run.', wait)
            time.sleep(wait)  # TF1's throttle between two evaluations
