"""A shard shortened, replaced or deleted after conversion is refused when the pipeline is
built, naming the file (issue 28 item 8). dataset_info.json records each shard's size; the
pipelines (the queue providers and the tf.data bridge) compare them with the files before
TensorFlow's readers open any.

Before, a shard replaced by a valid shorter file (written here by TensorFlow's own writer)
built a pipeline with a warning naming no file, and an epoch came up short with a normal
OutOfRangeError; a deleted shard was not noticed at all.
"""

import pytest

from conftest import write_with_tf
from slimdata import dataset_data_provider, tfdata
from slimdata.datasets import dataset_factory

SHARD = 'train-00001-of-00002.tfrecord'


def build_provider(folder):
    dataset = dataset_factory.get_dataset('image_folder', 'train', str(folder))
    return dataset_data_provider.DatasetDataProvider(dataset, shuffle=False)


def build_bridge(folder):
    return tfdata.to_tf_data(dataset_factory.get_dataset('image_folder', 'train', str(folder)),
                             shuffle=False)


@pytest.mark.parametrize('build', [build_provider, build_bridge])
def test_a_shard_replaced_by_a_shorter_valid_file_is_refused_naming_it(folder, graph, build):
    shard = folder / SHARD
    recorded = shard.stat().st_size
    write_with_tf(shard, [b'one record'])
    with pytest.raises(ValueError) as raised:
        build(folder)
    message = str(raised.value)
    assert message.startswith(
        f"{shard} has {shard.stat().st_size:,} bytes; {folder}/dataset_info.json (split "
        f"'train') records {recorded:,} bytes and 4 records")


def test_a_deleted_shard_is_refused_naming_it(folder, graph):
    (folder / SHARD).unlink()
    with pytest.raises(ValueError, match=f"{folder / SHARD} is missing; .*dataset_info.json "
                                         r"\(split 'train'\) lists it with 4 records"):
        build_provider(folder)


def test_the_shards_as_written_build_a_pipeline(folder, graph):
    assert build_provider(folder) is not None
