"""The type aliases of the compat API's annotations.

TensorFlow ships without type information, so to a type checker its objects are `Any`; these
names say what is meant where a signature takes or returns one, and the containers around
them (a mapping of feature keys to specs, a list of items) are checked.
"""

from typing import Any, List, Mapping, Sequence, Tuple, Union

#: A `tf.Tensor`.
Tensor = Any
#: A `tf.Tensor` or `tf.SparseTensor` (what a parsed feature or a decoded item can be).
TensorLike = Any
#: A `tf.dtypes.DType` (`tf.uint8`, ...).
DType = Any
#: A feature spec: `tf.io.FixedLenFeature`, `VarLenFeature`, `FixedLenSequenceFeature`,
#: `SparseFeature` or `RaggedFeature`.
FeatureSpec = Any
#: A `tf.compat.v1.ReaderBase` subclass (`TFRecordReader`, ...), or a callable making one.
ReaderClass = Any
#: A `tf.data.Dataset`.
TFDataset = Any
#: A TensorFlow queue (`tf.queue.FIFOQueue`, `RandomShuffleQueue`, ...).
Queue = Any
#: Feature key -> feature spec, as `tf.io.parse_single_example` takes it.
KeysToFeatures = Mapping[str, FeatureSpec]
#: One feature key, or a list (or tuple) of them.
Keys = Union[str, List[str], Tuple[str, ...]]
#: A file pattern, a file, or a list of them (`parallel_reader.get_data_files`).
DataSources = Union[str, Sequence[str]]
