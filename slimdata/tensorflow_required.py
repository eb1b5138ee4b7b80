"""What slimdata says when TensorFlow is not installed: one line naming what needs it and the
command that installs it.

slimdata installs without TensorFlow ("bring your own build"), and its converters and TFRecord
tools run without it. What needs it (the compat API, `from slimdata import slim`,
`slimdata port`'s tf_upgrade_v2 pass, tf_slim's patch) says so here before it starts, rather
than with tf_slim's bare `No module named 'tensorflow'` or a traceback halfway through. A leaf
module: it imports nothing of slimdata, and TensorFlow only when asked to.
"""

import importlib

#: The command that installs what slimdata needs (it is not on PyPI, so not slimdata[cpu]).
INSTALL_COMMAND = "pip install 'tensorflow-cpu>=2.16'"


class TensorFlowMissing(ModuleNotFoundError):
    """TensorFlow is not installed; the message says what needs it and how to install it.

    A ModuleNotFoundError for the name 'tensorflow', so code that handles a missing
    TensorFlow that way (`except ImportError`, `error.name == 'tensorflow'`) still does.
    """

    def __init__(self, needed_by: str):
        """needed_by: what cannot run without TensorFlow, as the user named it."""
        super().__init__(message(needed_by), name='tensorflow')


def message(needed_by: str) -> str:
    """The one line: `needed_by` needs TensorFlow, and the commands that install it."""
    return (f'{needed_by} needs TensorFlow, which is not installed: {INSTALL_COMMAND} (or '
            "'tensorflow[and-cuda]>=2.16' for a GPU; in slimdata's checkout, pip install -e "
            "'.[cpu]'). The converters and slimdata count|verify|inspect|index|show run "
            'without it.')


def import_tensorflow(needed_by: str):
    """Returns the `tensorflow` module, or raises TensorFlowMissing naming `needed_by`.

    It imports TensorFlow rather than only looking for it: what calls this uses it next, and a
    TensorFlow that is there but cannot be imported is told apart (its own error goes on).
    """
    try:
        return importlib.import_module('tensorflow')
    except ModuleNotFoundError as error:
        if error.name != 'tensorflow':
            raise
        raise TensorFlowMissing(needed_by) from None


def require(needed_by: str) -> None:
    """Raises TensorFlowMissing, naming `needed_by`, when TensorFlow is not installed."""
    import_tensorflow(needed_by)
