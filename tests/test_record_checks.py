"""Every record read once per epoch, or an error naming what came up short (record_checks,
tfrecord.check_file, the end-of-input check of the queue pipelines, skip_corrupt, QueueSession's
end of input against a stop).

Record sets are written by TensorFlow's own writer; damage is byte edits computed from the
framing; expected counts come from the records written.
"""

import functools
import logging
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from conftest import drain, write_with_tf
from slimdata import (
    dataset,
    dataset_batch_provider,
    dataset_data_provider,
    parallel_reader,
    record_checks,
    tfdata,
    tfexample_decoder,
)
from slimdata.queue_session import QueueSession
from slimdata.records import tfrecord

PER_FILE = 10


def _label_records(first_label, count=PER_FILE):
    return [tf.train.Example(features=tf.train.Features(feature={
        'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))}))
        .SerializeToString() for label in range(first_label, first_label + count)]


def _write_shards(folder, num_files=3, compression=None):
    """Shards of PER_FILE records, labels file * 10 + index; returns their paths."""
    return [write_with_tf(Path(folder) / f'train-{f:05d}.tfrecord', _label_records(f * 10),
                          compression) for f in range(num_files)]


def _record_offset(index):
    """Where record `index` of a shard starts (labels below 128 are one varint byte, so every
    record has the same length)."""
    return index * (16 + len(_label_records(0, 1)[0]))


def _flip_data_byte(path, record):
    data = bytearray(Path(path).read_bytes())
    data[_record_offset(record) + 12 + 2] ^= 0x01
    Path(path).write_bytes(bytes(data))


def _dataset(sources, num_samples):
    decoder = tfexample_decoder.TFExampleDecoder({'label': tf.io.FixedLenFeature([], tf.int64)},
                                                 {'label': tfexample_decoder.Tensor('label')})
    return dataset.Dataset(sources, tf.compat.v1.TFRecordReader, decoder, num_samples, {})


def _labels(folder, f_range, index_range):
    return sorted(f * 10 + i for f in f_range for i in index_range)


# ----------------------------------------------------------------------------------------------
# tfrecord.check_file

@pytest.mark.parametrize('compression', [None, 'GZIP', 'ZLIB'])
def test_check_file_counts_what_tensorflow_wrote(tmp_path, compression):
    path = write_with_tf(tmp_path / 'a.tfrecord', _label_records(0, 37), compression)
    check = tfrecord.check_file(path)
    assert check.ok and check.num_records == 37 and check.compression == compression
    assert check.num_bytes == os.path.getsize(path)
    empty = write_with_tf(tmp_path / 'empty.tfrecord', [], compression)
    assert tfrecord.check_file(empty).num_records == 0


def test_check_file_reports_damage_and_remembers_each_file_until_it_changes(tmp_path):
    path = write_with_tf(tmp_path / 'a.tfrecord', _label_records(0))
    first = tfrecord.check_file(path)
    assert tfrecord.check_file(path) is first  # remembered, not checked again
    # A new file under the same name (as writers replace files): checked again.
    replacement = write_with_tf(tmp_path / 'b.tfrecord', _label_records(0))
    data = Path(replacement).read_bytes()[:_record_offset(7) + 5]  # cut in record 7's header
    Path(replacement).write_bytes(data)
    os.replace(replacement, path)
    second = tfrecord.check_file(path)
    assert second is not first and not second.ok and second.num_records == 7
    assert (second.error.record_index, second.error.offset) == (7, _record_offset(7))
    assert 'truncated header' in second.error.reason
    with pytest.raises(FileNotFoundError):
        tfrecord.check_file(tmp_path / 'missing.tfrecord')


def test_check_file_refuses_a_length_beyond_the_end_of_the_file_without_reading_it(tmp_path):
    records = _label_records(0, 3)
    length = struct.pack('<Q', 2 ** 62)
    path = tmp_path / 'huge.tfrecord'
    path.write_bytes(Path(write_with_tf(tmp_path / 'ok.tfrecord', records)).read_bytes()
                     + length + struct.pack('<I', tfrecord.masked_crc32c(length)) + bytes(40))
    check = tfrecord.check_file(path)
    assert (check.num_records, check.error.record_index, check.error.offset) == (
        3, 3, _record_offset(3))
    assert f'the header says {2 ** 62} bytes of data, the file ends after 40' in check.error.reason


# ----------------------------------------------------------------------------------------------
# What TensorFlow's reader does with a huge length, and that slimdata never lets it: both in
# subprocesses (the first one dies).

_READ = textwrap.dedent('''
    import os, sys
    os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'
    import tensorflow as tf
    if sys.argv[1] in ('queue', 'batch'):
        tf.compat.v1.disable_eager_execution()
    from slimdata import dataset, dataset_batch_provider, dataset_data_provider, tfdata
    from slimdata import tfexample_decoder
    from slimdata.queue_session import QueueSession
    from slimdata.records.tfrecord import TFRecordError
    how, sources = sys.argv[1], sys.argv[2:]
    if how == 'tensorflow':
        for _ in tf.data.TFRecordDataset(sources):
            pass
        sys.exit(0)
    decoder = tfexample_decoder.TFExampleDecoder({'label': tf.io.FixedLenFeature([], tf.int64)},
                                                 {'label': tfexample_decoder.Tensor('label')})
    data = dataset.Dataset(sources, tf.compat.v1.TFRecordReader, decoder, 30, {})
    try:
        if how == 'bridge':
            list(tfdata.to_tf_data(data, num_epochs=1))
        else:
            provider = (dataset_data_provider.DatasetDataProvider(data, num_epochs=1)
                        if how == 'queue' else dataset_batch_provider.DatasetBatchProvider(
                            data, 2, num_epochs=1))
            with QueueSession() as session:
                while True:
                    session.run(provider.get(['label']))
    except TFRecordError as error:
        print('refused:', error)
''')


def _with_huge_length(tmp_path):
    paths = _write_shards(tmp_path)
    length = struct.pack('<Q', 2 ** 40)
    header = length + struct.pack('<I', tfrecord.masked_crc32c(length))
    data = Path(paths[1]).read_bytes()
    start = _record_offset(4)
    Path(paths[1]).write_bytes(data[:start] + header + data[start + 12:])
    return paths


@pytest.mark.slow
def test_tensorflow_reader_dies_on_a_huge_length(tmp_path):
    paths = _with_huge_length(tmp_path)
    done = subprocess.run([sys.executable, '-c', _READ, 'tensorflow', paths[1]],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode < 0, (done.returncode, done.stderr[-2000:])  # killed by a signal


@pytest.mark.slow
@pytest.mark.parametrize('how', ['queue', 'batch', 'bridge'])
def test_slimdata_pipelines_refuse_a_huge_length_before_tensorflow_reads_it(tmp_path, how):
    paths = _with_huge_length(tmp_path)
    done = subprocess.run([sys.executable, '-c', _READ, how] + paths,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.startswith(f'refused: {paths[1]}: record 4 at byte offset '
                                  f'{_record_offset(4)}: truncated data: the header says '
                                  f'{2 ** 40} bytes'), done.stdout


# ----------------------------------------------------------------------------------------------
# Build-time checks

def test_a_damaged_file_is_refused_naming_it_and_the_other_damaged_files(tmp_path, graph):
    paths = _write_shards(tmp_path, num_files=4)
    for path in paths[1:3]:
        Path(path).write_bytes(Path(path).read_bytes()[:_record_offset(6) + 30])
    with pytest.raises(tfrecord.TFRecordError) as raised:
        parallel_reader.parallel_read(paths, tf.compat.v1.TFRecordReader)
    error = raised.value
    assert (error.path, error.record_index, error.offset) == (paths[1], 6, _record_offset(6))
    assert f'1 more data files are damaged: {paths[2]}' in str(error)
    with pytest.raises(tfrecord.TFRecordError, match='record 6'):
        parallel_reader.single_pass_read(paths, tf.compat.v1.TFRecordReader)


def test_a_compressed_file_read_as_uncompressed_is_refused_saying_so(tmp_path, graph):
    paths = _write_shards(tmp_path, num_files=1, compression='GZIP')
    with pytest.raises(tfrecord.TFRecordError, match="compression='GZIP'"):
        dataset_data_provider.DatasetDataProvider(_dataset(paths, PER_FILE))
    reader_kwargs = {'options': tf.io.TFRecordOptions(compression_type='GZIP')}
    [label] = dataset_data_provider.DatasetDataProvider(
        _dataset(paths, PER_FILE), shuffle=False, num_epochs=1,
        reader_kwargs=reader_kwargs).get(['label'])
    assert [int(v) for v in drain(label)] == list(range(PER_FILE))


GZIP_OPTIONS = tf.io.TFRecordOptions(compression_type='GZIP')
#: The ways scripts pass a reader its options: (the dataset's reader, the reader_kwargs).
GZIP_READERS = {
    'reader_kwargs': (tf.compat.v1.TFRecordReader, {'options': GZIP_OPTIONS}),
    'lambda': (lambda: tf.compat.v1.TFRecordReader(options=GZIP_OPTIONS), None),
    'functools.partial': (functools.partial(tf.compat.v1.TFRecordReader, options='GZIP'), None),
}


def _read_with(how, reader, reader_kwargs, paths, num_samples):
    data = dataset.Dataset(paths, reader, _dataset(paths, num_samples).decoder, num_samples, {})
    if how == 'bridge':
        return [int(example['label']) for example in tfdata.to_tf_data(
            data, items=['label'], shuffle=False, num_epochs=1, reader_kwargs=reader_kwargs)]
    with tf.Graph().as_default():
        [label] = dataset_data_provider.DatasetDataProvider(
            data, shuffle=False, num_epochs=1, reader_kwargs=reader_kwargs).get(['label'])
        return [int(value) for value in drain(label)]


@pytest.mark.parametrize('how', ['queue', 'bridge'])
@pytest.mark.parametrize('wrapped', sorted(GZIP_READERS))
def test_a_reader_wrapped_in_a_lambda_or_partial_gets_every_check(tmp_path, wrapped, how):
    reader, reader_kwargs = GZIP_READERS[wrapped]
    paths = _write_shards(tmp_path, num_files=3, compression='GZIP')
    assert _read_with(how, reader, reader_kwargs, paths, 30) == _labels(tmp_path, range(3),
                                                                        range(PER_FILE))
    # A shard cut at a third: TensorFlow's GZIP reader would read it as a shorter file.
    Path(paths[1]).write_bytes(Path(paths[1]).read_bytes()[:os.path.getsize(paths[1]) // 3])
    with pytest.raises(tfrecord.TFRecordError) as raised:
        _read_with(how, reader, reader_kwargs, paths, 30)
    assert raised.value.path == paths[1]
    assert raised.value.compression == 'GZIP'  # read as the wrapper says, not as plain


def test_what_a_reader_builds_tells_whether_it_reads_tfrecords_and_how(graph):
    compression = record_checks.tfrecord_compression
    assert compression(tf.compat.v1.TFRecordReader) == ''
    assert compression(tf.compat.v1.TFRecordReader, {'options': 'ZLIB'}) == 'ZLIB'
    assert compression(GZIP_READERS['lambda'][0]) == 'GZIP'
    assert compression(GZIP_READERS['functools.partial'][0]) == 'GZIP'
    assert compression(type('Sub', (tf.compat.v1.TFRecordReader,), {})) == ''
    assert compression(tf.compat.v1.TextLineReader) is None
    assert compression(lambda: tf.compat.v1.WholeFileReader()) is None
    assert graph.get_operations() == []  # the readers were built in graphs of their own


@pytest.mark.parametrize('num_samples, expected', [(3, None), (4, 'num_samples says 4')])
def test_the_end_of_input_is_compared_with_num_samples_whatever_the_reader(tmp_path, graph,
                                                                          num_samples,
                                                                          expected):
    path = tmp_path / 'lines.txt'
    path.write_text('a\nb\nc\n')
    reader, filenames = parallel_reader.make_parallel_reader(
        str(path), lambda: tf.compat.v1.TextLineReader(), num_epochs=2, shuffle=False,
        num_samples=num_samples)
    _, line = reader.read(filenames)
    if expected is None:
        assert drain(line) == [b'a', b'b', b'c'] * 2
        return
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r'the input ended after 2 epochs and 6 records; num_samples says 4 '
                             r'records per epoch'):
        drain(line)


def test_other_readers_are_not_checked_and_cannot_skip(tmp_path, graph):
    path = tmp_path / 'lines.txt'
    path.write_text('a\nb\n')
    _, line = parallel_reader.parallel_read(str(path), tf.compat.v1.TextLineReader,
                                            num_epochs=1, shuffle=False)
    assert [v for v in drain(line)] == [b'a', b'b']
    with pytest.raises(ValueError, match='skip_corrupt=True needs .*TextLineReader'):
        parallel_reader.make_parallel_reader(str(path), tf.compat.v1.TextLineReader,
                                             skip_corrupt=True)


def test_start_up_check_is_logged_and_a_num_samples_mismatch_warned(tmp_path, graph, caplog):
    paths = _write_shards(tmp_path)
    with caplog.at_level(logging.DEBUG, logger='slimdata'):
        dataset_data_provider.DatasetDataProvider(_dataset(paths, 100))  # num_epochs=None
        dataset_data_provider.DatasetDataProvider(_dataset(paths, 100), num_epochs=2)
    messages = [record.getMessage() for record in caplog.records]
    assert any(m.startswith('checked the framing of 3 data files') for m in messages)
    mismatch = ('the data files hold 30 records and num_samples says 100 (is a file missing, '
                'listed twice, or num_samples wrong?); ')
    # What will happen, for the pipeline as built: a training that reads forever never
    # fails (the trial); one of a few epochs fails where its input ends.
    assert [m[len(mismatch):] for m in messages if m.startswith(mismatch)] == [
        'with num_epochs=None the input never ends and nothing fails, but what counts epochs '
        'by num_samples (a decay schedule, an evaluation of num_samples records) is off',
        'with num_epochs=2 the input ends, and reading it to its end fails there (the end '
        'checks the count)']


# ----------------------------------------------------------------------------------------------
# The end of the input against what the files held and num_samples says

def _read_labels_with_queue(paths, num_samples, batched=False, num_epochs=1, **kwargs):
    with tf.Graph().as_default():
        if batched:
            provider = dataset_batch_provider.DatasetBatchProvider(
                _dataset(paths, num_samples), 3, shuffle=False, num_epochs=num_epochs,
                allow_smaller_final_batch=True, **kwargs)
        else:
            provider = dataset_data_provider.DatasetDataProvider(
                _dataset(paths, num_samples), shuffle=False, num_epochs=num_epochs, **kwargs)
        [label] = provider.get(['label'])
        return [int(v) for v in np.concatenate([np.atleast_1d(v) for v in drain(label)])]


def _read_labels_with_bridge(paths, num_samples, num_epochs=1, **kwargs):
    ds = tfdata.to_tf_data(_dataset(paths, num_samples), items=['label'], shuffle=False,
                           num_epochs=num_epochs, **kwargs)
    return [int(example['label']) for example in ds.as_numpy_iterator()]


@pytest.mark.parametrize('batched', [False, True])
def test_queue_input_that_ends_short_of_num_samples_is_an_error(tmp_path, batched):
    paths = _write_shards(tmp_path)
    assert sorted(_read_labels_with_queue(paths, 30, batched, num_epochs=2)) == sorted(
        _labels(tmp_path, range(3), range(PER_FILE)) * 2)
    # A shard missing from the folder (the glob finds two): only num_samples can tell.
    os.remove(paths[2])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r'the input ended after 2 epochs and 40 records; the 2 data files '
                             r'held 20 records per epoch when the pipeline was built, and '
                             r'num_samples says 30'):
        _read_labels_with_queue(str(tmp_path / 'train-*'), 30, batched, num_epochs=2)


@pytest.mark.slow
def test_bridge_epoch_short_of_num_samples_is_an_error(tmp_path):
    paths = _write_shards(tmp_path)
    os.remove(paths[2])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r'epoch 1 read 20 records, and num_samples says 30'):
        _read_labels_with_bridge(str(tmp_path / 'train-*'), 30)
    # A file listed twice is read twice: an epoch then holds more than num_samples.
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r'epoch 1 read 30 records, and num_samples says 20'):
        _read_labels_with_bridge(paths[:2] + [paths[0]], 20)
    # num_samples=None: no description to compare with.
    assert len(_read_labels_with_bridge(paths[:2], None, num_epochs=2)) == 40


def test_a_file_cut_after_the_pipeline_was_built_is_found_at_the_end_of_input(tmp_path):
    paths = _write_shards(tmp_path)
    with tf.Graph().as_default():
        [label] = dataset_data_provider.DatasetDataProvider(
            _dataset(paths, 30), shuffle=False, num_epochs=1).get(['label'])
        # Rewritten shorter (whole records: TensorFlow reads it without an error).
        write_with_tf(paths[1], _label_records(10, 4))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r'the input ended after 1 epochs and 24 records; the 3 data '
                                 r'files held 30 records per epoch.*did a file change since'):
            drain(label)


def test_bridge_checks_each_file_again_before_opening_it(tmp_path):
    paths = _write_shards(tmp_path)
    ds = tfdata.to_tf_data(_dataset(paths, 30), items=['label'], shuffle=False, num_epochs=1)
    Path(paths[1]).write_bytes(Path(paths[1]).read_bytes()[:_record_offset(3) + 4])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf'{paths[1]}: record 3 at byte offset {_record_offset(3)}: '
                             r'truncated header.*changed since the pipeline was built'):
        list(ds)
    # Rewritten with fewer whole records after the pipeline was built: the file is read as it
    # is now, and the epoch is short of num_samples.
    write_with_tf(paths[1], _label_records(10, PER_FILE))
    ds = tfdata.to_tf_data(_dataset(paths, 30), items=['label'], shuffle=False, num_epochs=1)
    write_with_tf(paths[1], _label_records(10, 4))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r'epoch 1 read 24 records, and num_samples says 30'):
        list(ds)


