"""The DataProvider: maps requested item names to tensors.

The basic operation of a data provider is `get`, which returns one tensor per requested item::

    provider = MyDataProvider(...)
    image, label = provider.get(['image', 'label'])

Same interface as `tf_slim.data.data_provider.DataProvider`; `list_items` returns a list
(tf_slim returned a `dict_keys` view).
"""

import abc
from typing import List, Mapping, Optional, Sequence

from slimdata.types import TensorLike


class DataProvider(abc.ABC):  # noqa: B024 (tf_slim's has no abstract method either)
    """Maps a list of requested data items to tensors from a data source.

    All data providers inherit from DataProvider. No assumption is made about the source of
    the data nor the mechanism for providing it.
    """

    def __init__(self, items_to_tensors: Mapping[str, TensorLike],
                 num_samples: Optional[int]):
        """Constructs the DataProvider.

        Args:
          items_to_tensors: a dictionary of item names to tensors.
          num_samples: the number of samples in the dataset being provided.
        """
        self._items_to_tensors = items_to_tensors
        self._num_samples = num_samples

    def get(self, items: Sequence[str]) -> List[TensorLike]:
        """Returns a list of tensors specified by the given list of items.

        Args:
          items: a list or tuple of item names.

        Returns:
          A list of tensors, one per item, in the order of `items`.

        Raises:
          ValueError: if `items` is not a list or tuple, or names an unknown item.
        """
        self._validate_items(items)
        return [self._items_to_tensors[item] for item in items]

    def list_items(self) -> List[str]:
        """Returns the list of item names that can be passed to `get`."""
        return list(self._items_to_tensors.keys())

    def num_samples(self) -> Optional[int]:
        """Returns the number of data samples in the dataset."""
        return self._num_samples

    def _validate_items(self, items):
        if not isinstance(items, (list, tuple)):
            raise ValueError('items must be a list or tuple, got %s' % type(items).__name__)
        valid_items = self.list_items()
        for item in items:
            if item not in valid_items:
                raise ValueError('Item [%s] is invalid. Valid entries include: %s'
                                 % (item, valid_items))
