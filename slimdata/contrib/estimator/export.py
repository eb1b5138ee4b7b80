"""`tf.estimator.export`: what a serving input receiver fn returns and what a model's
`export_outputs` hold, as TensorFlow 1.15 documented them.

A `serving_input_receiver_fn` returns a `ServingInputReceiver` (the features the model_fn is
called with, and the tensors a client feeds: the signatures' inputs) or a
`TensorServingInputReceiver` (one feature Tensor passed to the model_fn as it is);
`build_raw_serving_input_receiver_fn` and `build_parsing_serving_input_receiver_fn` make the two
usual ones. A PREDICT `EstimatorSpec`'s `export_outputs` maps signature names to
`PredictOutput`, `ClassificationOutput` or `RegressionOutput`, each of which builds its
SignatureDef (`tf.compat.v1.saved_model.signature_def_utils`).
"""

from typing import Any, Dict, NamedTuple, Optional

from slimdata._tf import tf

v1 = tf.compat.v1
_SIGNATURES = v1.saved_model.signature_def_utils

#: TF1's names for a single feature, receiver tensor and output given without a dict.
SINGLE_FEATURE_DEFAULT_NAME = 'feature'
SINGLE_RECEIVER_DEFAULT_NAME = 'input'
SINGLE_OUTPUT_DEFAULT_NAME = 'output'
DEFAULT_SERVING_KEY = v1.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY


def _is_tensor(value: Any) -> bool:
    return isinstance(value, (tf.Tensor, tf.SparseTensor))


def _wrap_and_check(values: Any, default_name: str, what: str) -> Dict[str, Any]:
    """`values` as a dict (a single Tensor under `default_name`), its keys strings and its
    values Tensors or SparseTensors; ValueError naming `what` and the offending key."""
    if values is None:
        raise ValueError(f'{what}s must be defined.')
    if not isinstance(values, dict):
        values = {default_name: values}
    for name, tensor in values.items():
        if not isinstance(name, str):
            raise ValueError(f'{what} keys must be strings: {name!r}.')
        if not _is_tensor(tensor):
            raise ValueError(f'{what} {name} must be a Tensor or SparseTensor, given: '
                             f'{tensor!r}')
    return values


def _alternatives(alternatives: Optional[Dict[str, Any]]) -> Optional[Dict[str, Dict]]:
    if alternatives is None:
        return None
    if not isinstance(alternatives, dict):
        raise ValueError(f'receiver_tensors_alternatives must be a dict, given: '
                         f'{alternatives!r}.')
    return {name: _wrap_and_check(tensors, SINGLE_RECEIVER_DEFAULT_NAME, 'receiver_tensor')
            for name, tensors in alternatives.items()}


class ServingInputReceiver(NamedTuple('ServingInputReceiver', [
        ('features', Any), ('receiver_tensors', Dict[str, Any]),
        ('receiver_tensors_alternatives', Optional[Dict[str, Dict[str, Any]]])])):
    """What a serving_input_receiver_fn returns: the model's inputs and the served ones.

    `features`: a Tensor, SparseTensor or dict of them, passed to the model_fn (a single one
    as `{'feature': tensor}`). `receiver_tensors`: what a client feeds (a single one as
    `{'input': tensor}`): the inputs of each signature. `receiver_tensors_alternatives`: name
    -> other receiver tensors, each giving the signatures `'<name>:<output key>'`.
    """

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        return super().__new__(
            cls, _wrap_and_check(features, SINGLE_FEATURE_DEFAULT_NAME, 'feature'),
            _wrap_and_check(receiver_tensors, SINGLE_RECEIVER_DEFAULT_NAME, 'receiver_tensor'),
            _alternatives(receiver_tensors_alternatives))