def test_parallel_reader_with_an_end_check_is_read_once(tmp_path, graph):
    paths = _write_shards(tmp_path, num_files=1)
    reader, filenames = parallel_reader.make_parallel_reader(
        paths, tf.compat.v1.TFRecordReader, num_epochs=1)
    reader.read(filenames)
    with pytest.raises(ValueError, match='one read, read_up_to or read_many call'):
        reader.read_up_to(filenames, 2)


# ----------------------------------------------------------------------------------------------
# skip_corrupt

def _skip_reports(caplog):
    return [record.getMessage() for record in caplog.records
            if 'skipped' in record.getMessage() and 'epoch' in record.getMessage()]


@pytest.mark.parametrize('how', ['queue', 'batch', 'bridge'])
def test_skip_corrupt_reads_up_to_the_damage_and_reports_each_epoch(tmp_path, how, caplog):
    paths = _write_shards(tmp_path)
    _flip_data_byte(paths[1], 6)  # a bad data CRC: found by TensorFlow's reader as it reads
    Path(paths[2]).write_bytes(Path(paths[2]).read_bytes()[:_record_offset(8) + 7])  # a cut
    with caplog.at_level(logging.WARNING, logger='slimdata'):
        if how == 'bridge':
            labels = _read_labels_with_bridge(paths, 30, num_epochs=2, skip_corrupt=True)
        else:
            labels = _read_labels_with_queue(paths, 30, how == 'batch', num_epochs=2,
                                             skip_corrupt=True)
    one_epoch = (_labels(tmp_path, [0], range(PER_FILE)) + _labels(tmp_path, [1], range(6))
                 + _labels(tmp_path, [2], range(8)))
    assert sorted(labels) == sorted(one_epoch * 2)
    reports = _skip_reports(caplog)
    assert len(reports) == 2
    for epoch, report in enumerate(reports, 1):
        assert report.startswith(f'epoch {epoch} read 24 records and skipped 6 records of '
                                 'damaged files (skip_corrupt=True): ')
        assert (f'{paths[1]}: 4 records from record 6 (byte offset {_record_offset(6)}: data '
                'CRC mismatch') in report
        assert (f'{paths[2]}: the rest of the file from record 8 (byte offset '
                f'{_record_offset(8)}: truncated header') in report


