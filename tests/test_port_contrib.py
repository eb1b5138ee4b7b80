"""slimdata.contrib: the successors `slimdata port` writes for tf.contrib names TensorFlow 2
dropped, checked against their documented TF1 behaviour and values computed with numpy."""

import importlib.util
import json
import subprocess
import sys

import numpy as np
import pytest

from port_snippets import port_and_run
from slimdata._tf import tf
from slimdata.contrib import legacy_seq2seq, lookup
from slimdata.contrib.tfprof import model_analyzer
from slimdata.contrib.training import HParams, parse_values
from slimdata.port import tree

v1 = tf.compat.v1


# -- HParams (the examples of tf.contrib.training.HParams' documentation) ---------------------

def test_hparams_documented_example():
    hparams = HParams(learning_rate=0.1, num_hidden_units=100)
    assert hparams.learning_rate == 0.1 and hparams.num_hidden_units == 100
    assert hparams.parse('learning_rate=0.3') is hparams
    assert hparams.learning_rate == 0.3 and hparams.num_hidden_units == 100
    with pytest.raises(ValueError, match='num_hidden_units'):
        hparams.parse('num_hidden_units=1.5')  # no float into an int
    hparams.add_hparam('layers', [1, 2])
    hparams.parse('layers=[3, 4, 5]')
    assert hparams.layers == [3, 4, 5]
    assert hparams.values() == {'learning_rate': 0.3, 'num_hidden_units': 100,
                                'layers': [3, 4, 5]}


def test_hparams_types_and_casts():
    hparams = HParams(rate=0.5, steps=10, name='net', flag=False, sizes=[1.0])
    hparams.set_hparam('rate', 2)  # an int into a float is allowed, and becomes a float
    assert hparams.rate == 2.0 and isinstance(hparams.rate, float)
    hparams.parse('flag=true,name=other,sizes=[1,2]')
    assert hparams.flag is True and hparams.name == 'other' and hparams.sizes == [1.0, 2.0]
    assert HParams(flag=True).parse('flag=0').flag is False
    for wrong in ('steps=x', 'flag=maybe', 'unknown=1', 'steps=1,steps=2', 'steps'):
        with pytest.raises(ValueError):
            HParams(steps=1, flag=True).parse(wrong)
    with pytest.raises(ValueError, match='Must pass a list'):
        hparams.set_hparam('sizes', 3.0)
    with pytest.raises(ValueError, match='Must not pass a list'):
        hparams.set_hparam('rate', [1.0])
    with pytest.raises(ValueError, match='reserved'):
        hparams.add_hparam('parse', 1)
    with pytest.raises(ValueError, match='cannot be empty'):
        hparams.add_hparam('empty', [])
    with pytest.raises(KeyError):
        hparams.set_hparam('missing', 1)
    assert parse_values('a[1]=3,b=[x, y]', {'a': int, 'b': str}) == {'a': {1: 3},
                                                                      'b': ['x', 'y']}


def test_hparams_json_get_contains_str():
    hparams = HParams(b=2, a=[1, 2], f=0.5)
    assert json.loads(hparams.to_json()) == {'b': 2, 'a': [1, 2], 'f': 0.5}
    other = HParams(b=0, a=[0], f=0.0).parse_json(hparams.to_json())
    assert other.values() == hparams.values()
    assert str(hparams) == str(sorted(hparams.values().items()))
    assert repr(hparams) == f'HParams({hparams})'
    assert 'a' in hparams and 'z' not in hparams
    assert hparams.get('b', 5) == 2 and hparams.get('z', 5) == 5
    with pytest.raises(ValueError, match='incompatible'):
        hparams.get('b', 'text')
    hparams.del_hparam('b')
    assert 'b' not in hparams and not hasattr(hparams, 'b')
    assert HParams(model_structure='m').get_model_structure() == 'm'


# -- lookup ---------------------------------------------------------------------------------------

