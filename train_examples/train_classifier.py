"""Trains a LeNet-style classifier on slim classification records, the TF-Slim way.

The road of models/research/slim's train_image_classifier.py, on TensorFlow 2 in graph mode::

    dataset_factory.get_dataset -> DatasetDataProvider -> lenet.preprocess_image
      -> tf.compat.v1.train.batch -> slim.prefetch_queue -> lenet.lenet -> softmax loss
      -> slim.learning.create_train_op -> slim.learning.train (checkpoints, summaries)

Flags are named as in train_image_classifier.py. For example::

    python train_examples/train_classifier.py --dataset_name=image_folder \\
        --dataset_dir=/data/shapes --train_dir=/tmp/shapes_train --max_number_of_steps=300

`main(argv)` returns what it measured (steps, examples/s, the loss at the start and at the
end), so other code (the demo, the tests) can run it in-process.
"""

import argparse
import os
import sys
import threading
import time
import warnings
from typing import Any, Dict, List, Optional, Sequence

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

import example_flags  # noqa: E402  (sibling modules; see lenet.py for why they import
import lenet  # noqa: E402          by name)
import numpy as np  # noqa: E402

from slimdata import slim  # noqa: E402
from slimdata._tf import tf  # noqa: E402
from slimdata.datasets import dataset_factory  # noqa: E402
from slimdata.progress import Progress  # noqa: E402

OPTIMIZERS = ('sgd', 'momentum', 'rmsprop', 'adam')
#: The loss at the start (end) of a run is the mean over this many of its first (last) steps,
#: at most a quarter of the run, so the two never overlap.
LOSS_WINDOW_STEPS = 10


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The flags of train_image_classifier.py that this example uses, with the same names."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    example_flags.add_dataset_flags(parser, 'image_folder', 'train', 'to train on')
    parser.add_argument('--train_dir', default='/tmp/tfmodel/',
                        help='where checkpoints and event logs are written (default: '
                             '%(default)s)')
    parser.add_argument('--max_number_of_steps', type=int, default=1000,
                        help='train until the global step reaches this (default: '
                             '%(default)s)')
    parser.add_argument('--batch_size', type=int, default=32,
                        help='examples per step (default: %(default)s)')
    parser.add_argument('--train_image_size', type=int, default=None,
                        help='the side of the square training images (default: '
                             f'{lenet.DEFAULT_IMAGE_SIZE})')
    parser.add_argument('--optimizer', choices=OPTIMIZERS, default='momentum',
                        help='(default: %(default)s)')
    parser.add_argument('--learning_rate', type=float, default=0.01,
                        help='(default: %(default)s)')
    parser.add_argument('--momentum', type=float, default=0.9,
                        help='the momentum of the momentum and rmsprop optimizers '
                             '(default: %(default)s)')
    parser.add_argument('--rmsprop_decay', type=float, default=0.9,
                        help='the decay of rmsprop (default: %(default)s)')
    parser.add_argument('--weight_decay', type=float, default=0.00004,
                        help='the L2 factor of the weights (default: %(default)s)')
    parser.add_argument('--num_readers', type=int, default=2,
                        help='parallel readers of the shards (default: %(default)s)')
    parser.add_argument('--num_preprocessing_threads', type=int, default=2,
                        help='threads that decode, preprocess and batch (default: '
                             '%(default)s)')
    parser.add_argument('--log_every_n_steps', type=int, default=10,
                        help='how often the progress bar shows the loss (default: '
                             '%(default)s)')
    parser.add_argument('--save_summaries_secs', type=int, default=600,
                        help='how often summaries are written (default: %(default)s)')
    parser.add_argument('--save_interval_secs', type=int, default=600,
                        help='how often a checkpoint is written; one is always written at '
                             'the end (default: %(default)s)')
    return parser.parse_args(argv)


def configure_optimizer(flags: argparse.Namespace) -> Any:
    """The `tf.compat.v1.train` optimizer that `--optimizer` names."""
    if flags.optimizer == 'sgd':
        return tf.compat.v1.train.GradientDescentOptimizer(flags.learning_rate)
    if flags.optimizer == 'momentum':
        return tf.compat.v1.train.MomentumOptimizer(flags.learning_rate, flags.momentum)
    if flags.optimizer == 'rmsprop':
        return tf.compat.v1.train.RMSPropOptimizer(flags.learning_rate, flags.rmsprop_decay,
                                                   momentum=flags.momentum)
    return tf.compat.v1.train.AdamOptimizer(flags.learning_rate)


