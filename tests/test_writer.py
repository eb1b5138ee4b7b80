"""slimdata.records.writer: shards read back by TensorFlow, parallel == serial, atomic,
resumable, and re-runs that never mix data (fingerprints, recorded CRCs, overwrite).

Interruptions by signals, dead parents and I/O errors are tested through the command line in
a subprocess: tests/test_interruptions.py.
"""

import functools
import json
import os
import pickle
import re

import pytest

from slimdata._tf import tf
from slimdata.records import dataset_info, fs
from slimdata.records.example import serialize_example
from slimdata.records.verify import verify_files
from slimdata.records.writer import (
    ConversionError,
    EncodedExample,
    RerunError,
    SkipExample,
    SplitSource,
    WriteSummary,
    shard_filename,
    write_dataset,
    write_sharded,
)

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
    """basename -> contents of every file in `folder` (temporaries and dataset_info.json
    included)."""
    return {name: open(os.path.join(folder, name), 'rb').read()
            for name in sorted(os.listdir(folder))}


def shard_names(num_shards, split='train'):
    return [shard_filename(split, k, num_shards) for k in range(num_shards)]



INFO = dataset_info.DATASET_INFO_FILENAME


def recorded(folder, split='train'):
    """The split's entry in the folder's dataset_info.json, read as plain JSON."""
    with open(os.path.join(folder, INFO)) as f:
        return json.load(f)['splits'][split]


def crc32c_of(path):
    """The CRC-32C of a file's bytes, by the crc32c package directly."""
    import crc32c
    return crc32c.crc32c(open(path, 'rb').read())


def test_shard_filename():
    assert shard_filename('train', 3, 12) == 'train-00003-of-00012.tfrecord'
    assert shard_filename('val', 0, 1) == 'val-00000-of-00001.tfrecord'


# --- What is written -------------------------------------------------------------------------

def test_shards_hold_contiguous_items_in_order(tmp_path, capsys):
    summary = write_sharded(range(NUM_ITEMS), encode_number, str(tmp_path), 'train',
                            NUM_SHARDS, desc='numbers')
    assert sorted(os.listdir(tmp_path)) == [INFO] + shard_names(NUM_SHARDS)
    for name, numbers in zip(shard_names(NUM_SHARDS), expected_shards(NUM_ITEMS, NUM_SHARDS)):
        records = tf_records(str(tmp_path / name))
        assert [tf.train.Example.FromString(r) for r in records] == \
            [expected_example(n) for n in numbers]
    assert summary.shards == [
        {'file': name, 'num_records': len(numbers),
         'num_bytes': os.path.getsize(tmp_path / name),
         'crc32c': crc32c_of(tmp_path / name), 'sources': ''}
        for name, numbers in zip(shard_names(NUM_SHARDS),
                                 expected_shards(NUM_ITEMS, NUM_SHARDS))]
    assert summary.num_records == NUM_ITEMS - sum(map(is_skipped, range(NUM_ITEMS)))
    assert summary.num_bytes == sum(os.path.getsize(tmp_path / n) for n in shard_names(4))
    assert summary.shards_reused == 0
    assert 'numbers: done, 23 ex' in capsys.readouterr().err  # the progress (a log: lines)


def test_dataset_info_records_each_shard_and_the_fingerprint(tmp_path):
    summary = write_sharded(range(NUM_ITEMS), encode_number, str(tmp_path), 'train',
                            NUM_SHARDS, options={'seed': 3})
    entry = recorded(tmp_path)
    assert entry['complete'] is True
    assert entry['shards'] == summary.shards
    assert entry['num_examples'] == summary.num_records
    assert entry['fingerprint']['options'] == {'seed': 3}
    assert entry['fingerprint']['num_shards'] == NUM_SHARDS
    assert entry['fingerprint']['items']['count'] == NUM_ITEMS
    tf_counts = [len(tf_records(str(tmp_path / s['file']))) for s in entry['shards']]
    assert [s['num_records'] for s in entry['shards']] == tf_counts


