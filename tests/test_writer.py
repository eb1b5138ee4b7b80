"""slimdata.records.writer: shards read back by TensorFlow, parallel == serial, atomic, resumable."""

import functools
import json
import multiprocessing
import os
import pickle
import re
import signal
import threading
import time

import pytest

from slimdata._tf import tf
from slimdata.records.dataset_info import write_dataset_info
from slimdata.records.example import serialize_example
from slimdata.records.writer import (ConversionError, EncodedExample, SkipExample, WriteSummary,
                             shard_filename, write_sharded)

NUM_ITEMS = 23
NUM_SHARDS = 4
FAILING_ITEM = 13  # in shard 2 of 4 (shards hold 5, 6, 6, 6 items)


# The encode functions are top-level so that spawned pool workers can unpickle them.
def is_skipped(number):
    return number % 7 == 3


def is_noted(number):
    return number % 5 == 0


def encode_number(number):
    if is_skipped(number):
        raise SkipExample('seven plus three', f'item {number}')
    data = serialize_example({'number': number, 'name': f'n{number}', 'half': number / 2})
    if is_noted(number):
        return EncodedExample(data, notes=(('multiple of five', f'item {number}'),))
    return data


def encode_failing_at(bad_number, number):
    if number == bad_number:
        raise OSError(f'cannot read /data/{number}.jpg')
    return encode_number(number)


def encode_interrupted_at(bad_number, number):
    if number == bad_number:
        raise KeyboardInterrupt
    return encode_number(number)


def encode_dying_at(bad_number, number):
    if number == bad_number:
        os._exit(1)  # a worker killed, e.g. by the out-of-memory killer
    return encode_number(number)


def encode_after_the_interrupt(log_dir, interrupted_marker, number):
    """encode_number once `interrupted_marker` exists; first leaves a file named `number` in
    `log_dir`. So no shard can be finished before the test has sent its Ctrl-C, however
    slowly the test's threads are scheduled on a loaded machine."""
    open(os.path.join(log_dir, str(number)), 'w').close()
    for _ in range(12000):  # at most 2 minutes
        if os.path.exists(interrupted_marker):
            break
        time.sleep(0.01)
    return encode_number(number)


def encode_must_not_run(number):
    raise AssertionError(f'encode called for item {number}')


def encode_returning_a_proto(number):
    return tf.train.Example()


def expected_example(number):
    """The Example of `number`, built with the protobuf API directly."""
    feature = {
        'number': tf.train.Feature(int64_list=tf.train.Int64List(value=[number])),
        'name': tf.train.Feature(bytes_list=tf.train.BytesList(value=[f'n{number}'.encode()])),
        'half': tf.train.Feature(float_list=tf.train.FloatList(value=[number / 2])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature))


