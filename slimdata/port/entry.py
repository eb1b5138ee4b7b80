"""The entry-point pass: graph mode where a TF1 script starts.

TF1 scripts build graphs and run them in sessions; under TensorFlow 2 they need
`tf.compat.v1.disable_eager_execution()` before anything builds a graph. The pass puts it as
the first statement of the script's `if __name__ == '__main__':` block (or, with no such
block, just before a module-level `tf.app.run()`), in files that import TensorFlow and do not
already switch eager execution or v2 behaviour off or on.
"""

from typing import Optional

import libcst as cst

from slimdata.port.edits import CHANGED, PortTransformer, code_of, tensorflow_alias

_SWITCHES = ('disable_eager_execution', 'enable_eager_execution', 'disable_v2_behavior',
             'enable_v2_behavior')
_APP_RUN = ('tensorflow.app.run', 'tensorflow.compat.v1.app.run', 'absl.app.run')


def _is_main_guard(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.If):
        return False
    test = code_of(statement.test).replace('"', "'").replace(' ', '')
    return test in ("__name__=='__main__'", "'__main__'==__name__")


class EntryPass(PortTransformer):
    """Adds `tf.compat.v1.disable_eager_execution()` where a TF1 script starts."""

    def __init__(self, **_options) -> None:
        super().__init__()
        self.call: Optional[str] = None

    def visit_Module(self, node: cst.Module) -> bool:
        alias = tensorflow_alias(node)
        code = node.code
        if alias is not None and not any(switch in code for switch in _SWITCHES):
            self.call = f'{alias}.compat.v1.disable_eager_execution()'
        return False  # its work is all in leave_Module: the statements need no walk

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if self.call is None:
            return updated
        body = list(updated.body)
        for index, statement in enumerate(body):
            if _is_main_guard(statement):
                self.note(CHANGED, original.body[index],
                          f'{self.call} at the start of the __main__ block')
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
                self.note(CHANGED, statement, f'{self.call} before the app.run() call')
                body.insert(index, cst.parse_statement(self.call + '\n'))
                return updated.with_changes(body=body)
        return updated

    def _is_app_run(self, statement: cst.CSTNode) -> bool:
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                and isinstance(statement.body[0], cst.Expr)
                and isinstance(statement.body[0].value, cst.Call)):
            return False
        return self.qualified_name(statement.body[0].value.func) in _APP_RUN