class StepRecorder:
    """A `train_step_fn` for `slim.learning.train` that measures the run.

    It runs slim's own `slim.learning.train_step` (so stopping at `number_of_steps` and
    everything else is slim's), and records the loss and the end time of every step, showing
    them on a progress bar.

    Args:
      max_number_of_steps: the global step the run stops at (the bar's total).
      log_every_n_steps: how often the bar's loss is refreshed.
    """

    def __init__(self, max_number_of_steps: int, log_every_n_steps: int):
        self._max_number_of_steps = max_number_of_steps
        self._log_every_n_steps = max(1, log_every_n_steps)
        self._bar = None
        self.losses: List[float] = []
        self.step_end_times: List[float] = []

    def __call__(self, sess: Any, train_op: Any, global_step: Any,
                 train_step_kwargs: Dict[str, Any]):
        if self._bar is None:
            # A run that resumes from a checkpoint in train_dir starts at its global step.
            self._bar = Progress(self._max_number_of_steps, 'train', unit='step',
                                 initial=sess.run(global_step))
        total_loss, should_stop = slim.learning.train_step(sess, train_op, global_step,
                                                           train_step_kwargs)
        self.step_end_times.append(time.perf_counter())
        self.losses.append(float(total_loss))
        self._bar.update()
        if len(self.losses) % self._log_every_n_steps == 0:
            self._bar.set_postfix(loss=f'{total_loss:.4f}')
        return total_loss, should_stop

    def close(self) -> None:
        """Closes the progress bar."""
        if self._bar is not None:
            self._bar.close()

    def examples_per_sec(self, batch_size: int) -> float:
        """Throughput from the end of the first step to the end of the last.

        The first step is left out: it includes filling the input queues.
        """
        if len(self.step_end_times) < 2:
            return float('nan')
        elapsed = self.step_end_times[-1] - self.step_end_times[0]
        return batch_size * (len(self.step_end_times) - 1) / elapsed

    def loss_window(self) -> int:
        """How many first (last) steps `loss_start` (`loss_end`) average over."""
        return max(1, min(LOSS_WINDOW_STEPS, len(self.losses) // 4))


def new_threads_run_eagerly() -> bool:
    """Whether a thread started now would execute eagerly.

    Eager execution is a per-thread state: code inside `with tf.Graph().as_default():` is in
    graph mode, but threads it starts begin in the process default, which is eager in
    TensorFlow 2 unless `tf.compat.v1.disable_eager_execution()` was called.
    """
    answer = []
    thread = threading.Thread(target=lambda: answer.append(tf.executing_eagerly()))
    thread.start()
    thread.join()
    return answer[0]


def check_supervisor_services_can_run(flags: argparse.Namespace) -> None:
    """Refuses periodic checkpoints or summaries in a process that runs new threads eagerly.

    slim.learning.train's Supervisor saves checkpoints, writes summaries and counts steps in
    threads of its own. When new threads run eagerly those threads fail (`Saver.save` and
    `tf.compat.v1.train.global_step` take their eager branch and use the graph's global step
    outside its graph), and the run dies when the Supervisor joins them. The final
    checkpoint is saved in the calling thread, so it works either way.

    Raises:
      RuntimeError: saying both ways out.
    """
    if (flags.save_summaries_secs or flags.save_interval_secs) and new_threads_run_eagerly():
        raise RuntimeError(
            'slim.learning.train saves checkpoints (--save_interval_secs) and summaries '
            '(--save_summaries_secs) in background threads, which need graph mode, but eager '
            'execution is enabled for this process (the TensorFlow 2 default). Call '
            '`tf.compat.v1.disable_eager_execution()` at the start of the program (as '
            'train_classifier.py does when run as a script), or pass '
            '--save_interval_secs=0 --save_summaries_secs=0 to save only the final '
            'checkpoint.')


def build_train_op(flags: argparse.Namespace) -> Any:
    """Builds the input pipeline, the network, the loss and the train op in the default graph.

    Returns:
      The train op of `slim.learning.create_train_op` (it returns the total loss).
    """
    dataset = dataset_factory.get_dataset(flags.dataset_name, flags.dataset_split_name,
                                          flags.dataset_dir)
    num_classes = lenet.num_classes_of(dataset, flags.dataset_dir)
    image_size = flags.train_image_size or lenet.DEFAULT_IMAGE_SIZE
    # The input pipeline stays on the CPU (as slim's deploy config puts it) when a GPU runs
    # the network.
    with tf.device('/cpu:0'):
        provider = slim.dataset_data_provider.DatasetDataProvider(
            dataset, num_readers=flags.num_readers,
            common_queue_capacity=20 * flags.batch_size,
            common_queue_min=10 * flags.batch_size)
        image, label = provider.get(['image', 'label'])
        image = lenet.preprocess_image(image, image_size)
        images, labels = tf.compat.v1.train.batch(
            [image, label], batch_size=flags.batch_size,
            num_threads=flags.num_preprocessing_threads, capacity=5 * flags.batch_size)
        batch_queue = slim.prefetch_queue.prefetch_queue([images, labels], capacity=2)
    images, labels = batch_queue.dequeue()

    with slim.arg_scope(lenet.lenet_arg_scope(flags.weight_decay)):
        logits = lenet.lenet(images, num_classes, is_training=True)
    tf.compat.v1.losses.softmax_cross_entropy(tf.one_hot(labels, num_classes), logits)
    total_loss = tf.compat.v1.losses.get_total_loss()
    tf.compat.v1.summary.scalar('losses/total_loss', total_loss)
    tf.compat.v1.summary.image('images', images, max_outputs=4)

    slim.get_or_create_global_step()
    return slim.learning.create_train_op(total_loss, configure_optimizer(flags))


def main(argv: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """Trains, and returns what it measured.

    Args:
      argv: the flags (without the program name); `sys.argv[1:]` when None.

    Returns:
      A dict: `steps` (run in this call), `global_step` (reached), `examples_per_sec`,
      `loss_start` and `loss_end` (the mean total loss of the first and last `loss_window`
      steps), `loss_window`, `losses` (every step's), `seconds` (the whole call),
      `train_dir`.
    """
    flags = parse_args(argv)
    check_supervisor_services_can_run(flags)
    started = time.perf_counter()
    # The queue API's deprecation notices are expected: this is the legacy road, on purpose.
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    recorder = StepRecorder(flags.max_number_of_steps, flags.log_every_n_steps)
    with tf.Graph().as_default(), warnings.catch_warnings():
        # slim.learning.train stops its Supervisor, and leaving sv.managed_session stops it
        # again; the second stop's "closed FileWriter" warning is about a no-op.
        warnings.filterwarnings('ignore', message='Attempting to use a closed FileWriter')
        train_op = build_train_op(flags)
        try:
            slim.learning.train(
                train_op, flags.train_dir, train_step_fn=recorder,
                number_of_steps=flags.max_number_of_steps,
                log_every_n_steps=flags.log_every_n_steps,
                save_summaries_secs=flags.save_summaries_secs,
                save_interval_secs=flags.save_interval_secs)
        finally:
            recorder.close()
    window = recorder.loss_window()
    return {
        'steps': len(recorder.losses),
        'global_step': int(tf.train.load_variable(
            tf.train.latest_checkpoint(flags.train_dir), 'global_step')),
        'examples_per_sec': recorder.examples_per_sec(flags.batch_size),
        'loss_start': float(np.mean(recorder.losses[:window])),
        'loss_end': float(np.mean(recorder.losses[-window:])),
        'loss_window': window,
        'losses': recorder.losses,
        'seconds': time.perf_counter() - started,
        'train_dir': flags.train_dir,
    }


def format_results(results: Dict[str, Any]) -> str:
    """One paragraph that says what `main` measured."""
    return (f'trained {results["steps"]} steps (global step {results["global_step"]}) in '
            f'{results["seconds"]:.1f} s, {results["examples_per_sec"]:,.0f} examples/s\n'
            f'  loss {results["loss_start"]:.4f} -> {results["loss_end"]:.4f} (mean of the '
            f'first and last {results["loss_window"]} steps)\n'
            f'  checkpoint: {tf.train.latest_checkpoint(results["train_dir"])}')


if __name__ == '__main__':
    # A TF1-style program: graph mode for every thread, including the Supervisor's.
    tf.compat.v1.disable_eager_execution()
    print(format_results(main(sys.argv[1:])))
