"""How fast slimdata reads TFRecord files, against the limits and the other readers.

Builds its own data in a temporary folder: a "large" file of ~50 KB records (images) and a
"small" file of ~400 B records (e.g. tokenized text or MNIST-like rows). With the page cache
warm, it times each reader over each file (median of --repeats rounds, each round running
every reader once) and prints MB/s and records/s:

  plain read           readinto() of 1 MiB chunks into one reused buffer: the I/O limit
  read + CRC32C        the same reads, plus the CRC32C of every record's length and data, in
                       place (no checks, no objects): the limit of any verifying reader
  slimdata iter        slimdata.records.tfrecord.iter_records(verify=True): bytes per record, CRCs
  slimdata iter -v     iter_records(verify=False): only the length CRCs
  slimdata verify      verify_file(): all CRCs, no record objects (what `slimdata verify` does)
  slimdata count       count_records(): jumps from header to header
  tf.data              tf.data.TFRecordDataset, iterated eagerly record by record
  tf.data batch(1024)  the same, iterated a batch at a time
  tfrecord (PyPI)      tfrecord.reader.tfrecord_iterator: no CRC check, and it yields one
                       reused buffer; run in a subprocess, because that package and TensorFlow
                       register the same protobuf names and cannot share a process

and then the ratios the targets are stated in. Run from the repository root:

    .venv/bin/python benchmarks/bench_tfrecord.py [--repeats 3] [--large-mb 100] [--small-mb 50]
"""

import argparse
import collections
import json
import os
import platform
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
from typing import Callable, Dict, List, Tuple

from crc32c import crc32c

from slimdata.records import tfrecord

CHUNK = 1024 * 1024