class TensorServingInputReceiver(NamedTuple('TensorServingInputReceiver', [
        ('features', Any), ('receiver_tensors', Dict[str, Any]),
        ('receiver_tensors_alternatives', Optional[Dict[str, Dict[str, Any]]])])):
    """A ServingInputReceiver whose one `features` Tensor reaches the model_fn as it is (not
    in a dict); the arguments are ServingInputReceiver's."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if not _is_tensor(features):
            raise ValueError(f'feature must be a Tensor or SparseTensor, given: {features!r}')
        checked = ServingInputReceiver(features, receiver_tensors, receiver_tensors_alternatives)
        return super().__new__(cls, features, checked.receiver_tensors,
                               checked.receiver_tensors_alternatives)


def _placeholder_like(tensor: Any, default_batch_size: Optional[int], name: str) -> Any:
    """A placeholder of `tensor`'s dtype, shape (its first dimension `default_batch_size`)
    and op name (TF1's; `name` for an eager tensor, which has no op)."""
    if not isinstance(tensor, tf.Tensor):
        raise ValueError(f'build_raw_serving_input_receiver_fn: feature {name} must be a '
                         f'Tensor, given: {tensor!r}')
    shape = tensor.shape.as_list() if tensor.shape.rank is not None else None
    if shape:
        shape[0] = default_batch_size
    try:
        name = tensor.op.name
    except AttributeError:  # an EagerTensor (TF2 code; TF1's were all graph tensors)
        pass
    return v1.placeholder(tensor.dtype, shape, name=name)


def build_raw_serving_input_receiver_fn(features: Any, default_batch_size: Optional[int] = None):
    """A serving_input_receiver_fn whose receiver tensors are placeholders like `features`
    (a dict of Tensors, or one Tensor), fed to the model_fn as they are; their batch
    dimension `default_batch_size` (None: any)."""
    def serving_input_receiver_fn() -> ServingInputReceiver:
        if isinstance(features, dict):
            tensors = {name: _placeholder_like(tensor, default_batch_size, name)
                       for name, tensor in features.items()}
        else:
            tensors = _placeholder_like(features, default_batch_size,
                                        SINGLE_RECEIVER_DEFAULT_NAME)
        return ServingInputReceiver(tensors, tensors)
    return serving_input_receiver_fn


def build_parsing_serving_input_receiver_fn(feature_spec: Dict[str, Any],
                                            default_batch_size: Optional[int] = None):
    """A serving_input_receiver_fn that is fed serialized `tf.train.Example`s (the receiver
    tensor 'examples', a string vector of `default_batch_size`) and parses them by
    `feature_spec` (name -> FixedLenFeature, VarLenFeature, ...) into the features."""
    def serving_input_receiver_fn() -> ServingInputReceiver:
        serialized = v1.placeholder(tf.string, [default_batch_size],
                                    name='input_example_tensor')
        features = v1.parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {'examples': serialized})
    return serving_input_receiver_fn


class ExportOutput:
    """The base of what a PREDICT spec's `export_outputs` hold: each builds its SignatureDef
    on the receiver tensors."""

    def as_signature_def(self, receiver_tensors: Dict[str, Any]) -> Any:
        raise NotImplementedError(f'{type(self).__name__}.as_signature_def')


def _single_string_input(receiver_tensors: Dict[str, Any], what: str) -> Any:
    """The one string Tensor of `receiver_tensors`, which the Classify and Regress APIs feed
    serialized Examples to; ValueError otherwise (the signature is then left out)."""
    values = list(receiver_tensors.values())
    if len(values) != 1 or values[0].dtype != tf.string:
        raise ValueError(f'{what} input must be a single string Tensor; got '
                         f'{receiver_tensors}')
    return values[0]


class PredictOutput(ExportOutput):
    """The Predict API's outputs: `outputs`, a Tensor (as `{'output': tensor}`) or a dict of
    string to Tensor."""

    def __init__(self, outputs: Any) -> None:
        self.outputs = _wrap_and_check(outputs, SINGLE_OUTPUT_DEFAULT_NAME, 'Prediction output')
        for name, tensor in self.outputs.items():
            if not isinstance(tensor, tf.Tensor):
                raise ValueError(f'Prediction output value {name} must be a Tensor, given: '
                                 f'{tensor!r}')

    def as_signature_def(self, receiver_tensors: Dict[str, Any]) -> Any:
        return _SIGNATURES.predict_signature_def(receiver_tensors, self.outputs)


