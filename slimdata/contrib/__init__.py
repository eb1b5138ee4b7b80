"""Successors of `tf.contrib` names that neither TensorFlow 2 nor tf_slim has.

`slimdata port` rewrites old code to these where nothing public exists (`rules.NAME_RULES`):

- `slimdata.contrib.training.HParams`: `tf.contrib.training.HParams`, reimplemented;
- `slimdata.contrib.lookup`: `tf.contrib.lookup`'s table constructors on `tf.compat.v1.lookup`;
- `slimdata.contrib.tfprof.model_analyzer`: `tf.contrib.tfprof`'s on `tf.compat.v1.profiler`;
- `slimdata.contrib.legacy_seq2seq`: its decoders and sequence losses, reimplemented;
- `slimdata.contrib.opt.MovingAverageOptimizer`, reimplemented;
- `slimdata.contrib.data`: `tf.contrib.data`'s `batch_and_drop_remainder` transformations;
- `slimdata.contrib.rnn`: the TF1 RNN cells (`tf.nn.rnn_cell.*`, `tf.contrib.rnn.*`), which
  TensorFlow 2.21 serves only through Keras 2 (the `tf-keras` package);

and `Unavailable` stands for a contrib module without any successor, so that a script runs
until it reaches a use of it.
"""

from typing import NoReturn


class UnavailableError(ImportError):
    """A `tf.contrib` name without a successor was used."""


class Unavailable:
    """Stands for the `tf.contrib` module or name `name`, which has no successor.

    `slimdata port` binds it where old code imported `name`, and reports the line: the code
    runs until it uses `name` (often only behind an option, as slim's `--quantize_delay`), and
    then raises `UnavailableError` naming it and why there is no successor.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def _fail(self, what: str) -> NoReturn:
        from slimdata.contrib.unavailable import unportable_reason
        raise UnavailableError(f'{what}: {unportable_reason(what)} (slimdata port left it out; '
                               'see its report)')

    def __getattr__(self, attribute: str):
        if attribute.startswith('__'):
            raise AttributeError(attribute)
        self._fail(f'{self._name}.{attribute}')

    def __call__(self, *args, **kwargs) -> NoReturn:
        self._fail(self._name)

    def __repr__(self) -> str:
        return f'Unavailable({self._name!r})'
