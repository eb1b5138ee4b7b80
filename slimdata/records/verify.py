"""Verifying record files: framing and CRCs, `dataset_info.json`, and (optionally) images.

`verify_files(files)` checks what `slimdata verify` checks and returns every problem found,
each naming its file (and record index, byte offset, feature key), instead of stopping at the
first. Each problem is its message (a `Problem` is a str) and the same as fields (`file`,
`record`, `offset`, `key`, `kind`), which `slimdata verify --json` prints. It checks:

- every record's length and data CRCs (`tfrecord.verify_file`);
- against each folder's `dataset_info.json`: every listed shard exists, holds the recorded
  number of records and, when the writer recorded them, has the recorded size and CRC-32C of
  its bytes (so a shard of another run is found even when its count matches); every split is
  complete (not left by an interrupted conversion); `num_examples` equals its shards' sum;
- with `decode=True`, every image and label map in every record: each `*encoded` bytes
  feature (but those whose `*format` says raw) passes the converters' structure check and is
  decoded with Pillow (`images.decode_stored_image`, at most `max_pixels` pixels), and its
  size compared with the record's `image/height` and `image/width`.

It imports no TensorFlow.
"""

import dataclasses
import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from crc32c import crc32c

from slimdata.progress import Progress
from slimdata.records import dataset_info, example_schema, fs, images, tfrecord


class Problem(str):
    """One problem found: its message (the string itself, naming the file), and its place
    and kind as fields.

    Attributes:
      file: the record file or `dataset_info.json` concerned.
      kind: what is wrong, one of KINDS.
      record: the 0-based record index, or None.
      offset: the byte offset where that record starts (of the decompressed stream, for a
        compressed file), or None.
      key: the feature key, or None.
    """

    file: str
    kind: str
    record: Optional[int]
    offset: Optional[int]
    key: Optional[str]

    def __new__(cls, message: str, file: str, kind: str, record: Optional[int] = None,
                offset: Optional[int] = None, key: Optional[str] = None) -> 'Problem':
        if kind not in KINDS:
            raise ValueError(f'unknown problem kind {kind!r}; expected one of {KINDS}')
        problem = super().__new__(cls, message)
        problem.file, problem.kind, problem.record = file, kind, record
        problem.offset, problem.key = offset, key
        return problem

    def as_dict(self) -> Dict[str, Any]:
        """The fields and the message, as JSON data."""
        return {'file': self.file, 'record': self.record, 'offset': self.offset,
                'key': self.key, 'kind': self.kind, 'message': str(self)}


#: The kinds of problem: a file that cannot be read; a record whose framing or CRCs are wrong
#: (or a file cut short); a record that is not a tf.train.Example; an image that does not
#: decode, or decodes to another size than the record says; what dataset_info.json
#: records but the folder does not hold; and a record of a compressed file too large to be
#: held for decoding (`tfrecord.MAX_COMPRESSED_RECORD_BYTES`).
KINDS = ('unreadable', 'damaged-record', 'not-an-example', 'undecodable-image',
         'image-size', 'dataset-info', 'missing-shard', 'record-count', 'shard-size',
         'shard-checksum', 'incomplete-split', 'num-examples', 'record-too-large')

#: Where `verify_files` reports each file it finished: (path, its framing result or None if
#: it could not be read, its problems).
FileReport = Callable[[str, Optional[tfrecord.VerifyResult], List[Problem]], None]


