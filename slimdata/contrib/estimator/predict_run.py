"""`Estimator.predict`: the PREDICT graph in a new graph, its predictions yielded batch by
batch (or example by example) until the input ends."""

from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, Optional, Sequence

import numpy as np

from slimdata._tf import tf
from slimdata.contrib.estimator.session import checkpoint_to_restore, monitored_session, scaffold
from slimdata.contrib.estimator.spec import ModeKeys, check_hooks

if TYPE_CHECKING:  # the Estimator makes the runs: a run module does not import it
    from slimdata.contrib.estimator.estimator import Estimator

v1 = tf.compat.v1


def select(predictions: Any, keys: Optional[Sequence[str]]) -> Any:
    """The predictions of `keys` (all when None); ValueError, TF1's messages, for keys of a
    Tensor's predictions or keys that are not predictions."""
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


def examples(values: Any, single: bool) -> Iterator[Any]:
    """A batch's predictions (an array or a dict of arrays): the batch itself, or when
    `single` each of its examples (a dict's values split along their first dimension)."""
    if not single:
        yield values
    elif not isinstance(values, dict):
        yield from values
    else:
        for index in range(_batch_length(values)):
            yield {key: value[index] for key, value in values.items()}


class PredictRun:
    """Predicts with the model of `estimator` on a checkpoint (see `Estimator.predict`)."""

    def __init__(self, estimator: 'Estimator') -> None:
        self._estimator = estimator
        self._config = estimator.config

    def run(self, input_fn: Callable, predict_keys: Optional[Sequence[str]],
            hooks: Optional[Sequence[Any]], checkpoint_path: Optional[str],
            yield_single_examples: bool) -> Iterator[Any]:
        """Yields the predictions; the arguments are `Estimator.predict`'s."""
        hooks = list(check_hooks(hooks))
        checkpoint = checkpoint_to_restore(checkpoint_path, self._config.model_dir, 'predict')
        with tf.Graph().as_default():
            _, spec, input_hooks = self._estimator._build(input_fn, ModeKeys.PREDICT)
            predictions = select(spec.predictions, predict_keys)
            with monitored_session(self._config, scaffold(spec, self._config), checkpoint,
                                   self._config.master,
                                   input_hooks + hooks + list(spec.prediction_hooks)) as session:
                while not session.should_stop():
                    values = session.run(predictions)
                    yield from examples(values, yield_single_examples)
