"""The entry-point pass: TF1 behaviour where a TF1 script starts.

TF1 scripts build graphs and run them in sessions, and read shapes the TF1 way
(`x.get_shape()[1].value`, `[d.value for d in shape]`); under TensorFlow 2 they need
`tf.compat.v1.disable_v2_behavior()` before anything builds a graph: graph mode, v1
`TensorShape` (its `Dimension`s have `.value`), reference variables, v1 control flow, tensors
compared by identity (usable as dict keys) - TensorFlow's own switch for "run this as TF1".

The pass puts it as the first statement of the script's `if __name__ == '__main__':` block (so
it also runs for `python -m package.module`, and before `tf.app.run` / `absl.app.run` call
`main`), or, with no such block, just before a module-level `tf.app.run()` / `app.run(main)`;
in files that import TensorFlow's TF1 API under any spelling (`slimdata.port.spelling`) and do
not already switch v2 behaviour or eager execution on, or v2 behaviour off. The switch is
process-wide, so the library modules such a script imports run as TF1 too.
"""

from typing import Optional

import libcst as cst

from slimdata.port.edits import CHANGED, PortTransformer, code_of
from slimdata.port.spelling import SpellingAware

#: The call, under the file's TensorFlow alias.
TF1_BEHAVIOUR = 'compat.v1.disable_v2_behavior()'
_SWITCHES = ('disable_v2_behavior', 'enable_eager_execution', 'enable_v2_behavior')
_APP_RUN = ('tensorflow.app.run', 'absl.app.run')


def _is_main_guard(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.If):
        return False
    test = code_of(statement.test).replace('"', "'").replace(' ', '')
    return test in ("__name__=='__main__'", "'__main__'==__name__")


class EntryPass(SpellingAware, PortTransformer):
    """Adds `tf.compat.v1.disable_v2_behavior()` where a TF1 script starts."""

    def __init__(self, **_options) -> None:
        super().__init__()
        self.call: Optional[str] = None

    def visit_Module(self, node: cst.Module) -> bool:
        spelling = self.learn_spelling(node)
        if not spelling.tf1 or any(switch in node.code for switch in _SWITCHES):
            return False
        self.call = f'{spelling.alias}.{TF1_BEHAVIOUR}'
        return True

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if self.call is None:
            return updated
        body = list(updated.body)
        for index, statement in enumerate(body):
            if _is_main_guard(statement):
                self.note(CHANGED, original.body[index],
                          f'{self.call} at the start of the __main__ block (TF1 behaviour)')
                block = statement.body
                first = block.body[0]
                new = cst.parse_statement(self.call + '\n').with_changes(
                    leading_lines=first.leading_lines)
                first = first.with_changes(leading_lines=())
                body[index] = statement.with_changes(body=block.with_changes(
                    body=[new, first, *block.body[1:]]))
                return updated.with_changes(body=body)
        for index, statement in enumerate(original.body):
            if self._is_app_run(statement):
                self.note(CHANGED, statement, f'{self.call} before the app.run() call '
                                              '(TF1 behaviour)')
                body.insert(index, cst.parse_statement(self.call + '\n'))
                return updated.with_changes(body=body)
        return updated

    def _is_app_run(self, statement: cst.CSTNode) -> bool:
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                and isinstance(statement.body[0], cst.Expr)
                and isinstance(statement.body[0].value, cst.Call)):
            return False
        return self.qualified_name(statement.body[0].value.func) in _APP_RUN
