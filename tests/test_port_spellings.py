"""Every rule of `slimdata port` fires under every way old code names TensorFlow and slim.

One TF1 program uses a name of each rule kind: slim's data modules through the facade, contrib
successors (arg_scope, xavier_initializer, is_tensor, HParams, lookup), a private op, `tf.layers`,
TF1 shapes (`Dimension.value`, in the script and in a library module it imports), a
`tensorflow.core` proto import, an optional contrib module without successor. It is written
under each spelling (`import tensorflow as tf`, `import tensorflow.compat.v1 as <any alias>`,
`from tensorflow.compat import v1 as tf`, `tf = tf.compat.v1`, mixtures) with each slim
spelling and each kind of entry point, ported, and RUN in a subprocess; its printed results
are checked against values known independently (shapes by construction, the lookup's words,
the hyperparameters parsed).
"""

import concurrent.futures
import json
import os
import pathlib
import subprocess
import sys

import pytest

from slimdata.port import tree

_ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2')

# (name, TensorFlow import lines, alias, slim import lines, entry block)
SPELLINGS = [
    ('tf', 'import tensorflow as tf', 'tf', 'slim = tf.contrib.slim',
     "if __name__ == '__main__':\n    tf.app.run()\n"),
    ('compat_v1', 'import tensorflow.compat.v1 as tf', 'tf', 'from tensorflow.contrib import slim',
     "if __name__ == '__main__':\n    tf.app.run(main)\n"),
    ('compat_v1_alias', 'import tensorflow.compat.v1 as tf1', 'tf1',
     'import tensorflow.contrib.slim as slim',
     "if __name__ == '__main__':\n    from absl import app\n    app.run(main)\n"),
    ('from_compat', 'from tensorflow.compat import v1 as tf', 'tf', 'import tf_slim as slim',
     "if __name__ == '__main__':\n    main(None)\n"),
    ('assigned_compat', 'import tensorflow as tf\ntf = tf.compat.v1', 'tf',
     'slim = tf.contrib.slim', 'tf.app.run()\n'),
    ('mixture', 'import tensorflow as tf2\nimport tensorflow.compat.v1 as tf', 'tf',
     'from tensorflow.contrib import slim\nimport tf_slim', "if __name__ == '__main__':\n"
     '    from absl import app\n    app.run(main)\n'),
]

PROGRAM = '''"""A TF1 script."""
import json
{tf_imports}
{slim_imports}
from tensorflow.contrib import quantize as contrib_quantize
from tensorflow.core.example import example_pb2
from tensorflow.python.ops import array_ops
import numpy as np

import shapes_lib


def main(_):
    x = {tf}.placeholder({tf}.float32, [2, 4, 4, 3])
    initializer = {tf}.contrib.layers.xavier_initializer()
    with {tf}.contrib.framework.arg_scope([slim.conv2d], padding='SAME',
                                          weights_initializer=initializer):
        net = slim.conv2d(x, 5, [3, 3])
    if __file__.endswith('never'):  # an option off by default, as slim's --quantize_delay
        contrib_quantize.create_training_graph()
    dense = {tf}.layers.dense({tf}.layers.flatten(net), 3)
    parts = array_ops.unstack(dense)
    decoder = slim.tfexample_decoder.TFExampleDecoder(
        {{'a': {tf}.FixedLenFeature([], {tf}.int64)}}, {{'a': slim.tfexample_decoder.Tensor('a')}})
    hparams = {tf}.contrib.training.HParams(lr=0.1, sizes=[1, 2]).parse('lr=0.5,sizes=[3,4]')
    table = {tf}.contrib.lookup.index_to_string_table_from_tensor(['a', 'b'])
    words = table.lookup({tf}.constant([1, 5], {tf}.int64))
    example = example_pb2.Example()
    with {tf}.Session() as session:
        session.run([{tf}.global_variables_initializer(), {tf}.tables_initializer()])
        out, found = session.run([dense, words], {{x: np.ones((2, 4, 4, 3), np.float32)}})
    print(json.dumps({{
        'channels': net.get_shape()[3].value,
        'dims': [dimension.value for dimension in net.get_shape()],
        'library_width': shapes_lib.width(net),
        'out': list(out.shape), 'parts': len(parts),
        'decoder': type(decoder).__module__, 'items': sorted(decoder.list_items()),
        'hparams': [hparams.lr, hparams.sizes],
        'is_tensor': bool({tf}.contrib.framework.is_tensor(dense)),
        'words': [word.decode() for word in found],
        'example': type(example).__name__,
        'executing_eagerly': {tf}.executing_eagerly()}}))


{entry}'''

LIBRARY = '''"""A library module of the repository: TF1 shapes, no entry point."""
import tensorflow as tf


def width(tensor):
    return tensor.get_shape()[2].value
'''

