"""What the Estimator's runs share: the checkpoint a run restores, the Scaffold with TF1's
default Saver, and the monitored session that evaluation, prediction and export run in."""

from typing import Any, List, Optional

from slimdata._tf import tf
from slimdata.contrib.estimator.run_config import RunConfig
from slimdata.contrib.estimator.spec import EstimatorSpec

v1 = tf.compat.v1
logging = v1.logging


def checkpoint_to_restore(checkpoint_path: Optional[str], model_dir: str,
                          what: str) -> Optional[str]:
    """`checkpoint_path`, else the latest checkpoint of `model_dir`, else None (the run named
    `what` then starts from the initialized model, as TF1's evaluate and predict did)."""
    path = checkpoint_path or v1.train.latest_checkpoint(model_dir)
    if not path:
        logging.info('Could not find trained model in model_dir: %s, running '
                     'initialization to %s.', model_dir, what)
    return path


def scaffold(spec: EstimatorSpec, config: RunConfig) -> Any:
    """The spec's Scaffold (else a new one), with TF1's default sharded Saver by `config`
    in the graph's SAVERS collection when neither the scaffold nor the graph has a saver."""
    found = spec.scaffold or v1.train.Scaffold()
    if found.saver is None and not v1.get_collection(v1.GraphKeys.SAVERS):
        v1.add_to_collection(v1.GraphKeys.SAVERS, v1.train.Saver(
            sharded=True, max_to_keep=config.keep_checkpoint_max,
            keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours,
            defer_build=True, save_relative_paths=True))
    return found


def monitored_session(config: RunConfig, scaffold: Any, checkpoint: Optional[str],
                      master: str, hooks: List[Any]) -> Any:
    """A MonitoredSession on `master` that restores `checkpoint` (None: initializes)."""
    creator = v1.train.ChiefSessionCreator(
        scaffold=scaffold, checkpoint_filename_with_path=checkpoint, master=master,
        config=config.session_config or v1.ConfigProto(allow_soft_placement=True))
    return v1.train.MonitoredSession(session_creator=creator, hooks=hooks)
