"""TFExampleDecoder and its ItemHandlers: from a serialized tf.train.Example to item tensors.

Decoding is two stages. (1) The Example is parsed with `tf.io.parse_single_example` using the
`keys_to_features` specs (FixedLenFeature / VarLenFeature). (2) Each requested item's
ItemHandler turns the parsed tensors of its keys into the item tensor (decodes an image,
assembles bounding boxes, reshapes, looks up a vocabulary, ...)::

    keys_to_features = {
        'image/encoded': tf.io.FixedLenFeature((), tf.string, default_value=''),
        'image/format': tf.io.FixedLenFeature((), tf.string, default_value='png'),
        'image/class/label': tf.io.FixedLenFeature([], tf.int64, default_value=0),
    }
    items_to_handlers = {
        'image': Image(),                       # 'image/encoded' + 'image/format'
        'label': Tensor('image/class/label'),
    }
    decoder = TFExampleDecoder(keys_to_features, items_to_handlers)
    image, label = decoder.decode(serialized_example, ['image', 'label'])

Same classes, signatures and defaults as `tf_slim.data.tfexample_decoder`, on the public
TensorFlow API. Differences, all fixes of tf_slim bugs:
  * an unknown item, or a handler key missing from `keys_to_features`, raises
    UnknownKeyError naming it and the known ones: a ValueError, and a KeyError too, as
    tf_slim raised (a bare one), so code that catches either keeps working;
  * `Image(dtype=tf.uint16)` decodes 16-bit PNGs at 16 bits (tf_slim truncated them to 8);
  * `BoundingBoxSequence` / `KeypointsSequence` accept their documented `prefix=None`;
  * `list_items` returns a list in every class;
  * only the features that the requested items use are parsed;
  * a record that is not an Example fails with InvalidArgumentError ("Invalid protocol message
    input, example id: ..."); TensorFlow's Example parser embeds the record's bytes in its
    error, which reaches Python as UnicodeDecodeError, caught by no handler of TensorFlow
    errors;
  * `decode(..., example_name=key)` names the record (e.g. its `file:offset` key) in parse
    errors. The providers and the tf.data bridge check each batch of records as it is read
    (`checked_records`, naming a record that is not an Example by its key), then decode them
    (`decode_record`).
Any object with `.keys` and `.tensors_to_item(keys_to_tensors)` works as a handler, so handlers
written against tf_slim (subclasses of its ItemHandler) work unchanged.
"""

import abc
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple, Union

from slimdata import data_decoder
from slimdata._tf import tf

# `Tensor` is a handler class of this module (tf_slim's name), so the alias is TensorT here.
from slimdata.types import DType, Keys, KeysToFeatures, TensorLike
from slimdata.types import Tensor as TensorT

# The sequence-example parser wants at least one feature to parse; this key is in no Example
# (so it parses to nothing), and asking for it makes the parser walk the whole record. An int64
# spec: TensorFlow's sequence-example parser crashes on some damaged bytes lists it is asked
# to parse (found by benchmarks/fuzz_readers.py).
_STRUCTURE_PROBE_KEY = '\x00slimdata/structure-probe'
_STRUCTURE_PROBE = {_STRUCTURE_PROBE_KEY: tf.io.VarLenFeature(tf.int64)}

# The first 8 bytes of every PNG file; the IHDR bit depth is the byte at offset 24.
_PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'
_PNG_BIT_DEPTH_OFFSET = 24


class ItemHandler(abc.ABC):
    """Specifies the item-to-Features mapping for tf.parse_example.

    An ItemHandler both specifies a list of Features used for parsing an Example proto and a
    function that post-processes the results of Example parsing.
    """

    def __init__(self, keys: Keys):
        """Constructs the handler with the names of the tf.train.Feature keys it uses.

        Args:
          keys: the name of the TensorFlow Example feature, or a list of names.
        """
        if not isinstance(keys, (tuple, list)):
            keys = [keys]
        self._keys = keys

    @property
    def keys(self) -> Union[List[str], Tuple[str, ...]]:
        return self._keys

    @abc.abstractmethod
    def tensors_to_item(self, keys_to_tensors: Mapping[str, TensorLike]) -> TensorLike:
        """Maps the given dictionary of tensors to the requested item.

        Args:
          keys_to_tensors: a mapping of TF-Example keys to parsed tensors.

        Returns:
          The final tensor representing the item being handled.
        """

    @classmethod
    def __subclasshook__(cls, candidate):
        # Handlers written against tf_slim (or duck-typed ones) count as ItemHandlers, so that
        # BackupHandler and user code checking isinstance accept them unchanged.
        if cls is ItemHandler:
            attributes = set().union(*(vars(klass) for klass in candidate.__mro__))
            if {'keys', 'tensors_to_item'} <= attributes:
                return True
        return NotImplemented


