"""The `slimdata` command line: count, verify, inspect and index TFRecord files.

    slimdata count   PATH...          records per file, and the total
    slimdata verify  PATH...          every record's CRCs, and the counts in dataset_info.json
    slimdata inspect FILE [-n N]      the features of the first records, and a keys_to_features
    slimdata index   PATH...          DALI / `tfrecord`-package index files
    slimdata convert KIND SRC OUT     raw data -> sharded TFRecords + dataset_info.json
                                      (KIND: image-folder, mnist-idx, voc, voc-seg,
                                      cityscapes, ade20k; `slimdata convert KIND --help`)

PATH is a file, a folder (see `slimdata.tfrecord.expand_paths` for which of its files are
taken) or a glob. `count`, `verify` and `index` import no TensorFlow; `inspect` does, when it
runs; `convert` loads the converters of `slimdata.datasets` only when it is the command. Each sub-command is one `add_parser` block in `build_parser` and one `run_*` function.

Exit status: 0 when all is well, 1 when a file has a problem, 2 for a usage error (such as a
path that matches nothing).
"""

import argparse
import functools
import importlib
import itertools
import os
import sys
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from tqdm import tqdm

from slimdata import dataset_info, tfrecord

# Progress bars appear only when a run takes longer than this (seconds) and stderr is a TTY.
_PROGRESS_DELAY = 2.0
_COMPRESSION_CHOICES = ('auto', 'none', 'gzip', 'zlib')


class CommandLineError(Exception):
    """A usage problem: reported in one line, exit status 2."""


# `slimdata convert KIND`: (module in slimdata.datasets, its add-arguments and run functions).
CONVERTERS = {
    'image-folder': ('classification', 'add_image_folder_arguments', 'run_image_folder'),
    'mnist-idx': ('classification', 'add_mnist_arguments', 'run_mnist'),
    'voc': ('pascalvoc', 'add_convert_arguments', 'run_convert'),
    'voc-seg': ('segmentation', 'add_voc_seg_arguments', 'run_voc_seg'),
    'cityscapes': ('segmentation', 'add_cityscapes_arguments', 'run_cityscapes'),
    'ade20k': ('segmentation', 'add_ade20k_arguments', 'run_ade20k'),
}


def build_parser(with_converters: bool = False) -> argparse.ArgumentParser:
    """The argument parser; the converters' own arguments only `with_converters`."""
    parser = argparse.ArgumentParser(
        prog='slimdata', description='TFRecord tools of slimdata (TF-Slim data layer).')
    commands = parser.add_subparsers(dest='command', required=True, metavar='COMMAND')

    count = commands.add_parser('count', help='count the records of TFRecord files')
    count.add_argument('paths', nargs='+', metavar='PATH', help='files, folders or globs')
    _add_compression_option(count)
    count.set_defaults(run=run_count)

    verify = commands.add_parser(
        'verify', help="check every record's CRCs, and the counts in dataset_info.json")
    verify.add_argument('paths', nargs='+', metavar='PATH', help='files, folders or globs')
    _add_compression_option(verify)
    verify.set_defaults(run=run_verify)

    inspect = commands.add_parser(
        'inspect', help='show the features of the first records and a keys_to_features dict')
    inspect.add_argument('file', metavar='FILE', help='a TFRecord file of tf.train.Example')
    inspect.add_argument('-n', '--num-records', type=_positive_int, default=5, metavar='N',
                         help='how many records to parse (default: 5)')
    _add_compression_option(inspect)
    inspect.set_defaults(run=run_inspect)

    index = commands.add_parser(
        'index', help='write DALI / tfrecord-package index files (<file>.idx)')
    index.add_argument('paths', nargs='+', metavar='PATH', help='files, folders or globs')
    index.add_argument('--output-dir', metavar='DIR',
                       help='write the index files here instead of beside the records')
    index.set_defaults(run=run_index)

    convert = commands.add_parser(
        'convert', help='convert raw data (image folders, MNIST, VOC, deeplab trees) to '
                        'sharded TFRecords with dataset_info.json')
    kinds = convert.add_subparsers(dest='kind', required=True, metavar='KIND')
    for kind, (module_name, add_arguments, run) in CONVERTERS.items():
        help_text = f'see `slimdata convert {kind} --help`'
        kind_parser = kinds.add_parser(kind, help=help_text)
        if with_converters:
            module = importlib.import_module(f'slimdata.datasets.{module_name}')
            getattr(module, add_arguments)(kind_parser)
            kind_parser.formatter_class = argparse.RawDescriptionHelpFormatter
            kind_parser.set_defaults(run=functools.partial(run_convert, getattr(module, run)))
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs one sub-command; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(with_converters=argv[:1] == ['convert']).parse_args(argv)
    try:
        return args.run(args)
    except CommandLineError as error:
        print(f'slimdata {args.command}: error: {error}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f'slimdata {args.command}: interrupted', file=sys.stderr)
        return 130


def _add_compression_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--compression', choices=_COMPRESSION_CHOICES, default='auto',
                        help='how the files are compressed (default: auto, detected from '
                             "each file's first bytes)")


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f'expected a whole number of at least 1, got {text!r}')
    return int(text)


