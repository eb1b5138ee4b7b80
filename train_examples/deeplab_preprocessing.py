"""deeplab's input preprocessing for semantic segmentation, in graph mode.

The training pipeline of tensorflow/models research/deeplab (`input_preprocess.py`), which
every deeplab port reproduces: for each example

1. scale image and label by one random factor (bilinear for the image, nearest neighbour for
   the label, so label values stay class indices);
2. pad both at the bottom and right up to at least the crop size: the image with the mean
   pixel (which the network maps to 0), the label with `ignore_label` (so the padding is not
   learnt as a class);
3. crop image and label at the same random offset to exactly the crop size;
4. flip image and label left-right together, half of the time.

Image and label go through every step together, so a label pixel always describes the image
pixel at the same position. Evaluation uses none of the random steps: it reads each image at
its own size (see `prepare_for_eval`).

Tensors: images are `[height, width, 3]`, labels `[height, width, 1]`, as the
`DatasetDataProvider` of a deeplab dataset returns them.
"""

from typing import List, Sequence, Tuple

from slimdata._tf import tf

#: The pixel value the image is padded with; deeplab's default mean pixel (127.5 per channel).
MEAN_PIXEL = 127.5
#: The probability of a left-right flip during training (deeplab's _PROB_OF_FLIP).
PROB_OF_FLIP = 0.5


def get_random_scale(min_scale_factor: float, max_scale_factor: float,
                     step_size: float) -> tf.Tensor:
    """A random scale factor, as a float32 scalar tensor.

    Args:
      min_scale_factor: the smallest factor (>= 0).
      max_scale_factor: the largest factor (>= min_scale_factor).
      step_size: 0 draws uniformly from [min, max); otherwise one of min, min + step, ...,
        max is drawn, each equally likely.

    Raises:
      ValueError: if the factors are negative or in the wrong order, or the step is negative.
    """
    if min_scale_factor < 0 or min_scale_factor > max_scale_factor or step_size < 0:
        raise ValueError(
            f'scale factors need 0 <= min_scale_factor <= max_scale_factor and '
            f'scale_factor_step_size >= 0; got min_scale_factor={min_scale_factor}, '
            f'max_scale_factor={max_scale_factor}, scale_factor_step_size={step_size}')
    if min_scale_factor == max_scale_factor:
        return tf.constant(min_scale_factor, tf.float32)
    if step_size == 0:
        return tf.random.uniform([], min_scale_factor, max_scale_factor)
    # round() so that e.g. (2.0 - 0.5) / 0.25 = 5.999... still gives the 7 values 0.5..2.0.
    num_steps = int(round((max_scale_factor - min_scale_factor) / step_size)) + 1
    index = tf.random.uniform([], 0, num_steps, dtype=tf.int32)
    return min_scale_factor + tf.cast(index, tf.float32) * step_size


def scale_image_and_label(image: tf.Tensor, label: tf.Tensor,
                          scale: tf.Tensor) -> Tuple[tf.Tensor, tf.Tensor]:
    """Resizes image and label to `floor(size * scale)`.

    Args:
      image: a float32 `[height, width, 3]` image.
      label: an integer `[height, width, 1]` label map.
      scale: a scalar scale factor.

    Returns:
      The resized image (bilinear) and label (nearest neighbour, values unchanged), both with
      corners aligned as deeplab resizes them.
    """
    size = tf.shape(image)[:2]
    new_size = tf.cast(tf.cast(size, tf.float32) * scale, tf.int32)
    image = tf.compat.v1.image.resize_bilinear(image[tf.newaxis], new_size,
                                                align_corners=True)[0]
    label = tf.compat.v1.image.resize_nearest_neighbor(label[tf.newaxis], new_size,
                                                        align_corners=True)[0]
    return image, label


def pad_to_at_least(image: tf.Tensor, label: tf.Tensor, height: int, width: int,
                    ignore_label: int) -> Tuple[tf.Tensor, tf.Tensor]:
    """Pads image and label at the bottom and right to at least `height` x `width`.

    Args:
      image: a float32 `[h, w, 3]` image; padded with `MEAN_PIXEL`.
      label: an integer `[h, w, 1]` label map; padded with `ignore_label`.
      height, width: the smallest size wanted; a larger side is left as it is.
      ignore_label: the label value of pixels the loss and the metric skip.
    """
    size = tf.shape(image)
    paddings = [[0, tf.maximum(height - size[0], 0)], [0, tf.maximum(width - size[1], 0)],
                [0, 0]]
    image = tf.pad(image, paddings, constant_values=MEAN_PIXEL)
    label = tf.pad(label, paddings, constant_values=tf.cast(ignore_label, label.dtype))
    return image, label


