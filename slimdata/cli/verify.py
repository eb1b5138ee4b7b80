"""`slimdata verify PATH...`: every record's CRCs, the counts and checksums in
dataset_info.json, and with `--decode` every image. Imports no TensorFlow."""

import argparse
from typing import List, Optional

from slimdata import progress
from slimdata.cli import common
from slimdata.records import tfrecord
from slimdata.records.verify import Problem, verify_files


def register(commands: argparse._SubParsersAction, selected: bool) -> None:
    parser = common.command_parser(
        commands, 'verify', "check every record's CRCs, and the counts in dataset_info.json",
        'Check every record of TFRecord files (both CRCs), and each folder\'s '
        'dataset_info.json: every shard listed exists with its recorded record count, size '
        'and CRC-32C, every split is complete. Lists every problem (file, record index, byte '
        'offset) and exits 1 if there is one; with --json, each problem is an object with '
        'the fields file, record, offset, key, kind and message.',
        examples=['slimdata verify out/voc2007', 'slimdata verify --decode out/voc2007',
                  'slimdata verify --json gs://my-bucket/voc2007'])
    parser.add_argument('paths', nargs='+', metavar='PATH', help='files, folders or globs')
    common.add_compression_option(parser)
    parser.add_argument('--decode', action='store_true',
                        help='also decode every image and label map of every record (with '
                             'Pillow) and compare its size with the record\'s; each failure '
                             'names the shard, record index and feature key')
    common.add_json_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    files = common.expand(args.paths)
    reports = []

    def on_file(path: str, result: Optional[tfrecord.VerifyResult],
                problems: List[Problem]) -> None:
        reports.append({'path': path, 'ok': not problems,
                        'records': result.num_records if result else 0,
                        'bytes': result.num_bytes if result else 0,
                        'problems': [problem.as_dict() for problem in problems]})
        if args.json:
            return
        if result is not None and not problems:
            progress.result(f'ok    {result.num_records:>10} records  '
                            f'{progress.format_bytes(result.num_bytes):>10}  {path}')
        for problem in problems:
            progress.result(f'FAIL  {problem}')

    report = verify_files(files, args.compression, decode=args.decode, on_file=on_file)
    if args.json:
        common.print_json({'ok': report.ok, 'files': reports, 'records': report.num_records,
                           'bytes': report.num_bytes, 'images_decoded': report.decoded,
                           'problems': [problem.as_dict() for problem in report.problems],
                           'notes': report.notes})
        return 0 if report.ok else 1
    for note in report.notes:
        print(f'note: {note}')
    decoded = f', {progress.plural(report.decoded, "image")} decoded' if args.decode else ''
    print(f'\nverified {progress.plural(len(files), "file")}, '
          f'{progress.plural(report.num_records, "record")}, '
          f'{progress.format_bytes(report.num_bytes)}{decoded}')
    if report.ok:
        print('no problems found')
        return 0
    print(f'{progress.plural(len(report.problems), "problem")}:')
    for problem in report.problems:
        print(f'  {problem}')
    return 1
