"""The Python 2 semantics passes: what 2to3 leaves, in files written for Python 2.

They run after the Python 2 stage (`slimdata.port.python2`) marked a file Python 2
(`Context.python_2`):

- `division`: `/` of integers floors, as in Python 2 (`//`, or `slimdata.contrib.py2.old_div`
  where the operands' types are known only when the code runs);
- `text_bytes`: values given to a `BytesList` or a `*bytes*_feature` helper encoded as UTF-8
  where they may be text (`slimdata.contrib.py2.to_bytes`), and Python 2 byte strings
  (`'\\xef\\xbb\\xbf'`) compared with what is now text reported;
- `matplotlib_use`: `matplotlib.use(backend)` given matplotlib 2's `force=False` (matplotlib 3
  raises where 2 warned: 'TkAgg' without a display).
"""

from slimdata.port.py2.division import DivisionPass
from slimdata.port.py2.matplotlib_use import MatplotlibUsePass
from slimdata.port.py2.text_bytes import TextBytesPass

#: The passes, in the order they run.
PASSES = (DivisionPass, TextBytesPass, MatplotlibUsePass)