def test_skips_and_notes_are_counted_with_details(tmp_path):
    items = list(range(40))
    summary = write_sharded(items, encode_number, str(tmp_path), 'train', NUM_SHARDS)
    skipped = [f'item {n}' for n in items if is_skipped(n)]
    noted = [f'item {n}' for n in items if is_noted(n) and not is_skipped(n)]
    assert len(skipped) > 3 and len(noted) > 3  # more than format() lists
    assert summary.skipped == {'seven plus three': skipped}
    assert summary.notes == {'multiple of five': noted}
    text = summary.format()
    assert f'train: {summary.num_records} records in {NUM_SHARDS} shards in {tmp_path}' in text
    assert 1024 <= summary.num_bytes < 1024 ** 2
    assert f'{summary.num_bytes / 1024:.1f} KiB in ' in text  # binary units, named as such
    assert 'records/s' in text and 'KiB/s' in text
    assert (f'seven plus three: {len(skipped)} ({", ".join(skipped[:3])}, ... '
            f'{len(skipped) - 3} more)') in text
    assert (f'multiple of five: {len(noted)} ({", ".join(noted[:3])}, ... '
            f'{len(noted) - 3} more)') in text
    assert f'skipped {len(skipped)} items:' in text


@pytest.mark.slow
def test_workers_give_byte_identical_files(tmp_path):
    serial, parallel = tmp_path / 'serial', tmp_path / 'parallel'
    items = list(range(150))  # 50 per shard, 3 shards for 2 workers
    serial_summary = write_sharded(items, encode_number, str(serial), 'train', 3, processes=1)
    parallel_summary = write_sharded(items, encode_number, str(parallel), 'train', 3, processes=2)
    assert file_bytes(serial) == file_bytes(parallel)  # dataset_info.json included
    assert sorted(file_bytes(parallel)) == [INFO] + shard_names(3)
    for field in ('shards', 'num_records', 'num_bytes', 'skipped', 'notes'):
        assert getattr(serial_summary, field) == getattr(parallel_summary, field)


@pytest.mark.slow
def test_workers_progress_counts_every_item(tmp_path, capsys):
    write_sharded(range(150), encode_number, str(tmp_path), 'train', 3, processes=2,
                  desc='numbers')
    assert 'numbers: done, 150 ex' in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize('num_shards', [1, 3])
def test_more_workers_than_shards_share_them_in_pieces_and_write_the_same(tmp_path, num_shards):
    """Workers write pieces of shards, joined in order: the same bytes as one process, and
    the recorded CRC-32C is that of the joined file."""
    items = list(range(61))
    one = write_sharded(items, encode_number, str(tmp_path / 'one'), 'train', num_shards)
    pool = write_sharded(items, encode_number, str(tmp_path / 'pool'), 'train', num_shards,
                         processes=2)
    assert file_bytes(tmp_path / 'pool') == file_bytes(tmp_path / 'one')
    assert (pool.shards, pool.skipped, pool.notes) == (one.shards, one.skipped, one.notes)
    for shard in pool.shards:
        assert shard['crc32c'] == crc32c_of(tmp_path / 'pool' / shard['file'])
    assert [name for name in os.listdir(tmp_path / 'pool') if '.tmp' in name] == []


def test_fewer_items_than_shards_writes_one_shard_per_item(tmp_path):
    summary = write_sharded([1, 2, 4], encode_number, str(tmp_path), 'val', 8)
    assert sorted(os.listdir(tmp_path)) == [INFO] + shard_names(3, 'val')
    assert [len(tf_records(str(tmp_path / name))) for name in shard_names(3, 'val')] == [1, 1, 1]
    assert summary.num_records == 3