def test_lookup_tables_in_graph_mode_with_tables_initializer():
    vocabulary = ['emerson', 'lake', 'palmer']
    with tf.Graph().as_default(), v1.Session() as session:
        ids = lookup.index_table_from_tensor(vocabulary).lookup(
            tf.constant(['lake', 'king', 'emerson']))
        buckets = lookup.index_table_from_tensor(vocabulary, num_oov_buckets=2).lookup(
            tf.constant(['palmer', 'king']))
        words = lookup.index_to_string_table_from_tensor(vocabulary).lookup(
            tf.constant([2, 7], tf.int64))
        session.run(v1.tables_initializer())
        found_ids, found_buckets, found_words = session.run([ids, buckets, words])
    assert found_ids.tolist() == [1, -1, 0]
    assert found_buckets[0] == 2 and found_buckets[1] in (3, 4)
    assert found_words.tolist() == [b'palmer', b'UNK']


def test_lookup_tables_from_a_file(tmp_path):
    vocabulary = tmp_path / 'vocabulary.txt'
    vocabulary.write_text('zero\none\ntwo\n')
    with tf.Graph().as_default(), v1.Session() as session:
        ids = lookup.index_table_from_file(str(vocabulary)).lookup(tf.constant(['two', 'x']))
        words = lookup.index_to_string_table_from_file(str(vocabulary)).lookup(
            tf.constant([1, 9], tf.int64))
        session.run(v1.tables_initializer())
        assert session.run(ids).tolist() == [2, -1]
        assert session.run(words).tolist() == [b'one', b'UNK']


# -- tfprof ---------------------------------------------------------------------------------------

def test_tfprof_counts_the_trainable_parameters():
    with tf.Graph().as_default() as graph:
        v1.get_variable('w', [3, 4])
        v1.get_variable('b', [4])
        v1.get_variable('frozen', [10], trainable=False)
        options = dict(model_analyzer.TRAINABLE_VARS_PARAMS_STAT_OPTIONS, output='none')
        analysis = model_analyzer.print_model_analysis(graph, tfprof_options=options)
    assert analysis.total_parameters == 3 * 4 + 4


