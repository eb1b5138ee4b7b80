"""Shared test set-up: quiet TensorFlow logs, the files with slow tests first, small helpers to
drain graph-mode pipelines, and a converted image folder shared by the tests that damage it."""

import os
import shutil

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

import pytest  # noqa: E402


@pytest.hookimpl(tryfirst=True)  # before --failed-first/--new-first, which then still apply
def pytest_collection_modifyitems(config, items):
    """Runs the files that hold slow tests first, each file's tests together and in order.

    `make test` runs two pytest-xdist workers: a long test handed out near the end keeps one
    worker busy while the other has nothing left. Started first, the long tests overlap with
    everything else, and the run ends on short ones (which `--dist worksteal` balances).
    Keeping a file's tests together builds its module fixtures once per worker."""
    slow_files = {item.path for item in items if item.get_closest_marker('slow')}
    items.sort(key=lambda item: item.path not in slow_files)  # stable: the order otherwise


def drain(fetches, max_steps=10_000):
    """Runs `fetches` in the default graph's session until OutOfRangeError; returns the values.

    Initialises global and local variables (num_epochs counters), starts the queue runners
    under a Coordinator, and stops and joins them at the end.
    """
    import tensorflow as tf
    values = []
    with tf.compat.v1.Session() as sess:
        sess.run([tf.compat.v1.global_variables_initializer(),
                  tf.compat.v1.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.compat.v1.train.start_queue_runners(sess=sess, coord=coord)
        try:
            for _ in range(max_steps):
                values.append(sess.run(fetches))
            raise AssertionError(f'no OutOfRangeError after {max_steps} steps')
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return values


def write_with_tf(path, records, compression=None):
    """Writes `records` with TensorFlow's own TFRecordWriter (the independent reference)."""
    import tensorflow as tf
    options = tf.io.TFRecordOptions(compression_type=compression or '')
    with tf.io.TFRecordWriter(str(path), options=options) as writer:
        for record in records:
            writer.write(record)
    return str(path)


@pytest.fixture
def graph():
    """A fresh default graph, for the queue-based (graph mode) API."""
    import tensorflow as tf
    with tf.Graph().as_default() as g:
        yield g


@pytest.fixture(scope='session')
def converted(tmp_path_factory):
    """A folder the image-folder converter wrote, once a session: two classes of 4 images, a
    train split in 2 shards of 4 records; its source is `converted.parent / 'src'`. Tests that
    change it take `folder`, a copy of their own. (test_imagenet.py and test_cli_consistency.py
    have a `converted` of their own.)"""
    # Imported when used, as TensorFlow above: loading conftest stays cheap for every worker.
    from slimdata.datasets import classification
    from test_cli_convert import _class_folders
    base = tmp_path_factory.mktemp('converted')
    _class_folders(base / 'src', per_class=4)
    classification.convert_image_folder(str(base / 'src'), str(base / 'out'),
                                        validation_ratio=0, num_shards=2)
    return base / 'out'


@pytest.fixture
def folder(converted, tmp_path):
    """A copy of `converted` in the test's own temporary folder, to change as it likes."""
    shutil.copytree(converted, tmp_path / 'out')
    return tmp_path / 'out'