def random_crop(tensors: Sequence[tf.Tensor], crop_height: int,
                crop_width: int) -> List[tf.Tensor]:
    """Crops every tensor at one random offset to `crop_height` x `crop_width`.

    Args:
      tensors: `[h, w, channels]` tensors of the same h and w (channels may differ), at least
        the crop size.
      crop_height, crop_width: the size of the crops.

    Returns:
      The crops, in the order of `tensors`, with static shape `[crop_height, crop_width, c]`.

    Raises:
      InvalidArgumentError (when run): if a tensor is smaller than the crop or the sizes
        differ.
    """
    size = tf.shape(tensors[0])
    checks = [tf.debugging.assert_greater_equal(
        size[:2], [crop_height, crop_width],
        message=f'random_crop: image smaller than the crop size {crop_height}x{crop_width}; '
                'pad it first')]
    checks += [tf.debugging.assert_equal(tf.shape(t)[:2], size[:2],
                                         message='random_crop: image and label sizes differ')
               for t in tensors[1:]]
    with tf.control_dependencies(checks):
        offset_height = tf.random.uniform([], 0, size[0] - crop_height + 1, dtype=tf.int32)
        offset_width = tf.random.uniform([], 0, size[1] - crop_width + 1, dtype=tf.int32)
    crops = []
    for tensor in tensors:
        crop = tensor[offset_height:offset_height + crop_height,
                      offset_width:offset_width + crop_width]
        crop.set_shape([crop_height, crop_width, tensor.shape[2]])
        crops.append(crop)
    return crops


def random_flip_left_right(tensors: Sequence[tf.Tensor],
                           probability: float = PROB_OF_FLIP) -> List[tf.Tensor]:
    """Flips all `tensors` left-right together with probability `probability`, or none.

    (`tf.image.random_flip_left_right` would decide per tensor.)
    """
    flip = tf.random.uniform([]) < probability
    return [tf.cond(flip, lambda t=t: tf.reverse(t, axis=[1]), lambda t=t: t)
            for t in tensors]


def preprocess_for_train(image: tf.Tensor, label: tf.Tensor, crop_height: int,
                         crop_width: int, ignore_label: int, min_scale_factor: float = 1.0,
                         max_scale_factor: float = 1.0,
                         scale_factor_step_size: float = 0.0) -> Tuple[tf.Tensor, tf.Tensor]:
    """deeplab's training augmentation: random scale, pad, random crop, random flip.

    Args:
      image: a `[height, width, 3]` image (any real dtype; uint8 from the decoder).
      label: a `[height, width, 1]` (or `[height, width]`) label map of class indices.
      crop_height, crop_width: the size of the training crops.
      ignore_label: the label of pixels to ignore; the label padding gets it.
      min_scale_factor, max_scale_factor, scale_factor_step_size: the random scale (see
        `get_random_scale`); 1, 1, 0 disables scaling.

    Returns:
      A float32 `[crop_height, crop_width, 3]` image in [0, 255] and an int32
      `[crop_height, crop_width, 1]` label.
    """
    image = tf.cast(image, tf.float32)
    label = _as_label_map(label)
    if min_scale_factor != 1.0 or max_scale_factor != 1.0:
        scale = get_random_scale(min_scale_factor, max_scale_factor, scale_factor_step_size)
        image, label = scale_image_and_label(image, label, scale)
    image, label = pad_to_at_least(image, label, crop_height, crop_width, ignore_label)
    image, label = random_crop([image, label], crop_height, crop_width)
    image, label = random_flip_left_right([image, label])
    return image, label


def prepare_for_eval(image: tf.Tensor, label: tf.Tensor) -> Tuple[tf.Tensor, tf.Tensor]:
    """Evaluation input: the whole image and label at their own size, no random step.

    Returns:
      A float32 `[height, width, 3]` image and an int32 `[height, width, 1]` label.
    """
    return tf.cast(image, tf.float32), _as_label_map(label)


def _as_label_map(label: tf.Tensor) -> tf.Tensor:
    """An int32 `[height, width, 1]` label, from `[height, width]` or `[height, width, 1]`."""
    if label.shape.rank == 2:
        label = label[..., tf.newaxis]
    elif label.shape.rank is not None and (label.shape.rank != 3 or label.shape[2] not in
                                           (None, 1)):
        raise ValueError(f'label must be [height, width] or [height, width, 1], got shape '
                         f'{label.shape}')
    label = tf.cast(label, tf.int32)
    label.set_shape([None, None, 1])
    return label
