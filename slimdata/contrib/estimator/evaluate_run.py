"""`Estimator.evaluate`: one evaluation of a checkpoint in a new graph, its metrics' update
ops run to the end of the input (or `steps` batches), the results written as summaries."""

import itertools
import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence

import numpy as np

from slimdata._tf import tf
from slimdata.contrib.estimator.session import checkpoint_to_restore, monitored_session, scaffold
from slimdata.contrib.estimator.spec import (
    GLOBAL_STEP_KEY,
    LOSS_METRIC_KEY,
    EstimatorSpec,
    Hook,
    ModeKeys,
    check_hooks,
    positive,
)

if TYPE_CHECKING:  # the Estimator makes the runs: a run module does not import it
    from slimdata.contrib.estimator.estimator import Estimator

v1 = tf.compat.v1
logging = v1.logging


class StopAfterNEvalsHook(Hook):
    """Stops an evaluation after `num_evals` runs of its update ops."""

    def __init__(self, num_evals: int) -> None:
        self._num_evals = num_evals
        self._done = 0

    def after_run(self, run_context: Any, run_values: Any) -> None:
        self._done += 1
        if self._done >= self._num_evals:
            run_context.request_stop()


#: Numbers the event files `write_results` writes in this process.
_EVENT_FILES = itertools.count()


def write_results(folder: str, results: Dict[str, Any], step: int) -> None:
    """Writes the numeric scalars of an evaluation's results (but the global step) as
    summaries of step `step` to an event file of its own in `folder`."""
    values = [v1.Summary.Value(tag=key, simple_value=float(value))
              for key, value in sorted(results.items())
              if key != GLOBAL_STEP_KEY and np.ndim(value) == 0
              and np.issubdtype(np.asarray(value).dtype, np.number)]
    # An event file is named by the second it is made in and the host: a second evaluation
    # in the same second would write over the first's file, its summaries lost. So each
    # gets a suffix of its own (the process's and a count).
    suffix = f'.{os.getpid()}.{next(_EVENT_FILES)}'
    with tf.Graph().as_default():  # the TF1 FileWriter refuses eager execution
        writer = v1.summary.FileWriter(folder, filename_suffix=suffix)
        writer.add_summary(v1.Summary(value=values), step)
        writer.close()


def metric_ops(spec: EstimatorSpec) -> Dict[str, Any]:
    """The spec's eval_metric_ops and the mean of the batches' losses as 'loss' (a model's
    metric may not be named so: ValueError, TF1's message)."""
    if LOSS_METRIC_KEY in spec.eval_metric_ops:
        raise ValueError(f'Metric with name "{LOSS_METRIC_KEY}" is not allowed, because '
                         'Estimator already defines a default metric with the same name.')
    metrics = dict(spec.eval_metric_ops)
    metrics[LOSS_METRIC_KEY] = v1.metrics.mean(spec.loss)
    return metrics


class EvaluateRun:
    """Evaluates the model of `estimator` on a checkpoint (see `Estimator.evaluate`)."""

    def __init__(self, estimator: 'Estimator') -> None:
        self._estimator = estimator
        self._config = estimator.config

    def run(self, input_fn: Callable, steps: Optional[int], hooks: Optional[Sequence[Any]],
            checkpoint_path: Optional[str], name: Optional[str]) -> Dict[str, Any]:
        """The metrics, 'loss' and 'global_step' of the checkpoint; the arguments are
        `Estimator.evaluate`'s."""
        positive(steps, 'steps')
        hooks = list(check_hooks(hooks))
        if steps is not None:
            hooks.append(StopAfterNEvalsHook(steps))
        checkpoint = checkpoint_to_restore(checkpoint_path, self._config.model_dir, 'evaluate')
        with tf.Graph().as_default():
            global_step, spec, input_hooks = self._estimator._build(input_fn, ModeKeys.EVAL)
            metrics = metric_ops(spec)
            update = tf.group([update for _, update in metrics.values()])
            values = {key: value for key, (value, _) in metrics.items()}
            values[GLOBAL_STEP_KEY] = global_step
            final = v1.train.FinalOpsHook(values)
            logging.info('Starting evaluation of %s', checkpoint or 'the initialized model')
            with monitored_session(self._config, scaffold(spec, self._config), checkpoint,
                                   self._config.evaluation_master,
                                   input_hooks + hooks + list(spec.evaluation_hooks) + [final]
                                   ) as session:
                while not session.should_stop():
                    session.run(update)
        results = final.final_ops_values
        logging.info('Saving dict for global step %d: %s', results[GLOBAL_STEP_KEY], results)
        write_results(self._estimator.eval_dir(name), results, int(results[GLOBAL_STEP_KEY]))
        return results
