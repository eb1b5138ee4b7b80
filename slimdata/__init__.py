"""slimdata: TF-Slim's data layer, maintained for modern TensorFlow.

Porting old code is a one-line import change::

    from tf_slim.data import dataset_data_provider      # before
    from slimdata import dataset_data_provider          # after

    slim = tf.contrib.slim                              # before
    from slimdata import slim                           # after

The compat modules (``dataset``, ``tfexample_decoder``, ``dataset_data_provider``,
``parallel_reader``, ``prefetch_queue``, ...) need TensorFlow and import it when they are
imported. ``slimdata.records`` and the ``count``/``verify``/``index``/``inspect``/``show``/
``convert`` commands do not, so importing the bare package never loads TensorFlow.

Code you cannot edit keeps ``tf_slim``: ``slimdata.patch_tf_slim()`` (or the start-up hook of
``slimdata patch-tf-slim install``) makes tf_slim's own data code work on modern TensorFlow; see
``slimdata.tf_slim_patch``.
"""

# Not `from typing import TYPE_CHECKING`: the start-up hook imports this package in every
# interpreter, which must not pay for `typing`. Type checkers treat any TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:  # for type checkers only: at run time these are loaded by __getattr__
    from slimdata.tf_slim_patch import patch_tf_slim  # noqa: F401
    from slimdata.version import __version__  # noqa: F401


def __getattr__(name: str) -> 'object':
    # Loaded on first use: patch_tf_slim, so that `import slimdata` stays free of TensorFlow;
    # __version__ (from slimdata.version), so that the start-up hook, which imports this
    # package in every interpreter, loads no more than it needs.
    if name == 'patch_tf_slim':
        from slimdata.tf_slim_patch import patch_tf_slim
        return patch_tf_slim
    if name == '__version__':
        from slimdata.version import __version__
        return __version__
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
