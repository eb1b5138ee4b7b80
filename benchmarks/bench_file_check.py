"""What the framing check of the data files costs when a pipeline is built.

slimdata checks every data file before TensorFlow's reader opens it
(`slimdata.record_checks.check_data_files`, built on `tfrecord.check_file`): an uncompressed
file from its record headers alone, a compressed one by decompressing it. This builds large
record sets in `bench_out/file_check/` (reused while their manifest matches) and times the
check as a pipeline pays it, in fresh processes (the per-process cache empty), with the files
in the page cache (warm) and evicted from it (cold: `posix_fadvise(DONTNEED)` on each file,
which drops only these files' clean pages), median of --repeats runs. It prints ms, ms per GB
and us per record, the check again in the same process (cached: a `stat` per file), and, for
reference, the time to read every file once in the same state (what the first epoch's reader
pays anyway).

Sets (sizes by --scale, 1.0 = the defaults below):

  images   2,000 shards, 5 GB: ~100 KB records (ImageNet-like JPEG sizes)
  small    500 shards, 1 GB: ~400 B records (MNIST-like, tokenized text)
  gzip     200 shards of GZIP-compressed ~2 KB records, 1 GB decompressed

    .venv/bin/python benchmarks/bench_file_check.py [--repeats 3] [--scale 1.0] [--sets ...]
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from typing import Dict, List

from slimdata.records import tfrecord

ROOT = os.path.join('bench_out', 'file_check')
GENERATOR_VERSION = 1
# name -> (shards, records per shard, record size in bytes, compression, compressible)
SETS = {
    'images': (2000, 25, 100_000, None, False),
    'small': (500, 5000, 400, None, False),
    'gzip': (200, 2500, 2_000, 'GZIP', True),
}


def _spec(name: str, scale: float):
    shards, per_shard, size, compression, compressible = SETS[name]
    return dict(shards=max(1, int(shards * scale)), per_shard=per_shard, size=size,
                compression=compression, compressible=compressible,
                version=GENERATOR_VERSION)


def ensure_set(name: str, scale: float) -> List[str]:
    """Writes the set (once) and returns its shard paths."""
    spec = _spec(name, scale)
    folder = os.path.join(ROOT, name)
    manifest = os.path.join(folder, 'manifest.json')
    if os.path.exists(manifest) and json.load(open(manifest)) == spec:
        return sorted(os.path.join(folder, f) for f in os.listdir(folder)
                      if f.endswith('.tfrecord'))
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    rng = random.Random(name)
    if spec['compressible']:  # words from a small vocabulary: compresses about 3:1
        words = [rng.randbytes(rng.randint(2, 9)) for _ in range(500)]
        pool = b' '.join(rng.choice(words) for _ in range(400_000))
    else:
        pool = rng.randbytes(4 << 20)
    started = time.perf_counter()
    for shard in range(spec['shards']):
        path = os.path.join(folder, f'train-{shard:05d}-of-{spec["shards"]:05d}.tfrecord')
        with tfrecord.TFRecordWriter(path, spec['compression']) as writer:
            for _ in range(spec['per_shard']):
                size = rng.randint(spec['size'] * 9 // 10, spec['size'] * 11 // 10)
                start = rng.randrange(len(pool) - size)
                writer.write(pool[start:start + size])
    json.dump(spec, open(manifest, 'w'))
    print(f'  wrote {name} in {time.perf_counter() - started:.0f} s', file=sys.stderr)
    return ensure_set(name, scale)


def evict(paths: List[str]) -> None:
    """Drops the files' pages from the page cache (their clean pages only)."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


_MEASURE = '''
import json, sys, time
from slimdata import record_checks
paths, compression = json.loads(sys.argv[1]), sys.argv[2]
started = time.perf_counter()
checks = record_checks.check_data_files(paths, compression)
first = time.perf_counter() - started
started = time.perf_counter()
record_checks.check_data_files(paths, compression)
again = time.perf_counter() - started
print(json.dumps({'seconds': first, 'cached_seconds': again,
                  'records': sum(c.num_records for c in checks),
                  'bytes': sum(c.num_bytes for c in checks)}))
'''


def read_all(paths: List[str]) -> float:
    """Seconds to read every file once, 16 MB at a time: what any reader of them pays."""
    started = time.perf_counter()
    for path in paths:
        with open(path, 'rb', buffering=0) as file:
            while file.read(1 << 24):
                pass
    return time.perf_counter() - started


def measure(paths: List[str], compression: str, cold: bool) -> Dict[str, float]:
    evict(paths) if cold else read_all(paths)  # out of, or into, the page cache
    done = subprocess.run([sys.executable, '-c', _MEASURE, json.dumps(paths), compression],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--scale', type=float, default=1.0)
    parser.add_argument('--sets', nargs='+', default=list(SETS), choices=list(SETS))
    args = parser.parse_args()
    print('| set | shards | GB on disk | records | cache | check ms | ms per GB | us per record '
          '| again in the process, ms | reading the files once, ms |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for name in args.sets:
        paths = ensure_set(name, args.scale)
        compression = SETS[name][3] or ''
        for cold in (False, True):
            runs = [measure(paths, compression, cold) for _ in range(args.repeats)]
            seconds = statistics.median(run['seconds'] for run in runs)
            cached = statistics.median(run['cached_seconds'] for run in runs)
            records, size = runs[0]['records'], runs[0]['bytes']
            reads = []
            for _ in range(args.repeats):
                if cold:
                    evict(paths)
                reads.append(read_all(paths))
            print(f'| {name} | {len(paths)} | {size / 1e9:.2f} | {records:,} | '
                  f'{"cold" if cold else "warm"} | {seconds * 1e3:,.0f} | '
                  f'{seconds * 1e3 / (size / 1e9):,.0f} | {seconds / records * 1e6:.2f} | '
                  f'{cached * 1e3:.1f} | {statistics.median(reads) * 1e3:,.0f} |', flush=True)


if __name__ == '__main__':
    main()
