"""`slimdata inspect PATH...`: the features of the first records, and a keys_to_features.

Imports no TensorFlow: records are parsed with slimdata's own Example schema.
"""

import argparse
import itertools
import os
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, TypedDict

from slimdata import progress
from slimdata.cli import common
from slimdata.records import dataset_info, example_schema, tfrecord


def register(commands: argparse._SubParsersAction, selected: bool) -> None:
    parser = common.command_parser(
        commands, 'inspect', 'show the features of the first records and a keys_to_features',
        'Show the features of the first records (their type, how many values, the first '
        'values) and a keys_to_features dict that parses them: the one the converter '
        'recorded in dataset_info.json when the records have one, else one inferred from the '
        'records read (a list that holds one value in every record read shows as '
        'FixedLenFeature: read more with -n).',
        examples=['slimdata inspect out/voc2007 -n 20',
                  'slimdata inspect out/voc2007/trainval-00000-of-00008.tfrecord'])
    parser.add_argument('paths', nargs='+', metavar='PATH', help='files, folders or globs')
    parser.add_argument('-n', '--num-records', type=common.positive_int, default=5, metavar='N',
                        help='how many records to parse, from the first files on (default: 5)')
    common.add_compression_option(parser)
    parser.set_defaults(run=run)


_TF_DTYPES = {'bytes_list': 'tf.string', 'int64_list': 'tf.int64', 'float_list': 'tf.float32'}
_TYPE_NAMES = {'bytes_list': 'bytes', 'int64_list': 'int64', 'float_list': 'float'}
_DEFAULTS = {'bytes_list': "''", 'int64_list': '0', 'float_list': '0.0'}
_PREVIEW_VALUES = 4
_PREVIEW_BYTES = 12


def run(args: argparse.Namespace) -> int:
    files = common.expand(args.paths)
    parsed = [0]
    try:
        features = summarize_features(_examples(files, args.compression, args.num_records,
                                                parsed))
        recorded = _recorded_schema(files)
    except (ValueError, OSError) as error:
        progress.error(error)
        return 1
    print(f'{progress.printable(", ".join(files[:3]))}{" ..." if len(files) > 3 else ""}: '
          f'{parsed[0]} '
          'record(s) parsed as tf.train.Example\n')
    if not features:
        print('no features')
        return 0
    columns = [('feature', [progress.printable(key) for key in features]),
               ('type', [summary['type'] for summary in features.values()]),
               ('values', [summary['lengths'] for summary in features.values()])]
    widths = [max(len(text) for text in [title, *texts]) for title, texts in columns]
    previews = [summary['preview'] for summary in features.values()]
    rows = zip(*(texts for _, texts in columns), previews)
    for cells in [[title for title, _ in columns] + ['first values'], *rows]:
        print('  '.join(f'{cell:<{width}}' for cell, width in zip(cells, widths)) + '  '
              + cells[-1])
    if recorded is not None:
        info_path, specs = recorded
        print(f'\nkeys_to_features = {{  # as the converter recorded it in {info_path}')
        for key, spec in specs.items():
            print(f'    {key!r}: {spec},')
    else:
        print('\nkeys_to_features = {')
        for key, summary in features.items():
            if summary['spec'] is None:
                print(f'    # {key!r}: {summary["type"]} values; no single tf.io spec parses '
                      'it')
            else:
                print(f'    {key!r}: {summary["spec"]},')
    print('}')
    return 0


def _records(files: Sequence[str], compression: str) -> Iterator[Tuple[str, int, bytes]]:
    for path in files:
        for number, record in enumerate(tfrecord.iter_records(path, compression=compression)):
            yield path, number, record


def _examples(files: Sequence[str], compression: str, limit: int,
              parsed: List[int]) -> Iterator[Any]:
    """The first `limit` records as tf.train.Examples, one at a time (so that memory holds one
    record, however many are asked for); counts them in `parsed[0]`.

    Raises:
      ValueError: naming the record that is not an Example.
    """
    for path, number, record in itertools.islice(_records(files, compression), limit):
        try:
            example = example_schema.Example.FromString(record)
        except example_schema.DecodeError as error:
            raise ValueError(f'{path}: record {number} is not a tf.train.Example: '
                             f'{error}') from None
        parsed[0] += 1
        yield example


_SPEC_DTYPES = {'string': 'tf.string', 'int64': 'tf.int64', 'float32': 'tf.float32'}