class ItemHandlerCallback(ItemHandler):
    """An ItemHandler that converts the parsed tensors via a given function."""

    def __init__(self, keys: Keys,
                 func: Callable[[Mapping[str, TensorLike]], TensorLike]):
        """Initializes the ItemHandler.

        Args:
          keys: a list of TF-Example keys.
          func: a function that takes a dictionary from `keys` to parsed tensors and returns
            the item.
        """
        super().__init__(keys)
        self._func = func

    def tensors_to_item(self, keys_to_tensors: Mapping[str, TensorLike]) -> TensorLike:
        return self._func(keys_to_tensors)


def _dense_values(tensor):
    """The values of a parsed feature, whether it was parsed as Fixed- or VarLen."""
    return tensor.values if isinstance(tensor, tf.SparseTensor) else tensor


class BoundingBox(ItemHandler):
    """An ItemHandler that concatenates a set of parsed Tensors to bounding boxes."""

    def __init__(self, keys: Optional[Sequence[str]] = None, prefix: str = ''):
        """Initializes the bounding box handler.

        Args:
          keys: a list of four key names, in the order the box coordinates are returned;
            defaults to ['ymin', 'xmin', 'ymax', 'xmax'].
          prefix: an optional prefix prepended to each of the keys.

        Raises:
          ValueError: if keys is not `None` and also not a list of exactly 4 keys.
        """
        if keys is None:
            keys = ['ymin', 'xmin', 'ymax', 'xmax']
        elif len(keys) != 4:
            raise ValueError('BoundingBox expects 4 keys but got {}'.format(len(keys)))
        self._prefix = prefix or ''
        self._full_keys = [self._prefix + k for k in keys]
        super().__init__(self._full_keys)

    def tensors_to_item(self, keys_to_tensors: Mapping[str, TensorLike]) -> TensorT:
        """Returns a [num_boxes, 4] tensor, one box per row, coordinates in `keys` order."""
        sides = [_dense_values(keys_to_tensors[key]) for key in self._full_keys]
        return tf.stack(sides, axis=1)


class Tensor(ItemHandler):
    """An ItemHandler that returns a parsed Tensor, optionally reshaped."""

    def __init__(self, tensor_key: str, shape_keys: Optional[Union[str, List[str]]] = None,
                 shape: Optional[Sequence[int]] = None, default_value: Any = 0):
        """Initializes the Tensor handler.

        Tensors are returned without reshaping unless `shape_keys` (the shape is read from
        other features of the same Example) or a fixed `shape` is given.

        Args:
          tensor_key: the name of the TF-Example feature to read the tensor from.
          shape_keys: optional name or list of names of the TF-Example features in which the
            tensor shape is stored; if a list, each holds one dimension.
          shape: optional output shape of the tensor.
          default_value: the value used when `tensor_key` is not found in a particular
            Example (fills a sparse tensor when it is densified).

        Raises:
          ValueError: if both `shape_keys` and `shape` are specified.
        """
        if shape_keys and shape is not None:
            raise ValueError('Cannot specify both shape_keys and shape parameters.')
        if shape_keys and not isinstance(shape_keys, list):
            shape_keys = [shape_keys]
        self._tensor_key = tensor_key
        self._shape_keys = shape_keys
        self._shape = shape
        self._default_value = default_value
        keys = [tensor_key]
        if shape_keys:
            keys.extend(shape_keys)
        super().__init__(keys)

    def tensors_to_item(self, keys_to_tensors: Mapping[str, TensorLike]) -> TensorT:
        tensor = keys_to_tensors[self._tensor_key]
        shape = self._shape
        if self._shape_keys:
            shape_dims = []
            for key in self._shape_keys:
                shape_dim = keys_to_tensors[key]
                if isinstance(shape_dim, tf.SparseTensor):
                    shape_dim = tf.sparse.to_dense(shape_dim)
                shape_dims.append(shape_dim)
            shape = tf.reshape(tf.stack(shape_dims), [-1])
        if isinstance(tensor, tf.SparseTensor):
            if shape is not None:
                tensor = tf.sparse.reshape(tensor, shape)
            tensor = tf.sparse.to_dense(tensor, self._default_value)
        elif shape is not None:
            tensor = tf.reshape(tensor, shape)
        return tensor