def expected_shards(num_items, num_shards):
    """The kept numbers of each shard, by the contract's contiguous split rule."""
    return [[n for n in range(k * num_items // num_shards, (k + 1) * num_items // num_shards)
             if not is_skipped(n)] for k in range(num_shards)]


def tf_records(path):
    """The records of a file as TensorFlow's tf.data.TFRecordDataset reads them."""
    with tf.Graph().as_default():
        next_record = tf.compat.v1.data.make_one_shot_iterator(
            tf.data.TFRecordDataset(path)).get_next()
        records = []
        with tf.compat.v1.Session() as session:
            while True:
                try:
                    records.append(session.run(next_record))
                except tf.errors.OutOfRangeError:
                    return records


def file_bytes(folder):
    """basename -> contents of every file in `folder` (temporaries included)."""
    return {name: open(os.path.join(folder, name), 'rb').read()
            for name in sorted(os.listdir(folder))}


def shard_names(num_shards, split='train'):
    return [shard_filename(split, k, num_shards) for k in range(num_shards)]


def test_shard_filename():
    assert shard_filename('train', 3, 12) == 'train-00003-of-00012.tfrecord'
    assert shard_filename('val', 0, 1) == 'val-00000-of-00001.tfrecord'


def test_shards_hold_contiguous_items_in_order(tmp_path, capsys):
    summary = write_sharded(range(NUM_ITEMS), encode_number, str(tmp_path), 'train',
                            NUM_SHARDS, desc='numbers')
    assert sorted(os.listdir(tmp_path)) == shard_names(NUM_SHARDS)
    for name, numbers in zip(shard_names(NUM_SHARDS), expected_shards(NUM_ITEMS, NUM_SHARDS)):
        records = tf_records(str(tmp_path / name))
        assert [tf.train.Example.FromString(r) for r in records] == \
            [expected_example(n) for n in numbers]
    assert summary.shards == [{'file': name, 'num_records': len(numbers)} for name, numbers in
                              zip(shard_names(NUM_SHARDS), expected_shards(NUM_ITEMS, NUM_SHARDS))]
    assert summary.num_records == NUM_ITEMS - sum(map(is_skipped, range(NUM_ITEMS)))
    assert summary.num_bytes == sum(os.path.getsize(tmp_path / n) for n in os.listdir(tmp_path))
    assert summary.shards_reused == 0
    assert 'numbers' in capsys.readouterr().err  # the progress bar


def test_skips_and_notes_are_counted_with_details(tmp_path):
    items = list(range(40))
    summary = write_sharded(items, encode_number, str(tmp_path), 'train', NUM_SHARDS)
    skipped = [f'item {n}' for n in items if is_skipped(n)]
    noted = [f'item {n}' for n in items if is_noted(n) and not is_skipped(n)]
    assert len(skipped) > 3 and len(noted) > 3  # more than format() lists
    assert summary.skipped == {'seven plus three': skipped}
    assert summary.notes == {'multiple of five': noted}
    text = summary.format()
    assert f'train: {summary.num_records} records in {NUM_SHARDS} shards' in text
    assert f'{summary.num_bytes / 1000:.1f} kB' in text
    assert 'records/s' in text and 'MB/s' in text
    assert (f'seven plus three: {len(skipped)} ({", ".join(skipped[:3])}, ... '
            f'{len(skipped) - 3} more)') in text
    assert (f'multiple of five: {len(noted)} ({", ".join(noted[:3])}, ... '
            f'{len(noted) - 3} more)') in text
    assert f'skipped {len(skipped)} items:' in text


@pytest.mark.slow
def test_workers_give_byte_identical_files(tmp_path):
    serial, parallel = tmp_path / 'serial', tmp_path / 'parallel'
    items = list(range(150))  # 50 per shard, 3 shards for 2 workers
    serial_summary = write_sharded(items, encode_number, str(serial), 'train', 3, workers=1)
    parallel_summary = write_sharded(items, encode_number, str(parallel), 'train', 3, workers=2)
    assert file_bytes(serial) == file_bytes(parallel)
    assert sorted(file_bytes(parallel)) == shard_names(3)
    for field in ('shards', 'num_records', 'num_bytes', 'skipped', 'notes'):
        assert getattr(serial_summary, field) == getattr(parallel_summary, field)


@pytest.mark.slow
def test_workers_progress_bar_counts_every_item(tmp_path, capsys):
    write_sharded(range(150), encode_number, str(tmp_path), 'train', 3, workers=2,
                  desc='numbers')
    assert '150/150' in capsys.readouterr().err


def test_more_workers_than_shards_says_so_and_writes_the_same(tmp_path, capsys):
    summary = write_sharded(range(NUM_ITEMS), encode_number, str(tmp_path / 'one'), 'train', 1,
                            workers=3)
    assert 'ask for more shards' in capsys.readouterr().err
    reference = write_sharded(range(NUM_ITEMS), encode_number, str(tmp_path / 'ref'), 'train',
                              1)
    assert file_bytes(tmp_path / 'one') == file_bytes(tmp_path / 'ref')
    assert (summary.shards, summary.skipped, summary.notes) == \
        (reference.shards, reference.skipped, reference.notes)


def interrupt_when_a_shard_is_being_written(folder, log_dir, interrupted_marker):
    """SIGINT to this process (the parent's share of a Ctrl-C) once a temporary file exists
    and an item is being encoded; then lets the workers' encoding go on."""
    for _ in range(12000):  # at most 2 minutes
        if (any(name.startswith('.') for name in os.listdir(folder))
                and os.listdir(log_dir)):
            os.kill(os.getpid(), signal.SIGINT)
            break
        time.sleep(0.01)
    open(interrupted_marker, 'w').close()


@pytest.mark.slow
def test_ctrl_c_stops_the_workers_mid_shard_and_leaves_no_temporaries(tmp_path):
    out, log, marker = tmp_path / 'out', tmp_path / 'log', str(tmp_path / 'interrupted')
    out.mkdir()
    log.mkdir()
    watcher = threading.Thread(target=interrupt_when_a_shard_is_being_written,
                               args=(out, log, marker), daemon=True)
    watcher.start()
    with pytest.raises(KeyboardInterrupt):
        write_sharded(range(200), functools.partial(encode_after_the_interrupt, str(log), marker),
                      str(out), 'train', 4, workers=2)
    watcher.join()
    assert multiprocessing.active_children() == []
    assert all(not name.startswith('.') for name in os.listdir(out))
    expected = dict(zip(shard_names(4), expected_shards(200, 4)))
    for name in os.listdir(out):  # whatever was completed is complete
        assert len(tf_records(str(out / name))) == len(expected[name])
    # The workers were stopped mid-shard (at the next item): a shard has 50 items.
    assert len(os.listdir(log)) < 25


def assert_failed_cleanly(folder):
    """Shards before the failing one are complete; nothing else, no temporaries."""
    assert sorted(os.listdir(folder)) == shard_names(NUM_SHARDS)[:2]
    for name, numbers in zip(shard_names(NUM_SHARDS), expected_shards(NUM_ITEMS, NUM_SHARDS)[:2]):
        assert len(tf_records(str(folder / name))) == len(numbers)


def test_failing_encode_names_split_index_and_item(tmp_path):
    with pytest.raises(ConversionError) as raised:
        write_sharded(range(NUM_ITEMS), functools.partial(encode_failing_at, FAILING_ITEM),
                      str(tmp_path), 'train', NUM_SHARDS)
    message = str(raised.value)
    assert isinstance(raised.value, ValueError)
    assert message.startswith(f"split 'train', item {FAILING_ITEM} ({FAILING_ITEM!r}): ")
    assert f'OSError: cannot read /data/{FAILING_ITEM}.jpg' in message
    assert isinstance(raised.value.__cause__, OSError)
    assert (raised.value.split, raised.value.index, raised.value.item) == \
        ('train', FAILING_ITEM, FAILING_ITEM)
    assert_failed_cleanly(tmp_path)


@pytest.mark.slow
def test_failing_encode_in_the_pool_names_split_index_and_item(tmp_path):
    with pytest.raises(ConversionError) as raised:
        write_sharded(range(NUM_ITEMS), functools.partial(encode_failing_at, FAILING_ITEM),
                      str(tmp_path), 'train', NUM_SHARDS, workers=2)
    assert str(raised.value).startswith(f"split 'train', item {FAILING_ITEM} ({FAILING_ITEM}): ")
    assert f'OSError: cannot read /data/{FAILING_ITEM}.jpg' in str(raised.value)
    # The worker's traceback, the original exception included, comes along as the cause.
    assert f'OSError: cannot read /data/{FAILING_ITEM}.jpg' in str(raised.value.__cause__)
    assert_failed_cleanly(tmp_path)


@pytest.mark.slow
def test_a_dead_worker_is_an_error_naming_the_items_in_flight(tmp_path):
    with pytest.raises(RuntimeError, match="split 'train': a worker process died") as raised:
        write_sharded(range(NUM_ITEMS), functools.partial(encode_dying_at, FAILING_ITEM),
                      str(tmp_path), 'train', NUM_SHARDS, workers=2)
    first, last = map(int, re.search(r'items (\d+) to (\d+)', str(raised.value)).groups())
    assert first <= FAILING_ITEM <= last
    assert all(not name.startswith('.') for name in os.listdir(tmp_path))
    for name in os.listdir(tmp_path):  # whatever was completed is complete
        shard = shard_names(NUM_SHARDS).index(name)
        assert len(tf_records(str(tmp_path / name))) == \
            len(expected_shards(NUM_ITEMS, NUM_SHARDS)[shard])


def test_conversion_and_skip_errors_survive_pickling():
    error = ConversionError('val', 4, ('a.xml', 'a.jpg'), 'ValueError: bad box')
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.split, copy.index, copy.item, copy.cause) == \
        (str(error), 'val', 4, ('a.xml', 'a.jpg'), 'ValueError: bad box')
    skip = pickle.loads(pickle.dumps(SkipExample('missing image', 'b.jpg')))
    assert (skip.reason, skip.detail, str(skip)) == ('missing image', 'b.jpg',
                                                    'missing image: b.jpg')


