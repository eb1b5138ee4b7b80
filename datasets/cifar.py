"""CIFAR-10 and CIFAR-100 from their "python version" pickle batches -> slim records.

Source layouts (as published by the University of Toronto, unpacked)::

    cifar-10-batches-py/   data_batch_1 ... data_batch_5, test_batch, batches.meta
    cifar-100-python/      train, test, meta

Each batch is a pickled dict with bytes keys: b'data', a uint8 array [N, 3072] whose rows are
the 32x32 red, green and blue planes one after the other; the labels (b'labels' for CIFAR-10;
b'fine_labels' and b'coarse_labels' for CIFAR-100), one per row. The meta file holds the label
names (b'label_names'; b'fine_label_names', b'coarse_label_names'). SRC may be that folder or
the folder holding it.

The records are those of models/research/slim's `download_and_convert_cifar10.py` (each image
a 32x32x3 PNG, `image/format` b'png', `image/class/label`, `image/height`, `image/width`), so
the `cifar10` / `cifar100` descriptors of `slimdata.datasets.classification` read them, and so
does slim's own cifar10 reader with `file_pattern='%s-*.tfrecord'`. Splits: 'train' and
'test' (and 'validation', held out of train with `validation_ratio`).

Unpickling calls functions the file names, so these files are read with an unpickler that
builds only what the real batches hold (dicts, lists, bytes, str, numbers, and numpy arrays
and scalars of numbers) and calls none of numpy's functions: an array is made from bytes
that are in the file, only after their length is checked against its shape and type (so a
few bytes cannot declare a 10^13-row array, or ask numpy for uninitialised memory), and a
numpy scalar (an `int64` label) is read from its bytes. A file that asks for anything else is
refused, naming it, before anything in it runs.
"""

import io
import math
import os
import pickle
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from slimdata.datasets import classification, convert_utils
from slimdata.deprecation import renamed_argument, warn_renamed
from slimdata.records.writer import WriteSummary

IMAGE_SIZE = 32
_ROW_BYTES = IMAGE_SIZE * IMAGE_SIZE * 3


class CifarLayout:
    """Where one CIFAR variant keeps its batches, labels and label names.

    Attributes:
      folder: the name of the unpacked folder.
      split_files: record split -> its batch files, in order.
      meta_file: the file of the label names.
      label_keys: label mode -> (the batches' label key, the meta file's names key).
    """

    def __init__(self, folder: str, split_files: Dict[str, Tuple[str, ...]], meta_file: str,
                 label_keys: Dict[str, Tuple[bytes, bytes]]):
        self.folder = folder
        self.split_files = split_files
        self.meta_file = meta_file
        self.label_keys = label_keys


LAYOUTS = {
    'cifar10': CifarLayout(
        'cifar-10-batches-py',
        {'train': tuple(f'data_batch_{i}' for i in range(1, 6)), 'test': ('test_batch',)},
        'batches.meta', {'fine': (b'labels', b'label_names')}),
    'cifar100': CifarLayout(
        'cifar-100-python', {'train': ('train',), 'test': ('test',)}, 'meta',
        {'fine': (b'fine_labels', b'fine_label_names'),
         'coarse': (b'coarse_labels', b'coarse_label_names')}),
}
LABEL_MODES = ('fine', 'coarse')


# ----------------------------------------------------------------------------------------
# The restricted unpickler

#: The numpy types an array or scalar of a batch may have (numbers only: an object array
#: would unpickle further objects).
_NUMBER_TYPES = frozenset(f'{kind}{size}' for kind, sizes in (('u', '1248'), ('i', '1248'),
                                                              ('f', '48')) for size in sizes)
#: More dimensions than any batch has: a bound on the shapes a file may declare.
_MAX_DIMENSIONS = 8
#: numpy's array reconstruction and its scalar one live in `numpy.core.multiarray` (numpy 1)
#: or `numpy._core.multiarray` (numpy 2), and protocol 5 arrays in `...numeric`.
_NUMPY_CORE = ('numpy.core', 'numpy._core')


class _RefusedPickle(ValueError):
    """The pickle asks for something a CIFAR batch never holds; the message names the file."""