class LookupTensor(Tensor):
    """An ItemHandler that returns a parsed Tensor, the result of a table lookup."""

    def __init__(self, tensor_key: str, table: Any,
                 shape_keys: Optional[Union[str, List[str]]] = None,
                 shape: Optional[Sequence[int]] = None, default_value: Any = ''):
        """Initializes the LookupTensor handler.

        See Tensor. The parsed tensor is mapped through `table` (most often a label mapping).

        Args:
          tensor_key: the name of the TF-Example feature to read the tensor from.
          table: a `tf.lookup` table.
          shape_keys: as in Tensor.
          shape: as in Tensor.
          default_value: as in Tensor.

        Raises:
          ValueError: if both `shape_keys` and `shape` are specified.
        """
        self._table = table
        super().__init__(tensor_key, shape_keys, shape, default_value)

    def tensors_to_item(self, keys_to_tensors: Mapping[str, TensorLike]) -> TensorT:
        unmapped_tensor = super().tensors_to_item(keys_to_tensors)
        return self._table.lookup(unmapped_tensor)


class BackupHandler(ItemHandler):
    """An ItemHandler that tries two ItemHandlers in order."""

    def __init__(self, handler: ItemHandler, backup: ItemHandler):
        """Initializes the BackupHandler.

        If the first handler's item has no elements, the backup handler's item is used.

        Args:
          handler: the primary ItemHandler.
          backup: the backup ItemHandler.

        Raises:
          ValueError: if either is not an ItemHandler.
        """
        if not isinstance(handler, ItemHandler):
            raise ValueError('Primary handler is of type %s instead of ItemHandler'
                             % type(handler))
        if not isinstance(backup, ItemHandler):
            raise ValueError('Backup handler is of type %s instead of ItemHandler'
                             % type(backup))
        self._handler = handler
        self._backup = backup
        super().__init__(list(handler.keys) + list(backup.keys))

    def tensors_to_item(self, keys_to_tensors: Mapping[str, TensorLike]) -> TensorLike:
        item = self._handler.tensors_to_item(keys_to_tensors)
        return tf.cond(
            pred=tf.equal(tf.reduce_prod(tf.shape(item)), 0),
            true_fn=lambda: self._backup.tensors_to_item(keys_to_tensors),
            false_fn=lambda: item)


class SparseTensor(ItemHandler):
    """An ItemHandler for SparseTensors built from an indices and a values feature."""

    def __init__(self, indices_key: Optional[str] = None, values_key: Optional[str] = None,
                 shape_key: Optional[str] = None, shape: Optional[Sequence[int]] = None,
                 densify: bool = False, default_value: Any = 0):
        """Initializes the SparseTensor handler.

        Args:
          indices_key: the name of the TF-Example feature that contains the ids.
            Defaults to 'indices'.
          values_key: the name of the TF-Example feature that contains the values.
            Defaults to 'values'.
          shape_key: the name of the TF-Example feature that contains the shape; used if
            given.
          shape: the output shape of the SparseTensor, used if `shape_key` is not given.
          densify: whether to convert the SparseTensor into a dense Tensor.
          default_value: scalar value for the indices not specified when densifying.
        """
        indices_key = indices_key or 'indices'
        values_key = values_key or 'values'
        self._indices_key = indices_key
        self._values_key = values_key
        self._shape_key = shape_key
        self._shape = shape
        self._densify = densify
        self._default_value = default_value
        keys = [indices_key, values_key]
        if shape_key:
            keys.append(shape_key)
        super().__init__(keys)

    def tensors_to_item(self, keys_to_tensors: Mapping[str, TensorLike]) -> TensorLike:
        indices = keys_to_tensors[self._indices_key]
        values = keys_to_tensors[self._values_key]
        if self._shape_key:
            shape = keys_to_tensors[self._shape_key]
            if isinstance(shape, tf.SparseTensor):
                shape = tf.sparse.to_dense(shape)
        elif self._shape:
            shape = self._shape
        else:
            shape = indices.dense_shape
        rank = tf.shape(indices.indices)[1]
        ids = tf.cast(indices.values, tf.int64)
        indices_columns_to_preserve = tf.slice(indices.indices, [0, 0], tf.stack([-1, rank - 1]))
        new_indices = tf.concat([indices_columns_to_preserve, tf.reshape(ids, [-1, 1])], 1)
        tensor = tf.SparseTensor(new_indices, values.values, shape)
        if self._densify:
            tensor = tf.sparse.to_dense(tensor, self._default_value)
        return tensor