def test_interrupted_run_resumes_with_the_same_output(tmp_path):
    resumed, uninterrupted = tmp_path / 'resumed', tmp_path / 'uninterrupted'
    with pytest.raises(KeyboardInterrupt):
        write_sharded(range(NUM_ITEMS), functools.partial(encode_interrupted_at, FAILING_ITEM),
                      str(resumed), 'train', NUM_SHARDS)
    assert_failed_cleanly(resumed)
    kept = {name: os.stat(resumed / name) for name in os.listdir(resumed)}

    summary = write_sharded(range(NUM_ITEMS), encode_number, str(resumed), 'train', NUM_SHARDS)
    reference = write_sharded(range(NUM_ITEMS), encode_number, str(uninterrupted), 'train',
                              NUM_SHARDS)
    assert file_bytes(resumed) == file_bytes(uninterrupted)
    for name, before in kept.items():  # reused, not rewritten
        after = os.stat(resumed / name)
        assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert summary.shards_reused == 2
    assert (summary.shards, summary.num_records, summary.num_bytes) == \
        (reference.shards, reference.num_records, reference.num_bytes)
    # Only the items encoded by this run are in skipped/notes.
    first_new_item = 2 * NUM_ITEMS // NUM_SHARDS
    assert summary.skipped == {'seven plus three': [
        f'item {n}' for n in range(first_new_item, NUM_ITEMS) if is_skipped(n)]}
    assert '2 reused from an earlier run' in summary.format()


