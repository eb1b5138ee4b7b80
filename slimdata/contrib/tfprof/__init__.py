"""`tf.contrib.tfprof`: its `model_analyzer` on TensorFlow's `tf.compat.v1.profiler`."""
