"""A long run: >= 1,000,000 examples through DatasetDataProvider -> train.batch -> prefetch_queue.

Reads a small MNIST-like record set (raw 28x28 images and labels, `--records` in 8 shards)
for as many epochs as it takes to pass `--examples`, with 2 shuffling readers, the end of
input checked (num_epochs), in a QueueSession. Every `--every` batches it samples the resident
memory (VmRSS) and the threads (OS threads of the process, and Python threads); it reports
RSS growth after the warm-up (the first 10% of the examples), and the threads after the stop
against those before the start (measured after a short priming run, which creates
TensorFlow's process-wide thread pools). It checks that every epoch gave every label.

With `--skip-corrupt`, one shard has a damaged record and the provider reads with
skip_corrupt=True (tf.data feeds the common queue and reports each epoch's skip).

    .venv/bin/python benchmarks/soak.py [--examples 1000000] [--skip-corrupt]
"""

import argparse
import collections
import json
import logging
import os
import sys
import tempfile
import threading
import time

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

from slimdata import (  # noqa: E402
    dataset,
    dataset_data_provider,
    prefetch_queue,
    tfexample_decoder,  # noqa: E402
)
from slimdata._tf import tf  # noqa: E402
from slimdata.queue_session import QueueSession  # noqa: E402
from slimdata.records import tfrecord  # noqa: E402
from slimdata.records.example import serialize_example  # noqa: E402

NUM_SHARDS = 8
BATCH = 32


def write_records(folder: str, num_records: int) -> list:
    """Shards of raw 28x28 images whose pixels are all the label's low byte."""
    paths = []
    per_shard = num_records // NUM_SHARDS
    for shard in range(NUM_SHARDS):
        path = os.path.join(folder, f'train-{shard:05d}-of-{NUM_SHARDS:05d}.tfrecord')
        with tfrecord.TFRecordWriter(path) as writer:
            for index in range(per_shard):
                label = shard * per_shard + index
                writer.write(serialize_example({
                    'image/encoded': bytes([label % 256]) * 784, 'image/format': b'raw',
                    'image/class/label': label}))
        paths.append(path)
    return paths


def damage(path: str) -> None:
    """Flips a byte in the payload of the file's record 10 (its data CRC no longer matches)."""
    spans = list(tfrecord.iter_record_spans(path))
    data = bytearray(open(path, 'rb').read())
    data[spans[10][0] + 12 + 5] ^= 0x01
    open(path, 'wb').write(bytes(data))


def process_status() -> dict:
    fields = {}
    with open('/proc/self/status') as status:
        for line in status:
            key, _, value = line.partition(':')
            fields[key] = value.strip()
    # Python keeps a 'Dummy-N' entry for each thread of TensorFlow's own pools that ran Python
    # code (a py_function that logged), after that thread is gone too: those are not counted.
    started_by_python = [thread for thread in threading.enumerate()
                         if not thread.name.startswith('Dummy-')]
    return {'rss_mb': int(fields['VmRSS'].split()[0]) / 1024, 'os_threads': int(fields['Threads']),
            'python_threads': len(started_by_python)}


def build_pipeline(paths, num_records, num_epochs, skip_corrupt):
    decoder = tfexample_decoder.TFExampleDecoder(
        {'image/encoded': tf.io.FixedLenFeature((), tf.string),
         'image/format': tf.io.FixedLenFeature((), tf.string),
         'image/class/label': tf.io.FixedLenFeature([], tf.int64)},
        {'image': tfexample_decoder.Image(shape=[28, 28, 1], channels=1),
         'label': tfexample_decoder.Tensor('image/class/label')})
    data = dataset.Dataset(paths, tf.compat.v1.TFRecordReader, decoder, num_records, {})
    provider = dataset_data_provider.DatasetDataProvider(
        data, num_readers=2, num_epochs=num_epochs, common_queue_capacity=640,
        common_queue_min=320, skip_corrupt=skip_corrupt)
    image, label = provider.get(['image', 'label'])
    images, labels = tf.compat.v1.train.batch([image, label], BATCH, num_threads=2)
    return prefetch_queue.prefetch_queue([images, labels]).dequeue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--examples', type=int, default=1_000_000)
    parser.add_argument('--records', type=int, default=10_000)
    parser.add_argument('--every', type=int, default=500, help='batches between samples')
    parser.add_argument('--skip-corrupt', action='store_true')
    args = parser.parse_args()
    tf.compat.v1.disable_eager_execution()
    skips = collections.Counter()

    class CountSkipReports(logging.Handler):
        def emit(self, record):
            skips['reports'] += 'skipped' in record.getMessage()

    logging.getLogger('slimdata').addHandler(CountSkipReports())
    logging.getLogger('slimdata').propagate = False

    with tempfile.TemporaryDirectory() as folder:
        paths = write_records(folder, args.records)
        per_epoch = args.records
        if args.skip_corrupt:
            damage(paths[3])
            per_epoch -= args.records // NUM_SHARDS - 10
        num_epochs = -(-args.examples // per_epoch)

        with tf.Graph().as_default():  # a priming run creates TensorFlow's thread pools
            images, _ = build_pipeline(paths, args.records, 1, args.skip_corrupt)
            with QueueSession() as session:
                session.run(images)
        before = process_status()

        with tf.Graph().as_default():
            images, labels = build_pipeline(paths, args.records, num_epochs, args.skip_corrupt)
            samples, seen = [], collections.Counter()
            started = time.perf_counter()
            cpu_started = time.process_time()
            batches = 0
            with QueueSession() as session:
                samples.append(dict(process_status(), examples=0))
                while True:
                    image_batch, label_batch = session.run([images, labels])
                    seen.update(label_batch.tolist())
                    assert (image_batch[:, 0, 0, 0] == label_batch % 256).all()
                    batches += 1
                    if batches % args.every == 0:
                        samples.append(dict(process_status(), examples=batches * BATCH))
            elapsed = time.perf_counter() - started
            cpu = time.process_time() - cpu_started
            during = max(sample['os_threads'] for sample in samples)
        after = process_status()

    examples = batches * BATCH
    warm = [s for s in samples if s['examples'] >= examples * 0.1]
    growth = (max(s['rss_mb'] for s in warm) - warm[0]['rss_mb']) / warm[0]['rss_mb']
    # Every label the epochs could give, num_epochs times (the last partial batch is dropped).
    assert session.epoch_ended and len(seen) == per_epoch, (session.epoch_ended, len(seen))
    assert examples > num_epochs * per_epoch - BATCH
    result = {
        'examples': examples, 'epochs': num_epochs, 'seconds': round(elapsed, 1),
        'examples_per_s': round(examples / elapsed), 'cpu_us_per_example':
            round(cpu / examples * 1e6, 1),
        'rss_mb_after_warmup': round(warm[0]['rss_mb'], 1),
        'rss_mb_max_after_warmup': round(max(s['rss_mb'] for s in warm), 1),
        'rss_mb_end': round(samples[-1]['rss_mb'], 1),
        'rss_growth_after_warmup_percent': round(growth * 100, 2),
        'os_threads_before_during_after': [before['os_threads'], during, after['os_threads']],
        'python_threads_before_after': [before['python_threads'], after['python_threads']],
        'skip_reports': skips['reports'], 'skip_corrupt': args.skip_corrupt,
    }
    print(json.dumps(result, indent=1))
    ok = growth < 0.05 and after['python_threads'] == before['python_threads'] and \
        after['os_threads'] <= before['os_threads']
    if args.skip_corrupt:
        ok = ok and skips['reports'] == num_epochs
    print('PASS' if ok else 'FAIL')
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
