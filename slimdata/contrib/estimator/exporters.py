"""The exporters of `EvalSpec(exporters=...)`: what `train_and_evaluate` calls after each
evaluation, as TensorFlow 1.15 documented them.

Each exports to `<model_dir>/export/<name>/<timestamp>` through `Estimator.export_saved_model`:
`FinalExporter` once, after the evaluation of the checkpoint that reached `TrainSpec.max_steps`;
`LatestExporter` after every evaluation, keeping the newest `exports_to_keep`; `BestExporter`
when the evaluation is better (`compare_fn`, default: a smaller loss) than the best so far,
which it first reads from the evaluations' event files in `model_dir`.
"""

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from slimdata._tf import tf
from slimdata.contrib.estimator.spec import LOSS_METRIC_KEY, Exporter
from slimdata.records import fs

if TYPE_CHECKING:  # exporters are given the Estimator: this module does not import it
    from slimdata.contrib.estimator.estimator import Estimator

v1 = tf.compat.v1
logging = v1.logging


class _SavedModelExporter(Exporter):
    """Exports the evaluated checkpoint with `serving_input_receiver_fn`, `assets_extra` and
    `as_text` (Estimator.export_saved_model's), each time it is asked to."""

    def __init__(self, name: str, serving_input_receiver_fn: Optional[Callable],
                 assets_extra: Optional[Dict[str, str]] = None, as_text: bool = False) -> None:
        if not name:
            raise ValueError(f'An exporter needs a name, given: {name!r}')
        if not callable(serving_input_receiver_fn):
            raise ValueError(f'serving_input_receiver_fn of exporter {name!r} must be '
                             f'callable, given: {serving_input_receiver_fn!r}')
        self._name = name
        self._serving_input_receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text

    @property
    def name(self) -> str:
        return self._name

    def export(self, estimator: 'Estimator', export_path: str, checkpoint_path: str,
               eval_result: Dict[str, Any], is_the_final_export: bool) -> Optional[bytes]:
        return estimator.export_saved_model(
            export_path, self._serving_input_receiver_fn, assets_extra=self._assets_extra,
            as_text=self._as_text, checkpoint_path=checkpoint_path)


def _check_exports_to_keep(exports_to_keep: Optional[int]) -> Optional[int]:
    if exports_to_keep is not None and exports_to_keep <= 0:
        raise ValueError(f'`exports_to_keep`, if provided, must be a positive number, given: '
                         f'{exports_to_keep}')
    return exports_to_keep


def keep_newest_exports(export_dir_base: str, exports_to_keep: Optional[int]) -> List[str]:
    """Removes all but the newest `exports_to_keep` exports (folders named by a 10-digit
    timestamp) of `export_dir_base` (None: keeps all); the removed folders."""
    if exports_to_keep is None or not fs.isdir(export_dir_base):
        return []
    versions = sorted(name for name in fs.listdir(export_dir_base)
                      if len(name) == 10 and name.isdigit())
    removed = [os.path.join(export_dir_base, name) for name in versions[:-exports_to_keep]]
    for folder in removed:
        fs.remove_tree(folder)
    return removed


class FinalExporter(_SavedModelExporter):
    """Exports once, after the evaluation of the final checkpoint of training (the one at
    `TrainSpec.max_steps`). `name`: the export folder's name; `serving_input_receiver_fn`,
    `assets_extra`, `as_text`: `Estimator.export_saved_model`'s."""

    def export(self, estimator: 'Estimator', export_path: str, checkpoint_path: str,
               eval_result: Dict[str, Any], is_the_final_export: bool) -> Optional[bytes]:
        if not is_the_final_export:
            return None
        logging.info('Performing the final export in the end of training.')
        return super().export(estimator, export_path, checkpoint_path, eval_result,
                              is_the_final_export)