class _NdarrayName:
    """What `numpy.ndarray` names in a batch: only the type argument of numpy's array
    reconstruction. Calling it (`numpy.ndarray(shape, dtype)`) would make an array of
    uninitialised memory whose size the file chooses: refused."""

    def __init__(self, path: str):
        self._path = path

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise _RefusedPickle(f'{self._path}: the pickle calls numpy.ndarray{_short(args)} '
                             'directly, which makes an array whose bytes are not in the file; '
                             'refused (not a CIFAR batch)')


class _DType:
    """A numpy dtype named by the file: a number type and its byte order, nothing more."""

    def __init__(self, path: str, code: str):
        self._path = path
        self.code = code
        self.byte_order = '='

    def __setstate__(self, state: Any) -> None:
        # numpy's dtype state: (version, byte order, subarray, names, fields, element size,
        # alignment, flags[, metadata]); a number type has no subarray, names or fields.
        if not (isinstance(state, tuple) and len(state) >= 5 and state[1] in ('<', '>', '|', '=')
                and state[2:5] == (None, None, None)):
            raise _RefusedPickle(f'{self._path}: the pickle gives the numpy type {self.code} '
                                 f'the state {_short(state)}, which no number type has')
        self.byte_order = state[1]

    def __repr__(self) -> str:
        return f'dtype({self.code!r})'

    def dtype(self) -> np.dtype:
        dtype = np.dtype(self.code)
        if self.byte_order == '<':
            return dtype.newbyteorder('<')
        return dtype.newbyteorder('>') if self.byte_order == '>' else dtype


class _ArrayState:
    """An array being unpickled: numpy's `_reconstruct` makes an empty one, and the state that
    follows gives its shape, type and bytes; the array is made from those bytes when they
    are exactly what the shape and type need."""

    def __init__(self, path: str):
        self._path = path
        self.array: Optional[np.ndarray] = None

    def __setstate__(self, state: Any) -> None:
        if not (isinstance(state, tuple) and len(state) == 5):
            raise _RefusedPickle(f'{self._path}: a numpy array with the state {_short(state)}; '
                                 'expected (version, shape, dtype, fortran order, bytes)')
        _, shape, dtype, fortran, data = state
        self.array = _array_from_bytes(self._path, data, dtype, shape, fortran is True)


def _array_from_bytes(path: str, data: Any, dtype: Any, shape: Any,
                      fortran_order: bool = False) -> np.ndarray:
    """The array of `shape` and `dtype` over the bytes `data` of the file (no copy)."""
    if not isinstance(dtype, _DType):
        raise _RefusedPickle(f'{path}: a numpy array of type {_short(dtype)}; a CIFAR batch '
                             'holds arrays of numbers')
    if not (isinstance(shape, tuple) and len(shape) <= _MAX_DIMENSIONS
            and all(type(size) is int and size >= 0 for size in shape)):
        raise _RefusedPickle(f'{path}: a numpy array of shape {_short(shape)}; expected at most '
                             f'{_MAX_DIMENSIONS} sizes, each a whole number')
    if not isinstance(data, (bytes, bytearray)):
        raise _RefusedPickle(f'{path}: a numpy array whose data is a {type(data).__name__}, '
                             'not bytes in the file')
    needed = math.prod(shape) * np.dtype(dtype.code).itemsize  # Python integers: no overflow
    if needed != len(data):
        raise _RefusedPickle(f'{path}: a numpy array of shape {shape} and type {dtype.code} '
                             f'needs {needed:,} bytes; the file holds {len(data):,} for it')
    return np.frombuffer(data, dtype.dtype()).reshape(shape, order='F' if fortran_order else 'C')


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + '...'


