"""slimdata: TF-Slim's data layer, maintained for modern TensorFlow.

Porting old code is a one-line import change::

    from tf_slim.data import dataset_data_provider      # before
    from slimdata import dataset_data_provider          # after

    slim = tf.contrib.slim                              # before
    from slimdata import slim                           # after

The compat modules (``dataset``, ``tfexample_decoder``, ``dataset_data_provider``,
``parallel_reader``, ``prefetch_queue``, ...) need TensorFlow and import it when they are
imported. ``slimdata.records.tfrecord`` and the ``count``/``verify``/``index`` commands do not, so
importing the bare package never loads TensorFlow.
"""

__version__ = '0.1.0'
