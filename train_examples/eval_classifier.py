"""Evaluates a classifier trained by train_classifier.py: one pass over a split, its accuracy.

The road of models/research/slim's eval_image_classifier.py, on TensorFlow 2 in graph mode::

    dataset_factory.get_dataset -> DatasetDataProvider(num_epochs=1, shuffle=False)
      -> lenet.preprocess_image -> tf.compat.v1.train.batch(allow_smaller_final_batch=True)
      -> lenet.lenet -> slim.metrics.streaming_accuracy

run by `slimdata.queue_session.QueueSession`, which restores the checkpoint, runs the queue
runners, and ends the loop normally when the epoch is used up. Every example of the split is
evaluated exactly once: the accuracy is over exactly `dataset.num_samples` examples, and a
different count is an error. Flags are named as in eval_image_classifier.py::

    python train_examples/eval_classifier.py --dataset_name=image_folder \\
        --dataset_split_name=validation --dataset_dir=/data/shapes \\
        --checkpoint_path=/tmp/shapes_train

`main(argv)` returns the accuracy, the number of examples and examples/s.
"""

import argparse
import os
import sys
import time
from typing import Any, Dict, Optional, Sequence

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

import example_flags  # noqa: E402  (sibling modules; see lenet.py for why they import
import lenet  # noqa: E402          by name)

from slimdata import slim  # noqa: E402
from slimdata._tf import tf  # noqa: E402
from slimdata.contrib.estimator.evaluate_run import write_results  # noqa: E402
from slimdata.datasets import dataset_factory  # noqa: E402
from slimdata.progress import Progress  # noqa: E402
from slimdata.queue_session import QueueSession  # noqa: E402


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The flags of eval_image_classifier.py that this example uses, with the same names."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    example_flags.add_checkpoint_flag(parser)
    parser.add_argument('--eval_dir', default=None,
                        help='where the accuracy summary is written (default: nowhere)')
    example_flags.add_dataset_flags(parser, 'image_folder', 'validation', 'to evaluate')
    parser.add_argument('--batch_size', type=int, default=100,
                        help='examples per batch; the last batch may be smaller (default: '
                             '%(default)s)')
    parser.add_argument('--eval_image_size', type=int, default=None,
                        help='the side of the square images (default: '
                             f'{lenet.DEFAULT_IMAGE_SIZE}, as in training)')
    parser.add_argument('--num_preprocessing_threads', type=int, default=2,
                        help='threads that decode, preprocess and batch (default: '
                             '%(default)s)')
    return parser.parse_args(argv)


def write_accuracy_summary(eval_dir: str, accuracy: float, global_step: int) -> None:
    """Writes `eval/Accuracy` at the checkpoint's global step, for TensorBoard, to an event
    file of its own (an evaluation in the same second as the one before keeps both)."""
    write_results(eval_dir, {'eval/Accuracy': accuracy}, global_step)


def main(argv: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """Evaluates one pass over the split, and returns what it measured.

    Args:
      argv: the flags (without the program name); `sys.argv[1:]` when None.

    Returns:
      A dict: `accuracy`, `num_examples` (evaluated, equal to the split's `num_samples`),
      `examples_per_sec` (over the whole pass, the wait for the first batch included),
      `checkpoint`, `global_step` (the checkpoint's), `seconds` (the whole call).

    Raises:
      ValueError: for a missing checkpoint, or if the pass evaluated a different number of
        examples than the split holds.
    """
    flags = parse_args(argv)
    started = time.perf_counter()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    checkpoint = example_flags.resolve_checkpoint(flags.checkpoint_path)
    with tf.Graph().as_default():
        dataset = dataset_factory.get_dataset(flags.dataset_name, flags.dataset_split_name,
                                              flags.dataset_dir)
        provider = slim.dataset_data_provider.DatasetDataProvider(
            dataset, shuffle=False, num_epochs=1,
            common_queue_capacity=2 * flags.batch_size, common_queue_min=flags.batch_size)
        image, label = provider.get(['image', 'label'])
        image = lenet.preprocess_image(image, flags.eval_image_size or lenet.DEFAULT_IMAGE_SIZE)
        images, labels = tf.compat.v1.train.batch(
            [image, label], batch_size=flags.batch_size,
            num_threads=flags.num_preprocessing_threads, capacity=5 * flags.batch_size,
            allow_smaller_final_batch=True)

        with slim.arg_scope(lenet.lenet_arg_scope()):
            logits = lenet.lenet(images, lenet.num_classes_of(dataset, flags.dataset_dir))
        predictions = tf.argmax(logits, 1)
        _, update_accuracy = slim.metrics.streaming_accuracy(predictions, labels)
        batch_examples = tf.size(labels)

        saver = tf.compat.v1.train.Saver(slim.get_variables_to_restore())
        num_examples, accuracy = 0, float('nan')
        # The bar outside the session: QueueSession ends the block at the end of the epoch
        # (OutOfRangeError), so the bar sees a normal end and says "done", not "stopped".
        with Progress(dataset.num_samples, 'eval', unit='ex') as bar:
            with QueueSession(init_fn=lambda sess: saver.restore(sess, checkpoint)) as session:
                loop_started = time.perf_counter()
                while True:  # until the epoch is used up: QueueSession ends the loop there
                    # update_accuracy returns the accuracy over every batch so far.
                    accuracy, count = session.run([update_accuracy, batch_examples])
                    num_examples += int(count)
                    bar.update(int(count))
        loop_seconds = time.perf_counter() - loop_started

    example_flags.check_read_once(num_examples, dataset, flags, 'examples')
    global_step = int(tf.train.load_variable(checkpoint, 'global_step'))
    if flags.eval_dir:
        write_accuracy_summary(flags.eval_dir, float(accuracy), global_step)
    return {
        'accuracy': float(accuracy),
        'num_examples': num_examples,
        'examples_per_sec': num_examples / loop_seconds,
        'checkpoint': checkpoint,
        'global_step': global_step,
        'seconds': time.perf_counter() - started,
    }


def format_results(results: Dict[str, Any]) -> str:
    """One paragraph that says what `main` measured."""
    return (f'accuracy {results["accuracy"]:.4f} over {results["num_examples"]} examples '
            f'(checkpoint {results["checkpoint"]}, global step {results["global_step"]})\n'
            f'  {results["examples_per_sec"]:,.0f} examples/s, {results["seconds"]:.1f} s')


if __name__ == '__main__':
    print(format_results(main(sys.argv[1:])))
