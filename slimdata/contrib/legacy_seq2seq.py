"""`tf.contrib.legacy_seq2seq`'s decoders and losses, which TensorFlow 2 has no successor for.

A reimplementation of the documented behaviour (TensorFlow 1.15) of the functions TF1-era
repositories use (models/research/attention_ocr: `rnn_decoder`, `attention_decoder`,
`sequence_loss`), on `tf.compat.v1`, in graph mode. Variables have TF1's names and shapes
(`attention_decoder/AttnW_0`, `.../Attention_0/kernel`, `.../AttnOutputProjection/bias`, ...),
so TF1 checkpoints of these models restore. `cell` is any TF1 RNN cell: a callable
`cell(inputs, state) -> (output, new_state)` with `output_size` (for `attention_decoder`), such
as `slimdata.contrib.rnn`'s.
"""

from typing import Callable, List, Optional, Sequence, Tuple

from slimdata._tf import tf

v1 = tf.compat.v1


def _size(dimension) -> Optional[int]:
    """A dimension's size, or None: a v1 `Dimension` or an int (TF1 shapes or TF2 shapes)."""
    return tf.compat.dimension_value(dimension)


def _known_size(dimension, what: str) -> int:
    """A dimension's size, which must be known: TF1's cells raised ValueError without it."""
    size = _size(dimension)
    if size is None:
        raise ValueError(f'{what} must be known when the graph is built, but it is None')
    return size


def _linear(arguments: Sequence, output_size: int, dtype) -> 'tf.Tensor':
    """concat(arguments, 1) @ kernel + bias, with variables `kernel` and `bias` (zeros) in the
    current variable scope (TF1's core_rnn_cell._Linear)."""
    total = sum(_known_size(argument.get_shape()[1], f'the depth of {argument.name}')
                for argument in arguments)
    kernel = v1.get_variable('kernel', [total, output_size], dtype=dtype)
    bias = v1.get_variable('bias', [output_size], dtype=dtype,
                           initializer=v1.constant_initializer(0.0, dtype=dtype))
    inputs = arguments[0] if len(arguments) == 1 else tf.concat(list(arguments), 1)
    return tf.nn.bias_add(tf.matmul(inputs, kernel), bias)


def rnn_decoder(decoder_inputs: Sequence, initial_state, cell,
                loop_function: Optional[Callable] = None,
                scope: Optional[str] = None) -> Tuple[List, object]:
    """Runs `cell` over `decoder_inputs` (a list of [batch, input] tensors) from
    `initial_state`; with `loop_function(prev_output, i)`, step i > 0 takes its input from the
    previous output instead. Returns (the outputs, the last state)."""
    with v1.variable_scope(scope or 'rnn_decoder'):
        state = initial_state
        outputs: List = []
        previous = None
        for index, step_input in enumerate(decoder_inputs):
            if loop_function is not None and previous is not None:
                with v1.variable_scope('loop_function', reuse=True):
                    step_input = loop_function(previous, index)
            if index > 0:
                v1.get_variable_scope().reuse_variables()
            output, state = cell(step_input, state)
            outputs.append(output)
            if loop_function is not None:
                previous = output
    return outputs, state


