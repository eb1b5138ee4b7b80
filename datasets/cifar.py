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

Unpickling runs code named by the file, so these files are read with an unpickler that allows
only what the real batches contain (numpy arrays, dicts, lists, bytes and str): a file that
asks for anything else is refused, naming it, before anything in it runs.
"""

import argparse
import io
import os
import pickle
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from slimdata.cli import common as arguments
from slimdata.datasets import classification, convert_utils
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

# What the published batches' pickles name: numpy's array reconstruction (numpy 1 and 2
# spell its module differently) and, in protocol-2 pickles written by Python 3, the codec
# call that rebuilds bytes.
_ALLOWED_GLOBALS = frozenset({
    ('numpy.core.multiarray', '_reconstruct'), ('numpy._core.multiarray', '_reconstruct'),
    ('numpy', 'ndarray'), ('numpy', 'dtype'), ('_codecs', 'encode'),
})


class _BatchUnpickler(pickle.Unpickler):
    """Loads only numpy arrays and plain containers; anything else raises naming `path`."""

    def __init__(self, file: io.BytesIO, path: str):
        super().__init__(file, encoding='bytes')
        self._path = path

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED_GLOBALS:
            raise ValueError(f'{self._path}: the pickle asks for {module}.{name}, which a CIFAR '
                             'batch does not contain; refused (unpickling it could run code)')
        return super().find_class(module, name)


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
    except (pickle.UnpicklingError, EOFError, TypeError, AttributeError, IndexError,
            UnicodeDecodeError) as error:
        raise ValueError(f'{path}: not a CIFAR python pickle ({type(error).__name__}: '
                         f'{error})') from error
    if not isinstance(loaded, dict):
        raise ValueError(f'{path}: holds a {type(loaded).__name__}, expected a dict')
    return loaded


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
    return {index: name.decode('utf-8') if isinstance(name, bytes) else str(name)
            for index, name in enumerate(names)}


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


def convert_cifar(dataset: str, src: str, output_dir: str, label_mode: str = 'fine',
                  validation_ratio: float = 0.0, seed: Optional[int] = 0, num_shards: int = 1,
                  workers: int = 1, overwrite: bool = False,
                  beam_options: Optional[Sequence[str]] = None,
                  **source_options: Any) -> Dict[str, WriteSummary]:
    """Converts CIFAR-10 or CIFAR-100's python batches to 'train' and 'test' (+ validation).

    Args:
      dataset: 'cifar10' or 'cifar100'.
      src: the unpacked folder, or the folder holding it.
      output_dir: the folder of the shards, `dataset_info.json` and `labels.txt`.
      label_mode: CIFAR-100's 'fine' (100 classes, the default) or 'coarse' (20
        superclasses); CIFAR-10 has only 'fine'.
      validation_ratio: the share of the training images held out as 'validation'; 0 (the
        default) keeps the published train/test splits.
      seed: the seed of the split and of the order in the shards; None keeps the files'.
      num_shards, workers, overwrite, beam_options: see
        `classification.convert_mnist_idx`.
      **source_options: `follow_symlinks`, `max_file_bytes` (see
        `convert_utils.SourcePolicy`; the unpacked folder is the root).

    Returns:
      split -> its WriteSummary.
    """
    if dataset not in LAYOUTS:
        raise ValueError(f'unknown CIFAR dataset {dataset!r}; expected one of {sorted(LAYOUTS)}')
    layout = LAYOUTS[dataset]
    if label_mode not in layout.label_keys:
        raise ValueError(f'label_mode {label_mode!r} is not one of {dataset}\'s: '
                         f'{sorted(layout.label_keys)}')
    folder = find_source_folder(src, dataset)
    policy = convert_utils.SourcePolicy(folder, **source_options)
    label_key, names_key = layout.label_keys[label_mode]
    labels_to_names = read_label_names(os.path.join(folder, layout.meta_file), names_key,
                                       policy)
    pairs, files = {}, []
    for split, names in layout.split_files.items():
        pairs[split] = []
        for name in names:
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
        classification.encode_pixels, output_dir, num_shards, workers, labels_to_names,
        options, lambda pair: files, overwrite, beam_options,
        extra={'label_mode': label_mode})


# ----------------------------------------------------------------------------------------
# Command line (wired into `slimdata convert cifar10|cifar100` by the CLI)


def _add_arguments(parser: argparse.ArgumentParser, dataset: str) -> None:
    layout = LAYOUTS[dataset]
    parser.description = (
        f'Convert the {dataset} "python version" pickle batches to slim classification '
        'TFRecords (32x32 PNGs; train and test splits), the records of models/research/slim\'s '
        f'download_and_convert_cifar10.py. SRC: {layout.folder}/ (or the folder holding it) '
        f'with {", ".join(sum(layout.split_files.values(), ()))} and {layout.meta_file}. Only '
        'numpy arrays and plain containers are unpickled.')
    convert_utils.add_source_and_output(parser, f'the {layout.folder} folder (or its parent)')
    if len(layout.label_keys) > 1:
        parser.add_argument('--label-mode', choices=LABEL_MODES, default='fine',
                            help='fine: the 100 classes; coarse: the 20 superclasses '
                                 '(default: %(default)s)')
    parser.add_argument('--validation-ratio', type=arguments.ratio, default=0.0,
                        help='share of the training images held out as a validation split '
                             '(default: %(default)s, the published train/test)')
    convert_utils.add_writer_arguments(parser, default_num_shards=1)


def add_cifar10_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds the options of `run_cifar10` to `parser`."""
    _add_arguments(parser, 'cifar10')


def add_cifar100_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds the options of `run_cifar100` to `parser`."""
    _add_arguments(parser, 'cifar100')


def _run(dataset: str, args: argparse.Namespace) -> Dict[str, WriteSummary]:
    return convert_utils.print_summaries(convert_cifar(
        dataset, args.src, args.output_dir, label_mode=getattr(args, 'label_mode', 'fine'),
        validation_ratio=args.validation_ratio, seed=args.seed, num_shards=args.num_shards,
        workers=args.workers, overwrite=args.overwrite,
        beam_options=convert_utils.beam_options_from_args(args),
        **convert_utils.source_options_from_args(args)))


def run_cifar10(args: argparse.Namespace) -> Dict[str, WriteSummary]:
    """Runs `convert_cifar('cifar10', ...)` with the parsed options, printing the summaries."""
    return _run('cifar10', args)


def run_cifar100(args: argparse.Namespace) -> Dict[str, WriteSummary]:
    """Runs `convert_cifar('cifar100', ...)` with the parsed options, printing the summaries."""
    return _run('cifar100', args)
