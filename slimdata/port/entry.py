"""The entry-point pass: TF1 behaviour where a TF1 script starts.

TF1 scripts build graphs and run them in sessions, and read shapes the TF1 way
(`x.get_shape()[1].value`, `[d.value for d in shape]`); under TensorFlow 2 they need
`tf.compat.v1.disable_v2_behavior()` before anything builds a graph: graph mode, v1
`TensorShape` (its `Dimension`s have `.value`), v1 control flow, tensors compared by identity
(usable as dict keys), `tf2.enabled()` false - TensorFlow's own switch for "run this as TF1";
then `enable_resource_variables()` (see TF1_BEHAVIOUR). When the `tf-keras` package is
installed (where the port runs), first `os.environ.setdefault('TF_USE_LEGACY_KERAS', '1')`:
TF1-era code's `tf.keras` was Keras 2, and TensorFlow decides which Keras `tf.keras` is at its
first use, not at its import (measured on TensorFlow 2.21: set after `import tensorflow`, before
any `tf.keras` or `tf.compat.v1.layers` access, `tf.keras` is tf-keras), so deeplab's
`class Conv2D(tf.keras.layers.Conv2D, tf.layers.Layer)` is defined again. Without tf-keras the
note says what to install.

The pass puts it, guarded by `if __name__ == '__main__':`, right after the module-level
statement that imports TensorFlow, in a file that is a script: one with an
`if __name__ == '__main__':` block or a module-level `tf.app.run()` / `absl.app.run(main)`, or
a package's `__main__.py` (`python -m package` runs it, with or without a guard).
So it runs when the file runs as a script (`python train.py`, `python -m package.train`, and
before `tf.app.run` calls `main`), before the script imports its own library modules, some of
which decide at import time what to build (the Object Detection API's model builder imports
its TF1 or its TF2 feature extractors by `tf2.enabled()`); importing the file as a module
changes nothing. Only in files that import TensorFlow's TF1 API under any spelling
(`slimdata.port.spelling`) and do not already switch v2 behaviour or eager execution on, or v2
behaviour off. The switch is process-wide, so the library modules such a script imports run as
TF1 too.
"""

import re
from typing import Optional

import libcst as cst

from slimdata.port.edits import CHANGED, Context, LookAhead, PortTransformer, code_of
from slimdata.port.installed import is_module
from slimdata.port.spelling import SpellingAware

#: The calls, under the file's TensorFlow alias. Resource variables stay: Keras 3 objects that
#: TF1-era code mixes in (`tf.keras.regularizers.l2` on a slim variable in attention_ocr)
#: reject reference variables ("Invalid dtype: float32_ref"), and slim, SSD and deeplab train
#: the same on either.
TF1_BEHAVIOUR = ('compat.v1.disable_v2_behavior()', 'compat.v1.enable_resource_variables()')
_SWITCHES = ('disable_v2_behavior', 'enable_eager_execution', 'enable_v2_behavior')
#: The lines that make `tf.keras` Keras 2 (tf-keras), before anything uses it.
KERAS_2 = ('import os', "os.environ.setdefault('TF_USE_LEGACY_KERAS', '1')  # tf.keras: Keras 2")
_INSTALL_TF_KERAS = ("tf.keras stays Keras 3: TF1-era code's tf.keras was Keras 2; pip install "
                     '--no-deps "tf-keras==<your TensorFlow version>.*" and run with '
                     'TF_USE_LEGACY_KERAS=1 in the environment')
_APP_RUN = ('tensorflow.app.run', 'absl.app.run')


def _imports_tensorflow(statement: cst.CSTNode) -> bool:
    """Whether `statement` is a module-level line importing TensorFlow (any spelling)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Import) and any(
                code_of(alias.name).split('.')[0] == 'tensorflow' for alias in small.names):
            return True
        if (isinstance(small, cst.ImportFrom) and small.module is not None
                and not small.relative and code_of(small.module) == 'tensorflow.compat'):
            return True
    return False


def is_package_main(path: str) -> bool:
    """Whether `path` is a package's `__main__.py`, which `python -m package` runs."""
    return path.rsplit('/', 1)[-1] == '__main__.py'


def _is_main_guard(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.If):
        return False
    test = code_of(statement.test).replace('"', "'").replace(' ', '')
    return test in ("__name__=='__main__'", "'__main__'==__name__")


class EntryPass(SpellingAware, PortTransformer):
    """Adds `tf.compat.v1.disable_v2_behavior()` where a TF1 script starts."""

    NAME = 'entry'
    TRIGGER = re.compile(r'__main__|app\.run')

    @classmethod
    def has_work(cls, code: str, context: Context) -> bool:
        """A script: a main guard or an `app.run`, or a package's `__main__.py` whatever it
        holds."""
        return is_package_main(context.path) or super().has_work(code, context)

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        self.call: Optional[str] = None
        # `python -m package` runs the package's __main__.py, guard or not: always a script.
        self.package_main = is_package_main(context.path)

    def visit_Module(self, node: cst.Module) -> bool:
        spelling = self.learn_spelling(node)
        if not spelling.tf1 or any(switch in self.source for switch in _SWITCHES):
            return False
        self.call = f'{spelling.alias}.{TF1_BEHAVIOUR[0]}'
        return False  # its work is all in leave_Module: the statements need no walk

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        # The guards first: an `app.run` call needs the scopes, which cost more than the walk.
        if self.call is None or not (
                self.package_main or any(_is_main_guard(statement) for statement in original.body)
                or any(self._is_app_run(statement, original) for statement in original.body)):
            return updated
        for index, statement in enumerate(original.body):
            if _imports_tensorflow(statement):
                keras_2 = is_module('tf_keras')
                self.note(CHANGED, statement, f'{self.call} when run as a script, after the '
                                              'TensorFlow import (TF1 behaviour)' + (
                                                  '; tf.keras is Keras 2 (tf-keras)' if keras_2
                                                  else f'; {_INSTALL_TF_KERAS}'))
                lines = [*(KERAS_2 if keras_2 else ()),
                         *(f'{self.spelling.alias}.{call}' for call in TF1_BEHAVIOUR)]
                calls = ''.join(f'    {line}\n' for line in lines)
                guard = cst.parse_statement(
                    f"if __name__ == '__main__':  # TF1 behaviour (slimdata port)\n{calls}")
                body = list(updated.body)
                body.insert(index + 1, guard)
                return updated.with_changes(body=body)
        return updated

    def _is_app_run(self, statement: cst.CSTNode, module: cst.Module) -> bool:
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                and isinstance(statement.body[0], cst.Expr)
                and isinstance(statement.body[0].value, cst.Call)):
            return False
        # The statement's parents, so that its names come from the module's bindings, not
        # from LibCST's scopes of the whole tree (the pass does not walk it).
        statement.visit(LookAhead(self, module))
        return self.qualified_name(statement.body[0].value.func) in _APP_RUN