class _BatchUnpickler(pickle.Unpickler):
    """Builds only numbers, bytes, str, containers, and numpy arrays and scalars of numbers
    from bytes in the file; anything else raises, naming `path` (see the module docstring)."""

    def __init__(self, file: io.BytesIO, path: str):
        super().__init__(file, encoding='bytes')
        self._path = path

    def find_class(self, module: str, name: str) -> Any:
        found = {('numpy', 'ndarray'): _NdarrayName(self._path), ('numpy', 'dtype'): self._dtype,
                 ('_codecs', 'encode'): self._encode}.get((module, name))
        if found is None and module.rpartition('.')[0] in _NUMPY_CORE:
            found = {'multiarray._reconstruct': self._reconstruct,
                     'multiarray.scalar': self._scalar,
                     'numeric._frombuffer': self._frombuffer}.get(
                         f'{module.rpartition(".")[2]}.{name}')
        if found is None:
            raise _RefusedPickle(f'{self._path}: the pickle asks for {module}.{name}, which a '
                                 'CIFAR batch does not contain; refused (unpickling it could '
                                 'run code)')
        return found

    # What the names above stand for while this file is unpickled: each checks its arguments
    # and builds data, never calling into numpy with what the file chose.

    def _dtype(self, code: Any, align: Any = False, copy: Any = True) -> _DType:
        if code not in _NUMBER_TYPES:
            raise _RefusedPickle(f'{self._path}: the pickle asks for the numpy type '
                                 f'{_short(code)}; a CIFAR batch holds numbers '
                                 f'({", ".join(sorted(_NUMBER_TYPES))})')
        return _DType(self._path, code)

    def _reconstruct(self, subtype: Any, shape: Any, code: Any) -> _ArrayState:
        # numpy pickles an array as `_reconstruct(ndarray, (0,), b'b')` and then its state.
        if not isinstance(subtype, _NdarrayName) or shape != (0,) or code != b'b':
            raise _RefusedPickle(f'{self._path}: numpy\'s array reconstruction called with '
                                 f'{_short((subtype, shape, code))}, not as numpy pickles an '
                                 'array')
        return _ArrayState(self._path)

    def _frombuffer(self, data: Any, dtype: Any, shape: Any, order: Any) -> np.ndarray:
        # An array pickled with protocol 5: its bytes in the pickle, then type and shape.
        return _array_from_bytes(self._path, data, dtype, shape, order == 'F')

    def _scalar(self, dtype: Any, data: Any) -> Union[int, float]:
        # A numpy scalar (an int64 label) is its type and its bytes: read as a Python number.
        array = _array_from_bytes(self._path, data, dtype, (1,))
        return array[0].item()

    def _encode(self, text: Any, encoding: Any = 'utf-8') -> bytes:
        # Python 3 pickles bytes for protocol 2 as `_codecs.encode(text, 'latin1')`; other
        # codecs (zlib, hex...) would let a few bytes of file expand or run codec code.
        if not isinstance(text, str) or encoding not in ('latin1', 'latin-1'):
            raise _RefusedPickle(f'{self._path}: the pickle asks for _codecs.encode with '
                                 f'{_short((text, encoding))}; only bytes pickled as latin-1 '
                                 'text are read')
        return text.encode('latin-1')


def _materialized(value: Any, path: str) -> Any:
    """`value` with the arrays of its top level and of its lists made (see `_ArrayState`)."""
    if isinstance(value, _ArrayState):
        if value.array is None:
            raise _RefusedPickle(f'{path}: a numpy array without its shape, type and bytes')
        return value.array
    if isinstance(value, list):
        return [_materialized(element, path) if isinstance(element, _ArrayState) else element
                for element in value]
    return value


def find_source_folder(src: str, dataset: str) -> str:
    """`src` itself if it holds the batches of `dataset`, else its `cifar-...` subfolder.

    Raises:
      ValueError: if neither holds the meta file.
    """
    layout = LAYOUTS[dataset]
    for folder in (src, os.path.join(src, layout.folder)):
        if os.path.isfile(os.path.join(folder, layout.meta_file)):
            return folder
    raise ValueError(f'{src} holds neither {layout.meta_file} nor {layout.folder}/: not the '
                     f'{dataset} python batches (expected {layout.folder}/ with '
                     f'{", ".join(sum(layout.split_files.values(), ()))} and '
                     f'{layout.meta_file})')


def load_pickle(path: str, policy: convert_utils.SourcePolicy) -> Dict[bytes, Any]:
    """A batch or meta file's dict, read through `policy` and the restricted unpickler.

    Raises:
      ValueError: naming the file, if it is not such a pickle.
    """
    data = policy.read(path)
    try:
        loaded = _BatchUnpickler(io.BytesIO(data), path).load()
    except _RefusedPickle:
        raise
    except (pickle.UnpicklingError, EOFError, TypeError, AttributeError, IndexError, KeyError,
            ValueError, OverflowError, UnicodeDecodeError, RecursionError, MemoryError) as error:
        raise ValueError(f'{path}: not a CIFAR python pickle ({type(error).__name__}: '
                         f'{_short(str(error), 200)})') from None
    if not isinstance(loaded, dict):
        raise ValueError(f'{path}: holds a {type(loaded).__name__}, expected a dict')
    return {key: _materialized(value, path) for key, value in loaded.items()}


