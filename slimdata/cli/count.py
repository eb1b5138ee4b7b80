"""`slimdata count PATH...`: the records of each file and the total (no TensorFlow)."""

import argparse

from slimdata import progress
from slimdata.cli import common
from slimdata.records import tfrecord


def register(commands: argparse._SubParsersAction, selected: bool) -> None:
    parser = common.command_parser(
        commands, 'count', 'count the records of TFRecord files',
        'Count the records of TFRecord files, and the total. An uncompressed file is counted '
        'from its record headers, seeking over the data; a compressed one is inflated.',
        examples=['slimdata count out/voc2007',
                  "slimdata count 'out/voc2007/trainval-*' --json"])
    parser.add_argument('paths', nargs='+', metavar='PATH', help='files, folders or globs')
    common.add_compression_option(parser)
    common.add_json_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    total, counted, failed = 0, [], []
    for path in common.expand(args.paths):
        try:
            num_records = tfrecord.count_records(path, args.compression)
        except (ValueError, OSError) as error:  # TFRecordError is a ValueError
            failed.append({'path': path, 'error': str(error)})
            if not args.json:
                progress.error(error)
            continue
        total += num_records
        counted.append({'path': path, 'records': num_records})
        if not args.json:
            print(f'{num_records:>12}  {progress.printable(path)}')
    if args.json:
        common.print_json({'files': counted, 'errors': failed, 'total': total})
    else:
        print(f'{total:>12}  total' + (f' ({len(failed)} file(s) could not be counted)'
                                       if failed else ''))
    return 1 if failed else 0