EXPECTED = {'channels': 5, 'dims': [2, 4, 4, 5], 'library_width': 4, 'out': [2, 3],
            'parts': 2, 'items': ['a'], 'hparams': [0.5, [3, 4]], 'is_tensor': True,
            'words': ['b', 'UNK'], 'example': 'Example', 'executing_eagerly': False}


def _spellings(tf_upgrade):
    """Without tf_upgrade_v2, TF1 calls under plain `import tensorflow as tf` stay TF2 calls
    (`tf.placeholder` does not exist): that spelling needs it."""
    return [spelling for spelling in SPELLINGS if tf_upgrade or spelling[0] != 'tf']


def _sources(spellings=SPELLINGS):
    sources = {'shapes_lib.py': LIBRARY}
    for name, tf_imports, alias, slim_imports, entry in spellings:
        sources[f'{name}.py'] = PROGRAM.format(tf_imports=tf_imports, slim_imports=slim_imports,
                                               tf=alias, entry=entry)
    return sources


def _run_all(folder: pathlib.Path, names):
    def run(name):
        done = subprocess.run([sys.executable, f'{name}.py'], cwd=folder, capture_output=True,
                              text=True, timeout=300, env=_ENV)
        return name, done
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        return dict(pool.map(run, names))


def _check_runs(folder: pathlib.Path, results, names) -> None:
    for path, (code, _notes) in results.items():
        (folder / path).write_text(code)
    failures = []
    for name, done in _run_all(folder, names).items():
        if done.returncode != 0:
            failures.append(f'{name}: exit {done.returncode}\n{done.stderr[-3000:]}')
            continue
        printed = json.loads(done.stdout.strip().splitlines()[-1])
        assert printed.pop('decoder').startswith('slimdata.'), name
        assert printed == EXPECTED, name
    assert not failures, '\n\n'.join(failures)


@pytest.mark.slow
@pytest.mark.parametrize('tf_upgrade', [None, 'SAFETY'])
def test_every_rule_under_every_spelling_runs(tmp_path, tf_upgrade):
    spellings = _spellings(tf_upgrade)
    results, problems = tree.port_sources(_sources(spellings), tf_upgrade=tf_upgrade)
    assert problems == []
    for name, *_ in spellings:
        code, notes = results[f'{name}.py']
        assert 'contrib.slim' not in code and 'tf.contrib.' not in code.replace(
            'contrib_quantize', ''), name
        assert 'from tensorflow.core.example import example_pb2' in code, name
        not_ported = [note.message for note in notes if note.kind == 'not ported']
        assert any('tensorflow.contrib.quantize' in message for message in not_ported), name
    _check_runs(tmp_path, results, [spelling[0] for spelling in spellings])


def test_the_originals_do_not_run_on_tensorflow_2(tmp_path):
    """The independent half: unported, the program fails (so the port is what makes it run)."""
    sources = _sources()
    (tmp_path / 'shapes_lib.py').write_text(sources['shapes_lib.py'])
    (tmp_path / 'compat_v1.py').write_text(sources['compat_v1.py'])
    done = subprocess.run([sys.executable, 'compat_v1.py'], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=_ENV)
    assert done.returncode != 0
    assert 'contrib' in done.stderr


def test_a_contrib_module_without_successor_fails_only_where_used(tmp_path):
    code = ('import tensorflow.compat.v1 as tf\n'
            'from tensorflow.contrib import quantize as contrib_quantize\n\n'
            'def main(quantize):\n'
            '    if quantize:\n'
            '        contrib_quantize.create_training_graph()\n'
            "    print('ran')\n")
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    ported, notes = results['m.py']
    lines = ported.splitlines()
    assert lines[1] == ('from slimdata.contrib.unavailable import quantize as contrib_quantize')
    reported = sorted(note.line for note in notes if note.kind == 'not ported')
    assert reported == [2, 6] and 'contrib_quantize.create_training_graph' in lines[5]
    (tmp_path / 'm.py').write_text(ported)
    check = ('import m\nm.main(False)\ntry:\n    m.main(True)\n'
             'except ImportError as error:\n    print(type(error).__name__, error)\n')
    done = subprocess.run([sys.executable, '-c', check], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=_ENV)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.strip().splitlines()
    assert first == 'ran'
    assert second.startswith('UnavailableError tensorflow.contrib.quantize.create_training_graph')
    assert 'quantization' in second


def test_a_contrib_import_the_code_already_guards_stays():
    """The OD API imports contrib inside `try: ... except ImportError:` and falls back: a
    stand-in there would take the fallback away."""
    code = ('try:\n    from tensorflow.contrib import lookup as contrib_lookup\n'
            'except ImportError:\n    contrib_lookup = None\n'
            'table = contrib_lookup\n')
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    assert results['m.py'][0] == code