def test_skip_corrupt_without_num_samples_says_the_count_is_unknown(tmp_path, caplog):
    paths = _write_shards(tmp_path)
    Path(paths[0]).write_bytes(Path(paths[0]).read_bytes()[:_record_offset(2) + 3])
    with caplog.at_level(logging.WARNING, logger='slimdata'):
        assert len(_read_labels_with_bridge(paths, None, skip_corrupt=True)) == 22
    [report] = _skip_reports(caplog)
    assert 'skipped an unknown number of records' in report


# ----------------------------------------------------------------------------------------------
# Records that are not Examples, and features that do not match, name the record

@pytest.mark.parametrize('how', ['queue', 'bridge'])
def test_a_feature_mismatch_in_a_pipeline_names_the_key(tmp_path, how):
    records = _label_records(0, 4)
    records[2] = tf.train.Example(features=tf.train.Features(feature={
        'label': tf.train.Feature(float_list=tf.train.FloatList(value=[0.5]))}))\
        .SerializeToString()
    path = write_with_tf(tmp_path / 'a.tfrecord', records)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r'Key: label\.  Data types don\'t match\. Data type: float but '
                             r'expected type: int64'):
        if how == 'bridge':
            _read_labels_with_bridge([path], 4)
        else:
            _read_labels_with_queue([path], 4)


