"""The flags the training and evaluation examples share, named as models/research/slim and
SSD-Tensorflow name them, and the checks that go with them: which dataset, which checkpoint,
counts of at least 1, and an evaluation that read its split exactly once.

A sibling module of the scripts (see lenet.py for why they import each other by name).
"""

import argparse
from typing import Any, Iterable, Union

from slimdata._tf import tf

#: What `add_argument` can be called on: a parser, or one of its argument groups.
Parser = Union[argparse.ArgumentParser, argparse._ArgumentGroup]


def add_dataset_flags(parser: Parser, name_default: str, split_default: str,
                      split_use: str, detection: bool = False) -> None:
    """Adds --dataset_name, --dataset_split_name and --dataset_dir (required).

    Args:
      parser: the parser, or the argument group, to add them to.
      name_default: --dataset_name's default, a name of dataset_factory.
      split_default: --dataset_split_name's default.
      split_use: what the split is for, in the help ('to train on', 'to evaluate').
      detection: whether the help says that the name `detection` reads any detection folder.
    """
    note = " (detection reads any folder of slimdata's detection converters)" if detection else ''
    parser.add_argument('--dataset_name', default=name_default,
                        help=f'a name of slimdata.datasets.dataset_factory{note} (default: '
                             '%(default)s)')
    parser.add_argument('--dataset_split_name', default=split_default,
                        help=f'the split {split_use} (default: %(default)s)')
    parser.add_argument('--dataset_dir', required=True,
                        help='the folder of the TFRecord shards and dataset_info.json')


def add_checkpoint_flag(parser: Parser) -> None:
    """Adds --checkpoint_path, which `resolve_checkpoint` turns into a checkpoint."""
    parser.add_argument('--checkpoint_path', default='/tmp/tfmodel/',
                        help='a checkpoint, or a train_dir whose latest checkpoint is used '
                             '(default: %(default)s)')


def resolve_checkpoint(checkpoint_path: str) -> str:
    """The checkpoint `checkpoint_path` names: itself, or a folder's latest checkpoint.

    Raises:
      ValueError: naming the path, for a folder without checkpoints or a missing checkpoint.
    """
    if tf.io.gfile.isdir(checkpoint_path):
        latest = tf.train.latest_checkpoint(checkpoint_path)
        if latest is None:
            raise ValueError(f'{checkpoint_path} holds no checkpoint (no "checkpoint" file '
                             'naming one); train first, or pass a checkpoint file')
        return latest
    if not tf.io.gfile.glob(checkpoint_path + '.index'):
        raise ValueError(f'{checkpoint_path} is neither a folder of checkpoints nor a '
                         f'checkpoint (no {checkpoint_path}.index)')
    return checkpoint_path


def require_at_least_one(parser: argparse.ArgumentParser, args: argparse.Namespace,
                         names: Iterable[str]) -> None:
    """Exits through `parser.error` (status 2, naming the flag) if a flag of `names` (the
    attribute names of `args`) is below 1."""
    for name in names:
        if getattr(args, name) < 1:
            parser.error(f'--{name} must be at least 1, got {getattr(args, name)}')


def check_read_once(num_examples: int, dataset: Any, args: argparse.Namespace,
                    noun: str) -> None:
    """Raises ValueError unless an evaluation of `args.dataset_split_name` of
    `args.dataset_dir` read exactly `dataset.num_samples` examples (its `noun`s)."""
    if num_examples != dataset.num_samples:
        raise ValueError(
            f'evaluated {num_examples} {noun}, but split {args.dataset_split_name!r} of '
            f'{args.dataset_dir} holds {dataset.num_samples} (its num_samples); the shards '
            'and dataset_info.json disagree')
