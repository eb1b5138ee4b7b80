"""`RunConfig`: where an Estimator writes, how often it saves, and its task in a cluster.

The task comes from the `TF_CONFIG` environment variable as TensorFlow 1.15 read it:
`{"cluster": {"chief": [...], "worker": [...], "ps": [...]}, "task": {"type": ..., "index":
...}}`. With a cluster, the chief is task 0 of the training (`is_chief`), `master` is the task's
own `grpc://` address, and an `evaluator` task is outside the training cluster. Without one,
the task is the single local worker.
"""

import json
import os
from typing import Any, Dict, Optional, Tuple

from slimdata._tf import tf

v1 = tf.compat.v1


class TaskType:
    """The task types of `TF_CONFIG` (TF1's names)."""
    MASTER = 'master'
    PS = 'ps'
    WORKER = 'worker'
    CHIEF = 'chief'
    EVALUATOR = 'evaluator'


_DEFAULT = object()  # save_checkpoints_secs not given: 600 unless save_checkpoints_steps is
_DEFAULT_CHECKPOINT_SECS = 600
_NOT_COVERED = ('train_distribute', 'eval_distribute', 'experimental_distribute')


def _tf_config() -> Dict[str, Any]:
    text = os.environ.get('TF_CONFIG', '')
    if not text:
        return {}
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f'TF_CONFIG is not JSON ({error}): {text!r}') from error
    if not isinstance(config, dict):
        raise ValueError(f'TF_CONFIG must be a JSON object, given: {text!r}')
    return config


def _task(cluster: Dict[str, Any], task: Dict[str, Any]) -> Tuple[str, int]:
    """The (type, index) of a task of a TF_CONFIG with `cluster`, checked as TF1 did."""
    task_type, task_id = task.get('type'), task.get('index', 0)
    if not task_type:
        raise ValueError('If "cluster" is set in TF_CONFIG, it must have "task" with a "type".')
    if TaskType.CHIEF not in cluster:
        raise ValueError('If "cluster" is set in TF_CONFIG, it must have one "chief" node.')
    if len(cluster[TaskType.CHIEF]) > 1:
        raise ValueError('The "cluster" in TF_CONFIG must have only one "chief" node.')
    if TaskType.EVALUATOR in cluster:
        raise ValueError('If "cluster" is set in TF_CONFIG, it must not have an "evaluator": '
                         'the evaluator is outside the training cluster.')
    if task_type == TaskType.EVALUATOR:
        if task_id != 0:
            raise ValueError(f'The evaluator task index must be 0, given: {task_id}')
        return task_type, 0
    if task_type not in cluster:
        raise ValueError(f'TF_CONFIG task type {task_type!r} is not in the cluster '
                         f'({sorted(cluster)})')
    if not isinstance(task_id, int) or not 0 <= task_id < len(cluster[task_type]):
        raise ValueError(f'TF_CONFIG task index {task_id!r} is not one of the '
                         f'{len(cluster[task_type])} {task_type} tasks of the cluster')
    return task_type, task_id