def test_rerun_over_complete_output_reuses_every_shard(tmp_path):
    first = write_sharded(range(NUM_ITEMS), encode_number, str(tmp_path), 'train', NUM_SHARDS)
    before = file_bytes(tmp_path)
    again = write_sharded(range(NUM_ITEMS), encode_must_not_run, str(tmp_path), 'train',
                          NUM_SHARDS)
    assert file_bytes(tmp_path) == before
    assert again.shards_reused == NUM_SHARDS
    assert (again.shards, again.num_records) == (first.shards, first.num_records)


def test_stale_temporaries_of_the_split_are_removed(tmp_path):
    stale = f'.{shard_filename("train", 1, 2)}.tmp-99999'
    other_split = f'.{shard_filename("val", 0, 2)}.tmp-99999'
    for name in (stale, other_split):
        (tmp_path / name).write_bytes(b'partial')
    write_sharded(range(4), encode_number, str(tmp_path), 'train', 2)
    assert sorted(os.listdir(tmp_path)) == sorted(shard_names(2) + [other_split])


def test_shards_with_another_shard_count_are_refused(tmp_path):
    old = tmp_path / shard_filename('train', 0, 3)
    old.write_bytes(b'')
    (tmp_path / shard_filename('train_aug', 0, 5)).write_bytes(b'')  # another split: fine
    with pytest.raises(ValueError, match=str(old.name)) as raised:
        write_sharded(range(10), encode_number, str(tmp_path), 'train', 2)
    assert "split 'train'" in str(raised.value)
    assert sorted(os.listdir(tmp_path)) == sorted([old.name, shard_filename('train_aug', 0, 5)])