class Image(ItemHandler):
    """An ItemHandler that decodes a parsed Tensor as an image."""

    def __init__(self, image_key: Optional[str] = None, format_key: Optional[str] = None,
                 shape: Optional[Sequence[int]] = None, channels: int = 3,
                 dtype: DType = tf.uint8, repeated: bool = False, dct_method: str = ''):
        """Initializes the image handler.

        Args:
          image_key: the name of the TF-Example feature in which the encoded image is
            stored. Defaults to 'image/encoded'.
          format_key: the name of the TF-Example feature in which the image format is stored.
            Defaults to 'image/format'. 'raw' (any case) decodes with `tf.io.decode_raw`;
            anything else is decoded by content (JPEG, PNG, GIF, BMP), so 'jpeg', 'JPEG',
            'jpg' and 'png' all work.
          shape: the output shape of the image, [height, width, channels]. If given, the
            image is reshaped accordingly; give it only if all stored images have that shape.
          channels: the number of channels in the image.
          dtype: the dtype of the decoded image: tf.uint8, tf.uint16 (16-bit PNGs keep their
            16 bits; 8-bit images are cast) or tf.float32 (values cast, not rescaled).
          repeated: if False, decodes a single image. If True, decodes a variable number of
            image strings from a 1D tensor of strings.
          dct_method: an optional string; for JPEG only, a hint about the decompression
            algorithm ('INTEGER_FAST', 'INTEGER_ACCURATE').
        """
        if not image_key:
            image_key = 'image/encoded'
        if not format_key:
            format_key = 'image/format'
        super().__init__([image_key, format_key])
        self._image_key = image_key
        self._format_key = format_key
        self._shape = shape
        self._channels = channels
        self._dtype = tf.as_dtype(dtype)
        self._repeated = repeated
        self._dct_method = dct_method

    def tensors_to_item(self, keys_to_tensors: Mapping[str, TensorLike]) -> TensorT:
        """See base class."""
        image_buffer = keys_to_tensors[self._image_key]
        image_format = keys_to_tensors[self._format_key]
        if self._repeated:
            return tf.map_fn(lambda x: self._decode(x, image_format), image_buffer,
                             fn_output_signature=self._dtype)
        return self._decode(image_buffer, image_format)

    def _decode(self, image_buffer, image_format):
        """Decodes one image buffer to a [height, width, channels] tensor of `dtype`.

        It reads only attributes that tf_slim's Image has too (`_dtype`, `_channels`,
        `_shape`, `_dct_method`), so `slimdata.tf_slim_patch` installs it as that class'
        `_decode`.
        """
        dtype = tf.as_dtype(self._dtype)
        is_raw = tf.equal(tf.strings.lower(image_format), 'raw')
        image = tf.cond(is_raw,
                        lambda: tf.io.decode_raw(image_buffer, out_type=dtype),
                        lambda: _decode_encoded(image_buffer, self._channels, dtype,
                                                self._dct_method))
        image.set_shape([None, None, self._channels])
        if self._shape is not None:
            image = tf.reshape(image, self._shape)
        return image


def _decode_encoded(image_buffer, channels, dtype, dct_method):
    """Decodes a PNG, JPEG, GIF or BMP; 16-bit PNGs at 16 bits when `dtype` is uint16."""
    if dtype == tf.uint16:
        return tf.cond(_is_16_bit_png(image_buffer),
                       lambda: tf.io.decode_png(image_buffer, channels=channels,
                                                dtype=tf.uint16),
                       lambda: _decode_8_bit(image_buffer, channels, dtype, dct_method))
    return _decode_8_bit(image_buffer, channels, dtype, dct_method)