def build_file(path: str, total_bytes: int, record_size: int, seed: int) -> int:
    """Writes records of record_size +-10% random bytes up to total_bytes; returns the count."""
    rng = random.Random(seed)
    pool = rng.randbytes(4 * record_size + 4096)
    count, written = 0, 0
    with tfrecord.TFRecordWriter(path) as writer:
        while written < total_bytes:
            size = rng.randint(record_size * 9 // 10, record_size * 11 // 10)
            start = rng.randrange(len(pool) - size)
            writer.write(pool[start:start + size])
            written += size + tfrecord.FRAMING_SIZE
            count += 1
    return count


def plain_read(path: str) -> None:
    buffer = bytearray(CHUNK)
    with open(path, 'rb', buffering=0) as file:
        while file.readinto(buffer):
            pass


def read_and_crc(path: str) -> None:
    """Reads in 1 MiB chunks and CRCs each record's length and data where it lies."""
    header = struct.Struct('<Q').unpack_from
    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    start = end = 0
    with open(path, 'rb', buffering=0) as file:
        while True:
            if end - start < tfrecord.HEADER_SIZE:
                view[:end - start] = view[start:end]
                end, start = end - start, 0
                end += file.readinto(view[end:])
                if end == 0:
                    return
            length = header(view, start)[0]
            crc32c(view[start:start + 8])
            need = tfrecord.FRAMING_SIZE + length
            if end - start < need:
                view[:end - start] = view[start:end]
                end, start = end - start, 0
                if need > len(buffer):
                    grown = bytearray(need)
                    grown[:end] = view[:end]
                    view.release()
                    buffer, view = grown, memoryview(grown)
                while end < need:
                    end += file.readinto(view[end:])
            crc32c(view[start + 12:start + 12 + length])
            start += need


def consume(records) -> None:
    for _ in records:
        pass


def slimdata_readers() -> Dict[str, Callable[[str], None]]:
    return {
        'slimdata iter': lambda path: consume(tfrecord.iter_records(path, verify=True)),
        'slimdata iter -v': lambda path: consume(tfrecord.iter_records(path, verify=False)),
        'slimdata verify': tfrecord.verify_file,
        'slimdata count': tfrecord.count_records,
    }


def tf_readers() -> Dict[str, Callable[[str], None]]:
    from slimdata._tf import tf
    return {
        'tf.data': lambda path: consume(tf.data.TFRecordDataset(path)),
        'tf.data batch(1024)': lambda path: consume(tf.data.TFRecordDataset(path).batch(1024)),
    }


def time_once(function: Callable[[str], None], path: str) -> float:
    started = time.perf_counter()
    function(path)
    return time.perf_counter() - started


def time_tfrecord_package(path: str) -> float:
    """One pass of the PyPI reader, timed inside a fresh process (see the module docstring)."""
    code = textwrap.dedent(f'''
        import json, time
        from tfrecord.reader import tfrecord_iterator
        started = time.perf_counter()
        for _ in tfrecord_iterator({path!r}):
            pass
        print(json.dumps(time.perf_counter() - started))
    ''')
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--large-mb', type=int, default=100)
    parser.add_argument('--small-mb', type=int, default=50)
    parser.add_argument('--workdir', help='where to build the data (default: a temp folder)')
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(dir=args.workdir) as workdir:
        files = {'large': (os.path.join(workdir, 'large.tfrecord'), 50_000, args.large_mb),
                 'small': (os.path.join(workdir, 'small.tfrecord'), 400, args.small_mb)}
        counts = {name: build_file(path, megabytes * 10**6, size, seed=len(name))
                  for name, (path, size, megabytes) in files.items()}
        readers = {'plain read': plain_read, 'read + CRC32C': read_and_crc,
                   **slimdata_readers(), **tf_readers(), 'tfrecord (PyPI)': None}
        runs: Dict[Tuple[str, str], List[float]] = collections.defaultdict(list)
        for name, (path, _, _) in files.items():
            plain_read(path)  # warm the page cache
            # Each round runs every reader once, so a change in the machine's load (it is
            # shared) affects all readers alike instead of a few.
            for _ in range(args.repeats):
                for reader, function in readers.items():
                    runs[reader, name].append(time_tfrecord_package(path) if function is None
                                              else time_once(function, path))
        seconds = {key: statistics.median(values) for key, values in runs.items()}
        report(files, counts, seconds, args.repeats)


def report(files, counts, seconds, repeats) -> None:
    print(f'Python {platform.python_version()}, {os.cpu_count()} CPUs, load average '
          f'{os.getloadavg()[0]:.1f}; median of {repeats} interleaved runs, page cache warm\n')
    sizes = {name: os.path.getsize(path) for name, (path, _, _) in files.items()}
    header = '| reader | ' + ' | '.join(
        f'{name}: MB/s | {name}: records/s' for name in files) + ' |'
    print(header)
    print('|' + '---|' * (1 + 2 * len(files)))
    for reader in dict.fromkeys(reader for reader, _ in seconds):
        cells = []
        for name in files:
            elapsed = seconds[reader, name]
            cells += [f'{sizes[name] / elapsed / 1e6:,.0f}', f'{counts[name] / elapsed:,.0f}']
        print(f'| {reader} | ' + ' | '.join(cells) + ' |')
    for name in files:
        print(f'\n{name}: {counts[name]:,} records, {sizes[name] / 1e6:.0f} MB '
              f'({sizes[name] / counts[name]:,.0f} B per record)', end='')
    print('\n')

    def ratio(numerator, denominator, name):
        return seconds[denominator, name] / seconds[numerator, name]

    targets = [  # (file, reader, reference, the target, if the issue sets one)
        ('large', 'slimdata iter', 'read + CRC32C', ('>=', 0.75)),
        ('large', 'slimdata iter', 'tf.data', ('>=', 2.5)),
        ('small', 'slimdata iter', 'tf.data', ('>=', 2.0)),
        ('small', 'slimdata iter', 'tf.data batch(1024)', None),
        ('large', 'slimdata count', 'plain read', ('>', 1.0)),
        ('small', 'slimdata count', 'plain read', None),
    ]
    for name, numerator, denominator, target in targets:
        value = ratio(numerator, denominator, name)
        verdict = ''
        if target is not None:
            operator, bound = target
            met = value >= bound if operator == '>=' else value > bound
            verdict = f'  (target {operator} {bound}: {"met" if met else "MISSED"})'
        print(f'{name:5s} {numerator} / {denominator}: {value:.2f}x{verdict}')


if __name__ == '__main__':
    main()