def test_fewer_items_than_shards_writes_one_shard_per_item(tmp_path):
    summary = write_sharded([1, 2, 4], encode_number, str(tmp_path), 'val', 8)
    assert sorted(os.listdir(tmp_path)) == shard_names(3, 'val')
    assert [len(tf_records(str(tmp_path / name))) for name in shard_names(3, 'val')] == [1, 1, 1]
    assert summary.num_records == 3


def test_shard_whose_items_are_all_skipped_is_a_valid_empty_file(tmp_path):
    summary = write_sharded([3, 10, 1], encode_number, str(tmp_path), 'train', 2)
    assert summary.shards == [{'file': shard_filename('train', 0, 2), 'num_records': 0},
                              {'file': shard_filename('train', 1, 2), 'num_records': 1}]
    assert tf_records(str(tmp_path / shard_filename('train', 0, 2))) == []


def test_empty_items_are_refused_naming_the_split(tmp_path):
    with pytest.raises(ValueError, match="split 'test': no items to write"):
        write_sharded([], encode_number, str(tmp_path / 'out'), 'test', 2)
    assert not (tmp_path / 'out').exists()


@pytest.mark.parametrize('arguments, message', [
    (dict(num_shards=0), 'num_shards must be an int >= 1, got 0'),
    (dict(workers=0), 'workers must be an int >= 1, got 0'),
    (dict(split='a/b'), "split must be a plain file name prefix, got 'a/b'"),
    (dict(workers=2, encode=lambda n: b''), 'encode must be picklable when workers > 1'),
])
def test_bad_arguments_are_refused(tmp_path, arguments, message):
    call = dict(items=range(3), encode=encode_number, output_dir=str(tmp_path), split='train',
                num_shards=2)
    with pytest.raises(ValueError) as raised:
        write_sharded(**{**call, **arguments})
    assert message in str(raised.value)
    assert os.listdir(tmp_path) == []


def test_encode_returning_something_else_than_bytes_is_an_error(tmp_path):
    with pytest.raises(ConversionError, match=r"item 0 \(0\): TypeError: encode returned "
                                              r"Example; expected bytes"):
        write_sharded(range(3), encode_returning_a_proto, str(tmp_path), 'train', 1)
    assert os.listdir(tmp_path) == []


def test_url_folders_go_through_gfile():
    folder = 'ram://slimdata_test_writer/out'
    summary = write_sharded(range(NUM_ITEMS), encode_number, folder, 'train', NUM_SHARDS)
    assert sorted(tf.io.gfile.listdir(folder)) == shard_names(NUM_SHARDS)
    assert [len(tf_records(f'{folder}/{name}')) for name in shard_names(NUM_SHARDS)] == \
        [len(numbers) for numbers in expected_shards(NUM_ITEMS, NUM_SHARDS)]
    again = write_sharded(range(NUM_ITEMS), encode_number, folder, 'train', NUM_SHARDS)
    assert again.shards_reused == NUM_SHARDS and again.shards == summary.shards
    assert again.num_bytes == summary.num_bytes


def test_dataset_info_records_what_tensorflow_counts(tmp_path):
    train = write_sharded(range(NUM_ITEMS), encode_number, str(tmp_path), 'train', NUM_SHARDS)
    val = write_sharded(range(100, 107), encode_number, str(tmp_path), 'val', 2)
    path = write_dataset_info(str(tmp_path), 'numbers', {'train': train.shards, 'val': val.shards})
    with open(path) as f:
        info = json.load(f)
    for split in ('train', 'val'):
        recorded = info['splits'][split]
        tf_counts = [len(tf_records(str(tmp_path / s['file']))) for s in recorded['shards']]
        assert [s['num_records'] for s in recorded['shards']] == tf_counts
        assert recorded['num_examples'] == sum(tf_counts) > 0


def test_summary_format_without_skips_lists_no_reasons():
    summary = WriteSummary(split='val', shards=[{'file': 'f', 'num_records': 2}], num_records=2,
                           num_bytes=2_500_000, skipped={}, notes={}, seconds=2.0,
                           shards_reused=0)
    assert summary.format() == ('val: 2 records in 1 shard\n'
                                '  2.5 MB in 2.0 s, 1 records/s, 1.2 MB/s')