def test_shard_whose_items_are_all_skipped_is_a_valid_empty_file(tmp_path):
    summary = write_sharded([3, 10, 1], encode_number, str(tmp_path), 'train', 2)
    assert [(s['file'], s['num_records'], s['num_bytes']) for s in summary.shards] == [
        (shard_filename('train', 0, 2), 0, 0), (shard_filename('train', 1, 2), 1,
                                                os.path.getsize(tmp_path / shard_names(2)[1]))]
    assert tf_records(str(tmp_path / shard_filename('train', 0, 2))) == []


def test_files_are_synced_before_they_are_renamed(tmp_path, monkeypatch):
    """Every shard and dataset_info.json is fsync'ed under its temporary name, then renamed:
    after a crash, a file under a final name is whole on disk, not only in the page cache."""
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor):
        events.append(('fsync', os.readlink(f'/proc/self/fd/{descriptor}')))
        return real_fsync(descriptor)

    def replace(source, target):
        events.append(('rename', os.path.abspath(source)))
        return real_replace(source, target)

    monkeypatch.setattr(os, 'fsync', fsync)
    monkeypatch.setattr(os, 'replace', replace)
    write_sharded(range(NUM_ITEMS), encode_number, str(tmp_path), 'train', NUM_SHARDS)
    renamed = [path for event, path in events if event == 'rename']
    assert {os.path.basename(path) for path in renamed} >= {
        f'.{name}.tmp-{os.getpid()}' for name in shard_names(NUM_SHARDS) + [INFO]}
    for path in renamed:
        assert ('fsync', path) in events[:events.index(('rename', path))]


# --- Failures --------------------------------------------------------------------------------

def assert_failed_cleanly(folder):
    """Shards before the failing one are complete and recorded; no temporaries."""
    assert sorted(os.listdir(folder)) == [INFO] + shard_names(NUM_SHARDS)[:2]
    for name, numbers in zip(shard_names(NUM_SHARDS), expected_shards(NUM_ITEMS, NUM_SHARDS)[:2]):
        assert len(tf_records(str(folder / name))) == len(numbers)
    entry = recorded(folder)
    assert entry['complete'] is False
    assert [shard['file'] for shard in entry['shards']] == shard_names(NUM_SHARDS)[:2]


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
                      str(tmp_path), 'train', NUM_SHARDS, processes=2)
    assert str(raised.value).startswith(f"split 'train', item {FAILING_ITEM} ({FAILING_ITEM}): ")
    assert f'OSError: cannot read /data/{FAILING_ITEM}.jpg' in str(raised.value)
    # The worker's traceback, the original exception included, comes along as the cause.
    assert f'OSError: cannot read /data/{FAILING_ITEM}.jpg' in str(raised.value.__cause__)
    assert_failed_cleanly(tmp_path)


@pytest.mark.slow
def test_a_dead_worker_is_an_error_naming_the_items_in_flight(tmp_path):
    with pytest.raises(RuntimeError, match="split 'train': a worker process died") as raised:
        write_sharded(range(NUM_ITEMS), functools.partial(encode_dying_at, FAILING_ITEM),
                      str(tmp_path), 'train', NUM_SHARDS, processes=2)
    first, last = map(int, re.search(r'items (\d+) to (\d+)', str(raised.value)).groups())
    assert first <= FAILING_ITEM <= last
    assert all(not name.startswith('.') for name in os.listdir(tmp_path))
    for shard in recorded(tmp_path)['shards']:  # whatever was completed is complete
        index = shard_names(NUM_SHARDS).index(shard['file'])
        assert len(tf_records(str(tmp_path / shard['file']))) == \
            len(expected_shards(NUM_ITEMS, NUM_SHARDS)[index]) == shard['num_records']


