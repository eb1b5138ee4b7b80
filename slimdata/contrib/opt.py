"""`tf.contrib.opt.MovingAverageOptimizer`, which TensorFlow 2 dropped with contrib.

The Object Detection API's TF1 trainer wraps every optimizer in it when its config asks for
moving averages (the default). A reimplementation of its documented behaviour (TensorFlow
1.15) on `tf.compat.v1.train`: each `apply_gradients` also updates an exponential moving
average of the variables it trains (after the update, with `sequential_update`), and
`swapping_saver()` is a Saver that writes each average under its variable's name and each
variable under its average's name, so an evaluation restoring the checkpoint reads the
averages.
"""

from typing import Any, Dict, Optional

from slimdata._tf import tf

v1 = tf.compat.v1
# A name for the base class, which mypy needs (TensorFlow's classes are Any to it).
_Optimizer: Any = v1.train.Optimizer


class MovingAverageOptimizer(_Optimizer):
    """Wraps `opt`, keeping moving averages of the variables it trains.

    Args:
      opt: the tf.compat.v1.train.Optimizer that computes and applies the gradients.
      average_decay: the decay of `tf.compat.v1.train.ExponentialMovingAverage`.
      num_updates: its optional step count (a smaller decay early on).
      sequential_update: update the averages after the variables (else concurrently).
    """

    def __init__(self, opt, average_decay: float = 0.9999, num_updates=None,
                 sequential_update: bool = True) -> None:
        super().__init__(opt._use_locking, opt.get_name())
        self._optimizer = opt
        self._ema = v1.train.ExponentialMovingAverage(average_decay, num_updates=num_updates,
                                                      zero_debias=False)
        self._swapped_variable_name_map: Optional[Dict[str, str]] = None
        self._sequential_update = sequential_update

    def compute_gradients(self, *args, **kwargs):
        return self._optimizer.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        train_op = self._optimizer.apply_gradients(grads_and_vars, global_step=global_step,
                                                   name=name)
        trained = [variable for gradient, variable in grads_and_vars if gradient is not None]
        if self._sequential_update:
            with tf.control_dependencies([train_op]):
                average_op = self._ema.apply(trained)
        else:
            average_op = self._ema.apply(trained)
        self._swapped_variable_name_map = {}
        for variable in trained:
            average = self._ema.average(variable)
            self._swapped_variable_name_map[variable.op.name] = average.op.name
            self._swapped_variable_name_map[average.op.name] = variable.op.name
        return tf.group(train_op, average_op, name='train_with_avg')

    def swapping_saver(self, var_list=None, name: str = 'swapping_saver', **kwargs):
        """A tf.compat.v1.train.Saver of `var_list` (default: all global variables, or a dict
        name -> variable) with each trained variable and its average swapped.

        Raises RuntimeError before `apply_gradients` / `minimize`, ValueError for a
        partitioned variable (not supported).
        """
        if self._swapped_variable_name_map is None:
            raise RuntimeError('Must call apply_gradients or minimize before creating the '
                               'swapping_saver')
        if var_list is None:
            var_list = v1.global_variables()
        if not isinstance(var_list, dict):
            var_list = {variable.op.name: variable for variable in var_list}
        for key, variable in var_list.items():
            if isinstance(variable, (list, tuple)) or hasattr(variable, '_get_variable_list'):
                raise ValueError(f'swapping_saver: {key} is a partitioned variable, which '
                                 'slimdata.contrib.opt does not support')
        by_name = {variable.op.name: variable for variable in var_list.values()}
        swapped = {key: by_name.get(self._swapped_variable_name_map.get(variable.op.name, ''),
                                    variable)
                   for key, variable in var_list.items()}
        return v1.train.Saver(swapped, name=name, **kwargs)