class ClassificationOutput(ExportOutput):
    """The Classify API's outputs: `scores`, a float Tensor, and/or `classes`, a string
    Tensor (at least one); served on a single string receiver tensor."""

    def __init__(self, scores: Any = None, classes: Any = None) -> None:
        if scores is not None and not (isinstance(scores, tf.Tensor)
                                       and scores.dtype.is_floating):
            raise ValueError(f'Classification scores must be a float32 Tensor; got {scores}')
        if classes is not None and not (isinstance(classes, tf.Tensor)
                                        and classes.dtype == tf.string):
            raise ValueError(f'Classification classes must be a string Tensor; got {classes}')
        if scores is None and classes is None:
            raise ValueError('At least one of scores and classes must be set.')
        self.scores, self.classes = scores, classes

    def as_signature_def(self, receiver_tensors: Dict[str, Any]) -> Any:
        examples = _single_string_input(receiver_tensors, 'Classification')
        return _SIGNATURES.classification_signature_def(examples, self.classes, self.scores)


class RegressionOutput(ExportOutput):
    """The Regress API's output: `value`, a float Tensor; served on a single string receiver
    tensor."""

    def __init__(self, value: Any) -> None:
        if not (isinstance(value, tf.Tensor) and value.dtype.is_floating):
            raise ValueError(f'Regression output value must be a float32 Tensor; got {value}')
        self.value = value

    def as_signature_def(self, receiver_tensors: Dict[str, Any]) -> Any:
        examples = _single_string_input(receiver_tensors, 'Regression')
        return _SIGNATURES.regression_signature_def(examples, self.value)


def export_outputs_of(export_outputs: Optional[Dict[str, Any]],
                      predictions: Any) -> Dict[str, ExportOutput]:
    """A PREDICT spec's export outputs as TF1 completed them: `{'serving_default':
    PredictOutput(predictions)}` when None; a single one also serves as 'serving_default';
    several must name one so (ValueError)."""
    if export_outputs is None:
        return {DEFAULT_SERVING_KEY: PredictOutput(predictions)}
    if not isinstance(export_outputs, dict):
        raise TypeError(f'export_outputs must be dict, given: {export_outputs!r}')
    for name, output in export_outputs.items():
        if not isinstance(output, ExportOutput):
            raise TypeError(f'Values in export_outputs must be ExportOutput objects, given '
                            f'{output!r} for {name!r}')
    outputs = dict(export_outputs)
    if len(outputs) == 1:
        outputs.setdefault(DEFAULT_SERVING_KEY, next(iter(outputs.values())))
    elif outputs and DEFAULT_SERVING_KEY not in outputs:
        raise ValueError(f'Multiple export_outputs were provided ({sorted(outputs)}), but none '
                         f'of them is named {DEFAULT_SERVING_KEY!r}, the default.')
    return outputs


def signature_defs(receiver: Any, outputs: Dict[str, ExportOutput]) -> Dict[str, Any]:
    """The SignatureDefs of a serving export, as TF1's `build_all_signature_defs`: each
    output on the receiver tensors (named as the output), and on each alternative
    (`'<alternative>:<output>'`). One an output cannot build (a Classify or Regress output on
    inputs that are not one string Tensor) or that is not valid for serving is left out, with
    a warning naming it and why."""
    receivers = [('', receiver.receiver_tensors)] + sorted(
        (receiver.receiver_tensors_alternatives or {}).items())
    built, left_out = {}, {}
    for prefix, tensors in receivers:
        for key, output in outputs.items():
            name = f'{prefix}:{key}' if prefix else key
            try:
                built[name] = output.as_signature_def(tensors)
            except ValueError as error:
                left_out[name] = str(error)
    for name in sorted(built):
        if not _SIGNATURES.is_valid_signature(built[name]):
            left_out[name] = 'not a valid serving signature'
            del built[name]
    for name, reason in sorted(left_out.items()):
        v1.logging.warning('Signature %r left out of the export: %s', name, reason)
    if DEFAULT_SERVING_KEY not in built:
        v1.logging.warning('The export has no default signature (%r).', DEFAULT_SERVING_KEY)
    return built


__all__ = ['ClassificationOutput', 'ExportOutput', 'PredictOutput', 'RegressionOutput',
           'ServingInputReceiver', 'TensorServingInputReceiver',
           'build_parsing_serving_input_receiver_fn', 'build_raw_serving_input_receiver_fn']