@dataclasses.dataclass
class VerifyReport:
    """What `verify_files` found.

    Attributes:
      results: path -> the file's framing and CRC result (files that could be read).
      problems: every problem, each naming its file (a `Problem`: a str with fields).
      notes: facts worth knowing that are not problems (files no dataset_info.json lists).
      num_bytes: bytes of all files.
      decoded: images decoded (with `decode=True`).
    """
    results: Dict[str, tfrecord.VerifyResult] = dataclasses.field(default_factory=dict)
    problems: List[Problem] = dataclasses.field(default_factory=list)
    notes: List[str] = dataclasses.field(default_factory=list)
    num_bytes: int = 0
    decoded: int = 0

    @property
    def num_records(self) -> int:
        return sum(result.num_records for result in self.results.values())

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_files(files: Sequence[str], compression: Optional[str] = tfrecord.AUTO,
                 decode: bool = False, on_file: Optional[FileReport] = None,
                 desc: str = 'verify',
                 max_pixels: int = images.DEFAULT_MAX_PIXELS) -> VerifyReport:
    """Verifies record files, and the `dataset_info.json` of each of their folders.

    Args:
      files: record files (see `tfrecord.expand_paths`), local paths or URLs.
      compression: as for `tfrecord.iter_records`.
      decode: also decode every image and label map of every record.
      on_file: called as each file is done (the command line prints a line).
      desc: the progress display's label.
      max_pixels: with `decode`, larger images are problems, not decoded (the converters'
        default bound).
    """
    report = VerifyReport()
    checksums: Dict[str, int] = {}
    sizes = {path: _size_or_zero(path) for path in files}
    report.num_bytes = sum(sizes.values())
    with Progress(report.num_bytes, desc, unit='B', unit_scale=True, delay=2.0) as progress:
        for path in files:
            problems: List[Problem] = []
            checksum = [0]

            def on_read(chunk, checksum=checksum) -> None:
                checksum[0] = crc32c(chunk, checksum[0])
                progress.update(len(chunk))

            try:
                result = tfrecord.verify_file(path, compression, on_read=on_read)
            except OSError as error:
                problems.append(Problem(f'{path}: cannot be read: {error}', path, 'unreadable'))
                result = None
            if result is not None:
                report.results[_key(path)] = result
                checksums[_key(path)] = checksum[0]
                if result.error is not None:
                    damage = result.error
                    problems.append(Problem(str(damage), path, 'damaged-record',
                                            damage.record_index, damage.offset))
                if decode:
                    decoded, decode_problems = decode_images(path, compression, max_pixels)
                    report.decoded += decoded
                    problems += decode_problems
            report.problems += problems
            if on_file is not None:
                on_file(path, result, problems)
    for folder in dict.fromkeys(os.path.dirname(_key(path)) for path in files):
        problems, notes = check_against_dataset_info(folder, report.results, checksums)
        report.problems += problems
        report.notes += notes
    return report


def check_against_dataset_info(folder: str, results: Mapping[str, tfrecord.VerifyResult],
                               checksums: Optional[Mapping[str, int]] = None
                               ) -> Tuple[List[Problem], List[str]]:
    """Compares a folder's `dataset_info.json` with what verification found.

    Every shard it lists must exist; every listed shard that was verified must hold the
    recorded number of records and, where recorded, have the recorded size and CRC-32C;
    every split must be complete; each split's `num_examples` must equal what its shards
    hold (counted, when all were verified; as recorded, otherwise).

    Args:
      folder: the folder (as `_key` normalises it).
      results: verification results keyed by normalised file path.
      checksums: the CRC-32C of each verified file's bytes, by the same keys.

    Returns:
      (problems, notes): notes name verified files the info does not list.
    """
    info_path = os.path.join(folder, dataset_info.DATASET_INFO_FILENAME)
    try:
        info = dataset_info.read_dataset_info(folder)
    except ValueError as error:
        return [Problem(str(error), info_path, 'dataset-info')], []
    if info is None:
        return [], []
    problems: List[Problem] = []
    listed: Set[str] = set()
    for split, entry in sorted(info.get('splits', {}).items()):
        if not dataset_info.is_complete(entry):
            problems.append(Problem(
                f'{info_path}: split {split!r} is incomplete: its conversion is running or '
                f'was interrupted ({len(entry.get("shards", []))} shard(s) written); run the '
                'converter again to finish it', info_path, 'incomplete-split'))
            listed.update(os.path.join(folder, shard['file']) for shard in entry.get('shards', []))
            continue
        split_problems, counted = _check_split(folder, info_path, split, entry, results,
                                               checksums or {}, listed)
        problems += split_problems
        recorded_total = entry.get('num_examples')
        shards = entry.get('shards', [])
        expected_total = counted if counted is not None else sum(
            shard['num_records'] for shard in shards)
        if expected_total != recorded_total:
            held = 'hold' if counted is not None else 'are recorded with'
            problems.append(Problem(f'{info_path}: split {split!r} has num_examples '
                                    f'{recorded_total}, but its shards {held} '
                                    f'{expected_total} records', info_path, 'num-examples'))
    notes = [f'{path} is not listed in {info_path}'
             for path in results if os.path.dirname(path) == folder and path not in listed]
    return problems, notes


def _check_split(folder: str, info_path: str, split: str, entry: Mapping,
                 results: Mapping[str, tfrecord.VerifyResult], checksums: Mapping[str, int],
                 listed: set) -> Tuple[List[Problem], Optional[int]]:
    """(problems of the split's shards, their records counted, or None if not all were)."""
    problems: List[Problem] = []
    counted, all_counted = 0, True
    for shard in entry.get('shards', []):  # entries checked by read_dataset_info
        path = os.path.join(folder, shard['file'])
        listed.add(path)
        result = results.get(path)
        if not fs.exists(path):
            problems.append(Problem(f'{path}: missing; {info_path} lists it in split '
                                    f'{split!r} with {shard["num_records"]} records', path,
                                    'missing-shard'))
        elif result is not None and result.ok:
            problems += _shard_differences(path, shard, result, checksums.get(path), info_path,
                                           split)
        if result is None or not result.ok:
            all_counted = False
        else:
            counted += result.num_records
    return problems, counted if all_counted else None


