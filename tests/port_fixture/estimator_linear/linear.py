"""A TF1 Estimator program, written as TensorFlow 1.x code: `slimdata port` ports it and
tests/test_estimator_port.py runs the result and checks its numbers with numpy.

    python linear.py MODEL_DIR local      train, resume, evaluate, predict, train_and_evaluate
    python linear.py MODEL_DIR cluster    train_and_evaluate as the task TF_CONFIG names
                                          (HOLD_AT_STEP=N: hold at step N, see HoldHook)

A linear model y = x.w + b, zero-initialised, trained by SGD on batches of 4 of the 12
examples of `data()` in order (repeated); evaluated on the 10 examples of `data(eval=True)`
in batches of 4. The results are printed as one JSON line on stdout.
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf

BATCH = 4
LEARNING_RATE = 0.05


def data(eval=False):
    rng = np.random.RandomState(1 if eval else 0)
    x = rng.uniform(-1, 1, (10 if eval else 12, 3)).astype(np.float32)
    y = (x.dot([[1.5], [-2.0], [0.5]]) + 0.25).astype(np.float32)
    return x, y


def train_input_fn(params):
    x, y = data()
    dataset = tf.data.Dataset.from_tensor_slices(({'x': x}, y))
    return dataset.batch(params['batch_size']).repeat()


def eval_input_fn():
    x, y = data(eval=True)
    return tf.data.Dataset.from_tensor_slices(({'x': x}, y)).batch(BATCH)


def predict_input_fn():
    x, _ = data(eval=True)
    features = tf.train.limit_epochs(tf.constant(x), num_epochs=1)
    batch = tf.train.batch([features], batch_size=BATCH, enqueue_many=True,
                           allow_smaller_final_batch=True)
    return {'x': batch}


def model_fn(features, labels, mode, params, config):
    weights = tf.get_variable('weights', [3, 1], initializer=tf.zeros_initializer())
    bias = tf.get_variable('bias', [1], initializer=tf.zeros_initializer())
    prediction = tf.matmul(features['x'], weights) + bias
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(
            mode, predictions={'y': prediction, 'double': 2 * prediction})
    loss = tf.losses.mean_squared_error(labels, prediction)
    optimizer = tf.train.GradientDescentOptimizer(params['learning_rate'])
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    metrics = {'mae': tf.metrics.mean_absolute_error(labels, prediction)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      eval_metric_ops=metrics)


def estimator(model_dir, **config):
    run_config = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=1,
                                        log_step_count_steps=1, **config)
    return tf.estimator.Estimator(model_fn=model_fn, config=run_config,
                                  params={'learning_rate': LEARNING_RATE, 'batch_size': BATCH})


def saved(model_dir, name):
    return tf.train.load_variable(model_dir, name).tolist()


def local(model_dir):
    model = estimator(model_dir, save_checkpoints_steps=100)
    results = {}
    model.train(train_input_fn, steps=5)
    results['after_5'] = saved(model_dir, 'global_step')
    model.train(train_input_fn, steps=4)  # resumes: 4 more steps
    results['after_9'] = saved(model_dir, 'global_step')
    model.train(train_input_fn, max_steps=9)  # there already: no step
    model.train(train_input_fn, max_steps=12)
    results['weights'] = saved(model_dir, 'weights')
    results['bias'] = saved(model_dir, 'bias')
    results['evaluate'] = {k: float(v) for k, v in model.evaluate(eval_input_fn).items()}
    results['evaluate_2'] = {k: float(v) for k, v in
                             model.evaluate(eval_input_fn, steps=2, name='two').items()}
    results['predict'] = [p['y'].tolist() for p in model.predict(predict_input_fn)]
    results['predict_keys'] = [sorted(p) for p in model.predict(predict_input_fn,
                                                                  predict_keys=['double'])][:1]
    train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=15)
    eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=None, throttle_secs=0)
    metrics, _ = tf.estimator.train_and_evaluate(model, train_spec, eval_spec)
    results['train_and_evaluate'] = {k: float(v) for k, v in metrics.items()}
    results['weights_15'] = saved(model_dir, 'weights')
    results['bias_15'] = saved(model_dir, 'bias')
    return results


class HoldHook(tf.estimator.SessionRunHook):
    """Prints HELD once the global step reaches `step` and waits for a line on stdin (so a
    test starts the worker while the chief trains)."""

    def __init__(self, step):
        self._step = step

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(tf.train.get_global_step())

    def after_run(self, run_context, run_values):
        if self._step is not None and run_values.results >= self._step:
            self._step = None
            print('HELD')
            sys.stdout.flush()
            sys.stdin.readline()


def cluster(model_dir):
    model = estimator(model_dir, save_checkpoints_steps=10,
                      experimental_max_worker_delay_secs=0)
    hold = os.environ.get('HOLD_AT_STEP')
    train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=60,
                                        hooks=[HoldHook(int(hold) if hold else None)])
    eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=None, start_delay_secs=0,
                                      throttle_secs=1)
    metrics, _ = tf.estimator.train_and_evaluate(model, train_spec, eval_spec)
    return {'task': model.config.task_type, 'is_chief': model.config.is_chief,
            'metrics': metrics}


if __name__ == '__main__':
    tf.logging.set_verbosity(tf.logging.INFO)
    model_dir, what = sys.argv[1], sys.argv[2]
    print(json.dumps(local(model_dir) if what == 'local' else cluster(model_dir)))