def _decode_8_bit(image_buffer, channels, dtype, dct_method):
    """Decodes at 8 bits and casts to `dtype`, as tf_slim did."""
    if dct_method:
        # decode_image has no dct_method, so JPEGs take decode_jpeg to honour the hint.
        image = tf.cond(
            tf.io.is_jpeg(image_buffer),
            lambda: tf.io.decode_jpeg(image_buffer, channels=channels, dct_method=dct_method),
            lambda: tf.io.decode_image(image_buffer, channels=channels,
                                       expand_animations=False))
    else:
        image = tf.io.decode_image(image_buffer, channels=channels, expand_animations=False)
    return tf.cast(image, dtype)


def _is_16_bit_png(image_buffer):
    """True when the buffer is a PNG whose IHDR bit depth is 16 (never fails on short input)."""
    header_length = _PNG_BIT_DEPTH_OFFSET + 1
    padded = tf.strings.join([image_buffer, b'\0' * header_length])
    header = tf.io.decode_raw(tf.strings.substr(padded, 0, header_length), tf.uint8)
    signature = tf.constant(list(_PNG_SIGNATURE), dtype=tf.uint8)
    return tf.logical_and(tf.reduce_all(tf.equal(header[:len(_PNG_SIGNATURE)], signature)),
                          tf.equal(header[_PNG_BIT_DEPTH_OFFSET], 16))


def _sparse_with_trailing_dim(value):
    """Reshapes a [time, n] SparseTensor to [time, n, 1] so sides can be concatenated."""
    expanded_dims = tf.concat([tf.cast(tf.shape(value), tf.int64),
                               tf.constant([1], dtype=tf.int64)], 0)
    return tf.sparse.reshape(value, expanded_dims)


class _CoordinateSequence(ItemHandler):
    """Concatenates per-coordinate [time, n] SparseTensors into [time, n, len(keys)]."""

    def __init__(self, keys, prefix, return_dense, default_value):
        self._prefix = prefix or ''
        self._full_keys = [self._prefix + k for k in keys]
        self._return_dense = return_dense
        self._default_value = default_value
        super().__init__(self._full_keys)

    def tensors_to_item(self, keys_to_tensors):
        sides = [_sparse_with_trailing_dim(keys_to_tensors[key]) for key in self._full_keys]
        item = tf.sparse.concat(axis=2, sp_inputs=sides)
        if self._return_dense:
            item = tf.sparse.to_dense(item, default_value=self._default_value)
        return item


class BoundingBoxSequence(_CoordinateSequence):
    """An ItemHandler that concatenates SparseTensors to bounding box sequences.

    Returns a [time, num_boxes, 4] tensor, coordinates in `keys` order; dense (empty
    positions filled with `default_value`) or a SparseTensor, by `return_dense`.
    """

    def __init__(self, keys: Optional[Sequence[str]] = None, prefix: Optional[str] = None,
                 return_dense: bool = True, default_value: float = -1.0):
        """Initializes the bounding box sequence handler.

        Args:
          keys: a list of four key names for ymin, xmin, ymax, xmax in the Example or
            SequenceExample; defaults to ['ymin', 'xmin', 'ymax', 'xmax'].
          prefix: an optional prefix prepended to each key (None means no prefix).
          return_dense: if True, returns a dense tensor; if False, a SparseTensor.
          default_value: the value of empty positions in the dense tensor.

        Raises:
          ValueError: if keys is not `None` and also not a list of exactly 4 keys.
        """
        if keys is None:
            keys = ['ymin', 'xmin', 'ymax', 'xmax']
        elif len(keys) != 4:
            raise ValueError('BoundingBoxSequence expects 4 keys but got {}'.format(len(keys)))
        super().__init__(keys, prefix, return_dense, default_value)


class KeypointsSequence(_CoordinateSequence):
    """An ItemHandler that concatenates SparseTensors to keypoint sequences.

    Returns a [time, num_keypoints, 2] tensor, coordinates in `keys` order; dense or sparse,
    by `return_dense`.
    """

    def __init__(self, keys: Optional[Sequence[str]] = None, prefix: Optional[str] = None,
                 return_dense: bool = True, default_value: float = -1.0):
        """Initializes the keypoints handler.

        Args:
          keys: a list of two key names for the y and x coordinates; defaults to ['y', 'x'].
          prefix: an optional prefix prepended to each key (None means no prefix).
          return_dense: if True, returns a dense tensor; if False, a SparseTensor.
          default_value: the value of empty positions in the dense tensor.

        Raises:
          ValueError: if keys is not `None` and also not a list of exactly 2 keys.
        """
        if keys is None:
            keys = ['y', 'x']
        elif len(keys) != 2:
            raise ValueError('KeypointsSequence expects 2 keys but got {}'.format(len(keys)))
        super().__init__(keys, prefix, return_dense, default_value)


