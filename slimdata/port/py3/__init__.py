"""The Python 3 passes: the breakages old converters carry, fixed where the fix is certain.

One pass per fix, each with a trigger built from its own tables, in this order:

- `collections_abc`: `collections.Iterable` and the other abstract classes -> `collections.abc`;
- `numpy_names`: numpy's names removed in 1.24 and 2.0 -> the builtins / names replacing them;
- `binary_reads`: image bytes read in text mode get mode 'rb' (reported where not certain);
- `pickle_files`: files pickle reads or writes opened in binary mode, Python 2's pickles read
  with `encoding='latin1'`, `numpy.load(path).item()` with `allow_pickle=True`;
- `bytes_literals`: a `str` literal where a `BytesList` needs bytes -> a bytes literal;
- `relative_imports`: Python 2's implicit relative imports of sibling modules made explicit;
- `string_io`: Python 2's `StringIO` holding image bytes -> `io.BytesIO` (else reported);
- `match_decode`: `.decode()` of a str pattern's match group dropped (text in Python 3);
- `dict_views`: `d.iteritems()` and kin -> views, and lists where a Python 2 file needs them;
- `backports`: `import contextlib2` -> Python 3's `contextlib`, `import imp` (gone in Python
  3.12) -> `slimdata.contrib.imp`, when the successor has every name used;
- `scipy_misc`: `scipy.misc`'s names SciPy moved imported from their modules, the removed ones
  (`imread`, `imresize`, ...) reported with what replaces them;
- `python_removals`: standard library names Python 3.7-3.12 removed (`time.clock`,
  `base64.encodestring`, `thread.isAlive()`, `element.getchildren()`, `inspect.getargspec`)
  -> their successors where certain, else reported;
- `empty_list_comparisons`: `x == []` where `x` may be a numpy array (an error since numpy
  1.25) -> `(isinstance(x, list) and x == [])`;
- `opencv_names`: OpenCV 2's names (`cv2.cv.BoxPoints`, `cv2.CV_AA`, ...) -> OpenCV 3's;
- `yaml_load`: `yaml.load(stream)` without a Loader (PyYAML 6) -> with PyYAML 5's FullLoader;
- `open_modes`: mode 'rU' -> 'r' (Python 3.11), Python 2's `file()` -> `open()`;
- `tostring`: `x.tostring()` -> `x.tobytes()` (numpy 2.3, Python 3.9's array, Pillow 3);
- `random_sample`: a set given to `random.sample` -> `tuple(...)` (Python 3.11);
- `font_getsize`: a font's `getsize(text)` -> `getbbox(text)[2:]` (Pillow 10);
- `encoded_comparisons`: a value `.encode()` made compared with what may be text, reported
  (bytes never equal text; in Python 2 it was a str).
"""

from slimdata.port.py3.backports import ModuleSuccessorsPass
from slimdata.port.py3.binary_reads import BinaryReadsPass
from slimdata.port.py3.bytes_literals import BytesLiteralsPass
from slimdata.port.py3.collections_abc import CollectionsAbcPass
from slimdata.port.py3.dict_views import DictViewsPass
from slimdata.port.py3.empty_list_comparisons import EmptyListComparisonsPass
from slimdata.port.py3.encoded_comparisons import EncodedComparisonsPass
from slimdata.port.py3.font_getsize import FontGetsizePass
from slimdata.port.py3.match_decode import MatchDecodePass
from slimdata.port.py3.numpy_names import NumpyNamesPass
from slimdata.port.py3.open_modes import OpenModesPass
from slimdata.port.py3.opencv_names import OpenCVNamesPass
from slimdata.port.py3.pickle_files import PickleFilesPass
from slimdata.port.py3.python_removals import PythonRemovalsPass
from slimdata.port.py3.random_sample import RandomSamplePass
from slimdata.port.py3.relative_imports import RelativeImportsPass
from slimdata.port.py3.scipy_misc import ScipyMiscPass
from slimdata.port.py3.string_io import StringIOPass
from slimdata.port.py3.tostring import ToStringPass
from slimdata.port.py3.yaml_load import YamlLoadPass

#: The passes, in the order they run.
PASSES = (CollectionsAbcPass, NumpyNamesPass, BinaryReadsPass, PickleFilesPass,
          BytesLiteralsPass, RelativeImportsPass, StringIOPass, MatchDecodePass, DictViewsPass,
          ModuleSuccessorsPass, ScipyMiscPass, PythonRemovalsPass, OpenCVNamesPass, YamlLoadPass,
          EmptyListComparisonsPass, OpenModesPass, ToStringPass, RandomSamplePass, FontGetsizePass,
          EncodedComparisonsPass)