def _expand(paths: Sequence[str]) -> List[str]:
    try:
        return tfrecord.expand_paths(paths)
    except ValueError as error:
        raise CommandLineError(str(error)) from error


def _megabytes(num_bytes: int) -> str:
    return f'{num_bytes / 1e6:.1f} MB'


# ----------------------------------------------------------------------------------------------
# count

def run_count(args: argparse.Namespace) -> int:
    total, failed = 0, 0
    for path in _expand(args.paths):
        try:
            num_records = tfrecord.count_records(path, args.compression)
        except (ValueError, OSError) as error:  # TFRecordError is a ValueError
            print(f'error: {error}', file=sys.stderr)
            failed += 1
            continue
        total += num_records
        print(f'{num_records:>12}  {path}')
    print(f'{total:>12}  total' + (f' ({failed} file(s) could not be counted)' if failed else ''))
    return 1 if failed else 0


# ----------------------------------------------------------------------------------------------
# verify

def run_verify(args: argparse.Namespace) -> int:
    files = _expand(args.paths)
    problems: List[str] = []
    results: Dict[str, tfrecord.VerifyResult] = {}
    started = time.perf_counter()
    total_bytes = sum(_size_or_zero(path) for path in files)
    with tqdm(total=total_bytes, unit='B', unit_scale=True, unit_divisor=1024, desc='verify',
              file=sys.stderr, delay=_PROGRESS_DELAY, disable=None) as progress:
        for path in files:
            try:
                result = tfrecord.verify_file(path, args.compression, on_read=progress.update)
            except OSError as error:
                problems.append(f'{path}: cannot be read: {error}')
                tqdm.write(f'FAIL  {problems[-1]}')
                continue
            results[_key(path)] = result
            if result.ok:
                tqdm.write(f'ok    {result.num_records:>10} records  '
                           f'{_megabytes(result.num_bytes):>10}  {path}')
            else:
                problems.append(str(result.error))
                tqdm.write(f'FAIL  {result.error}')
    elapsed = time.perf_counter() - started
    notes: List[str] = []
    for folder in dict.fromkeys(os.path.dirname(_key(path)) for path in files):
        folder_problems, folder_notes = check_against_dataset_info(folder, results)
        problems += folder_problems
        notes += folder_notes
    for note in notes:
        print(f'note: {note}')
    records = sum(result.num_records for result in results.values())
    print(f'\nverified {len(files)} files, {records} records, {_megabytes(total_bytes)} in '
          f'{elapsed:.2f} s ({total_bytes / 1e6 / max(elapsed, 1e-9):.0f} MB/s)')
    if not problems:
        print('no problems found')
        return 0
    print(f'{len(problems)} problem(s):')
    for problem in problems:
        print(f'  {problem}')
    return 1


