"""The Dataset descriptor: where the records are, how to read and decode them.

A Dataset bundles (1) a list of data sources, (2) a Reader class that reads those sources
and returns possibly encoded samples, (3) a decoder that turns each sample into item tensors,
(4) the number of samples, and (5) descriptions of the items. It is consumed by
`slimdata.dataset_data_provider.DatasetDataProvider` (graph mode, queues) or by
`slimdata.tfdata` (TF2 eager, tf.data)::

    dataset = Dataset(data_sources='/data/train-*.tfrecord',
                      reader=tf.compat.v1.TFRecordReader, decoder=decoder,
                      num_samples=5011, items_to_descriptions={'image': 'A color image.'})
    provider = DatasetDataProvider(dataset, shuffle=False)
    image, label = provider.get(['image', 'label'])

Same constructor and attributes as `tf_slim.data.dataset.Dataset`.
"""

from typing import TYPE_CHECKING, Any, Mapping, Optional

from slimdata.data_decoder import DataDecoder
from slimdata.types import DataSources, ReaderClass


class Dataset(object):
    """Represents a Dataset specification."""

    data_sources: DataSources
    reader: ReaderClass
    decoder: DataDecoder
    num_samples: Optional[int]
    items_to_descriptions: Mapping[str, str]

    if TYPE_CHECKING:
        # The dataset-specific fields (`num_classes`, `labels_to_names`, ...) are attributes
        # too; a type checker sees them as Any. Only for type checkers: at run time a missing
        # attribute raises AttributeError as always.
        def __getattr__(self, name: str) -> Any: ...

    def __init__(self, data_sources: DataSources, reader: ReaderClass,
                 decoder: DataDecoder, num_samples: Optional[int],
                 items_to_descriptions: Mapping[str, str], **kwargs: Any):
        """Initializes the dataset.

        Args:
          data_sources: a file, a glob, or a list of either, that make up the dataset.
          reader: the reader class, a subclass of `tf.compat.v1.ReaderBase` such as
            `tf.compat.v1.TFRecordReader` (called with no arguments, or `reader_kwargs`).
          decoder: an instance of a `data_decoder.DataDecoder`.
          num_samples: the number of samples in the dataset.
          items_to_descriptions: a map from the items that the dataset provides to
            descriptions of those items.
          **kwargs: any remaining dataset-specific fields (`num_classes`,
            `labels_to_names`, ...), stored as attributes.
        """
        kwargs['data_sources'] = data_sources
        kwargs['reader'] = reader
        kwargs['decoder'] = decoder
        kwargs['num_samples'] = num_samples
        kwargs['items_to_descriptions'] = items_to_descriptions
        self.__dict__.update(kwargs)