def _entry(batch: Dict[bytes, Any], key: bytes, path: str) -> Any:
    if key not in batch:
        raise ValueError(f'{path}: no {key!r} in it (keys: {sorted(batch)})')
    return batch[key]


def read_label_names(path: str, names_key: bytes,
                     policy: convert_utils.SourcePolicy) -> Dict[int, str]:
    """label id -> name, from the meta file."""
    names = _entry(load_pickle(path, policy), names_key, path)
    if not isinstance(names, list) or not names:
        raise ValueError(f'{path}: {names_key!r} is not a list of names')
    labels_to_names = {}
    for index, name in enumerate(names):
        if not isinstance(name, (bytes, str)):
            raise ValueError(f'{path}: {names_key!r}[{index}] is a {type(name).__name__}, '
                             'expected a name')
        try:
            text = name.decode('utf-8') if isinstance(name, bytes) else name
        except UnicodeDecodeError as error:
            raise ValueError(f'{path}: {names_key!r}[{index}] = {name[:40]!r} is not UTF-8 '
                             f'text ({error.reason})') from None
        labels_to_names[index] = convert_utils.label_name(
            text, path, f'class name {names_key.decode()}[{index}]')
    return labels_to_names


def read_batch(path: str, label_key: bytes, num_classes: int,
               policy: convert_utils.SourcePolicy) -> List[Tuple[np.ndarray, int]]:
    """The (32x32x3 uint8 pixels, label) pairs of one batch file, checked.

    Raises:
      ValueError: naming the file and key, for a data array of another type or shape, a
        label count that differs from the rows, or a label outside [0, num_classes).
    """
    batch = load_pickle(path, policy)
    data = _entry(batch, b'data', path)
    if not (isinstance(data, np.ndarray) and data.dtype == np.uint8 and data.ndim == 2
            and data.shape[1] == _ROW_BYTES):
        found = (f'{data.dtype} array of shape {data.shape}' if isinstance(data, np.ndarray)
                 else type(data).__name__)
        raise ValueError(f"{path}: b'data' is a {found}, expected a uint8 array [N, "
                         f'{_ROW_BYTES}] (rows of 32x32 R, G and B planes)')
    labels = np.asarray(_entry(batch, label_key, path))
    if labels.shape != (len(data),) or labels.dtype.kind not in 'iu':
        raise ValueError(f'{path}: {label_key!r} holds {labels.shape} {labels.dtype} values, '
                         f'expected {len(data)} integer labels, one per row of b\'data\'')
    bad = np.flatnonzero((labels < 0) | (labels >= num_classes))
    if bad.size:
        raise ValueError(f'{path}: {label_key!r}[{bad[0]}] is {labels[bad[0]]}, outside 0..'
                         f'{num_classes - 1}')
    pixels = data.reshape(-1, 3, IMAGE_SIZE, IMAGE_SIZE).transpose(0, 2, 3, 1)
    return [(np.ascontiguousarray(image), int(label)) for image, label in zip(pixels, labels)]


@renamed_argument('workers', 'processes')
def convert_cifar10(src: str, output_dir: str, validation_ratio: float = 0.0,
                    seed: Optional[int] = 0, splits: Optional[Union[str, Sequence[str]]] = None,
                    num_shards: Optional[int] = None, processes: int = 1,
                    overwrite: bool = False, beam_options: Optional[Sequence[str]] = None,
                    **source_options: Any) -> Dict[str, WriteSummary]:
    """Converts CIFAR-10's python batches to 'train' and 'test' (and 'validation').

    Args:
      src: the unpacked cifar-10-batches-py folder, or the folder holding it.
      output_dir: the folder of the shards, `dataset_info.json` and `labels.txt`.
      validation_ratio: the share of the training images held out as 'validation'; 0 (the
        default) keeps the published train/test splits.
      seed: the seed of the split and of the order in the shards; None keeps the files'.
      splits, num_shards, processes, overwrite, beam_options: see
        `classification.convert_image_folder` (the splits are 'train', 'validation' with a
        validation ratio, and 'test').
      **source_options: `follow_symlinks`, `max_file_bytes` (see
        `convert_utils.SourcePolicy`; the unpacked folder is the root).

    Returns:
      split -> its WriteSummary.
    """
    return _convert('cifar10', src, output_dir, 'fine', validation_ratio, seed, splits,
                    num_shards, processes, overwrite, beam_options, source_options)


