"""A split's fingerprint: what produced its shards, so a re-run can tell if it may reuse them.

`dataset_info.json` records one per split::

    "fingerprint": {
      "slimdata_version": "0.3.0",
      "num_shards": 8,
      "options": {"converter": "voc", "year": "2007", "seed": 0, ...},
      "items": {"count": 5011, "sha256": "..."}
    }

- `items`: the ordered list of what the writer encodes (ids, paths and labels, MNIST pixels),
  so another seed, ratio or source listing changes it (and, with `num_shards`, which items
  each shard holds).
- `options`: the converter's options that shape the records (JSON values).

and per shard, `sources`: a digest of its items' source files (their paths, sizes and
modification times), so an edited annotation or a replaced image makes the shards holding it
stale. (Files behind a URL count by name only: a stat per remote file would cost more than
the conversion.)

`changes(recorded, new)` says in words what differs, for the re-run's refusal.
"""

import dataclasses
import hashlib
import json
import struct
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

import numpy as np

from slimdata.records import fs
from slimdata.version import __version__


def fingerprint(items: Sequence[Any], options: Mapping[str, Any],
                num_shards: int) -> Dict[str, Any]:
    """The fingerprint of a split (see the module docstring).

    Raises:
      ValueError: if `options` is not JSON data, naming the option.
    """
    return {
        'slimdata_version': __version__,
        'num_shards': int(num_shards),
        'options': json_options(options),
        'items': {'count': len(items), 'sha256': _digest(items)},
    }


def json_options(options: Mapping[str, Any]) -> Dict[str, Any]:
    """`options` as JSON data (tuples become lists), or ValueError naming the bad option."""
    result = {}
    for key, value in options.items():
        try:
            result[str(key)] = json.loads(json.dumps(value))
        except (TypeError, ValueError) as error:
            raise ValueError(f'fingerprint option {key!r} is not JSON data: {error}') from error
    return result


def changes(recorded: Mapping[str, Any], new: Mapping[str, Any]) -> List[str]:
    """What differs between two fingerprints, in words (empty when they are equal)."""
    found = []
    if recorded.get('slimdata_version') != new['slimdata_version']:
        found.append(f'slimdata version {recorded.get("slimdata_version")} -> '
                     f'{new["slimdata_version"]}')
    if recorded.get('num_shards') != new['num_shards']:
        found.append(f'num_shards {recorded.get("num_shards")} -> {new["num_shards"]}')
    old_options = recorded.get('options', {})
    for key in sorted(set(old_options) | set(new['options'])):
        before, after = old_options.get(key, '(none)'), new['options'].get(key, '(none)')
        if before != after:
            found.append(f'{key} {before!r} -> {after!r}')
    old_items = recorded.get('items', {})
    if old_items != new['items']:
        found.append(f'the list of examples ({old_items.get("count")} -> '
                     f'{new["items"]["count"]} items, or their order)')
    return found


def _digest(items: Sequence[Any]) -> str:
    digest = hashlib.sha256()
    for item in items:
        _feed(digest, item)
    return digest.hexdigest()


def _feed(digest: 'hashlib._Hash', value: Any) -> None:
    """Feeds a canonical, type-tagged encoding of `value` (never a repr, which numpy
    abbreviates) into `digest`."""
    if type(value) is str:  # the common item, an id or a path: first, as it costs per item
        _feed_bytes(digest, b's', value.encode('utf-8', 'surrogateescape'))
    elif value is None or isinstance(value, bool):
        digest.update(b'N' if value is None else (b'T' if value else b'F'))
    elif isinstance(value, (int, np.integer)):
        text = str(int(value)).encode()
        digest.update(b'i' + struct.pack('<I', len(text)) + text)
    elif isinstance(value, (float, np.floating)):
        digest.update(b'f' + struct.pack('<d', float(value)))
    elif isinstance(value, str):
        _feed_bytes(digest, b's', value.encode('utf-8', 'surrogateescape'))
    elif isinstance(value, (bytes, bytearray, memoryview)):
        _feed_bytes(digest, b'b', bytes(value))
    elif isinstance(value, np.ndarray):
        _feed_bytes(digest, b'a', f'{value.dtype.str}{value.shape}'.encode())
        _feed_bytes(digest, b'd', np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (tuple, list)):
        digest.update(b'(' + struct.pack('<I', len(value)))
        for element in value:
            _feed(digest, element)
    elif isinstance(value, Mapping):
        digest.update(b'{' + struct.pack('<I', len(value)))
        for key in sorted(value, key=repr):
            _feed(digest, key)
            _feed(digest, value[key])
    elif dataclasses.is_dataclass(value):
        _feed_bytes(digest, b'c', type(value).__qualname__.encode())
        _feed(digest, [getattr(value, field.name) for field in dataclasses.fields(value)])
    else:
        raise TypeError(f'cannot fingerprint an item of type {type(value).__name__}; items must '
                        'be built of str, bytes, numbers, numpy arrays, tuples, lists, dicts '
                        'and dataclasses')


def _feed_bytes(digest: 'hashlib._Hash', tag: bytes, data: bytes) -> None:
    digest.update(tag + struct.pack('<Q', len(data)))
    digest.update(data)


class SourceStamps:
    """Digests of source files' paths, sizes and modification times, each file stat'ed once
    (MNIST's items all come from the same two files)."""

    def __init__(self):
        self._stamps: Dict[str, Optional[tuple]] = {}

    def digest(self, paths: Iterable[str]) -> str:
        """The digest of these files, in this order."""
        digest = hashlib.sha256()
        for path in paths:
            stamp = self._stamp(path)
            _feed(digest, path)
            digest.update(b'-' if stamp is None else b'%d,%d;' % stamp)
        return digest.hexdigest()

    def size(self, path: str) -> int:
        """The size of a local file; 0 when it is missing or remote."""
        stamp = self._stamp(path)
        return 0 if stamp is None else stamp[0]

    def _stamp(self, path: str) -> Optional[tuple]:
        if path not in self._stamps:
            self._stamps[path] = _stamp(path)
        return self._stamps[path]


def _stamp(path: str) -> Optional[tuple]:
    """(size, modification time in ns) of a local file; None when missing or remote."""
    if fs.is_url(path):
        return None
    try:
        return tuple(fs.stat(path)[:2])
    except OSError:
        return None