def _shard_differences(path: str, shard: Mapping, result: tfrecord.VerifyResult,
                       checksum: Optional[int], info_path: str, split: str) -> List[Problem]:
    if result.num_records != shard['num_records']:
        return [Problem(f'{path}: {result.num_records} records, but {info_path} says '
                        f'{shard["num_records"]} (split {split!r})', path, 'record-count')]
    if 'num_bytes' in shard and result.num_bytes != shard['num_bytes']:
        return [Problem(f'{path}: {result.num_bytes:,} bytes, but {info_path} records '
                        f'{shard["num_bytes"]:,} (split {split!r}): not the file that was '
                        'written', path, 'shard-size')]
    if 'crc32c' in shard and checksum is not None and checksum != shard['crc32c']:
        return [Problem(f'{path}: its bytes differ from those written (CRC-32C {checksum}, '
                        f'{info_path} records {shard["crc32c"]}; split {split!r}): another '
                        'run\'s shard, or damaged', path, 'shard-checksum')]
    return []


# A parsed Example: key -> (list kind, values), as `example_schema.parse_example` gives it.
_Features = Mapping[str, Tuple[Optional[str], Sequence[Any]]]

def decode_images(path: str, compression: Optional[str] = tfrecord.AUTO,
                  max_pixels: int = images.DEFAULT_MAX_PIXELS) -> Tuple[int, List[Problem]]:
    """Decodes every image and label map in a record file (`images.decode_stored_image`).

    Returns:
      (images decoded, problems: each names the file, record index and feature key).
    """
    decoded, problems = 0, []
    try:
        for index, record in enumerate(tfrecord.iter_records(path, compression=compression)):
            where = f'{path}: record {index}'
            try:
                features = example_schema.parse_example(record)
            except example_schema.DecodeError as error:
                problems.append(Problem(f'{where}: not a tf.train.Example ({error})', path,
                                        'not-an-example', index))
                continue
            count, record_problems = _decode_record(features, path, index, max_pixels)
            decoded += count
            problems += record_problems
    except tfrecord.RecordTooLarge as error:
        problems.append(Problem(f'{error}; its images are not decoded', path,
                                'record-too-large', error.record_index, error.offset))
    except (tfrecord.TFRecordError, OSError):
        pass  # a framing problem, reported by the CRC check
    return decoded, problems


def _decode_record(features: _Features, path: str, index: int,
                   max_pixels: int) -> Tuple[int, List[Problem]]:
    where = f'{path}: record {index}'
    decoded, problems = 0, []
    image_size = _stated_size(features)
    for key in sorted(features):
        kind, values = features[key]
        if not key.endswith('encoded') or kind != 'bytes_list' or _is_raw(features, key):
            continue
        for position, value in enumerate(values):
            label = f'{where}, key {key!r}' + (f' value {position}' if len(values) > 1 else '')
            try:
                size = images.decode_stored_image(value, label, max_pixels).size
            except images.ImageError as error:
                problems.append(Problem(str(error), path, 'undecodable-image', index, key=key))
                continue
            decoded += 1
            if image_size is not None and key in _SIZED_KEYS and size != image_size:
                problems.append(Problem(
                    f'{label}: decodes to {size[0]}x{size[1]} (WxH), but the record says '
                    f'image/width {image_size[0]}, image/height {image_size[1]}', path,
                    'image-size', index, key=key))
    return decoded, problems


# The images whose size must be the record's image/width and image/height: the image, and a
# segmentation label map (deeplab crops both together).
_SIZED_KEYS = ('image/encoded', 'image/segmentation/class/encoded')


def _stated_size(features: _Features) -> Optional[Tuple[int, int]]:
    width, height = features.get('image/width'), features.get('image/height')
    if not (width and height and width[0] == height[0] == 'int64_list'
            and len(width[1]) == len(height[1]) == 1):
        return None
    return width[1][0], height[1][0]


def _is_raw(features: _Features, key: str) -> bool:
    kind, values = features.get(key[:-len('encoded')] + 'format', (None, []))
    return kind == 'bytes_list' and len(values) == 1 and values[0].lower() == b'raw'


def _size_or_zero(path: str) -> int:
    """The size of a file; 0 if it vanished since it was listed (verify_file reports that)."""
    try:
        return fs.size(path)
    except OSError:
        return 0


def _key(path: str) -> str:
    return path if fs.is_url(path) else os.path.normpath(os.path.abspath(path))