class NumBoxesSequence(ItemHandler):
    """An ItemHandler that returns num_boxes per frame for a box sequence.

    `num_boxes` is inferred from a 2D SparseTensor [time, boxes] decoded from a field of the
    SequenceExample. The output is an int64 tensor of shape [time], determined by the tensor
    of the first key; with `check_consistency`, every key must agree (checked at run time).
    """

    def __init__(self, keys: Optional[Keys] = None, check_consistency: bool = True):
        """Initializes the handler.

        Args:
          keys: a list of keys of sparse tensors which have exactly 2 dimensions, the 1st
            being the time and the 2nd the boxes per frame.
          check_consistency: if True, check that all keys give the same num_boxes.

        Raises:
          ValueError: if keys is empty.
        """
        if not keys:
            raise ValueError('keys must not be empty.')
        self._check_consistency = check_consistency
        super().__init__(keys)

    def tensors_to_item(self, keys_to_tensors: Mapping[str, TensorLike]) -> TensorT:
        """Returns a [time] int64 tensor with the number of boxes per frame.

        Raises:
          ValueError: if any of the keyed tensors is not a SparseTensor.
        """
        num_boxes = _num_boxes(keys_to_tensors[self._keys[0]])
        asserts = []
        if self._check_consistency:
            for key in self._keys[1:]:
                asserts.append(tf.compat.v1.assert_equal(num_boxes,
                                                         _num_boxes(keys_to_tensors[key])))
        with tf.control_dependencies(asserts):
            return tf.identity(num_boxes)


def _num_boxes(tensor):
    """The number of boxes per frame of a [time, boxes] SparseTensor."""
    if not isinstance(tensor, tf.SparseTensor):
        raise ValueError('tensor must be of type tf.SparseTensor.')
    box_ids = tf.SparseTensor(indices=tensor.indices, values=tensor.indices[:, 1],
                              dense_shape=tensor.dense_shape)
    box_ids = tf.sparse.to_dense(box_ids, default_value=-1)
    # A frame with no boxes (e.g. a negative example) pads to 0 boxes.
    return tf.reduce_max(tf.pad(box_ids + 1, [[0, 0], [0, 1]]), axis=1)


class UnknownKeyError(ValueError, KeyError):
    """An item, or a feature key a handler reads, that the decoder does not know."""

    # TensorFlow re-raises an error from traced code (tf.data's map, tf.function) as its own
    # type only for built-in types and for types whose __init__ is Exception's; any other
    # type would reach the caller as autograph's StagingError, neither ValueError nor KeyError.
    __init__ = Exception.__init__
    # KeyError's str() is the repr of its argument; the message reads better as it is.
    __str__ = BaseException.__str__


def _handlers_for(items, items_to_handlers):
    """The handlers of `items` (all items when None/empty), refusing unknown names."""
    if not items:
        items = list(items_to_handlers.keys())
    handlers = []
    for item in items:
        if item not in items_to_handlers:
            raise UnknownKeyError('Unknown item %r: the decoder provides %s'
                                  % (item, sorted(items_to_handlers)))
        handlers.append((item, items_to_handlers[item]))
    return handlers


def _features_used(handlers, known_keys, described_as):
    """The feature keys the handlers read, refusing keys that no feature spec declares."""
    used = []
    for item, handler in handlers:
        for key in handler.keys:
            if key not in known_keys:
                raise UnknownKeyError('Item %r reads feature key %r, which is not in %s; '
                                      'known keys: %s'
                                      % (item, key, described_as, sorted(known_keys)))
            if key not in used:
                used.append(key)
    return used