class LatestExporter(_SavedModelExporter):
    """Exports after every evaluation and keeps the newest `exports_to_keep` exports (None:
    all). The other arguments: FinalExporter's."""

    def __init__(self, name: str, serving_input_receiver_fn: Callable,
                 assets_extra: Optional[Dict[str, str]] = None, as_text: bool = False,
                 exports_to_keep: Optional[int] = 5) -> None:
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        self._exports_to_keep = _check_exports_to_keep(exports_to_keep)

    def export(self, estimator: 'Estimator', export_path: str, checkpoint_path: str,
               eval_result: Dict[str, Any], is_the_final_export: bool) -> Optional[bytes]:
        result = super().export(estimator, export_path, checkpoint_path, eval_result,
                                is_the_final_export)
        keep_newest_exports(export_path, self._exports_to_keep)
        return result


def _loss_smaller(best_eval_result: Dict[str, Any], current_eval_result: Dict[str, Any]) -> bool:
    """BestExporter's default compare_fn: whether the current evaluation's loss is smaller."""
    for name, result in (('best_eval_result', best_eval_result),
                         ('current_eval_result', current_eval_result)):
        if not result or LOSS_METRIC_KEY not in result:
            raise ValueError(f'{name} cannot be empty or no loss is found in it: {result!r}')
    return best_eval_result[LOSS_METRIC_KEY] > current_eval_result[LOSS_METRIC_KEY]


def _results_in_events(pattern: str) -> List[Dict[str, Any]]:
    """The evaluation results written as summaries to the event files of `pattern`, each
    {tag: value} with its step as 'global_step', by step."""
    results: Dict[int, Dict[str, Any]] = {}
    for path in sorted(fs.glob(pattern)):
        for event in v1.train.summary_iterator(path):
            values = {value.tag: value.simple_value for value in event.summary.value
                      if value.HasField('simple_value')}
            if values:
                results.setdefault(event.step, {'global_step': event.step}).update(values)
    return [results[step] for step in sorted(results)]


class BestExporter(_SavedModelExporter):
    """Exports when an evaluation is better than every one before it.

    `compare_fn(best_eval_result, current_eval_result)`: whether the current one is better
    (default: its 'loss' is smaller). `event_file_pattern`: the event files, under
    `model_dir`, of the evaluations before this run (the best of them is where the
    comparison starts; None: from the first evaluation this exporter sees). `exports_to_keep`:
    as LatestExporter's. The other arguments: FinalExporter's.
    """

    def __init__(self, name: str = 'best_exporter',
                 serving_input_receiver_fn: Optional[Callable] = None,
                 event_file_pattern: Optional[str] = 'eval/*.tfevents.*',
                 compare_fn: Callable = _loss_smaller,
                 assets_extra: Optional[Dict[str, str]] = None, as_text: bool = False,
                 exports_to_keep: Optional[int] = 5) -> None:
        if compare_fn is None:
            raise ValueError('`compare_fn` must not be None.')
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        self._compare_fn = compare_fn
        self._event_file_pattern = event_file_pattern
        self._exports_to_keep = _check_exports_to_keep(exports_to_keep)
        self._model_dir: Optional[str] = None
        self._best: Optional[Dict[str, Any]] = None

    def export(self, estimator: 'Estimator', export_path: str, checkpoint_path: str,
               eval_result: Dict[str, Any], is_the_final_export: bool) -> Optional[bytes]:
        if self._model_dir != estimator.model_dir:
            self._model_dir = estimator.model_dir
            self._best = self._best_before(eval_result)
        if self._best is not None and not self._compare_fn(
                best_eval_result=self._best, current_eval_result=eval_result):
            return None
        logging.info('Performing best model export.')
        self._best = eval_result
        result = super().export(estimator, export_path, checkpoint_path, eval_result,
                                is_the_final_export)
        keep_newest_exports(export_path, self._exports_to_keep)
        return result

    def _best_before(self, eval_result: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """The best evaluation in the event files but the current one's: `evaluate` wrote
        it before the exporters run, and counted it would never be better than itself."""
        if not self._event_file_pattern or self._model_dir is None:
            return None
        best = None
        current = eval_result.get('global_step')
        for result in _results_in_events(os.path.join(self._model_dir,
                                                      self._event_file_pattern)):
            if result['global_step'] == current:
                continue
            if best is None or self._compare_fn(best_eval_result=best,
                                                current_eval_result=result):
                best = result
        return best