class RunConfig:
    """How an Estimator runs: TF1's `tf.estimator.RunConfig`.

    `model_dir`: where checkpoints and summaries go (also settable in TF_CONFIG's
    "model_dir"). `tf_random_seed`: the graph-level random seed. `save_summary_steps`: steps
    between summaries. `save_checkpoints_steps` / `save_checkpoints_secs`: at most one; neither
    given saves every 600 s; both None saves no checkpoint. `session_config`: a
    `tf.compat.v1.ConfigProto`. `keep_checkpoint_max`, `keep_checkpoint_every_n_hours`: the
    Saver's. `log_step_count_steps`: steps between the loss and steps/sec logs.
    `device_fn`: a device function for the training graph (the default places variables on
    the ps tasks when there are some). `protocol`: the servers' protocol (default grpc).
    `experimental_max_worker_delay_secs`: the longest a worker waits before it starts
    training (TF1 staggers workers by 5 s each, at most 60 s).
    `session_creation_timeout_secs`: how long a worker waits for the chief's session.
    The tf.distribute strategies (`train_distribute`, ...) are not covered: ValueError.
    """

    def __init__(self, model_dir: Optional[str] = None, tf_random_seed: Optional[int] = None,
                 save_summary_steps: int = 100, save_checkpoints_steps: Optional[int] = None,
                 save_checkpoints_secs: Any = _DEFAULT,
                 session_config: Optional[Any] = None, keep_checkpoint_max: int = 5,
                 keep_checkpoint_every_n_hours: float = 10000,
                 log_step_count_steps: Optional[int] = 100, train_distribute: Any = None,
                 device_fn: Any = None, protocol: Optional[str] = None,
                 eval_distribute: Any = None, experimental_distribute: Any = None,
                 experimental_max_worker_delay_secs: Optional[int] = None,
                 session_creation_timeout_secs: int = 7200,
                 checkpoint_save_graph_def: bool = True) -> None:
        for name, value in zip(_NOT_COVERED, (train_distribute, eval_distribute,
                                              experimental_distribute)):
            if value is not None:
                raise ValueError(f'RunConfig {name}: tf.distribute strategies are not covered '
                                 'by slimdata.contrib.estimator (TF_CONFIG clusters are)')
        if save_checkpoints_secs is _DEFAULT:
            save_checkpoints_secs = (None if save_checkpoints_steps is not None
                                     else _DEFAULT_CHECKPOINT_SECS)
        if save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError('Can not provide both save_checkpoints_steps and '
                             'save_checkpoints_secs.')
        for name, value in (('save_summary_steps', save_summary_steps),
                            ('save_checkpoints_steps', save_checkpoints_steps),
                            ('save_checkpoints_secs', save_checkpoints_secs),
                            ('keep_checkpoint_max', keep_checkpoint_max),
                            ('log_step_count_steps', log_step_count_steps)):
            if value is not None and value < 0:
                raise ValueError(f'{name} should be >= 0, given: {value}')
        if keep_checkpoint_every_n_hours <= 0:
            raise ValueError('keep_checkpoint_every_n_hours should be > 0, given: '
                             f'{keep_checkpoint_every_n_hours}')
        if session_config is not None and not isinstance(session_config, v1.ConfigProto):
            raise ValueError(f'session_config must be a ConfigProto, given: {session_config!r}')
        if device_fn is not None and not callable(device_fn):
            raise ValueError(f'device_fn must be callable, given: {device_fn!r}')
        self._values = dict(
            tf_random_seed=tf_random_seed, save_summary_steps=save_summary_steps,
            save_checkpoints_steps=save_checkpoints_steps,
            save_checkpoints_secs=save_checkpoints_secs, session_config=session_config,
            keep_checkpoint_max=keep_checkpoint_max,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            log_step_count_steps=log_step_count_steps, device_fn=device_fn, protocol=protocol,
            experimental_max_worker_delay_secs=experimental_max_worker_delay_secs,
            session_creation_timeout_secs=session_creation_timeout_secs,
            checkpoint_save_graph_def=checkpoint_save_graph_def)
        tf_config = _tf_config()
        self._values['model_dir'] = self._model_dir(model_dir, tf_config)
        self._init_task(tf_config)

    @staticmethod
    def _model_dir(model_dir: Optional[str], tf_config: Dict[str, Any]) -> Optional[str]:
        from_config = tf_config.get('model_dir')
        if model_dir == '':
            raise ValueError('model_dir should be non-empty')
        if model_dir and from_config and os.path.normpath(model_dir) != os.path.normpath(
                from_config):
            raise ValueError(f'model_dir are set both in constructor and TF_CONFIG, but with '
                             f'different values: {model_dir} != {from_config}')
        return model_dir or from_config or None

    def _init_task(self, tf_config: Dict[str, Any]) -> None:
        cluster = tf_config.get('cluster') or {}
        task = tf_config.get('task') or {}
        self._evaluation_master = tf_config.get('eval_session_master', '')
        if not cluster:
            task_type, task_id = task.get('type', TaskType.WORKER), int(task.get('index', 0))
            if task_type not in (TaskType.WORKER, TaskType.EVALUATOR):
                raise ValueError('If "cluster" is not set in TF_CONFIG, task type must be '
                                 f'WORKER, given: {task_type!r}')
            if task_id != 0:
                raise ValueError('If "cluster" is not set in TF_CONFIG, task index must be 0, '
                                 f'given: {task_id}')
            self._task_type, self._task_id = task_type, 0
            self._cluster_spec = v1.train.ClusterSpec({})
            self._master = tf_config.get('session_master', '')
            self._is_chief = task_type == TaskType.WORKER
            self._num_ps_replicas, self._num_worker_replicas = 0, 1
            return
        if TaskType.MASTER in cluster:
            raise ValueError('TF_CONFIG with a "master" task (the pre-1.5 layout) is not '
                             'covered: name it "chief"')
        self._task_type, self._task_id = _task(cluster, task)
        if self._task_type == TaskType.EVALUATOR:
            self._cluster_spec = v1.train.ClusterSpec({})  # outside the training cluster
            self._master, self._num_ps_replicas, self._num_worker_replicas = '', 0, 0
            self._is_chief = False
            return
        self._cluster_spec = v1.train.ClusterSpec(cluster)
        self._master = 'grpc://' + self._cluster_spec.task_address(self._task_type,
                                                                   self._task_id)
        self._num_ps_replicas = len(cluster.get(TaskType.PS, []))
        self._num_worker_replicas = (len(cluster.get(TaskType.WORKER, []))
                                     + len(cluster[TaskType.CHIEF]))
        self._is_chief = self._task_type == TaskType.CHIEF

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get('_values', {})
        if name in values:
            return values[name]
        raise AttributeError(f"'RunConfig' object has no attribute '{name}'")

    @property
    def cluster_spec(self) -> Any:
        return self._cluster_spec

    @property
    def task_type(self) -> str:
        return self._task_type

    @property
    def task_id(self) -> int:
        return self._task_id

    @property
    def global_id_in_cluster(self) -> Optional[int]:
        """The task's number among the training tasks: the chief 0, then the other jobs by
        name, the ps tasks last (TF1's order); None for an evaluator."""
        if self._task_type == TaskType.EVALUATOR:
            return None
        jobs = self._cluster_spec.jobs
        if not jobs:
            return 0
        order = [TaskType.CHIEF] + sorted(set(jobs) - {TaskType.CHIEF, TaskType.PS})
        order += [TaskType.PS] if TaskType.PS in jobs else []
        before = order[:order.index(self._task_type)]
        return sum(self._cluster_spec.num_tasks(job) for job in before) + self._task_id

    @property
    def master(self) -> str:
        return self._master

    @property
    def evaluation_master(self) -> str:
        return self._evaluation_master

    @property
    def is_chief(self) -> bool:
        return self._is_chief

    @property
    def num_ps_replicas(self) -> int:
        return self._num_ps_replicas

    @property
    def num_worker_replicas(self) -> int:
        return self._num_worker_replicas

    @property
    def train_distribute(self) -> None:
        return None

    @property
    def eval_distribute(self) -> None:
        return None

    def training_session_config(self) -> Any:
        """The session config of training: the user's, else TF1's default (soft placement;
        in a cluster, a chief or worker sees only the ps tasks and itself)."""
        if self.session_config is not None:
            return self.session_config
        filters = None
        if self._cluster_spec.jobs:
            filters = ['/job:ps', f'/job:{self._task_type}/task:{self._task_id}']
        return v1.ConfigProto(allow_soft_placement=True, device_filters=filters)

    def replace(self, **changes: Any) -> 'RunConfig':
        """A copy with the arguments in `changes` replaced (the cluster is read again)."""
        unknown = set(changes) - set(self._values)
        if unknown:
            raise ValueError(f'Replacing {sorted(unknown)} is not supported: not RunConfig '
                             'arguments')
        values = dict(self._values, **changes)
        if 'save_checkpoints_steps' in changes and 'save_checkpoints_secs' not in changes:
            values['save_checkpoints_secs'] = _DEFAULT
        return self._copy(values)

    def _copy(self, values: Dict[str, Any]) -> 'RunConfig':
        return type(self)(**values)