def _checked_structure(serialized, names):
    """`serialized` (one record or a batch), once its Example structure has been checked.

    TensorFlow's Example parser reports a record that is not an Example (a foreign payload,
    bytes overwritten before the record was framed) with a message that embeds the record's
    bytes; Python cannot decode that message, and the op raises UnicodeDecodeError, which no
    handler of TensorFlow errors catches, naming no record. The sequence-example parser walks
    the same structure (an Example is a SequenceExample without feature lists) and reports the
    same damage as InvalidArgumentError "Invalid protocol message input, example id: <name>".

    The parser is a stateless op, and graph optimisation drops control dependencies on those;
    an Assert (stateful) on its output keeps it in front of whatever uses the result.
    """
    serialized = tf.convert_to_tensor(serialized, tf.string)
    if serialized.shape.rank == 0:
        context, _ = tf.io.parse_single_sequence_example(serialized, _STRUCTURE_PROBE,
                                                         example_name=names)
    else:
        context, _, _ = tf.io.parse_sequence_example(serialized, _STRUCTURE_PROBE,
                                                     example_names=names)
    probed = tf.debugging.Assert(tf.equal(tf.size(context[_STRUCTURE_PROBE_KEY].values), 0),
                                 [f'a feature is named {_STRUCTURE_PROBE_KEY!r}'])
    with tf.control_dependencies([probed]):
        return tf.identity(serialized)


def _parse_example(serialized_example, features, example_name):
    """`tf.io.parse_single_example`, naming the record in its errors when `example_name` is
    given (its single-record mode names none, so the record is parsed as a batch of one)."""
    if example_name is None:
        return tf.io.parse_single_example(serialized_example, features)
    batch = tf.io.parse_example(tf.expand_dims(serialized_example, 0), features,
                                example_names=tf.expand_dims(example_name, 0))
    return {key: _first_of_batch(value) for key, value in batch.items()}


def _first_of_batch(value):
    """The only element of a parsed batch of one, as `parse_single_example` returns it."""
    if isinstance(value, tf.SparseTensor):
        return tf.SparseTensor(value.indices[:, 1:], value.values, value.dense_shape[1:])
    return value[0]


def checked_records(decoder: data_decoder.DataDecoder, serialized: TensorT,
                    names: TensorT) -> TensorT:
    """A batch of serialized records, checked before `decode_record` decodes them one by one.

    For a `TFExampleDecoder`, one op checks that each record of the batch is an Example (see
    `_checked_structure`), naming a record that is not: about 1 us per small record, against
    about 5 us for checking each record in `decode`. Whether its features match their specs is
    left to the parse (whose errors name the key, not the record: checking that a batch at a
    time too would cost a second parse of every record, 3 to 7 us per small record, measured).
    Other decoders' records are returned as they are.

    Args:
      decoder: the dataset's decoder.
      serialized: a 1-D string tensor of records.
      names: a 1-D string tensor: each record's name in errors (its `file:offset` key).

    Returns:
      `serialized`, once checked.
    """
    if not isinstance(decoder, TFExampleDecoder):
        return serialized
    return _checked_structure(serialized, names)


def decode_record(decoder: data_decoder.DataDecoder, serialized: TensorT,
                  items: Optional[Sequence[str]], name: TensorT) -> List[TensorLike]:
    """One record's items, decoded by `decoder`: a `TFExampleDecoder` parses a record that
    `checked_records` checked, a `TFSequenceExampleDecoder` names the record in its errors, and
    decoders written against tf_slim (which take no name) decode as they do."""
    if isinstance(decoder, TFExampleDecoder):
        return decoder.decode_checked(serialized, items)
    if isinstance(decoder, TFSequenceExampleDecoder):
        return decoder.decode(serialized, items, example_name=name)
    return decoder.decode(serialized, items)


def _items_from(handlers, parsed):
    """Each handler's item, made from the parsed tensors of its keys."""
    return [handler.tensors_to_item({key: parsed[key] for key in handler.keys})
            for _, handler in handlers]


