"""`Estimator.train`: one run of training in a new graph, in a MonitoredTrainingSession that
resumes from `model_dir`'s latest checkpoint and saves checkpoints and summaries there."""

from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence

from slimdata._tf import tf
from slimdata.contrib.estimator.run_config import RunConfig
from slimdata.contrib.estimator.session import scaffold as make_scaffold
from slimdata.contrib.estimator.spec import (
    EstimatorSpec,
    ModeKeys,
    WarmStartSettings,
    check_hooks,
    positive,
)

if TYPE_CHECKING:  # the Estimator makes the runs: a run module does not import it
    from slimdata.contrib.estimator.estimator import Estimator

v1 = tf.compat.v1
logging = v1.logging


def device_fn(config: RunConfig) -> Any:
    """Where training places ops: `config.device_fn`, else the ps tasks' variables (TF1's
    replica_device_setter) in a cluster with ps tasks, else None."""
    if config.device_fn is not None:
        return config.device_fn
    if config.num_ps_replicas > 0:
        return v1.train.replica_device_setter(
            ps_tasks=config.num_ps_replicas, merge_devices=True,
            worker_device=f'/job:{config.task_type}/task:{config.task_id}',
            cluster=config.cluster_spec)
    return None


def saver_hooks(spec: EstimatorSpec, scaffold: Any, worker_hooks: List[Any],
                listeners: List[Any], config: RunConfig) -> List[Any]:
    """The chief's CheckpointSaverHook (the listeners joined to it), if none is given."""
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
        config.model_dir, save_secs=config.save_checkpoints_secs,
        save_steps=config.save_checkpoints_steps, scaffold=scaffold, listeners=listeners,
        save_graph_def=config.checkpoint_save_graph_def)]


def _check_listeners(saving_listeners: Optional[Sequence[Any]]) -> List[Any]:
    listeners = list(saving_listeners or ())
    for listener in listeners:
        if not isinstance(listener, v1.train.CheckpointSaverListener):
            raise TypeError('saving_listeners must be a list of CheckpointSaverListener, '
                            f'given: {listener!r}')
    return listeners


class TrainRun:
    """Trains the model of `estimator`, warm-started by `warm_start` (WarmStartSettings or
    None) when `model_dir` has no checkpoint of its own (see `Estimator.train`)."""

    def __init__(self, estimator: 'Estimator', warm_start: Optional[WarmStartSettings]) -> None:
        self._estimator = estimator
        self._config = estimator.config
        self._warm_start = warm_start

    def run(self, input_fn: Callable, hooks: Optional[Sequence[Any]], steps: Optional[int],
            max_steps: Optional[int], saving_listeners: Optional[Sequence[Any]]) -> None:
        """Trains on `input_fn`'s batches for `steps` more steps, to the global step
        `max_steps` or to the end of the input; the arguments are `Estimator.train`'s."""
        if steps is not None and max_steps is not None:
            raise ValueError('Can not provide both steps and max_steps.')
        positive(steps, 'steps')
        positive(max_steps, 'max_steps')
        if max_steps is not None and self._reached(max_steps):
            logging.info('Skipping training since max_steps has already saved.')
            return
        hooks = list(check_hooks(hooks))
        if steps is not None or max_steps is not None:
            hooks.append(v1.train.StopAtStepHook(steps, max_steps))
        listeners = _check_listeners(saving_listeners)
        with tf.Graph().as_default() as graph, graph.device(device_fn(self._config)):
            global_step, spec, input_hooks = self._estimator._build(input_fn, ModeKeys.TRAIN)
            v1.summary.scalar('loss', spec.loss)
            if self._warm_start is not None:
                logging.info('Warm-starting with WarmStartSettings: %s', self._warm_start)
                v1.train.warm_start(*self._warm_start)
            loss = self._train(spec, global_step, hooks + input_hooks, listeners)
        logging.info('Loss for final step: %s.', loss)

    def _reached(self, max_steps: int) -> bool:
        """Whether `model_dir`'s latest checkpoint is at `max_steps` or beyond."""
        path = self._estimator.latest_checkpoint()
        return path is not None and max_steps <= int(
            v1.train.load_variable(path, v1.GraphKeys.GLOBAL_STEP))

    def _train(self, spec: EstimatorSpec, global_step: Any, hooks: List[Any],
               listeners: List[Any]) -> Any:
        """Runs the spec's train_op until the session stops; the last step's loss (None when
        the input had no batch)."""
        config = self._config
        worker_hooks = hooks + [v1.train.NanTensorHook(spec.loss)]
        if config.log_step_count_steps:
            worker_hooks.append(v1.train.LoggingTensorHook(
                {'loss': spec.loss, 'step': global_step},
                every_n_iter=config.log_step_count_steps))
        worker_hooks.extend(spec.training_hooks)
        scaffold = make_scaffold(spec, config)
        chief_hooks = saver_hooks(spec, scaffold, worker_hooks, listeners, config)
        loss = None
        with v1.train.MonitoredTrainingSession(
                master=config.master, is_chief=config.is_chief,
                checkpoint_dir=config.model_dir, scaffold=scaffold, hooks=worker_hooks,
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