def test_decode_with_a_name_names_the_record_and_the_key_of_a_mismatch():
    decoder = tfexample_decoder.TFExampleDecoder({'label': tf.io.FixedLenFeature([], tf.int64)},
                                                 {'label': tfexample_decoder.Tensor('label')})
    expected = {0: r'Name: f:40, Feature: label \(data type: int64\) is required but could not '
                   r'be found',
                2: r'Name: f:40, Key: label, Index: 0\.  Number of int64 values != expected'}
    for count, message in expected.items():
        record = tf.train.Example(features=tf.train.Features(feature={} if not count else {
            'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[1] * count))}))
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            decoder.decode(tf.constant(record.SerializeToString()),
                           example_name=tf.constant('f:40'))


def test_checked_records_names_the_record_that_is_not_an_example():
    decoder = tfexample_decoder.TFExampleDecoder({'label': tf.io.FixedLenFeature([], tf.int64)},
                                                 {'label': tfexample_decoder.Tensor('label')})
    batch = tf.constant(_label_records(0, 2) + [b'\xff\xd8\xff\xe0 a JPEG, say \x89\x9f'])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match='Invalid protocol message input, example id: f:80'):
        tfexample_decoder.checked_records(decoder, batch, tf.constant(['f:0', 'f:40', 'f:80']))
    good = tf.constant(_label_records(0, 2))
    assert tfexample_decoder.checked_records(decoder, good, tf.constant(['a', 'b'])).numpy()\
        .tolist() == _label_records(0, 2)


@pytest.mark.parametrize('eager', [True, False])
def test_a_record_that_is_not_an_example_is_a_tensorflow_error(eager):
    decoder = tfexample_decoder.TFExampleDecoder({'label': tf.io.FixedLenFeature([], tf.int64)},
                                                 {'label': tfexample_decoder.Tensor('label')})
    not_an_example = b'\xff\xd8\xff\xe0 a JPEG, say \x89\x9f'
    if eager:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match='Invalid protocol message input, example id: <unknown>'):
            decoder.decode(tf.constant(not_an_example))
        return
    with tf.Graph().as_default():
        serialized = tf.compat.v1.placeholder(tf.string, [])
        [label] = decoder.decode(serialized, example_name=tf.constant('f.tfrecord:40'))
        with tf.compat.v1.Session() as session:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match='Invalid protocol message input, example id: f.tfrecord:40'):
                session.run(label, {serialized: not_an_example})