def attention_decoder(decoder_inputs: Sequence, initial_state, attention_states, cell,
                      output_size: Optional[int] = None, num_heads: int = 1,
                      loop_function: Optional[Callable] = None, dtype=None,
                      scope: Optional[str] = None,
                      initial_state_attention: bool = False) -> Tuple[List, object]:
    """An RNN decoder that attends over `attention_states` ([batch, length, size]).

    At each step the input and the previous attention reads go through a linear layer into
    `cell`; the new state queries each of `num_heads` attention heads (a 1x1 convolution of
    the states `AttnW_h`, a vector `AttnV_h`, softmax over the length), and the cell output
    with the reads is projected to `output_size` (default: the cell's). `loop_function` as in
    `rnn_decoder`; `initial_state_attention` reads the attention from `initial_state` first,
    instead of starting from zeros. Returns (the outputs, the last state).
    """
    if not decoder_inputs:
        raise ValueError('Must provide at least 1 input to attention decoder.')
    if num_heads < 1:
        raise ValueError('With less than 1 heads, use a non-attention decoder.')
    if _size(attention_states.get_shape()[2]) is None:
        raise ValueError(f'Shape[2] of attention_states must be known: '
                         f'{attention_states.get_shape()}')
    if output_size is None:
        output_size = cell.output_size
    with v1.variable_scope(scope or 'attention_decoder', dtype=dtype) as outer:
        dtype = outer.dtype
        batch_size = tf.shape(decoder_inputs[0])[0]
        length = _size(attention_states.get_shape()[1])
        if length is None:
            length = tf.shape(attention_states)[1]
        size = _known_size(attention_states.get_shape()[2], 'the depth of attention_states')
        hidden = tf.reshape(attention_states, [-1, length, 1, size])
        features, vectors = [], []
        for head in range(num_heads):
            kernel = v1.get_variable(f'AttnW_{head}', [1, 1, size, size], dtype=dtype)
            features.append(tf.nn.conv2d(hidden, kernel, [1, 1, 1, 1], 'SAME'))
            vectors.append(v1.get_variable(f'AttnV_{head}', [size], dtype=dtype))

        def attention(query) -> List:
            parts = tf.nest.flatten(query)
            query = parts[0] if len(parts) == 1 else tf.concat(parts, 1)
            reads = []
            for head in range(num_heads):
                with v1.variable_scope(f'Attention_{head}'):
                    projected = tf.reshape(_linear([query], size, dtype), [-1, 1, 1, size])
                    scores = tf.reduce_sum(
                        vectors[head] * tf.tanh(features[head] + projected), [2, 3])
                    weights = tf.cast(tf.nn.softmax(tf.cast(scores, tf.float32)), dtype)
                    read = tf.reduce_sum(tf.reshape(weights, [-1, length, 1, 1]) * hidden,
                                         [1, 2])
                    reads.append(tf.reshape(read, [-1, size]))
            return reads

        state = initial_state
        outputs: List = []
        previous = None
        reads = [tf.zeros(tf.stack([batch_size, size]), dtype=dtype) for _ in range(num_heads)]
        for read in reads:
            read.set_shape([None, size])
        if initial_state_attention:
            reads = attention(initial_state)
        for index, step_input in enumerate(decoder_inputs):
            if index > 0:
                v1.get_variable_scope().reuse_variables()
            if loop_function is not None and previous is not None:
                with v1.variable_scope('loop_function', reuse=True):
                    step_input = loop_function(previous, index)
            input_size = _size(step_input.get_shape().with_rank(2)[1])
            if input_size is None:
                raise ValueError(f'Could not infer input size from input: {step_input.name}')
            mixed = _linear([tf.cast(part, dtype) for part in [step_input] + reads],
                            input_size, dtype)
            cell_output, state = cell(mixed, state)
            if index == 0 and initial_state_attention:
                with v1.variable_scope(v1.get_variable_scope(), reuse=True):
                    reads = attention(state)
            else:
                reads = attention(state)
            with v1.variable_scope('AttnOutputProjection'):
                output = _linear([tf.cast(cell_output, dtype)] + reads, output_size, dtype)
            if loop_function is not None:
                previous = output
            outputs.append(output)
    return outputs, state


def sequence_loss_by_example(logits: Sequence, targets: Sequence, weights: Sequence,
                             average_across_timesteps: bool = True,
                             softmax_loss_function: Optional[Callable] = None,
                             name: Optional[str] = None) -> 'tf.Tensor':
    """The weighted cross-entropy of each example ([batch]) over the time steps: `logits`
    ([batch, classes] per step), `targets` (int [batch] per step), `weights` ([batch] per
    step); divided by the weights' sum when `average_across_timesteps`.
    `softmax_loss_function(labels=, logits=)` replaces the sparse softmax cross-entropy."""
    if len(targets) != len(logits) or len(weights) != len(logits):
        raise ValueError(f'Lengths of logits, weights, and targets must be the same '
                         f'{len(logits)}, {len(weights)}, {len(targets)}.')
    with tf.name_scope(name or 'sequence_loss_by_example'):
        terms = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=tf.reshape(target, [-1]), logits=logit)
            else:
                entropy = softmax_loss_function(labels=target, logits=logit)
            terms.append(entropy * weight)
        total = tf.add_n(terms)
        if average_across_timesteps:
            total /= tf.add_n(list(weights)) + 1e-12
    return total


def sequence_loss(logits: Sequence, targets: Sequence, weights: Sequence,
                  average_across_timesteps: bool = True, average_across_batch: bool = True,
                  softmax_loss_function: Optional[Callable] = None,
                  name: Optional[str] = None) -> 'tf.Tensor':
    """The sum of `sequence_loss_by_example` over the batch, divided by the batch size when
    `average_across_batch`: a scalar."""
    with tf.name_scope(name or 'sequence_loss'):
        cost = tf.reduce_sum(sequence_loss_by_example(
            logits, targets, weights, average_across_timesteps=average_across_timesteps,
            softmax_loss_function=softmax_loss_function))
        if average_across_batch:
            return cost / tf.cast(tf.shape(targets[0])[0], cost.dtype)
        return cost