class TFExampleDecoder(data_decoder.DataDecoder):
    """A decoder for TensorFlow Examples.

    Decoding is (1) `tf.io.parse_single_example` with the FixedLen/VarLen feature specs of
    the keys the requested items use, then (2) each item's ItemHandler post-processing its
    parsed tensors into the item tensor.
    """

    def __init__(self, keys_to_features: KeysToFeatures,
                 items_to_handlers: Mapping[str, ItemHandler]):
        """Constructs the decoder.

        Args:
          keys_to_features: a dictionary from TF-Example keys to either
            tf.io.VarLenFeature or tf.io.FixedLenFeature instances.
          items_to_handlers: a dictionary from items (strings) to ItemHandler instances.
            Each handler is given the parsed tensors of its `keys`.
        """
        self._keys_to_features = keys_to_features
        self._items_to_handlers = items_to_handlers

    def list_items(self) -> List[str]:
        """See base class."""
        return list(self._items_to_handlers.keys())

    def decode(self, serialized_example: TensorT, items: Optional[Sequence[str]] = None,
               example_name: Optional[Union[str, TensorT]] = None) -> List[TensorLike]:
        """Decodes the given serialized TF-example.

        Args:
          serialized_example: a serialized TF-example tensor.
          items: the list of items to decode; a subset of the items of `items_to_handlers`.
            If None (or empty), all items are decoded.
          example_name: optional scalar string tensor naming the record in parse errors
            (the providers pass its `record_key`, `file:offset`).

        Returns:
          The decoded items, a list of tensors.

        Raises:
          UnknownKeyError (a ValueError and a KeyError): if an item is unknown, or a
            handler reads a key that is not in `keys_to_features`.
          tf.errors.InvalidArgumentError (when run): if the record is not an Example, or a
            feature does not match its spec (naming the key; and the record, when
            `example_name` is given, if it is not an Example or a type does not match).
        """
        handlers = _handlers_for(items, self._items_to_handlers)
        example = _parse_example(_checked_structure(serialized_example, example_name),
                                 self._features_of(handlers), example_name)
        return _items_from(handlers, example)

    def decode_checked(self, serialized_example: TensorT,
                       items: Optional[Sequence[str]] = None) -> List[TensorLike]:
        """`decode` for a record that `checked_records` checked: the parse alone."""
        handlers = _handlers_for(items, self._items_to_handlers)
        return _items_from(handlers, tf.io.parse_single_example(serialized_example,
                                                                self._features_of(handlers)))

    def _features_of(self, handlers):
        used = _features_used(handlers, self._keys_to_features, 'keys_to_features')
        return {key: self._keys_to_features[key] for key in used}


class TFSequenceExampleDecoder(data_decoder.DataDecoder):
    """A decoder for TensorFlow SequenceExamples.

    Decoding is (1) `tf.io.parse_single_sequence_example` with the context and sequence
    feature specs, then (2) each item's ItemHandler post-processing its parsed tensors.
    """

    def __init__(self, keys_to_context_features: KeysToFeatures,
                 keys_to_sequence_features: KeysToFeatures,
                 items_to_handlers: Mapping[str, ItemHandler]):
        """Constructs the decoder.

        Args:
          keys_to_context_features: a dictionary from SequenceExample context keys to
            tf.io.VarLenFeature or tf.io.FixedLenFeature instances.
          keys_to_sequence_features: a dictionary from SequenceExample sequence keys to
            tf.io.VarLenFeature or tf.io.FixedLenSequenceFeature instances.
          items_to_handlers: a dictionary from items (strings) to ItemHandler instances.

        Raises:
          ValueError: if the same key is present in context and sequence features.
        """
        shared = set(keys_to_context_features) & set(keys_to_sequence_features)
        if shared:
            # The key would be ambiguous in the handlers' keys_to_tensors.
            raise ValueError('Context and sequence keys are not unique. \n'
                             ' Context keys: %s \n Sequence keys: %s \n Shared: %s'
                             % (list(keys_to_context_features.keys()),
                                list(keys_to_sequence_features.keys()), sorted(shared)))
        self._keys_to_context_features = keys_to_context_features
        self._keys_to_sequence_features = keys_to_sequence_features
        self._items_to_handlers = items_to_handlers

    def list_items(self) -> List[str]:
        """See base class."""
        return list(self._items_to_handlers.keys())

    def decode(self, serialized_example: TensorT, items: Optional[Sequence[str]] = None,
               example_name: Optional[Union[str, TensorT]] = None) -> List[TensorLike]:
        """Decodes the given serialized TF-SequenceExample.

        Args:
          serialized_example: a serialized TF-SequenceExample tensor.
          items: the list of items to decode; all items if None (or empty).
          example_name: optional scalar string tensor naming the record in parse errors.

        Returns:
          The decoded items, a list of tensors.

        Raises:
          UnknownKeyError (a ValueError and a KeyError): if an item is unknown, or a
            handler reads an undeclared key.
        """
        handlers = _handlers_for(items, self._items_to_handlers)
        _features_used(handlers,
                       {**self._keys_to_context_features, **self._keys_to_sequence_features},
                       'keys_to_context_features or keys_to_sequence_features')
        context, feature_list = tf.io.parse_single_sequence_example(
            serialized_example, self._keys_to_context_features,
            self._keys_to_sequence_features, example_name=example_name)
        return _items_from(handlers, {**feature_list, **context})
