"""The abstract DataDecoder: turns one serialized sample into the tensors of named items.

While data providers read data from disk, data decoders decode it. A decoder is given a
serialized or encoded sample and a list of items, and returns one tensor per item::

    class MyDecoder(DataDecoder):
        def decode(self, data, items):
            decompressed = _decompress(data)
            return [decompressed[item] for item in items]

        def list_items(self):
            return ['image', 'label']

Same interface as `tf_slim.data.data_decoder.DataDecoder`.
"""

import abc
from typing import Any, List, Optional, Sequence


class DataDecoder(abc.ABC):
    """An abstract class which is used to decode data for a provider."""

    @abc.abstractmethod
    def decode(self, data: Any, items: Optional[Sequence[str]]) -> List[Any]:
        """Decodes the data to return the tensors specified by the list of items.

        Args:
          data: a possibly encoded data format (e.g. a serialized tf.train.Example).
          items: a list of strings, each of which names an item to decode.

        Returns:
          A list of tensors, one per item in `items`, in the same order.

        Raises:
          ValueError: if any of the items cannot be satisfied.
        """

    @abc.abstractmethod
    def list_items(self) -> List[str]:
        """Returns the list of item names that the decoder can decode."""
