"""The LeNet-style classifier, its preprocessing and its number of classes, for train and eval.

`train_classifier.py` and `eval_classifier.py` must build the same network (the same variable
names, or the checkpoint does not restore) and feed it the same preprocessing (or the accuracy
is measured on different inputs than were trained), so both live here, once.

The scripts import this module by name (`import lenet`): run as
`python train_examples/train_classifier.py`, Python puts the script's folder, train_examples/,
first on `sys.path`, so its siblings import without installing train_examples/ as a package.
Code that imports the scripts in-process (the tests, the demo) puts train_examples/ on
`sys.path` the same way.
"""

from typing import Any

from slimdata import slim
from slimdata._tf import tf

#: The side of the square images the network is trained on, unless told otherwise.
DEFAULT_IMAGE_SIZE = 28


def num_classes_of(dataset: Any, dataset_dir: str) -> int:
    """The dataset's `num_classes` attribute.

    Raises:
      ValueError: naming the folder, when the descriptor does not know it.
    """
    num_classes = getattr(dataset, 'num_classes', None)
    if not num_classes:
        raise ValueError(f'the dataset in {dataset_dir} does not say its number of classes '
                         '(no num_classes in its dataset_info.json or published facts)')
    return int(num_classes)


def preprocess_image(image: Any, image_size: int) -> Any:
    """Turns one decoded image into the network's input.

    Args:
      image: a uint8 `[height, width, channels]` tensor of any height and width, as
        `provider.get(['image'])` returns it.
      image_size: the side of the square output.

    Returns:
      A float32 `[image_size, image_size, channels]` tensor scaled to [-1, 1].
    """
    # Scale to [0, 1] before resizing, so the bilinear interpolation works on the final scale.
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.image.resize(image, [image_size, image_size])
    return (image - 0.5) * 2.0


def lenet_arg_scope(weight_decay: float = 0.0) -> Any:
    """The defaults of the network's layers: ReLU and slim's Xavier initialiser (slim's own
    defaults, stated here), and L2 weight decay.

    Args:
      weight_decay: the L2 regularisation factor of the weights; its losses go to the
        `REGULARIZATION_LOSSES` collection, which `tf.compat.v1.losses.get_total_loss` adds.

    Returns:
      An `arg_scope` to enter around `lenet(...)`.
    """
    with slim.arg_scope([slim.conv2d, slim.fully_connected],
                        weights_regularizer=slim.l2_regularizer(weight_decay),
                        weights_initializer=slim.xavier_initializer(),
                        activation_fn=tf.nn.relu) as scope:
        return scope


def lenet(images: Any, num_classes: int, is_training: bool = False,
          dropout_keep_prob: float = 0.5, scope: str = 'LeNet') -> Any:
    """A LeNet-style network: two 5x5 convolution + max-pool stages, one hidden dense layer.

    Narrower than the original (16 and 32 filters, 256 hidden units), so that a few hundred
    steps train in seconds on two CPU cores.

    Args:
      images: a float `[batch, height, width, channels]` tensor (see `preprocess_image`).
      num_classes: the number of classes, i.e. of logits.
      is_training: whether dropout is active.
      dropout_keep_prob: the share of hidden units kept by dropout when training.
      scope: the variable scope of the network's variables.

    Returns:
      The `[batch, num_classes]` logits.
    """
    with tf.compat.v1.variable_scope(scope, 'LeNet', [images]):
        net = slim.conv2d(images, 16, [5, 5], scope='conv1')
        net = slim.max_pool2d(net, [2, 2], 2, scope='pool1')
        net = slim.conv2d(net, 32, [5, 5], scope='conv2')
        net = slim.max_pool2d(net, [2, 2], 2, scope='pool2')
        net = slim.flatten(net)
        net = slim.fully_connected(net, 256, scope='fc3')
        net = slim.dropout(net, dropout_keep_prob, is_training=is_training, scope='dropout3')
        return slim.fully_connected(net, num_classes, activation_fn=None, scope='logits')