def test_decoding_with_a_name_gives_what_parse_single_example_gives():
    features = {
        'int': tf.io.FixedLenFeature([2], tf.int64), 'absent': tf.io.FixedLenFeature(
            [3], tf.float32, default_value=[1., 2., 3.]),
        'var': tf.io.VarLenFeature(tf.float32), 'none': tf.io.VarLenFeature(tf.string),
        'seq': tf.io.FixedLenSequenceFeature([], tf.string, allow_missing=True),
        'ragged': tf.io.RaggedFeature(tf.int64, value_key='rag'),
        'sparse': tf.io.SparseFeature('idx', 'val', tf.float32, 5),
    }
    example = tf.train.Example(features=tf.train.Features(feature={
        'int': tf.train.Feature(int64_list=tf.train.Int64List(value=[4, 5])),
        'rag': tf.train.Feature(int64_list=tf.train.Int64List(value=[6, 7, 8])),
        'var': tf.train.Feature(float_list=tf.train.FloatList(value=[.5, .25, .125])),
        'seq': tf.train.Feature(bytes_list=tf.train.BytesList(value=[b'a', b'bc'])),
        'idx': tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 3])),
        'val': tf.train.Feature(float_list=tf.train.FloatList(value=[7., 8.])),
    })).SerializeToString()
    expected = tf.io.parse_single_example(example, features)
    handlers = {key: tfexample_decoder.ItemHandlerCallback([key], lambda t, key=key: t[key])
                for key in features}
    decoder = tfexample_decoder.TFExampleDecoder(features, handlers)
    named = decoder.decode(tf.constant(example), list(features), example_name=tf.constant('n'))
    for key, value in zip(features, named):
        if isinstance(value, tf.SparseTensor):
            for part in ('indices', 'values', 'dense_shape'):
                np.testing.assert_array_equal(getattr(value, part),
                                              getattr(expected[key], part), err_msg=key)
        else:
            np.testing.assert_array_equal(value, expected[key], err_msg=key)
            assert value.shape == expected[key].shape, key