@renamed_argument('workers', 'processes')
def convert_cifar100(src: str, output_dir: str, label_mode: str = 'fine',
                     validation_ratio: float = 0.0, seed: Optional[int] = 0,
                     splits: Optional[Union[str, Sequence[str]]] = None,
                     num_shards: Optional[int] = None, processes: int = 1,
                     overwrite: bool = False, beam_options: Optional[Sequence[str]] = None,
                     **source_options: Any) -> Dict[str, WriteSummary]:
    """Converts CIFAR-100's python batches to 'train' and 'test' (and 'validation').

    Args:
      src: the unpacked cifar-100-python folder, or the folder holding it.
      label_mode: 'fine' (100 classes, the default) or 'coarse' (20 superclasses).
      The others: see `convert_cifar10`.

    Returns:
      split -> its WriteSummary.
    """
    return _convert('cifar100', src, output_dir, label_mode, validation_ratio, seed, splits,
                    num_shards, processes, overwrite, beam_options, source_options)


def convert_cifar(dataset: str, src: str, output_dir: str, **options: Any
                  ) -> Dict[str, WriteSummary]:
    """Deprecated: `convert_cifar10(src, ...)` or `convert_cifar100(src, ...)`."""
    if dataset not in LAYOUTS:
        raise ValueError(f'unknown CIFAR dataset {dataset!r}; expected one of {sorted(LAYOUTS)}')
    warn_renamed(f'convert_cifar({dataset!r}, ...)', f'convert_{dataset}(...)')
    convert = convert_cifar10 if dataset == 'cifar10' else convert_cifar100
    return convert(src, output_dir, **options)


def _convert(dataset: str, src: str, output_dir: str, label_mode: str,
             validation_ratio: float, seed: Optional[int],
             splits: Optional[Union[str, Sequence[str]]], num_shards: Optional[int],
             processes: int, overwrite: bool, beam_options: Optional[Sequence[str]],
             source_options: Dict[str, Any]) -> Dict[str, WriteSummary]:
    layout = LAYOUTS[dataset]
    if label_mode not in layout.label_keys:
        raise ValueError(f'label_mode {label_mode!r} is not one of {dataset}\'s: '
                         f'{sorted(layout.label_keys)}')
    folder = find_source_folder(src, dataset)
    held = ['train', 'validation', 'test'] if validation_ratio > 0 else ['train', 'test']
    selected = convert_utils.select_splits(
        held, splits, folder if validation_ratio > 0 else f'{folder} with a validation ratio '
                                                           'of 0')
    policy = convert_utils.SourcePolicy(folder, **source_options)
    label_key, names_key = layout.label_keys[label_mode]
    labels_to_names = read_label_names(os.path.join(folder, layout.meta_file), names_key,
                                       policy)
    needed = {'train' if split == 'validation' else split for split in selected}
    pairs: Dict[str, List[Tuple[np.ndarray, int]]] = {'train': [], 'test': []}
    files = []
    for split in [split for split in layout.split_files if split in needed]:
        for name in layout.split_files[split]:
            path = os.path.join(folder, name)
            pairs[split] += read_batch(path, label_key, len(labels_to_names), policy)
            files.append(path)
    train, validation = convert_utils.split_train_validation(pairs['train'], validation_ratio,
                                                             seed)
    options = {'converter': dataset, 'label_mode': label_mode,
               'validation_ratio': validation_ratio, 'seed': seed, **policy.options()}
    return classification.write_splits(
        dataset, {'train': train, 'validation': validation,
                  'test': convert_utils.deterministic_shuffle(pairs['test'], seed)},
        selected, classification.encode_pixels, output_dir, num_shards, processes,
        labels_to_names, options, lambda pair: files, overwrite, beam_options,
        extra={'label_mode': label_mode}, size_of=classification.pixel_bytes)
