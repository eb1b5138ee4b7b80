"""The record layer: TFRecord files, Examples, the sharded writer and dataset_info.json.

Nothing in this package imports TensorFlow when it is imported (a test enforces it), so the
converters' worker processes and `slimdata count|verify|index` start in a fraction of a second
and run where TensorFlow is not installed. TensorFlow is imported, when first needed, only for
paths with a URL scheme (`gs://`, `ram://`: `tf.io.gfile` serves them) and by the helpers that
return `tf.train` protos.
"""