# ----------------------------------------------------------------------------------------------
# QueueSession: the end of the input is not a stop

def test_queue_session_tells_a_stop_from_the_end_of_the_input(tmp_path, graph):
    paths = _write_shards(tmp_path)
    # Endless epochs: only the stop can end the block (with an OutOfRangeError, once the
    # stop has closed the queues and the batches in them are dequeued).
    [label] = dataset_data_provider.DatasetDataProvider(_dataset(paths, 30)).get(['label'])
    batch = tf.compat.v1.train.batch([label], batch_size=2)
    read = 0
    with QueueSession() as session:
        while True:
            read += len(session.run(batch))
            if read == 4:
                session.coordinator.request_stop()  # as a loop's other thread would
    assert (session.epoch_ended, session.stopped) == (False, True)


def test_queue_session_ends_the_epoch_when_the_input_runs_out(tmp_path, graph):
    paths = _write_shards(tmp_path)
    [label] = dataset_data_provider.DatasetDataProvider(
        _dataset(paths, 30), shuffle=False, num_epochs=1).get(['label'])
    read = []
    with QueueSession() as session:
        while True:
            read.append(int(session.run(label)))
    assert (session.epoch_ended, session.stopped) == (True, False)
    assert read == _labels(tmp_path, range(3), range(PER_FILE))