def _recorded_schema(files: Sequence[str]) -> Optional[Tuple[str, Dict[str, str]]]:
    """(dataset_info.json, key -> tf.io spec source) when all files are in one folder whose
    dataset_info.json records keys_to_features; else None."""
    folders = {os.path.dirname(path) for path in files}
    if len(folders) != 1:
        return None
    folder = folders.pop()
    info = dataset_info.read_dataset_info(folder)
    if not info or 'keys_to_features' not in info:
        return None
    specs = {}
    for key, entry in info['keys_to_features'].items():
        dtype = _SPEC_DTYPES.get(entry['dtype'], f"tf.as_dtype({entry['dtype']!r})")
        if entry['kind'] == 'VarLen':
            specs[key] = f'tf.io.VarLenFeature({dtype})'
        else:
            default = entry.get('default_value')
            specs[key] = (f'tf.io.FixedLenFeature({entry["shape"]}, {dtype}'
                          + (f', default_value={default!r})' if default is not None else ')'))
    return os.path.join(folder, dataset_info.DATASET_INFO_FILENAME), specs


class FeatureSummary(TypedDict):
    """What `summarize_features` says of one feature key."""
    type: str  # its value type(s): 'bytes', 'float', 'int64', joined by '/', or 'empty'
    lengths: str  # how many values records hold: '1', '0..3', '2 (in 5/8)'
    preview: str  # its first values
    spec: Optional[str]  # a tf.io feature spec parsing every record, or None


def summarize_features(examples: Iterable[Any]) -> Dict[str, FeatureSummary]:
    """Per feature key of some tf.train.Examples: type, value counts, preview, and spec.

    Each example is summarised as it comes, and not kept: what is kept per record is a type
    and a count per key.

    The spec is the source text of a `tf.io` feature spec that parses every one of the
    examples: `FixedLenFeature([])` with a default for keys that always hold one value (or are
    absent), `FixedLenFeature([n])` for keys that always hold n > 1 values, and `VarLenFeature`
    otherwise. A key whose type differs between records, or that never holds a value, gets
    spec None.
    """
    seen: Dict[str, List[Tuple[Optional[str], int]]] = {}  # key -> (kind, length) per record
    previews: Dict[str, str] = {}  # key -> the preview of its first non-empty list
    num_examples = 0
    for example in examples:
        num_examples += 1
        for key, feature in example.features.feature.items():
            kind = feature.WhichOneof('kind')
            values = getattr(feature, kind).value if kind else []
            seen.setdefault(key, []).append((kind, len(values)))
            if values and key not in previews:
                previews[key] = _preview(values)
    summaries: Dict[str, FeatureSummary] = {}
    for key in sorted(seen):
        kinds = sorted({kind for kind, _ in seen[key] if kind})
        lengths = [length for _, length in seen[key]]
        shortest, longest = min(lengths), max(lengths)
        length_text = str(shortest) if shortest == longest else f'{shortest}..{longest}'
        if len(seen[key]) < num_examples:
            length_text += f' (in {len(seen[key])}/{num_examples})'
        summaries[key] = {
            'type': '/'.join(_TYPE_NAMES[kind] for kind in kinds) or 'empty',
            'lengths': length_text,
            'preview': previews.get(key, '[]'),
            'spec': _feature_spec(kinds, lengths, always_present=len(seen[key]) == num_examples),
        }
    return summaries


def _feature_spec(kinds: List[str], lengths: List[int], always_present: bool) -> Optional[str]:
    if len(kinds) != 1:
        return None
    kind = kinds[0]
    dtype = _TF_DTYPES[kind]
    if set(lengths) == {1}:
        return f'tf.io.FixedLenFeature([], {dtype}, default_value={_DEFAULTS[kind]})'
    if always_present and len(set(lengths)) == 1 and lengths[0] > 1:
        return f'tf.io.FixedLenFeature([{lengths[0]}], {dtype})'
    return f'tf.io.VarLenFeature({dtype})'


def _preview(values: Sequence[Any]) -> str:
    shown = [_preview_value(value) for value in values[:_PREVIEW_VALUES]]
    more = ', ...' if len(values) > _PREVIEW_VALUES else ''
    return f'[{", ".join(shown)}{more}]'


def _preview_value(value: Any) -> str:
    if isinstance(value, bytes):
        try:  # 40 characters are at most 160 bytes of UTF-8: longer values are not decoded
            text = value.decode('utf-8') if len(value) <= 160 else None
        except UnicodeDecodeError:
            text = None
        if text is not None and text.isprintable() and len(text) <= 40:
            return repr(value)
        head = value[:_PREVIEW_BYTES].hex(' ')
        return f'<{len(value)} bytes: {head}{" ..." if len(value) > _PREVIEW_BYTES else ""}>'
    if isinstance(value, float):
        return f'{value:.6g}'
    return str(value)

