"""`Estimator.export_saved_model`: the PREDICT graph on a serving input receiver's features,
the checkpoint's variables restored into it, written as a SavedModel (tag `serve`) whose
signatures are the spec's `export_outputs`, in `<export_dir_base>/<timestamp>`.

The SavedModel is written to `<export_dir_base>/temp-<timestamp>` and renamed when complete:
an export that fails or is interrupted leaves no folder under a timestamp's name (a failed
one removes its temporary folder; one killed leaves `temp-<timestamp>`, which is no export).
"""

import os
import shutil
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional

from slimdata._tf import tf
from slimdata.contrib.estimator.export import (
    ServingInputReceiver,
    TensorServingInputReceiver,
    export_outputs_of,
    signature_defs,
)
from slimdata.contrib.estimator.spec import ModeKeys, WarmStartSettings
from slimdata.records import fs

if TYPE_CHECKING:  # the Estimator makes the runs: a run module does not import it
    from slimdata.contrib.estimator.estimator import Estimator

v1 = tf.compat.v1
logging = v1.logging

_TIMESTAMP_ATTEMPTS = 10  # TF1's: seconds waited for a timestamp no export has


def timestamped_export_dir(export_dir_base: str) -> str:
    """`<export_dir_base>/<seconds since the epoch>`, a name no export (nor an export being
    written) has: TF1 waited a second for the next one, at most ten times."""
    for _ in range(_TIMESTAMP_ATTEMPTS):
        name = str(int(time.time()))
        folder = os.path.join(export_dir_base, name)
        if not (fs.exists(folder) or fs.exists(temporary_export_dir(folder))):
            return folder
        time.sleep(1)  # the next second is a free name (TF1 did the same)
    raise RuntimeError(f'Failed to obtain a unique export directory name in {export_dir_base} '
                       f'after {_TIMESTAMP_ATTEMPTS} attempts.')


def temporary_export_dir(export_dir: str) -> str:
    """Where the export `export_dir` is written until complete: `temp-<timestamp>` beside it."""
    folder, name = os.path.split(export_dir)
    return os.path.join(folder, f'temp-{name}')


def _check_receiver(receiver: Any) -> Any:
    if not isinstance(receiver, (ServingInputReceiver, TensorServingInputReceiver)):
        raise ValueError(f'serving_input_receiver_fn must return a ServingInputReceiver or a '
                         f'TensorServingInputReceiver, given: {receiver!r}')
    return receiver


def copy_assets_extra(assets_extra: Dict[str, str], export_dir: str) -> None:
    """Copies each source file of `assets_extra` (relative destination -> source path) to
    `export_dir/assets.extra/<destination>`; ValueError for a destination outside it."""
    for destination, source in sorted(assets_extra.items()):
        if os.path.isabs(destination) or '..' in destination.replace('\\', '/').split('/'):
            raise ValueError(f'assets_extra destination {destination!r} must be a path inside '
                             f'assets.extra (relative, without ..)')
        target = os.path.join(export_dir, 'assets.extra', destination)
        fs.makedirs(os.path.dirname(target))
        with fs.open_read(source) as reader, fs.atomic_write(target) as writer:
            shutil.copyfileobj(reader, writer)


class ExportRun:
    """Exports the model of `estimator` as a SavedModel (see `Estimator.export_saved_model`);
    `warm_start`: the checkpoint exported when `model_dir` has none (as TF1 did)."""

    def __init__(self, estimator: 'Estimator', warm_start: Optional[WarmStartSettings]) -> None:
        self._estimator = estimator
        self._config = estimator.config
        self._warm_start = warm_start

    def run(self, export_dir_base: str, serving_input_receiver_fn: Callable,
            assets_extra: Optional[Dict[str, str]], as_text: bool,
            checkpoint_path: Optional[str]) -> bytes:
        """The path (bytes, as TF1's) of the new export; the arguments are
        `Estimator.export_saved_model`'s."""
        if not callable(serving_input_receiver_fn):
            raise ValueError(f'An input_receiver_fn must be defined (a function), given: '
                             f'{serving_input_receiver_fn!r}')
        checkpoint = self._checkpoint(checkpoint_path)
        export_dir = timestamped_export_dir(os.fspath(export_dir_base))
        temporary = temporary_export_dir(export_dir)
        try:
            self._write(temporary, serving_input_receiver_fn, checkpoint, as_text)
            if assets_extra:
                copy_assets_extra(assets_extra, temporary)
            fs.rename(temporary, export_dir)
        except BaseException:
            fs.remove_tree(temporary)  # no export stands half-written, under any name
            raise
        logging.info('SavedModel written to: %s', export_dir)
        return tf.compat.as_bytes(export_dir)

    def _checkpoint(self, checkpoint_path: Optional[str]) -> str:
        """The checkpoint to export: the given one, `model_dir`'s latest, else the warm-start
        checkpoint (the latest of its folder); ValueError without one."""
        path = checkpoint_path or self._estimator.latest_checkpoint()
        if not path and self._warm_start is not None:
            path = self._warm_start.ckpt_to_initialize_from
            if tf.io.gfile.isdir(path):
                path = v1.train.latest_checkpoint(path)
        if not path:
            raise ValueError(f"Couldn't find trained model at {self._estimator.model_dir}.")
        return path

    def _write(self, folder: str, serving_input_receiver_fn: Callable, checkpoint: str,
               as_text: bool) -> None:
        """Builds the serving graph, restores `checkpoint` into it and writes the SavedModel
        to `folder`."""
        with tf.Graph().as_default():
            v1.set_random_seed(self._config.tf_random_seed)
            v1.train.get_or_create_global_step()
            receiver = _check_receiver(serving_input_receiver_fn())
            spec = self._estimator._call_model_fn(receiver.features, None, ModeKeys.PREDICT)
            signatures = signature_defs(receiver, export_outputs_of(spec.export_outputs,
                                                                    spec.predictions))
            scaffold = spec.scaffold or v1.train.Scaffold()
            # The saver restores the variables now and is the one the SavedModel loads with
            # (a custom Saver of the Scaffold goes into the export, as in TF1).
            saver = scaffold.saver or v1.train.Saver(sharded=True)
            with v1.Session(config=self._config.session_config) as session:
                try:
                    saver.restore(session, checkpoint)
                except tf.errors.NotFoundError as error:
                    raise ValueError(
                        f'Could not load all requested variables from checkpoint {checkpoint}: '
                        f'the model_fn in PREDICT mode must not expect variables the checkpoint '
                        f'does not have ({error.message})') from error
                builder = v1.saved_model.Builder(folder)
                builder.add_meta_graph_and_variables(
                    session, [v1.saved_model.tag_constants.SERVING],
                    signature_def_map=signatures,
                    assets_collection=v1.get_collection(v1.GraphKeys.ASSET_FILEPATHS),
                    main_op=scaffold.local_init_op or v1.train.Scaffold.default_local_init_op(),
                    saver=saver, strip_default_attrs=True)
                builder.save(as_text)
