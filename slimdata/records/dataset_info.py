"""`dataset_info.json` and `labels.txt`: what a converter records beside its shards.

Split sizes and label names live next to the data (as TensorFlow Datasets does it), so a
descriptor never hard-codes what the writer knows. The layout of `dataset_info.json`::

    {
      "name": "pascalvoc_2007",
      "slimdata_version": "0.3.0",
      "splits": {
        "train": {
          "complete": true,
          "num_examples": 5011,
          "shards": [{"file": "train-00000-of-00004.tfrecord", "num_records": 1253,
                      "num_bytes": 119031355, "crc32c": 2876149303}, ...],
          "fingerprint": {...}
        }
      },
      "labels_to_names": {"0": "none", "1": "aeroplane", ...},
      "keys_to_features": {"image/encoded": {"kind": "FixedLen", "dtype": "string",
                                             "shape": [], "default_value": ""}, ...},
      "extra": {"num_classes": 21, "ignore_label": 255}
    }

A split's `shards` list each file with its record count and, when slimdata's writer wrote
it, its size and the CRC-32C of its bytes (`slimdata verify` compares both, so a shard
replaced by another run's is found even when its count matches). `complete` is false while a
conversion writes the split (or after it was interrupted): descriptors refuse such a split.
`fingerprint` (see `slimdata.records.fingerprint`) says what produced the shards.

This module imports no TensorFlow (``slimdata verify`` reads it, converters write it); only
`keys_to_features_from_json`, which builds `tf.io` specs, needs TensorFlow, and imports it when
called. Converters declare their schema in the recorded form (`fixed_len`, `var_len`).
"""

import json
import os
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence

from slimdata.records import fs
from slimdata.version import __version__

DATASET_INFO_FILENAME = 'dataset_info.json'
LABELS_FILENAME = 'labels.txt'

_KINDS = {'FixedLenFeature': 'FixedLen', 'VarLenFeature': 'VarLen'}