def test_errors_survive_pickling():
    error = ConversionError('val', 4, ('a.xml', 'a.jpg'), 'ValueError: bad box')
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.split, copy.index, copy.item, copy.cause) == \
        (str(error), 'val', 4, ('a.xml', 'a.jpg'), 'ValueError: bad box')
    skip = pickle.loads(pickle.dumps(SkipExample('missing image', 'b.jpg')))
    assert (skip.reason, skip.detail, str(skip)) == ('missing image', 'b.jpg',
                                                    'missing image: b.jpg')
    file_error = pickle.loads(pickle.dumps(fs.FileError('out/a', 'write', 'No space', 28)))
    assert (str(file_error), file_error.errno) == ('out/a: cannot write: No space', 28)


def test_empty_items_are_refused_naming_the_split(tmp_path):
    with pytest.raises(ValueError, match="split 'test': no items to write"):
        write_sharded([], encode_number, str(tmp_path / 'out'), 'test', 2)
    assert not (tmp_path / 'out').exists()


@pytest.mark.parametrize('arguments, message', [
    (dict(num_shards=0), 'num_shards must be an int >= 1, got 0'),
    (dict(processes=0), 'processes must be an int >= 1, got 0'),
    (dict(split='a/b'), "split must be a plain file name prefix, got 'a/b'"),
    (dict(processes=2, encode=lambda n: b''), 'encode must be picklable when processes > 1'),
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
    assert os.listdir(tmp_path) == [INFO]
    assert recorded(tmp_path) == {'complete': False, 'shards': [],
                                  'fingerprint': recorded(tmp_path)['fingerprint']}


# --- Re-runs: reuse only what matches, never mix ---------------------------------------------

def test_interrupted_run_resumes_with_the_same_output(tmp_path):
    resumed, uninterrupted = tmp_path / 'resumed', tmp_path / 'uninterrupted'
    with pytest.raises(KeyboardInterrupt):
        write_sharded(range(NUM_ITEMS), functools.partial(encode_interrupted_at, FAILING_ITEM),
                      str(resumed), 'train', NUM_SHARDS)
    assert_failed_cleanly(resumed)
    kept = {name: os.stat(resumed / name) for name in shard_names(NUM_SHARDS)[:2]}

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
    assert 'all reused: already converted from the same input' in again.format()


def refused(function, *args, **kwargs):
    """The RerunError message of a call that must be refused."""
    with pytest.raises(RerunError) as raised:
        function(*args, **kwargs)
    return str(raised.value)


def test_a_rerun_with_other_items_is_refused_and_writes_nothing(tmp_path):
    """The issue's case: another seed after an interrupted run would have mixed two orders."""
    with pytest.raises(KeyboardInterrupt):
        write_sharded(range(NUM_ITEMS), functools.partial(encode_interrupted_at, FAILING_ITEM),
                      str(tmp_path), 'train', NUM_SHARDS, options={'seed': 0})
    before = file_bytes(tmp_path)
    reordered = list(reversed(range(NUM_ITEMS)))
    message = refused(write_sharded, reordered, encode_must_not_run, str(tmp_path), 'train',
                      NUM_SHARDS, options={'seed': 1})
    assert message.startswith(f"split 'train' in {tmp_path} is partly converted (an "
                              "interrupted run) from other input: seed 0 -> 1; the list of "
                              "examples (23 -> 23 items, or their order).")
    assert '--overwrite' in message
    assert file_bytes(tmp_path) == before


def test_a_rerun_with_other_options_or_shard_count_names_what_changed(tmp_path):
    write_sharded(range(NUM_ITEMS), encode_number, str(tmp_path), 'train', NUM_SHARDS,
                  options={'on_bad_box': 'clip'})
    message = refused(write_sharded, range(NUM_ITEMS), encode_must_not_run, str(tmp_path),
                      'train', 2, options={'on_bad_box': 'skip'})
    assert "was converted from other input: num_shards 4 -> 2; on_bad_box 'clip' -> 'skip'" \
        in message


def test_the_validation_ratio_case_of_the_issue(tmp_path):
    """0.1 then 0.25 into one folder used to keep the 0.1 split and say nothing."""
    def split(ratio):
        cut = round(40 * ratio)
        return [SplitSource('train', list(range(cut, 40)), encode_number, 2,
                            {'validation_ratio': ratio}),
                SplitSource('validation', list(range(cut)), encode_number, 2,
                            {'validation_ratio': ratio})]

    write_dataset(str(tmp_path), split(0.1))
    message = refused(write_dataset, str(tmp_path), split(0.25))
    assert message.startswith('refused, nothing was written:')
    assert "split 'train'" in message and "split 'validation'" in message
    assert 'validation_ratio 0.1 -> 0.25' in message
    summaries = write_dataset(str(tmp_path), split(0.25), overwrite=True)
    assert (summaries['train'].num_records + summaries['validation'].num_records ==
            40 - sum(map(is_skipped, range(40))))
    assert recorded(tmp_path, 'validation')['fingerprint']['options'] == {
        'validation_ratio': 0.25}


@pytest.mark.parametrize('damage, problem', [
    (lambda path: open(path, 'wb').close(), 'has 0 bytes'),
    (lambda path: os.truncate(path, os.path.getsize(path) - 9), 'were written'),
    (os.remove, 'is missing'),
])
def test_a_damaged_or_missing_shard_is_never_reused(tmp_path, damage, problem):
    write_sharded(range(NUM_ITEMS), encode_number, str(tmp_path), 'train', NUM_SHARDS)
    shard = tmp_path / shard_names(NUM_SHARDS)[1]
    damage(str(shard))
    message = refused(write_sharded, range(NUM_ITEMS), encode_must_not_run, str(tmp_path),
                      'train', NUM_SHARDS)
    assert f'{shard}' in message and problem in message
    assert 'matches this input, but' in message and '--overwrite' in message
    report = verify_files([str(tmp_path / name) for name in os.listdir(tmp_path)
                           if name.endswith('.tfrecord')])
    assert any(str(shard) in found for found in report.problems)


def test_a_shard_swapped_for_another_runs_with_the_same_count_is_found(tmp_path):
    """The same number of records and valid CRCs, other bytes: only the recorded CRC-32C of
    the file tells, in the re-run and in verify."""
    # Items 10..32 and 45..67 encode to records of equal sizes, and skip alike (n % 7 == 3).
    write_sharded(range(10, 33), encode_number, str(tmp_path), 'train', NUM_SHARDS)
    other = tmp_path / 'other'
    write_sharded(range(45, 68), encode_number, str(other), 'train', NUM_SHARDS)
    shard = shard_names(NUM_SHARDS)[0]
    assert len(tf_records(str(other / shard))) == len(tf_records(str(tmp_path / shard)))
    assert os.path.getsize(other / shard) == os.path.getsize(tmp_path / shard)
    os.replace(other / shard, tmp_path / shard)
    message = refused(write_sharded, range(10, 33), encode_must_not_run, str(tmp_path),
                      'train', NUM_SHARDS)
    assert 'has other bytes than were written' in message
    report = verify_files([str(tmp_path / name) for name in shard_names(NUM_SHARDS)])
    assert [problem for problem in report.problems if 'its bytes differ' in problem] == [
        report.problems[0]] and shard in report.problems[0]


def test_a_shard_whose_source_files_changed_is_rewritten_and_the_others_reused(tmp_path):
    """Fixing one annotation and re-running rewrites the shard that holds it (from the fixed
    file) and keeps the others: the result equals a fresh conversion's."""
    sources = tmp_path / 'sources'
    sources.mkdir()
    for number in range(NUM_ITEMS):
        (sources / f'{number}.xml').write_text(f'<n>{number}</n>')
    out, fresh = tmp_path / 'out', tmp_path / 'fresh'

    def files_of(number):
        return [str(sources / f'{number}.xml')]

    write_sharded(range(NUM_ITEMS), encode_number, str(out), 'train', NUM_SHARDS,
                  files_of=files_of)
    before = {name: os.stat(out / name).st_mtime_ns for name in shard_names(NUM_SHARDS)}
    (sources / '14.xml').write_text('<n>14, fixed</n>')  # item 14 is in shard 2 (11..16)
    summary = write_sharded(range(NUM_ITEMS), encode_number, str(out), 'train', NUM_SHARDS,
                            files_of=files_of)
    assert (summary.shards_reused, summary.shards_stale) == (3, 1)
    assert '1 rewritten: their source files changed' in summary.format()
    changed = [name for name in before if os.stat(out / name).st_mtime_ns != before[name]]
    assert changed == [shard_names(NUM_SHARDS)[2]]
    write_sharded(range(NUM_ITEMS), encode_number, str(fresh), 'train', NUM_SHARDS,
                  files_of=files_of)
    assert file_bytes(out) == file_bytes(fresh)


def test_shard_files_no_dataset_info_describes_are_refused_and_overwrite_replaces_them(
        tmp_path):
    old = tmp_path / shard_filename('train', 0, 3)
    old.write_bytes(b'')
    other_split = tmp_path / shard_filename('train_aug', 0, 5)
    other_split.write_bytes(b'')  # another split: not this run's business
    message = refused(write_sharded, range(10), encode_number, str(tmp_path), 'train', 2)
    assert old.name in message and 'does not describe' in message
    assert sorted(os.listdir(tmp_path)) == sorted([old.name, other_split.name])
    write_sharded(range(10), encode_number, str(tmp_path), 'train', 2, overwrite=True)
    assert sorted(os.listdir(tmp_path)) == sorted([INFO, other_split.name] + shard_names(2))


@pytest.mark.slow
def test_overwrite_keeps_the_old_shards_until_the_new_ones_are_complete(tmp_path):
    write_sharded(range(NUM_ITEMS), encode_number, str(tmp_path), 'train', NUM_SHARDS)
    before = file_bytes(tmp_path)
    for workers in (1, 2):  # a failure in the last shard: the old split is untouched
        with pytest.raises(ConversionError):
            write_sharded(range(100, 100 + NUM_ITEMS),
                          functools.partial(encode_failing_at, 100 + NUM_ITEMS - 1),
                          str(tmp_path), 'train', 3, processes=workers, overwrite=True)
        assert file_bytes(tmp_path) == before
    summary = write_sharded(range(100, 100 + NUM_ITEMS), encode_number, str(tmp_path), 'train',
                            3, overwrite=True)
    assert sorted(os.listdir(tmp_path)) == [INFO] + shard_names(3)  # 4 old shards gone
    assert recorded(tmp_path)['shards'] == summary.shards
    numbers = [tf.train.Example.FromString(record).features.feature['number'].int64_list.value[0]
               for name in shard_names(3) for record in tf_records(str(tmp_path / name))]
    assert numbers == [n for n in range(100, 100 + NUM_ITEMS) if not is_skipped(n)]


def test_a_split_this_run_does_not_make_is_refused_or_removed(tmp_path):
    write_dataset(str(tmp_path), [SplitSource('train', list(range(10)), encode_number, 1),
                                  SplitSource('validation', [10, 11], encode_number, 1)])
    train_only = [SplitSource('train', list(range(12)), encode_number, 1)]
    message = refused(write_dataset, str(tmp_path), train_only, absent_splits=['validation'],
                      overwrite=False)
    assert "split 'validation'" in message and 'makes no such split' in message
    write_dataset(str(tmp_path), train_only, absent_splits=['validation'], overwrite=True)
    assert sorted(os.listdir(tmp_path)) == [INFO, shard_filename('train', 0, 1)]
    with open(tmp_path / INFO) as f:
        assert sorted(json.load(f)['splits']) == ['train']


def test_another_dataset_or_other_labels_are_refused(tmp_path):
    write_dataset(str(tmp_path), [SplitSource('train', [1, 2], encode_number, 1)],
                  dataset_name='mnist', labels_to_names={0: 'zero', 1: 'one'})
    message = refused(write_dataset, str(tmp_path), [SplitSource('test', [5], encode_number, 1)],
                      dataset_name='cifar10')
    assert "holds the dataset 'mnist'; this conversion writes 'cifar10'" in message
    message = refused(write_dataset, str(tmp_path), [SplitSource('test', [5], encode_number, 1)],
                      dataset_name='mnist', labels_to_names={0: 'zero', 1: 'uno'})
    assert "other labels_to_names than the split(s) ['train']" in message
    assert "1: 'one' -> 'uno'" in message


def test_one_conversion_at_a_time_per_folder(tmp_path):
    with fs.lock_folder(str(tmp_path)):  # another conversion writing here
        with pytest.raises(fs.FolderBusyError, match='being written by another slimdata'):
            write_sharded(range(3), encode_must_not_run, str(tmp_path), 'train', 1)
    write_sharded(range(3), encode_number, str(tmp_path), 'train', 1)  # free again


def test_stale_temporaries_of_the_split_are_removed(tmp_path):
    stale = f'.{shard_filename("train", 1, 2)}.tmp-99999'
    stale_piece = f'.{shard_filename("train", 0, 2)}.tmp-99999.piece-00003'
    other_split = f'.{shard_filename("val", 0, 2)}.tmp-99999'
    for name in (stale, stale_piece, other_split):
        (tmp_path / name).write_bytes(b'partial')
    write_sharded(range(4), encode_number, str(tmp_path), 'train', 2)
    assert sorted(os.listdir(tmp_path)) == sorted(shard_names(2) + [other_split, INFO])


def test_an_incomplete_split_is_reported_by_verify_and_refused_by_descriptors(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        write_sharded(range(NUM_ITEMS), functools.partial(encode_interrupted_at, FAILING_ITEM),
                      str(tmp_path), 'train', NUM_SHARDS)
    report = verify_files([str(tmp_path / name) for name in shard_names(NUM_SHARDS)[:2]])
    assert report.problems == [f"{tmp_path / INFO}: split 'train' is incomplete: its "
                               'conversion is running or was interrupted (2 shard(s) '
                               'written); run the converter again to finish it']
    from slimdata.datasets import classification
    with pytest.raises(ValueError, match="split 'train' of .* is incomplete"):
        classification.get_split('image_folder', 'train', str(tmp_path))


# --- Other file systems ----------------------------------------------------------------------

def test_url_folders_go_through_the_file_system_layer():
    folder = 'ram://slimdata_test_writer/out'
    summary = write_sharded(range(NUM_ITEMS), encode_number, folder, 'train', NUM_SHARDS)
    assert sorted(tf.io.gfile.listdir(folder)) == [INFO] + shard_names(NUM_SHARDS)
    assert [len(tf_records(f'{folder}/{name}')) for name in shard_names(NUM_SHARDS)] == \
        [len(numbers) for numbers in expected_shards(NUM_ITEMS, NUM_SHARDS)]
    again = write_sharded(range(NUM_ITEMS), encode_must_not_run, folder, 'train', NUM_SHARDS)
    assert again.shards_reused == NUM_SHARDS and again.shards == summary.shards
    report = verify_files([f'{folder}/{name}' for name in shard_names(NUM_SHARDS)])
    assert report.ok and report.num_records == summary.num_records


def test_summary_format_without_skips_lists_no_reasons():
    summary = WriteSummary(split='val', shards=[{'file': 'f', 'num_records': 2}], num_records=2,
                           num_bytes=5 * 2 ** 20, skipped={}, notes={}, seconds=2.0,
                           shards_reused=0)
    assert summary.format() == ('val: 2 records in 1 shard\n'
                                '  5.0 MiB in 2.0 s, 1 records/s, 2.5 MiB/s')
