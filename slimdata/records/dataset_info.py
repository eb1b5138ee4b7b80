"""`dataset_info.json` and `labels.txt`: what a converter records beside its shards.

Split sizes and label names live next to the data (as TensorFlow Datasets does it), so a
descriptor never hard-codes what the writer knows. The layout of `dataset_info.json`::

    {
      "name": "pascalvoc_2007",
      "slimdata_version": "0.1.0",
      "splits": {
        "train": {"num_examples": 5011,
                  "shards": [{"file": "train-00000-of-00004.tfrecord", "num_records": 1253}, ...]}
      },
      "labels_to_names": {"0": "none", "1": "aeroplane", ...},
      "keys_to_features": {"image/encoded": {"kind": "FixedLen", "dtype": "string",
                                             "shape": [], "default_value": ""}, ...},
      "extra": {"num_classes": 21, "ignore_label": 255}
    }

This module imports no TensorFlow (``slimdata verify`` reads it); only
`keys_to_features_from_json` needs TensorFlow, and imports it when called.
"""

import json
import os
from typing import Any, Dict, Iterable, Mapping, Optional

from slimdata import __version__

DATASET_INFO_FILENAME = 'dataset_info.json'
LABELS_FILENAME = 'labels.txt'

_KINDS = {'FixedLenFeature': 'FixedLen', 'VarLenFeature': 'VarLen'}


def _default_to_json(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode('utf-8', errors='replace')
    if hasattr(value, 'tolist'):  # numpy scalars and arrays
        return value.tolist()
    return value


def keys_to_features_to_json(keys_to_features: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Describes `tf.io.FixedLenFeature` / `VarLenFeature` specs as plain JSON data."""
    described = {}
    for key, spec in keys_to_features.items():
        kind = _KINDS.get(type(spec).__name__)
        if kind is None:
            raise ValueError(f'keys_to_features[{key!r}] is a {type(spec).__name__}; only '
                             'FixedLenFeature and VarLenFeature can be recorded')
        entry = {'kind': kind, 'dtype': spec.dtype.name}
        if kind == 'FixedLen':
            entry['shape'] = [int(d) for d in spec.shape]
            entry['default_value'] = _default_to_json(spec.default_value)
        described[key] = entry
    return described


def keys_to_features_from_json(described: Mapping[str, Mapping[str, Any]]) -> Dict[str, Any]:
    """The inverse of `keys_to_features_to_json`: builds the `tf.io` feature specs."""
    from slimdata._tf import tf
    features = {}
    for key, entry in described.items():
        dtype = tf.as_dtype(entry['dtype'])
        if entry['kind'] == 'VarLen':
            features[key] = tf.io.VarLenFeature(dtype)
        elif entry['kind'] == 'FixedLen':
            features[key] = tf.io.FixedLenFeature(entry['shape'], dtype,
                                                  default_value=entry.get('default_value'))
        else:
            raise ValueError(f'keys_to_features[{key!r}] has unknown kind {entry["kind"]!r}; '
                             'expected FixedLen or VarLen')
    return features


def write_dataset_info(output_dir: str, name: str,
                       splits: Mapping[str, Iterable[Mapping[str, Any]]],
                       labels_to_names: Optional[Mapping[int, str]] = None,
                       keys_to_features: Optional[Mapping[str, Any]] = None,
                       extra: Optional[Mapping[str, Any]] = None) -> str:
    """Writes (or updates) `dataset_info.json`, and `labels.txt` when labels are given.

    Args:
      output_dir: the folder that holds the shards.
      name: the dataset's name, as `dataset_factory` knows it.
      splits: split name -> its shards, each `{"file": basename, "num_records": n}`.
        Splits already recorded in an existing file and not named here are kept, so
        converting `train` and then `val` into one folder records both.
      labels_to_names: label id -> class name.
      keys_to_features: the `tf.io` feature specs that read the records back.
      extra: anything else a descriptor needs (num_classes, ignore_label, ...).

    Returns:
      The path of `dataset_info.json`.
    """
    info = read_dataset_info(output_dir) or {}
    recorded_splits = dict(info.get('splits', {}))
    for split, shards in splits.items():
        shards = [{'file': s['file'], 'num_records': int(s['num_records'])} for s in shards]
        recorded_splits[split] = {'num_examples': sum(s['num_records'] for s in shards),
                                  'shards': shards}
    info.update({'name': name, 'slimdata_version': __version__, 'splits': recorded_splits})
    if labels_to_names is not None:
        info['labels_to_names'] = {str(k): v for k, v in sorted(labels_to_names.items())}
        write_labels_file(labels_to_names, output_dir)
    if keys_to_features is not None:
        info['keys_to_features'] = keys_to_features_to_json(keys_to_features)
    if extra is not None:
        info['extra'] = dict(extra)
    path = os.path.join(output_dir, DATASET_INFO_FILENAME)
    _atomic_write_text(path, json.dumps(info, indent=2, sort_keys=True) + '\n')
    return path


def read_dataset_info(dataset_dir: str) -> Optional[Dict[str, Any]]:
    """Returns the parsed `dataset_info.json` of `dataset_dir`, or None if there is none."""
    path = os.path.join(dataset_dir, DATASET_INFO_FILENAME)
    if not os.path.exists(path):
        return None
    with open(path, 'rb') as f:
        try:
            return json.loads(f.read())
        except json.JSONDecodeError as error:
            raise ValueError(f'{path} is not valid JSON: {error}') from error


def split_sizes(info: Mapping[str, Any]) -> Dict[str, int]:
    """Split name -> number of examples, from a parsed `dataset_info.json`."""
    return {split: entry['num_examples'] for split, entry in info.get('splits', {}).items()}


def labels_to_names(info: Mapping[str, Any]) -> Dict[int, str]:
    """Label id -> name, from a parsed `dataset_info.json` (JSON keys are strings)."""
    return {int(k): v for k, v in info.get('labels_to_names', {}).items()}


def write_labels_file(labels_to_names: Mapping[int, str], dataset_dir: str,
                      filename: str = LABELS_FILENAME) -> str:
    """Writes `id:name` lines, the models/research/slim `labels.txt` layout."""
    path = os.path.join(dataset_dir, filename)
    _atomic_write_text(path, ''.join(f'{label}:{labels_to_names[label]}\n'
                                     for label in sorted(labels_to_names)))
    return path


def read_labels_file(dataset_dir: str, filename: str = LABELS_FILENAME) -> Dict[int, str]:
    """Reads a models/research/slim `labels.txt` (`id:name` per line)."""
    path = os.path.join(dataset_dir, filename)
    result = {}
    with open(path, encoding='utf-8') as f:
        for line_number, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if not line:
                continue
            label, sep, name = line.partition(':')
            if not sep or not label.strip().lstrip('-').isdigit():
                raise ValueError(f'{path}:{line_number}: expected "id:name", got {line!r}')
            result[int(label)] = name
    return result


def has_labels_file(dataset_dir: str, filename: str = LABELS_FILENAME) -> bool:
    return os.path.exists(os.path.join(dataset_dir, filename))


def _atomic_write_text(path: str, text: str) -> None:
    temporary = f'{path}.tmp-{os.getpid()}'
    with open(temporary, 'w', encoding='utf-8') as f:
        f.write(text)
    os.replace(temporary, path)
