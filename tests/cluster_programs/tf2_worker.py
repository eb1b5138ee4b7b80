"""One worker of a TF2 `MultiWorkerMirroredStrategy` job configured by `TF_CONFIG`, fed by
slimdata's tf.data bridge with the worker split, as docs/distributed.md's recipe builds it.

    TF_CONFIG='{"cluster": {"worker": [...]}, "task": {"type": "worker", "index": I}}' \\
        python tf2_worker.py --data PATTERN --num-samples N --batch B

It trains a linear model (y = 3x + 1 on x = n / 100) on one epoch of its share of the records
(numbers n, see tests/test_cluster.py) in batches of B, gradients averaged over the workers in
every step, and prints `{"numbers": [...], "steps": S, "weight": W, "bias": B}` on stdout. A worker
waiting for another in a collective gives up after WAIT_SECONDS.
"""

import argparse
import json
import os

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

import tensorflow as tf  # noqa: E402

from slimdata import dataset, tfdata, tfexample_decoder, workers  # noqa: E402

WAIT_SECONDS = 120  # a bound on waiting for the other worker, only a hang reaches


def numbers_dataset(pattern, num_samples):
    decoder = tfexample_decoder.TFExampleDecoder(
        {'n': tf.io.FixedLenFeature([], tf.int64)}, {'n': tfexample_decoder.Tensor('n')})
    return dataset.Dataset(pattern, tf.compat.v1.TFRecordReader, decoder, num_samples, {})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--data')
    parser.add_argument('--num-samples', type=int)
    parser.add_argument('--batch', type=int)
    args = parser.parse_args()

    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(
            timeout_seconds=WAIT_SECONDS))
    share = workers.from_tf_config()

    def worker_records(context):
        # tf.distribute numbers the input pipelines as TF_CONFIG's tasks, one per worker.
        assert share == {'num_workers': context.num_input_pipelines,
                         'worker_index': context.input_pipeline_id}, (share, context)
        records = tfdata.to_tf_data(numbers_dataset(args.data, args.num_samples),
                                    items=['n'], shuffle=False, num_epochs=1, **share)
        return records.batch(args.batch)  # each worker's batch (one replica per worker)

    batches = strategy.distribute_datasets_from_function(worker_records)
    with strategy.scope():
        # MEAN: each replica's update is averaged over the workers.
        weight = tf.Variable(0., aggregation=tf.VariableAggregation.MEAN)
        bias = tf.Variable(0., aggregation=tf.VariableAggregation.MEAN)

    @tf.function
    def train_step(batch):
        def replica_step(batch):
            x = tf.cast(batch['n'], tf.float32) / 100.
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(weight * x + bias - (3. * x + 1.)))
            gradients = tape.gradient(loss, [weight, bias])
            weight.assign_sub(0.5 * gradients[0])
            bias.assign_sub(0.5 * gradients[1])
        strategy.run(replica_step, args=(batch,))

    numbers, steps = [], 0
    for batch in batches:
        train_step(batch)
        steps += 1
        for local in strategy.experimental_local_results(batch['n']):
            numbers.extend(int(n) for n in local.numpy())
    print(json.dumps({'numbers': numbers, 'steps': steps, 'weight': float(weight.numpy()),
                      'bias': float(bias.numpy())}), flush=True)


if __name__ == '__main__':
    main()
