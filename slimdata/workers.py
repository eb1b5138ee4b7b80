"""Reading on several workers: each worker of a multi-worker job reads its own part.

`DatasetDataProvider`, `DatasetBatchProvider` and `slimdata.tfdata.to_tf_data` take
`num_workers` and `worker_index` (defaults 1 and 0: tf_slim's behaviour, everything read).
Over all workers, every record is read exactly once per epoch, and no two workers read the
same record:

- with at least as many data files as workers, the files are divided: worker i reads the
  sorted files i, i + num_workers, ... (nothing is read twice; balance the workers by writing
  a multiple of their number of shards);
- with fewer files than workers, the records are: every worker reads every record and keeps
  those whose index in their file is i modulo num_workers, so each reads num_workers times
  the records it uses (a warning says so; write more shards instead).

In a job configured by `TF_CONFIG` (MultiWorkerMirroredStrategy, a TFJob on Kubernetes),
`from_tf_config()` gives both arguments::

    provider = DatasetDataProvider(dataset, **slimdata.workers.from_tf_config())

and in a TF1 cluster of parameter servers and workers, the worker's task::

    provider = DatasetDataProvider(dataset, num_workers=cluster.num_tasks('worker'),
                                   worker_index=task_index)

What an epoch of each worker must read (`num_samples` or its files' counts) is said by
`slimdata.record_checks.record_source`; docs/distributed.md has the recipes.
"""

import json
import logging
import os
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

LOGGER = logging.getLogger('slimdata')

#: The TF_CONFIG task types that read training data, in the order their tasks are numbered.
READING_TASKS = ('chief', 'worker')


def check_worker_arguments(num_workers: int, worker_index: int) -> None:
    """Raises ValueError naming the argument unless 0 <= worker_index < num_workers."""
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
        raise ValueError(f'num_workers must be an int >= 1, got {num_workers!r}')
    if (isinstance(worker_index, bool) or not isinstance(worker_index, int)
            or not 0 <= worker_index < num_workers):
        raise ValueError(f'worker_index must be an int in [0, num_workers={num_workers}), got '
                         f'{worker_index!r}')


def files_of_worker(data_files: Sequence[str], num_workers: int,
                    worker_index: int) -> Tuple[List[str], bool]:
    """The data files this worker reads, and whether it must keep only its share of their
    records (fewer files than workers; warned about).

    Args:
      data_files: all the data files, sorted (as `get_data_files` returns them).
      num_workers, worker_index: see the module docstring.
    """
    check_worker_arguments(num_workers, worker_index)
    files = list(data_files)
    if num_workers == 1:
        return files, False
    if len(files) >= num_workers:
        return files[worker_index::num_workers], False
    LOGGER.warning(
        '%d data file(s) for %d workers: every worker reads every record and keeps one in %d '
        '(each reads %d times the records it uses); write at least %d shards to divide the '
        'files instead', len(files), num_workers, num_workers, num_workers, num_workers)
    return files, True


def keep_mask(indices, num_workers: int, worker_index: int):
    """The records of a batch this worker keeps, by their `indices` in their file."""
    from slimdata._tf import tf
    return tf.equal(tf.math.floormod(indices, num_workers), worker_index)


def from_tf_config(environ: Optional[Mapping[str, str]] = None) -> Dict[str, int]:
    """`num_workers` and `worker_index` from the `TF_CONFIG` environment variable.

    The chief and the workers read the data ("cluster": {"chief": [...], "worker": [...]}),
    numbered chief first: task ("worker", k) is worker k + the number of chiefs. Without
    TF_CONFIG, or for an evaluator, it is one worker reading everything.

    Raises:
      ValueError: for a TF_CONFIG that is not JSON of that form, or a task that reads no
        training data (a parameter server).
    """
    text = (os.environ if environ is None else environ).get('TF_CONFIG')
    if not text:
        return {'num_workers': 1, 'worker_index': 0}
    try:
        config = json.loads(text)
        cluster, task = config.get('cluster', {}), config['task']
        task_type, index = task['type'], int(task['index'])
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f'TF_CONFIG is not a cluster and task description ({error}): '
                         f'{text!r}') from error
    if task_type == 'evaluator':
        return {'num_workers': 1, 'worker_index': 0}
    if task_type not in READING_TASKS:
        raise ValueError(f'TF_CONFIG task type {task_type!r} reads no training data; the '
                         f'readers are {READING_TASKS}')
    before = sum(len(cluster.get(kind, [])) for kind in
                 READING_TASKS[:READING_TASKS.index(task_type)])
    num_workers = sum(len(cluster.get(kind, [])) for kind in READING_TASKS)
    worker_index = before + index
    if not 0 <= worker_index < num_workers:
        raise ValueError(f'TF_CONFIG task {task_type} {index} is not in its cluster {cluster}')
    return {'num_workers': num_workers, 'worker_index': worker_index}
