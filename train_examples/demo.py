"""`make demo`: the slim data road, end to end, on data it generates.

1. Writes a small MNIST-like record set (28x28 grayscale PNGs + labels) with TensorFlow's own
   TFRecordWriter, 4 shards.
2. Reads it back the way TF-Slim code does: Dataset -> TFExampleDecoder (Image + Tensor
   handlers) -> DatasetDataProvider -> tf.compat.v1.train.batch -> prefetch_queue, in a
   graph-mode Session with queue runners, and checks every decoded image and label against
   the source arrays.
3. Measures examples/s of the shuffled, batched pipeline.
"""

import argparse
import os
import time

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tqdm import tqdm  # noqa: E402

from slimdata import slim  # noqa: E402

# The queue API's deprecation notices are expected here: this is the legacy road, on purpose.
tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)

IMAGE_SIZE = 28
NUM_CLASSES = 10


def synthetic_digits(num_examples: int, seed: int = 0):
    """Learnable MNIST-like data: a fixed random template per class, plus noise."""
    rng = np.random.RandomState(seed)
    templates = rng.randint(0, 256, size=(NUM_CLASSES, IMAGE_SIZE, IMAGE_SIZE, 1))
    labels = rng.randint(0, NUM_CLASSES, size=num_examples)
    noise = rng.randint(-60, 61, size=(num_examples, IMAGE_SIZE, IMAGE_SIZE, 1))
    images = np.clip(templates[labels] + noise, 0, 255).astype(np.uint8)
    return images, labels


def write_mnist_like(output_dir: str, images: np.ndarray, labels: np.ndarray,
                     num_shards: int = 4):
    """Writes `images`/`labels` as models/research/slim classification records."""
    os.makedirs(output_dir, exist_ok=True)
    paths = [os.path.join(output_dir, f'train-{i:05d}-of-{num_shards:05d}.tfrecord')
             for i in range(num_shards)]
    writers = [tf.io.TFRecordWriter(path) for path in paths]
    for index in tqdm(range(len(images)), desc='write records', unit='ex'):
        png = tf.io.encode_png(images[index]).numpy()
        example = tf.train.Example(features=tf.train.Features(feature={
            'image/encoded': tf.train.Feature(bytes_list=tf.train.BytesList(value=[png])),
            'image/format': tf.train.Feature(bytes_list=tf.train.BytesList(value=[b'png'])),
            'image/class/label': tf.train.Feature(
                int64_list=tf.train.Int64List(value=[int(labels[index])])),
            'image/height': tf.train.Feature(int64_list=tf.train.Int64List(value=[IMAGE_SIZE])),
            'image/width': tf.train.Feature(int64_list=tf.train.Int64List(value=[IMAGE_SIZE])),
        }))
        # Contiguous shards, so an unshuffled read returns the source order.
        writers[index * num_shards // len(images)].write(example.SerializeToString())
    for writer in writers:
        writer.close()
    return paths


def mnist_like_dataset(data_dir: str, num_samples: int) -> slim.dataset.Dataset:
    """The descriptor, written exactly as TF-Slim code writes it."""
    keys_to_features = {
        'image/encoded': tf.io.FixedLenFeature((), tf.string, default_value=''),
        'image/format': tf.io.FixedLenFeature((), tf.string, default_value='png'),
        'image/class/label': tf.io.FixedLenFeature([], tf.int64, default_value=-1),
    }
    items_to_handlers = {
        'image': slim.tfexample_decoder.Image(shape=[IMAGE_SIZE, IMAGE_SIZE, 1], channels=1),
        'label': slim.tfexample_decoder.Tensor('image/class/label', shape=[]),
    }
    decoder = slim.tfexample_decoder.TFExampleDecoder(keys_to_features, items_to_handlers)
    return slim.dataset.Dataset(
        data_sources=os.path.join(data_dir, 'train-*.tfrecord'),
        reader=tf.compat.v1.TFRecordReader, decoder=decoder, num_samples=num_samples,
        items_to_descriptions={'image': 'A 28x28 grayscale image.', 'label': '0 to 9.'},
        num_classes=NUM_CLASSES)


def check_decoded_against_source(data_dir: str, images: np.ndarray, labels: np.ndarray):
    """One unshuffled epoch through the provider: every image and label must match."""
    with tf.Graph().as_default():
        provider = slim.dataset_data_provider.DatasetDataProvider(
            mnist_like_dataset(data_dir, len(images)), shuffle=False, num_epochs=1)
        image, label = provider.get(['image', 'label'])
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.compat.v1.train.start_queue_runners(sess, coord)
            checked = 0
            try:
                with tqdm(total=len(images), desc='check decoded', unit='ex') as bar:
                    while True:
                        image_value, label_value = sess.run([image, label])
                        if not (np.array_equal(image_value, images[checked])
                                and label_value == labels[checked]):
                            raise SystemExit(f'record {checked}: decoded image or label '
                                             'differs from the source')
                        checked += 1
                        bar.update()
            except tf.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
                coord.join(threads)
    if checked != len(images):
        raise SystemExit(f'read {checked} records, wrote {len(images)}')
    return checked


def measure_throughput(data_dir: str, num_samples: int, batch_size: int, seconds: float):
    """Examples/s of the shuffled pipeline: provider -> batch -> prefetch_queue."""
    with tf.Graph().as_default():
        provider = slim.dataset_data_provider.DatasetDataProvider(
            mnist_like_dataset(data_dir, num_samples), num_readers=2, shuffle=True, seed=1)
        image, label = provider.get(['image', 'label'])
        image = tf.cast(image, tf.float32) / 255.0
        images, labels = tf.compat.v1.train.batch([image, label], batch_size=batch_size,
                                                  num_threads=2, capacity=4 * batch_size)
        batch_queue = slim.prefetch_queue.prefetch_queue([images, labels])
        images, labels = batch_queue.dequeue()
        with tf.compat.v1.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.compat.v1.train.start_queue_runners(sess, coord)
            for _ in range(20):  # warm-up: fill the queues
                sess.run([images, labels])
            steps, start = 0, time.perf_counter()
            while time.perf_counter() - start < seconds:
                sess.run([images, labels])
                steps += 1
            elapsed = time.perf_counter() - start
            coord.request_stop()
            coord.join(threads)
    return steps * batch_size / elapsed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--output_dir', default='demo_out')
    parser.add_argument('--num_examples', type=int, default=2000)
    parser.add_argument('--batch_size', type=int, default=32)
    parser.add_argument('--seconds', type=float, default=5.0)
    args = parser.parse_args(argv)

    started = time.perf_counter()
    images, labels = synthetic_digits(args.num_examples)
    data_dir = os.path.join(args.output_dir, 'mnist_like')
    paths = write_mnist_like(data_dir, images, labels)
    num_bytes = sum(os.path.getsize(p) for p in paths)
    checked = check_decoded_against_source(data_dir, images, labels)
    rate = measure_throughput(data_dir, args.num_examples, args.batch_size, args.seconds)
    print(f'\nslimdata demo: {len(paths)} shards, {args.num_examples} records, '
          f'{num_bytes / 1e6:.2f} MB in {data_dir}')
    print(f'  decoded and checked against the source: {checked}/{args.num_examples} exact')
    print(f'  provider -> batch({args.batch_size}) -> prefetch_queue: {rate:,.0f} examples/s')
    print(f'  total {time.perf_counter() - started:.1f} s')


if __name__ == '__main__':
    main()
