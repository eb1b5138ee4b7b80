"""Stand-ins for `tf.contrib` modules and names without a successor, by import.

`from slimdata.contrib.unavailable import quantize as contrib_quantize` binds
`Unavailable('tensorflow.contrib.quantize')` (a name deeper down is spelled with `__` for each
dot: `quantize__python__quant_ops`). `slimdata port` writes such a line where old code
imported a contrib name that has no successor and that the file still uses: one import line
for one import line, so the script runs until it reaches a use (see `Unavailable`).
"""

from slimdata.contrib import Unavailable


def attribute_for(name: str) -> str:
    """The attribute of this module that stands for `tensorflow.contrib.<...>` `name`."""
    return name[len('tensorflow.contrib.'):].replace('.', '__')


def __getattr__(attribute: str) -> Unavailable:
    if attribute.startswith('__'):
        raise AttributeError(attribute)
    return Unavailable('tensorflow.contrib.' + attribute.replace('__', '.'))