def test_tfprof_package_has_model_analyzer_as_contrib_did():
    """`from tensorflow.contrib import tfprof` then `tfprof.model_analyzer.*` (deeplab's eval),
    in a fresh interpreter where nothing imported the submodule first."""
    done = subprocess.run(
        [sys.executable, '-c', 'from slimdata.contrib import tfprof\n'
                               'print(callable(tfprof.model_analyzer.print_model_analysis))'],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0 and done.stdout.strip() == 'True', done.stderr[-2000:]


# -- legacy_seq2seq: against numpy ------------------------------------------------------------

class _TanhCell:
    """A TF1-style cell: h' = tanh([x, h] W + b), variables in the caller's scope."""

    output_size = 3

    def __call__(self, inputs, state):
        with v1.variable_scope('tanh_cell'):
            size = int(inputs.get_shape()[1]) + self.output_size
            kernel = v1.get_variable('kernel', [size, self.output_size])
            bias = v1.get_variable('bias', [self.output_size])
            new = tf.tanh(tf.matmul(tf.concat([inputs, state], 1), kernel) + bias)
        return new, new


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_attention_decoder_matches_numpy_and_tf1_names():
    rng = np.random.default_rng(0)
    batch, length, size, steps = 2, 5, 4, 3
    states = rng.normal(size=(batch, length, size)).astype(np.float32)
    inputs = [rng.normal(size=(batch, 2)).astype(np.float32) for _ in range(steps)]
    with tf.Graph().as_default(), v1.Session() as session:
        outputs, _ = legacy_seq2seq.attention_decoder(
            [tf.constant(x) for x in inputs], tf.zeros([batch, 3]), tf.constant(states),
            _TanhCell(), output_size=6)
        session.run(v1.global_variables_initializer())
        variables = v1.global_variables()
        names = sorted(variable.op.name for variable in variables)
        values = dict(zip([variable.op.name for variable in variables],
                          session.run(variables)))
        got = session.run(outputs)
    assert names == sorted([
        'attention_decoder/AttnW_0', 'attention_decoder/AttnV_0',
        'attention_decoder/kernel', 'attention_decoder/bias',
        'attention_decoder/tanh_cell/kernel', 'attention_decoder/tanh_cell/bias',
        'attention_decoder/Attention_0/kernel', 'attention_decoder/Attention_0/bias',
        'attention_decoder/AttnOutputProjection/kernel',
        'attention_decoder/AttnOutputProjection/bias'])
    w = {name.split('attention_decoder/')[1]: value for name, value in values.items()}
    features = states @ w['AttnW_0'][0, 0]                      # the 1x1 convolution
    state, read = np.zeros((batch, 3), np.float32), np.zeros((batch, size), np.float32)
    for step, x in enumerate(inputs):
        mixed = np.concatenate([x, read], 1) @ w['kernel'] + w['bias']
        state = np.tanh(np.concatenate([mixed, state], 1) @ w['tanh_cell/kernel']
                        + w['tanh_cell/bias'])
        query = state @ w['Attention_0/kernel'] + w['Attention_0/bias']
        scores = (w['AttnV_0'] * np.tanh(features + query[:, None, :])).sum(axis=2)
        read = (_softmax(scores)[:, :, None] * states).sum(axis=1)
        expected = (np.concatenate([state, read], 1) @ w['AttnOutputProjection/kernel']
                    + w['AttnOutputProjection/bias'])
        np.testing.assert_allclose(got[step], expected, rtol=1e-4, atol=1e-5)


def test_rnn_decoder_loops_and_sequence_loss_matches_numpy():
    rng = np.random.default_rng(1)
    steps = [rng.normal(size=(2, 3)).astype(np.float32) for _ in range(3)]
    logits = rng.normal(size=(3, 2, 4)).astype(np.float32)
    targets = rng.integers(0, 4, (3, 2))
    weights = np.array([[1, 1], [1, 0], [0.5, 1]], np.float32)
    with tf.Graph().as_default(), v1.Session() as session:
        seen = []

        def loop(previous, index):
            seen.append(index)
            return previous

        inputs = [tf.constant(step) for step in steps]
        outputs, state = legacy_seq2seq.rnn_decoder(inputs, tf.zeros([2, 3]), _TanhCell(),
                                                    loop_function=loop)
        loss = legacy_seq2seq.sequence_loss(
            [tf.constant(x) for x in logits], [tf.constant(t) for t in targets],
            [tf.constant(w) for w in weights])
        session.run(v1.global_variables_initializer())
        got_outputs, got_state, got_loss = session.run([outputs, state, loss])
    assert seen == [1, 2] and len(got_outputs) == 3
    np.testing.assert_allclose(got_outputs[-1], got_state)
    log_probabilities = np.log(np.stack([_softmax(step) for step in logits]))
    entropy = -np.take_along_axis(log_probabilities, targets[:, :, None], axis=2)[:, :, 0]
    per_example = (entropy * weights).sum(axis=0) / (weights.sum(axis=0) + 1e-12)
    np.testing.assert_allclose(got_loss, per_example.sum() / 2, rtol=1e-5)


# -- the RNN cells: tf-keras ---------------------------------------------------------------------

def test_rnn_cells_are_reported_without_tf_keras_and_ported_with_it():
    code = ('import tensorflow.compat.v1 as tf\n'
            'cell = tf.nn.rnn_cell.LSTMCell(4)\n'
            'other = tf.contrib.rnn.GRUCell(4)\n')
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    ported, notes = results['m.py']
    if importlib.util.find_spec('tf_keras') is None:
        assert ported == code
        assert all('tf-keras' in note.message for note in notes) and len(notes) == 2
    else:
        assert 'slimdata.contrib.rnn.LSTMCell(4)' in ported
        assert 'slimdata.contrib.rnn.GRUCell(4)' in ported


# -- data: tf.data.experimental's names, and the batches that drop their remainder --------------

def test_contrib_data_pipeline_of_the_od_api_ported_and_run():
    """The Object Detection API's reader (builders/dataset_builder.py): files interleaved by
    `tf.contrib.data.parallel_interleave`, batched by `batch_and_drop_remainder`."""
    code = ('import tensorflow as tf\n'
            'files = tf.data.Dataset.from_tensor_slices([[0, 1, 2], [10, 11, 12]])\n'
            'records = files.apply(tf.contrib.data.parallel_interleave(\n'
            '    tf.data.Dataset.from_tensor_slices, cycle_length=2, block_length=1))\n'
            'batches = records.apply(tf.contrib.data.batch_and_drop_remainder(4))\n'
            'padded = tf.data.Dataset.range(1, 4).map(lambda n: tf.fill([n], n)).apply(\n'
            '    tf.contrib.data.padded_batch_and_drop_remainder(2, [None]))\n')
    ported, notes, namespace = port_and_run(code)
    assert 'tf.contrib' not in ported and len(notes) == 3
    batches = [batch.numpy().tolist() for batch in namespace['batches']]
    # Two files, one record from each in turn; 6 records make one batch of 4, 2 dropped.
    assert batches == [[0, 10, 1, 11]]
    assert namespace['batches'].element_spec.shape.as_list() == [4]  # static: the remainder
    padded = [batch.numpy().tolist() for batch in namespace['padded']]
    assert padded == [[[1, 0], [2, 2]]]


# -- opt.MovingAverageOptimizer --------------------------------------------------------------

def test_moving_average_optimizer_averages_and_swaps_on_save(tmp_path):
    from slimdata.contrib.opt import MovingAverageOptimizer
    decay, rate, steps = 0.5, 0.1, 3
    with tf.Graph().as_default(), v1.Session() as session:
        weight = v1.get_variable('w', initializer=4.0)
        optimizer = MovingAverageOptimizer(v1.train.GradientDescentOptimizer(rate),
                                           average_decay=decay)
        with pytest.raises(RuntimeError):
            optimizer.swapping_saver()
        train = optimizer.minimize(tf.square(weight))  # gradient 2w
        saver = optimizer.swapping_saver()
        session.run(v1.global_variables_initializer())
        for _ in range(steps):
            session.run(train)
        trained = session.run(weight)
        saver.save(session, str(tmp_path / 'model.ckpt'))
    value, average = 4.0, 4.0  # the average starts at the variable's initial value
    for _ in range(steps):
        value -= rate * 2 * value
        average = decay * average + (1 - decay) * value
    assert trained == pytest.approx(value)
    with tf.Graph().as_default(), v1.Session() as session:
        weight = v1.get_variable('w', initializer=0.0)
        v1.train.Saver().restore(session, str(tmp_path / 'model.ckpt'))
        assert session.run(weight) == pytest.approx(average)



def test_profile_context_disabled_does_nothing_enabled_says_why():
    from slimdata.contrib.tfprof import ProfileContext
    with ProfileContext(enabled=False, profile_dir='/nowhere') as context:
        assert context.profile_dir == '/nowhere'
    with pytest.raises(NotImplementedError, match='tf.profiler.experimental'):
        ProfileContext('/tmp/profile')


def test_a_name_missing_from_a_moved_module_is_reported():
    code = ('from tensorflow.contrib import tfprof as contrib_tfprof\n'
            'analyzer = contrib_tfprof.model_analyzer\n'
            'other = contrib_tfprof.no_such_thing\n')
    results, _ = tree.port_sources({'m.py': code}, tf_upgrade=None)
    ported, notes = results['m.py']
    assert ported.startswith('from slimdata.contrib import tfprof as contrib_tfprof\n')
    assert [(note.kind, note.line) for note in notes if note.kind == 'not ported'] == [
        ('not ported', 3)]
