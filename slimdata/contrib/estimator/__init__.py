"""`tf.estimator`'s successor: TF1's Estimator, which TensorFlow 2.16 removed.

A faithful implementation of the documented TF1 behaviour on
`tf.compat.v1.train.MonitoredTrainingSession`, which `slimdata port` rewrites `tf.estimator.*`,
`tf.compat.v1.estimator.*` and `tf.contrib.tpu.TPUEstimator` (and its spec and configs) to:

- `Estimator` (train, evaluate, predict; `estimator`), `EstimatorSpec`, `ModeKeys`,
  `TrainSpec`, `EvalSpec`, `WarmStartSettings` (`spec`), `RunConfig` and `TF_CONFIG`
  (`run_config`), `train_and_evaluate` on one machine or a cluster (`training`);
- `Estimator.export_saved_model` and the `export` module (serving input receivers, export
  outputs), the exporters of `EvalSpec` (`FinalExporter`, `LatestExporter`, `BestExporter`;
  `exporters`);
- `inputs.numpy_input_fn`, on tf.data;
- `tpu`: `TPUEstimator`, `TPUEstimatorSpec`, `TPUConfig` and its `RunConfig` as TF1 ran them
  with `use_tpu=False`;
- the session hooks and `VocabInfo` that `tf.estimator` exported, which are TensorFlow's own
  (`tf.compat.v1.train`).

Not covered, and an AttributeError naming them: the canned estimators (`DNNClassifier`, ...),
`inputs.pandas_input_fn`, `tf.estimator.experimental`.
"""

from slimdata._tf import tf
from slimdata.contrib.estimator import export, inputs, tpu
from slimdata.contrib.estimator.estimator import Estimator
from slimdata.contrib.estimator.exporters import BestExporter, FinalExporter, LatestExporter
from slimdata.contrib.estimator.run_config import RunConfig
from slimdata.contrib.estimator.spec import (
    EstimatorSpec,
    EvalSpec,
    Exporter,
    ModeKeys,
    TrainSpec,
    WarmStartSettings,
)
from slimdata.contrib.estimator.training import train_and_evaluate

_TRAIN = tf.compat.v1.train
# tf.estimator re-exported these from tf.compat.v1.train under the same names.
CheckpointSaverHook = _TRAIN.CheckpointSaverHook
CheckpointSaverListener = _TRAIN.CheckpointSaverListener
FeedFnHook = _TRAIN.FeedFnHook
FinalOpsHook = _TRAIN.FinalOpsHook
GlobalStepWaiterHook = _TRAIN.GlobalStepWaiterHook
LoggingTensorHook = _TRAIN.LoggingTensorHook
NanLossDuringTrainingError = _TRAIN.NanLossDuringTrainingError
NanTensorHook = _TRAIN.NanTensorHook
ProfilerHook = _TRAIN.ProfilerHook
SecondOrStepTimer = _TRAIN.SecondOrStepTimer
SessionRunArgs = _TRAIN.SessionRunArgs
SessionRunContext = _TRAIN.SessionRunContext
SessionRunHook = _TRAIN.SessionRunHook
SessionRunValues = _TRAIN.SessionRunValues
StepCounterHook = _TRAIN.StepCounterHook
StopAtStepHook = _TRAIN.StopAtStepHook
SummarySaverHook = _TRAIN.SummarySaverHook
VocabInfo = _TRAIN.VocabInfo

#: What this package does not cover, and why (the port reports the same names).
NOT_COVERED = ('tf.estimator\'s canned estimators (DNNClassifier, LinearRegressor, '
               'BoostedTrees..., ...), inputs.pandas_input_fn, tf.estimator.experimental and '
               'tf.distribute strategies are not covered by slimdata.contrib.estimator '
               '(Estimator, EstimatorSpec, ModeKeys, RunConfig, TrainSpec, EvalSpec, '
               'train_and_evaluate, export_saved_model, export.*, FinalExporter, '
               'LatestExporter, BestExporter, inputs.numpy_input_fn, TPUEstimator with '
               'use_tpu=False and the session hooks are)')

__all__ = ['BestExporter', 'CheckpointSaverHook', 'CheckpointSaverListener', 'Estimator',
           'EstimatorSpec', 'EvalSpec', 'Exporter', 'FeedFnHook', 'FinalExporter', 'FinalOpsHook',
           'GlobalStepWaiterHook', 'LatestExporter', 'LoggingTensorHook', 'ModeKeys',
           'NanLossDuringTrainingError', 'NanTensorHook', 'ProfilerHook', 'RunConfig',
           'SecondOrStepTimer', 'SessionRunArgs', 'SessionRunContext', 'SessionRunHook',
           'SessionRunValues', 'StepCounterHook', 'StopAtStepHook', 'SummarySaverHook', 'TrainSpec',
           'VocabInfo', 'WarmStartSettings', 'export', 'inputs', 'tpu', 'train_and_evaluate']


def __getattr__(name: str):
    if name.startswith('__'):
        raise AttributeError(name)
    raise AttributeError(f'slimdata.contrib.estimator has no {name!r}: {NOT_COVERED}')
