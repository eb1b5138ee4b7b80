"""prefetch_queue: a queue that assembles batches ahead of the training step (graph mode).

Useful to pre-assemble input batches read with `tf.compat.v1.train.batch` so that the
training step does not pay for assembling them::

    images, labels = tf.compat.v1.train.batch([image, label], batch_size=32, num_threads=4)
    batch_queue = prefetch_queue([images, labels])
    images, labels = batch_queue.dequeue()
    logits = net(images)

Same function, signature and defaults as `tf_slim.data.prefetch_queue.prefetch_queue`.
"""

from typing import Dict, Optional, Sequence, Union

from slimdata._tf import require_graph_mode, tf
from slimdata.types import Queue, TensorLike


def prefetch_queue(tensors: Union[Sequence[TensorLike], Dict[str, TensorLike]],
                   capacity: int = 8, num_threads: int = 1, dynamic_pad: bool = False,
                   shared_name: Optional[str] = None, name: Optional[str] = None) -> Queue:
    """Creates a queue to prefetch `tensors`.

    A queue runner enqueuing `tensors` into the queue is added to the QUEUE_RUNNERS
    collection.

    Args:
      tensors: a list or dictionary of tensors to enqueue in the buffer.
      capacity: an integer, the maximum number of elements in the queue.
      num_threads: an integer, the number of threads running the enqueue op.
      dynamic_pad: whether to allow variable dimensions in input shapes (a
        PaddingFIFOQueue).
      shared_name: optional; if set, the queue is shared under this name across sessions.
      name: optional name for the operations.

    Returns:
      A queue from which you can dequeue tensors with the same types and shapes as
      `tensors` (a dict when `tensors` is a dict).

    Raises:
      RuntimeError: under eager execution.
    """
    require_graph_mode('prefetch_queue')
    tensor_list: Sequence[TensorLike]
    if isinstance(tensors, dict):
        # Sorted so that the order of the queue's components is the same across runs.
        names = sorted(tensors.keys())
        tensor_list = [tensors[n] for n in names]
    else:
        names = None
        tensor_list = tensors

    with tf.compat.v1.name_scope(name, 'prefetch_queue', tensor_list) as name:
        dtypes = [t.dtype for t in tensor_list]
        shapes = [t.get_shape() for t in tensor_list]
        queue_class = tf.queue.PaddingFIFOQueue if dynamic_pad else tf.queue.FIFOQueue
        queue = queue_class(capacity=capacity, dtypes=dtypes, shapes=shapes, names=names,
                            shared_name=shared_name)
        enqueue_op = queue.enqueue(tensors)
        tf.compat.v1.train.add_queue_runner(
            tf.compat.v1.train.QueueRunner(queue, [enqueue_op] * num_threads))
        tf.compat.v1.summary.scalar(
            'fraction_of_%d_full' % capacity,
            tf.cast(queue.size(), tf.float32) * (1. / capacity))
        return queue