def _size_or_zero(path: str) -> int:
    """The size of a file; 0 if it vanished since it was listed (verify_file reports that)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _key(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


def check_against_dataset_info(
        folder: str, results: Mapping[str, tfrecord.VerifyResult]) -> Tuple[List[str], List[str]]:
    """Compares a folder's `dataset_info.json` with what verification found.

    Every shard it lists must exist; every listed shard that was verified must hold the
    recorded number of records; each split's `num_examples` must equal what its shards hold
    (counted, when all were verified; as recorded, otherwise).

    Args:
      folder: an absolute folder path.
      results: verification results keyed by absolute, normalised file path.

    Returns:
      (problems, notes): notes name verified files the info does not list.
    """
    info_path = os.path.join(folder, dataset_info.DATASET_INFO_FILENAME)
    try:
        info = dataset_info.read_dataset_info(folder)
    except ValueError as error:
        return [str(error)], []
    if info is None:
        return [], []
    problems: List[str] = []
    listed = set()
    for split, entry in sorted(info.get('splits', {}).items()):
        shards = entry.get('shards', [])
        recorded_total = entry.get('num_examples')
        counted_total, all_counted = 0, True
        for number, shard in enumerate(shards):
            if not (isinstance(shard, dict) and isinstance(shard.get('file'), str)
                    and isinstance(shard.get('num_records'), int)):
                problems.append(f'{info_path}: split {split!r}: shard entry {number} needs a '
                                f'"file" name and a "num_records" count, got {shard!r}')
                all_counted = False
                continue
            path = os.path.join(folder, shard['file'])
            listed.add(path)
            result = results.get(path)
            if not os.path.exists(path):
                problems.append(f'{path}: missing; {info_path} lists it in split {split!r} '
                                f'with {shard["num_records"]} records')
            elif result is not None and result.ok and result.num_records != shard['num_records']:
                problems.append(f'{path}: {result.num_records} records, but {info_path} says '
                                f'{shard["num_records"]} (split {split!r})')
            if result is None or not result.ok:
                all_counted = False
            else:
                counted_total += result.num_records
        expected_total = counted_total if all_counted else sum(
            shard.get('num_records', 0) for shard in shards if isinstance(shard, dict))
        if expected_total != recorded_total:
            held = 'hold' if all_counted else 'are recorded with'
            problems.append(f'{info_path}: split {split!r} has num_examples {recorded_total}, '
                            f'but its shards {held} {expected_total} records')
    notes = [f'{path} is not listed in {info_path}'
             for path in results if os.path.dirname(path) == folder and path not in listed]
    return problems, notes


# ----------------------------------------------------------------------------------------------
# inspect

_TF_DTYPES = {'bytes_list': 'tf.string', 'int64_list': 'tf.int64', 'float_list': 'tf.float32'}
_TYPE_NAMES = {'bytes_list': 'bytes', 'int64_list': 'int64', 'float_list': 'float'}
_DEFAULTS = {'bytes_list': "''", 'int64_list': '0', 'float_list': '0.0'}
_PREVIEW_VALUES = 4
_PREVIEW_BYTES = 12


def run_inspect(args: argparse.Namespace) -> int:
    from google.protobuf.message import DecodeError  # comes with TensorFlow
    from slimdata._tf import tf

    try:
        records = list(itertools.islice(
            tfrecord.iter_records(args.file, compression=args.compression), args.num_records))
    except (ValueError, OSError) as error:
        print(f'error: {error}', file=sys.stderr)
        return 1
    examples = []
    for number, record in enumerate(records):
        try:
            examples.append(tf.train.Example.FromString(record))
        except DecodeError as error:
            print(f'error: {args.file}: record {number} is not a tf.train.Example: {error}',
                  file=sys.stderr)
            return 1
    print(f'{args.file}: {len(examples)} record(s) parsed as tf.train.Example\n')
    features = summarize_features(examples)
    if not features:
        print('no features')
        return 0
    columns = [('feature', list(features)),
               ('type', [summary['type'] for summary in features.values()]),
               ('values', [summary['lengths'] for summary in features.values()])]
    widths = [max(len(text) for text in [title, *texts]) for title, texts in columns]
    previews = [summary['preview'] for summary in features.values()]
    rows = zip(*(texts for _, texts in columns), previews)
    for cells in [[title for title, _ in columns] + ['first values'], *rows]:
        print('  '.join(f'{cell:<{width}}' for cell, width in zip(cells, widths)) + '  '
              + cells[-1])
    print('\nkeys_to_features = {')
    for key, summary in features.items():
        if summary['spec'] is None:
            print(f'    # {key!r}: {summary["type"]} values; no single tf.io spec parses it')
        else:
            print(f'    {key!r}: {summary["spec"]},')
    print('}')
    return 0


def summarize_features(examples: Sequence[Any]) -> Dict[str, Dict[str, Optional[str]]]:
    """Per feature key of some tf.train.Examples: type, value counts, preview, and spec.

    The spec is the source text of a `tf.io` feature spec that parses every one of the
    examples: `FixedLenFeature([])` with a default for keys that always hold one value (or are
    absent), `FixedLenFeature([n])` for keys that always hold n > 1 values, and `VarLenFeature`
    otherwise. A key whose type differs between records, or that never holds a value, gets
    spec None.
    """
    seen: Dict[str, List[Tuple[Optional[str], Any]]] = {}
    for example in examples:
        for key, feature in example.features.feature.items():
            kind = feature.WhichOneof('kind')
            values = list(getattr(feature, kind).value) if kind else []
            seen.setdefault(key, []).append((kind, values))
    summaries = {}
    for key in sorted(seen):
        kinds = sorted({kind for kind, _ in seen[key] if kind})
        lengths = [len(values) for _, values in seen[key]]
        shortest, longest = min(lengths), max(lengths)
        length_text = str(shortest) if shortest == longest else f'{shortest}..{longest}'
        if len(seen[key]) < len(examples):
            length_text += f' (in {len(seen[key])}/{len(examples)})'
        summaries[key] = {
            'type': '/'.join(_TYPE_NAMES[kind] for kind in kinds) or 'empty',
            'lengths': length_text,
            'preview': _preview(next((values for _, values in seen[key] if values), [])),
            'spec': _feature_spec(kinds, lengths, always_present=len(seen[key]) == len(examples)),
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
        try:
            text = value.decode('utf-8')
        except UnicodeDecodeError:
            text = None
        if text is not None and text.isprintable() and len(text) <= 40:
            return repr(value)
        head = value[:_PREVIEW_BYTES].hex(' ')
        return f'<{len(value)} bytes: {head}{" ..." if len(value) > _PREVIEW_BYTES else ""}>'
    if isinstance(value, float):
        return f'{value:.6g}'
    return str(value)


# ----------------------------------------------------------------------------------------------
# index

def run_index(args: argparse.Namespace) -> int:
    files = _expand(args.paths)
    if args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
    failed = 0
    for path in files:
        try:
            written = tfrecord.write_index(path,
                                           tfrecord.default_index_path(path, args.output_dir))
        except (ValueError, OSError) as error:  # TFRecordError is a ValueError
            print(f'error: {error}', file=sys.stderr)
            failed += 1
            continue
        print(f'{path} -> {written}')
    return 1 if failed else 0


# ----------------------------------------------------------------------------------------------
# convert


def run_convert(converter, args: argparse.Namespace) -> int:
    """Runs a dataset converter; bad input is one line naming the file, exit status 1."""
    try:
        converter(args)
    except ValueError as error:
        print(f'slimdata convert {args.kind}: error: {error}', file=sys.stderr)
        return 1
    return 0
