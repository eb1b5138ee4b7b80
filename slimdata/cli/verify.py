"""`slimdata verify PATH...`: every record's CRCs, and the counts in dataset_info.json.

Imports no TensorFlow.
"""

import argparse
import os
import sys
import time
from typing import Dict, List, Mapping, Tuple

from tqdm import tqdm

from slimdata.cli import common
from slimdata.records import dataset_info, tfrecord


def register(commands: argparse._SubParsersAction, selected: bool) -> None:
    parser = commands.add_parser(
        'verify', help="check every record's CRCs, and the counts in dataset_info.json")
    parser.add_argument('paths', nargs='+', metavar='PATH', help='files, folders or globs')
    common.add_compression_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    files = common.expand(args.paths)
    problems: List[str] = []
    results: Dict[str, tfrecord.VerifyResult] = {}
    started = time.perf_counter()
    total_bytes = sum(_size_or_zero(path) for path in files)
    with tqdm(total=total_bytes, unit='B', unit_scale=True, unit_divisor=1024, desc='verify',
              file=sys.stderr, delay=common.PROGRESS_DELAY, disable=None) as progress:
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
                           f'{common.megabytes(result.num_bytes):>10}  {path}')
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
    print(f'\nverified {len(files)} files, {records} records, {common.megabytes(total_bytes)} in '
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