def _default_to_json(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode('utf-8', errors='replace')
    if hasattr(value, 'tolist'):  # numpy scalars and arrays
        return value.tolist()
    return value


def fixed_len(shape: Sequence[int], dtype: str, default_value: Any = None) -> Dict[str, Any]:
    """The recorded form of `tf.io.FixedLenFeature(shape, dtype, default_value)`, built
    without TensorFlow (converters declare their schema with it: they never import TensorFlow).

    Args:
      shape: the feature's shape, e.g. [] or [1].
      dtype: 'string', 'int64' or 'float32'.
      default_value: the value of a missing feature (str for strings), or None for none.
    """
    _check_dtype(dtype)
    return {'kind': 'FixedLen', 'dtype': dtype, 'shape': [int(d) for d in shape],
            'default_value': _default_to_json(default_value)}


def var_len(dtype: str) -> Dict[str, Any]:
    """The recorded form of `tf.io.VarLenFeature(dtype)` (see `fixed_len`)."""
    _check_dtype(dtype)
    return {'kind': 'VarLen', 'dtype': dtype}


_DTYPES = ('string', 'int64', 'float32')


def _check_dtype(dtype: str) -> None:
    if dtype not in _DTYPES:
        raise ValueError(f'a tf.train.Example feature is one of {_DTYPES}, got dtype {dtype!r}')


def keys_to_features_to_json(keys_to_features: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Describes feature specs as plain JSON data: `tf.io.FixedLenFeature` /
    `VarLenFeature` objects, or entries already in that form (`fixed_len`, `var_len`)."""
    described = {}
    for key, spec in keys_to_features.items():
        if isinstance(spec, Mapping):
            entry = dict(spec)
            if entry.get('kind') not in _KINDS.values():
                raise ValueError(f'keys_to_features[{key!r}] has kind {entry.get("kind")!r}; '
                                 'expected FixedLen or VarLen')
            described[key] = entry
            continue
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


def write_dataset_info(output_dir: str, name: Optional[str],
                       splits: Optional[Mapping[str, Iterable[Mapping[str, Any]]]] = None,
                       labels_to_names: Optional[Mapping[int, str]] = None,
                       keys_to_features: Optional[Mapping[str, Any]] = None,
                       extra: Optional[Mapping[str, Any]] = None) -> str:
    """Writes (or updates) `dataset_info.json`, and `labels.txt` when labels are given.

    The sharded writer records each split it writes itself (see `record_split`); this sets
    the dataset-wide fields, and records `splits` written by other means.

    Args:
      output_dir: the folder that holds the shards (a local path or a URL).
      name: the dataset's name, as `dataset_factory` knows it (None keeps the recorded one).
      splits: split name -> its shards, each `{"file": basename, "num_records": n}`, for
        shards not written by `slimdata.records.writer` (they get no fingerprint). Splits
        already recorded and not named here are kept, so converting `train` and then
        `val` into one folder records both.
      labels_to_names: label id -> class name.
      keys_to_features: the feature specs that read the records back (`tf.io` specs, or
        their recorded form: `fixed_len`, `var_len`).
      extra: anything else a descriptor needs (num_classes, ignore_label, ...).

    Returns:
      The path of `dataset_info.json`.
    """
    info = read_dataset_info(output_dir) or {}
    recorded_splits = dict(info.get('splits', {}))
    for split, shards in (splits or {}).items():
        shards = [{'file': s['file'], 'num_records': int(s['num_records'])} for s in shards]
        recorded_splits[split] = complete_split_entry(shards)
    info.update({'slimdata_version': __version__, 'splits': recorded_splits})
    if name is not None:
        info['name'] = name
    if labels_to_names is not None:
        info['labels_to_names'] = {str(k): v for k, v in sorted(labels_to_names.items())}
        write_labels_file(labels_to_names, output_dir)
    if keys_to_features is not None:
        info['keys_to_features'] = keys_to_features_to_json(keys_to_features)
    if extra is not None:
        info['extra'] = dict(extra)
    return _write_info(output_dir, info)


def complete_split_entry(shards: Sequence[Mapping[str, Any]],
                         fingerprint: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The entry of a split whose shards are all written."""
    entry = {'complete': True, 'num_examples': sum(s['num_records'] for s in shards),
             'shards': [dict(s) for s in shards]}
    if fingerprint is not None:
        entry['fingerprint'] = dict(fingerprint)
    return entry


def record_split(output_dir: str, split: str, entry: Optional[Mapping[str, Any]]) -> None:
    """Sets (or, with None, removes) one split's entry in `dataset_info.json`, atomically.

    The writer calls it as shards are completed, so the file always says what is on disk:
    an entry with `"complete": false` is a conversion that is running or was interrupted
    (descriptors refuse to read such a split; a re-run with the same fingerprint finishes
    it).
    """
    info = read_dataset_info(output_dir) or {}
    splits = dict(info.get('splits', {}))
    if entry is None:
        splits.pop(split, None)
    else:
        splits[split] = dict(entry)
    info.update({'slimdata_version': __version__, 'splits': splits})
    _write_info(output_dir, info)


def read_dataset_info(dataset_dir: str) -> Optional[Dict[str, Any]]:
    """Returns the parsed `dataset_info.json` of `dataset_dir`, or None if there is none.

    The file is input like any other (it may have been edited or planted): every split entry
    must be an object whose `num_examples` and shard counts are counts, and whose shard
    files are plain names in the folder, so that no reader is sent outside it
    (`../victim.tfrecord`, `/etc/passwd`).

    Raises:
      ValueError: naming the file and what is wrong, in one line (JSON nested too deeply
        for the parser included).
    """
    path = os.path.join(dataset_dir, DATASET_INFO_FILENAME)
    if not fs.exists(path):
        return None
    try:
        info = json.loads(fs.read_bytes(path))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f'{path} is not valid JSON: {error}') from error
    except RecursionError:
        raise ValueError(f'{path} is not a slimdata dataset_info.json: its JSON is nested too '
                         'deeply to be read') from None
    if not isinstance(info, dict) or not isinstance(info.get('splits', {}), dict):
        raise ValueError(f'{path} is not a slimdata dataset_info.json (expected an object with '
                         'a "splits" object)')
    for split, entry in info.get('splits', {}).items():
        _check_split_entry(f'{path}: split {split!r}', entry)
    return info


def _check_split_entry(where: str, entry: Any) -> None:
    """Refuses (ValueError naming `where`) a split entry that is not what the writer writes."""
    if not isinstance(entry, dict):
        raise ValueError(f'{where} is a {type(entry).__name__}; expected an object')
    if 'num_examples' in entry and not _is_count(entry['num_examples']):
        raise ValueError(f'{where}: num_examples {entry["num_examples"]!r} is not a count of '
                         'examples (an integer, 0 or more)')
    shards = entry.get('shards', [])
    if not isinstance(shards, list):
        raise ValueError(f'{where}: "shards" is a {type(shards).__name__}; expected a list')
    for number, shard in enumerate(shards):
        if not (isinstance(shard, dict) and isinstance(shard.get('file'), str)
                and _is_count(shard.get('num_records'))):
            raise ValueError(f'{where}: shard entry {number} needs a "file" name and a '
                             f'"num_records" count (an integer, 0 or more), got {shard!r:.200}')
        if not is_plain_name(shard['file']):
            raise ValueError(f'{where}: shard entry {number} names the file '
                             f'{shard["file"]!r:.200}; a shard is a plain file name in the '
                             'folder of dataset_info.json (no folder, no "..")')


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def is_plain_name(name: str) -> bool:
    """Whether `name` names a file directly in a folder: no separator, not '.' or '..',
    not empty, no NUL."""
    return (name not in ('', '.', '..') and '/' not in name and '\\' not in name
            and '\0' not in name and os.path.basename(name) == name)


def _write_info(output_dir: str, info: Mapping[str, Any]) -> str:
    path = os.path.join(output_dir, DATASET_INFO_FILENAME)
    fs.write_text_atomic(path, json.dumps(info, indent=2, sort_keys=True) + '\n')
    return path


def is_complete(entry: Mapping[str, Any]) -> bool:
    """Whether a split entry describes all of its shards (entries written before slimdata
    recorded the state have no "complete" field, and are complete)."""
    return entry.get('complete', True) is True


def split_sizes(info: Mapping[str, Any]) -> Dict[str, int]:
    """Split name -> number of examples of every complete split of a parsed
    `dataset_info.json`."""
    return {split: entry['num_examples'] for split, entry in info.get('splits', {}).items()
            if is_complete(entry)}


def incomplete_splits(info: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Split name -> entry of every split whose conversion is running or was interrupted."""
    return {split: entry for split, entry in info.get('splits', {}).items()
            if not is_complete(entry)}


def labels_to_names(info: Mapping[str, Any]) -> Dict[int, str]:
    """Label id -> name, from a parsed `dataset_info.json` (JSON keys are strings)."""
    return {int(k): v for k, v in info.get('labels_to_names', {}).items()}


def write_labels_file(labels_to_names: Mapping[int, str], dataset_dir: str,
                      filename: str = LABELS_FILENAME) -> str:
    """Writes `id:name` lines, the models/research/slim `labels.txt` layout."""
    path = os.path.join(dataset_dir, filename)
    fs.write_text_atomic(path, ''.join(f'{label}:{labels_to_names[label]}\n'
                                       for label in sorted(labels_to_names)))
    return path


def read_labels_file(dataset_dir: str, filename: str = LABELS_FILENAME) -> Dict[int, str]:
    """Reads a models/research/slim `labels.txt` (`id:name` per line)."""
    path = os.path.join(dataset_dir, filename)
    result = {}
    try:
        text = fs.read_bytes(path).decode('utf-8')
    except UnicodeDecodeError as error:
        raise ValueError(f'{path} is not UTF-8 text: {error}') from error
    for line_number, line in enumerate(text.split('\n'), 1):
        line = line.rstrip('\r')
        if not line:
            continue
        label, sep, name = line.partition(':')
        if not sep or not label.strip().lstrip('-').isdigit():
            raise ValueError(f'{path}:{line_number}: expected "id:name", got {line!r}')
        result[int(label)] = name
    return result


def has_labels_file(dataset_dir: str, filename: str = LABELS_FILENAME) -> bool:
    return fs.exists(os.path.join(dataset_dir, filename))
