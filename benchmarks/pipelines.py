"""The input pipelines the benchmark compares, each buildable for any of its record sets.

A pipeline is a builder registered in `PIPELINES`: a context manager that takes the record set
and the `PipelineOptions`, builds the pipeline, and yields `next_batch`, a callable that
produces one batch. Adding a variant is one builder function and one `PIPELINES` entry:

    with PIPELINES['slimdata'](record_set, PipelineOptions()) as next_batch:
        shapes = next_batch()     # {'image': (32, 300, 300, 3), 'object/bbox': (32, 6, 4), ...}

`next_batch` returns the shapes of the batch's items, not their values: the batch stays in
TensorFlow, as it would when it is the input of a training step (graph pipelines run the
dequeue op and fetch only its shapes; eager ones take the next element of the iterator). So no
pipeline pays for copying batches into numpy, which a training loop would not do either.

What each set's pipelines compute (a `Task`): VOC-like: decode_jpeg + resize to 300x300,
boxes [n, 4] and labels [n] padded per batch; MNIST-like: decode_png 28x28x1 + label;
deeplab-like: decode_jpeg + decode_png of the label map (batches padded, as images may differ
in size).

The pipelines (all batch `options.batch_size`):

  limit              the decode-only limit: the same decode (+ resize) ops on the encoded
                     images already in memory (tf.data from_tensor_slices, map with AUTOTUNE,
                     batch, prefetch; for MNIST-like records batch, then map a tf.map_fn over
                     each batch, which is faster there: see `Task.decode_per_batch`); no
                     reading, no parsing, no labels.
  tfdata             eager tf.data as its guide writes it: TFRecordDataset of the shards
                     interleaved, parse_single_example of the features used, decode (+resize),
                     padded_batch, prefetch, AUTOTUNE everywhere. No shuffle buffer.
  tfdata_shuffled    tfdata with a shuffle buffer of common_queue_capacity records after the
                     interleave: the queue pipelines' shuffling, for comparing peak RSS at
                     equal buffering.
  tfdata_vectorised  interleave, batch, parse_example (one parse per batch), unbatch, decode
                     per example (map with AUTOTUNE), padded_batch, prefetch; for MNIST-like
                     records the batch's images are decoded by one tf.map_fn instead.
  tf_slim            tf_slim 1.1.0's queues: its Dataset + DatasetDataProvider with Tensor and
                     BoundingBox handlers (its Image handler fails on TF 2.21: AttributeError,
                     no control_flow_ops.case), the decode done by hand,
                     tf.compat.v1.train.batch, tf_slim's prefetch_queue.
  slimdata           slimdata as users write it: get_dataset, DatasetDataProvider, the
                     descriptor's Image handler decoding, resize, tf.compat.v1.train.batch,
                     slimdata's prefetch_queue, sess.run.
  slimdata_batch     slimdata's small-record fast path: DatasetBatchProvider (one
                     queue-runner step per batch, the descriptor's decoder in a tf.map_fn),
                     prefetch_queue, sess.run. MNIST-like only (fixed shapes, no resize).

and, for benchmarks/profile_pipeline.py, the slimdata pipeline cut after each stage
('slimdata:read', ':parse', ':decode', ':preprocess'; each then batched and run) plus
'tfdata:read' (the records alone, read by tf.data), 'queue_handoff' and 'session_run', which
measure reading, a queue hand-off and a sess.run on their own.
"""

import contextlib
import dataclasses
import functools
from typing import Any, Callable, ContextManager, Dict, Iterator, List, Optional, Tuple

from slimdata import dataset_batch_provider, dataset_data_provider, parallel_reader, prefetch_queue
from slimdata._tf import tf
from slimdata.dataset import Dataset
from slimdata.datasets import classification, dataset_factory, pascalvoc, segmentation

Shapes = Dict[str, Tuple[int, ...]]
NextBatch = Callable[[], Shapes]
AUTOTUNE = tf.data.AUTOTUNE


@dataclasses.dataclass(frozen=True)
class PipelineOptions:
    """The knobs every pipeline shares (defaults: what models/research/slim's scripts use).

    Attributes:
      batch_size: examples per batch.
      num_readers: parallel readers (queue pipelines) / interleave cycle length (tf.data).
      common_queue_capacity: the provider's common queue, in examples (slim: 20 x batch).
      common_queue_min: its min_after_dequeue (slim: 10 x batch).
      batch_threads: `tf.compat.v1.train.batch`'s num_threads.
      batch_capacity: `tf.compat.v1.train.batch`'s capacity, in examples (slim: 5 x batch).
      prefetch_capacity: the prefetch queue's capacity, in batches (the default 8).
    """
    batch_size: int = 32
    num_readers: int = 2
    common_queue_capacity: int = 640
    common_queue_min: int = 320
    batch_threads: int = 2
    batch_capacity: int = 160
    prefetch_capacity: int = 8

    @property
    def buffered_examples(self) -> int:
        """How many examples the queue pipelines can hold: warm-up must consume more."""
        return (self.common_queue_capacity + self.batch_capacity
                + self.prefetch_capacity * self.batch_size)


@dataclasses.dataclass(frozen=True)
class RecordSet:
    """A record set on disk: its benchmark name ('voc', ...; selects the `Task`), its name in
    `dataset_factory`, its split and its folder."""
    name: str
    dataset_name: str
    split: str
    folder: str

    def dataset(self) -> Dataset:
        """The `slimdata.dataset.Dataset` of the set, as users get it."""
        return dataset_factory.get_dataset(self.dataset_name, self.split, self.folder)

    def files(self) -> List[str]:
        """The shard files, sorted."""
        return sorted(parallel_reader.get_data_files(self.dataset().data_sources))


# ----------------------------------------------------------------------------------------
# What each record set's pipelines compute


@dataclasses.dataclass(frozen=True)
class EncodedImage:
    """An image item stored encoded: its item name, feature key, format and channels."""
    item: str
    key: str
    image_format: str
    channels: int


@dataclasses.dataclass(frozen=True)
class Task:
    """What the pipelines of one record set decode, and how, so that they all do the same.

    Attributes:
      images: the encoded image items.
      label_items: the other items (boxes, labels), passed through undecoded.
      label_keys: the feature keys the label items are parsed from.
      keys_to_features: the descriptor's record layout (a function returning the specs).
      labels_from_parsed: parsed features (of one example or a batch) -> label items.
      slim_label_handlers: a tfexample_decoder module -> its handlers of the label items.
      resize: (height, width) the first image is resized to, or None.
      image_size: the static (height, width) of every image when all are alike (MNIST), so
        batches need no padding; None pads batches to the largest image.
      has_variable_lengths: whether label items vary in length (boxes), needing padding.
      decode_per_batch: whether `limit` and `tfdata_vectorised` decode a batch with one
        tf.map_fn instead of per example (tf.data map). Needs `image_size`. Measured:
        ~2x faster for 28x28 PNGs, where tf.data's per-element cost dominates, ~2x slower
        for 500x375 JPEGs (map_fn's iterations do not use both cores).
    """
    images: Tuple[EncodedImage, ...]
    label_items: Tuple[str, ...]
    label_keys: Tuple[str, ...]
    keys_to_features: Callable[[], Dict[str, Any]]
    labels_from_parsed: Callable[[Dict[str, Any]], Dict[str, Any]]
    slim_label_handlers: Callable[[Any], Dict[str, Any]]
    resize: Optional[Tuple[int, int]] = None
    image_size: Optional[Tuple[int, int]] = None
    has_variable_lengths: bool = True
    decode_per_batch: bool = False

    @property
    def items(self) -> Tuple[str, ...]:
        """Every item a batch holds."""
        return tuple(image.item for image in self.images) + self.label_items

    @property
    def image_keys(self) -> Tuple[str, ...]:
        """The feature keys of the encoded images."""
        return tuple(image.key for image in self.images)

    @property
    def padded(self) -> bool:
        """Whether batches need padding (variable image sizes or numbers of boxes)."""
        return self.has_variable_lengths or self.image_size is None

    def features(self) -> Dict[str, Any]:
        """The feature specs of the keys the items use (what a tf.data user parses)."""
        specs = self.keys_to_features()
        keys = self.image_keys + self.label_keys
        return {key: specs[key] for key in keys}

    def decode(self, encoded: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
        """Decodes the encoded images of one example (keyed by feature key) into items."""
        decoded = {}
        for image in self.images:
            decoder = tf.io.decode_jpeg if image.image_format == 'jpeg' else tf.io.decode_png
            pixels = decoder(encoded[image.key], channels=image.channels)
            if self.image_size is not None:
                pixels.set_shape(self.image_size + (image.channels,))
            decoded[image.item] = pixels
        return decoded

    def preprocess(self, items: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
        """The user's preprocessing after decoding: resizes the first image, if asked."""
        if self.resize is None:
            return items
        first = self.images[0].item
        return {**items, first: tf.image.resize(items[first], self.resize)}


_BBOX = 'image/object/bbox/'
_BOX_FIELDS = ('ymin', 'xmin', 'ymax', 'xmax')


def _voc_labels(parsed: Dict[str, Any]) -> Dict[str, tf.Tensor]:
    # Works on one example ([n]) and on a batch ([batch, n], padded with zeros).
    return {'object/bbox': tf.stack([tf.sparse.to_dense(parsed[_BBOX + field])
                                     for field in _BOX_FIELDS], axis=-1),
            'object/label': tf.sparse.to_dense(parsed[_BBOX + 'label'])}


def _voc_slim_handlers(tfexample_decoder: Any) -> Dict[str, Any]:
    return {'object/bbox': tfexample_decoder.BoundingBox(list(_BOX_FIELDS), _BBOX),
            'object/label': tfexample_decoder.Tensor(_BBOX + 'label')}


def _mnist_labels(parsed: Dict[str, Any]) -> Dict[str, tf.Tensor]:
    return {'label': tf.squeeze(parsed['image/class/label'], -1)}


def _mnist_slim_handlers(tfexample_decoder: Any) -> Dict[str, Any]:
    return {'label': tfexample_decoder.Tensor('image/class/label', shape=[])}


def _tasks() -> Dict[str, Task]:
    return {
        'voc': Task(images=(EncodedImage('image', 'image/encoded', 'jpeg', 3),),
                    label_items=('object/bbox', 'object/label'),
                    label_keys=tuple(_BBOX + f for f in _BOX_FIELDS + ('label',)),
                    keys_to_features=pascalvoc.keys_to_features,
                    labels_from_parsed=_voc_labels, slim_label_handlers=_voc_slim_handlers,
                    resize=(300, 300)),
        'mnist': Task(images=(EncodedImage('image', 'image/encoded', 'png', 1),),
                      label_items=('label',), label_keys=('image/class/label',),
                      keys_to_features=classification.keys_to_features,
                      labels_from_parsed=_mnist_labels,
                      slim_label_handlers=_mnist_slim_handlers,
                      image_size=(28, 28), has_variable_lengths=False, decode_per_batch=True),
        'deeplab': Task(images=(EncodedImage('image', 'image/encoded', 'jpeg', 3),
                                EncodedImage('labels_class', 'image/segmentation/class/encoded',
                                             'png', 1)),
                        label_items=(), label_keys=(),
                        keys_to_features=segmentation.keys_to_features,
                        labels_from_parsed=lambda parsed: {},
                        slim_label_handlers=lambda tfexample_decoder: {}),
    }


TASKS: Dict[str, Task] = _tasks()


# ----------------------------------------------------------------------------------------
# Running a pipeline: eager iterators and graph-mode sessions


def _shapes(batch: Dict[str, Any]) -> Shapes:
    return {name: tuple(int(d) for d in value.shape) for name, value in batch.items()}


@contextlib.contextmanager
def _iterate(dataset: tf.data.Dataset) -> Iterator[NextBatch]:
    iterator = iter(dataset)
    yield lambda: _shapes(next(iterator))


@contextlib.contextmanager
def _run_graph(graph: tf.Graph, batch: Dict[str, tf.Tensor]) -> Iterator[NextBatch]:
    """Starts the queue runners of `graph`; each call runs `batch` and fetches its shapes."""
    with graph.as_default():
        # The group makes the run produce the batch even where the shapes are static (and
        # would be folded to constants); only the small shape vectors leave TensorFlow.
        fetches = (tf.group(*batch.values()), {name: tf.shape(value)
                                               for name, value in batch.items()})
    with tf.compat.v1.Session(graph=graph) as session:
        coordinator = tf.train.Coordinator()
        threads = tf.compat.v1.train.start_queue_runners(session, coordinator)
        try:
            yield lambda: {name: tuple(shape.tolist())
                           for name, shape in session.run(fetches)[1].items()}
        finally:
            coordinator.request_stop()
            coordinator.join(threads, stop_grace_period_secs=10)


def _batch_dataset(dataset: tf.data.Dataset, task: Task, batch_size: int) -> tf.data.Dataset:
    return dataset.padded_batch(batch_size) if task.padded else dataset.batch(batch_size)


def _queue_batch(example: Dict[str, tf.Tensor], task: Task, options: PipelineOptions,
                 prefetch_queue: Optional[Callable] = None) -> Dict[str, tf.Tensor]:
    """Batches single examples with tf.compat.v1.train.batch, then through `prefetch_queue`."""
    batch = tf.compat.v1.train.batch(example, options.batch_size,
                                     num_threads=options.batch_threads,
                                     capacity=options.batch_capacity, dynamic_pad=task.padded)
    if prefetch_queue is None:
        return batch
    return prefetch_queue(batch, capacity=options.prefetch_capacity,
                          dynamic_pad=task.padded).dequeue()


def _interleaved_records(record_set: RecordSet, options: PipelineOptions) -> tf.data.Dataset:
    """The records of every shard, files shuffled per epoch, read `num_readers` at a time."""
    files = record_set.files()
    return (tf.data.Dataset.from_tensor_slices(files).shuffle(len(files)).repeat()
            .interleave(tf.data.TFRecordDataset, cycle_length=options.num_readers,
                        num_parallel_calls=AUTOTUNE, deterministic=False))


# ----------------------------------------------------------------------------------------
# The pipelines


@contextlib.contextmanager
def limit_pipeline(record_set: RecordSet, options: PipelineOptions) -> Iterator[NextBatch]:
    """The decode-only limit: the task's decode (+ resize) over encoded images in memory."""
    task = TASKS[record_set.name]
    image_features = {key: task.features()[key] for key in task.image_keys}
    encoded = {key: [] for key in image_features}
    for parsed in (tf.data.TFRecordDataset(record_set.files()).batch(256)
                   .map(lambda records: tf.io.parse_example(records, image_features))):
        for key, values in parsed.items():
            encoded[key].append(values)
    in_memory = tf.data.Dataset.from_tensor_slices(
        {key: tf.concat(values, 0) for key, values in encoded.items()})
    with _iterate(_decoded_batches(in_memory.repeat(), task, options.batch_size)) as next_batch:
        yield next_batch


def _parsed_items(task: Task, parsed: Dict[str, Any]) -> Dict[str, tf.Tensor]:
    """Parsed features -> the encoded images (by feature key) and the label items."""
    return {**{key: parsed[key] for key in task.image_keys}, **task.labels_from_parsed(parsed)}


def _decode_items(task: Task, example: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
    """Encoded images (by feature key) and label items of one example -> its items."""
    labels = {key: value for key, value in example.items() if key not in task.image_keys}
    return task.preprocess({**task.decode(example), **labels})


def _decode_batch(task: Task, batch: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
    """Like `_decode_items` for a batch: the images decoded by one tf.map_fn."""
    signature = {image.item: tf.TensorSpec(task.image_size + (image.channels,), tf.uint8)
                 for image in task.images}
    images = tf.map_fn(task.decode, {key: batch[key] for key in task.image_keys},
                       fn_output_signature=signature)
    labels = {key: value for key, value in batch.items() if key not in task.image_keys}
    return task.preprocess({**images, **labels})


def _decoded_batches(dataset: tf.data.Dataset, task: Task, batch_size: int,
                     batched: bool = False) -> tf.data.Dataset:
    """Decoded, preprocessed, prefetched batches of encoded examples (or batches of them).

    Per example (map with AUTOTUNE, then [padded_]batch), or a batch at a time with
    tf.map_fn when `task.decode_per_batch`.
    """
    if task.decode_per_batch:
        batches = dataset if batched else dataset.batch(batch_size)
        decoded = batches.map(functools.partial(_decode_batch, task),
                              num_parallel_calls=AUTOTUNE)
    else:
        examples = dataset.unbatch() if batched else dataset
        decoded = _batch_dataset(examples.map(functools.partial(_decode_items, task),
                                              num_parallel_calls=AUTOTUNE), task, batch_size)
    return decoded.prefetch(AUTOTUNE)


@contextlib.contextmanager
def tfdata_pipeline(record_set: RecordSet, options: PipelineOptions,
                    shuffled: bool = False) -> Iterator[NextBatch]:
    """Eager tf.data: interleave, parse_single_example, decode (+resize), padded_batch.

    With `shuffled`, a shuffle buffer of `options.common_queue_capacity` records follows the
    interleave: the shuffling (and the memory) of the queue pipelines' common queue, so that
    their peak RSS can be compared with tf.data's at equal buffering.
    """
    task = TASKS[record_set.name]
    features = task.features()
    records = _interleaved_records(record_set, options)
    if shuffled:
        records = records.shuffle(options.common_queue_capacity)
    examples = records.map(
        lambda record: _decode_items(
            task, _parsed_items(task, tf.io.parse_single_example(record, features))),
        num_parallel_calls=AUTOTUNE)
    batches = _batch_dataset(examples, task, options.batch_size).prefetch(AUTOTUNE)
    with _iterate(batches) as next_batch:
        yield next_batch


@contextlib.contextmanager
def tfdata_vectorised_pipeline(record_set: RecordSet,
                               options: PipelineOptions) -> Iterator[NextBatch]:
    """Eager tf.data, parsing a batch at a time with parse_example, then decoding."""
    task = TASKS[record_set.name]
    features = task.features()

    parsed = (_interleaved_records(record_set, options).batch(options.batch_size)
              .map(lambda records: _parsed_items(task, tf.io.parse_example(records, features)),
                   num_parallel_calls=AUTOTUNE))
    with _iterate(_decoded_batches(parsed, task, options.batch_size, batched=True)) as next_batch:
        yield next_batch


@contextlib.contextmanager
def tf_slim_pipeline(record_set: RecordSet, options: PipelineOptions) -> Iterator[NextBatch]:
    """tf_slim 1.1.0's queues, with Tensor handlers for the encoded images, decoded by hand."""
    # Imported here: tf_slim's modules have the names of slimdata's.
    from tf_slim.data import dataset as slim_dataset
    from tf_slim.data import dataset_data_provider as slim_provider
    from tf_slim.data import prefetch_queue as slim_prefetch_queue
    from tf_slim.data import tfexample_decoder as slim_decoder
    task = TASKS[record_set.name]
    descriptor = record_set.dataset()
    handlers = {key: slim_decoder.Tensor(key) for key in task.image_keys}
    handlers.update(task.slim_label_handlers(slim_decoder))
    graph = tf.Graph()
    with graph.as_default():
        dataset = slim_dataset.Dataset(
            data_sources=descriptor.data_sources, reader=tf.compat.v1.TFRecordReader,
            decoder=slim_decoder.TFExampleDecoder(task.keys_to_features(), handlers),
            num_samples=descriptor.num_samples, items_to_descriptions={})
        provider = slim_provider.DatasetDataProvider(
            dataset, num_readers=options.num_readers,
            common_queue_capacity=options.common_queue_capacity,
            common_queue_min=options.common_queue_min)
        example = dict(zip(handlers, provider.get(list(handlers))))
        batch = _queue_batch(_decode_items(task, example), task, options,
                             slim_prefetch_queue.prefetch_queue)
    with _run_graph(graph, batch) as next_batch:
        yield next_batch


#: The stages of the slimdata pipeline, in order; each includes the ones before it.
SLIMDATA_STAGES = ('read', 'parse', 'decode', 'preprocess', 'prefetch')


@contextlib.contextmanager
def slimdata_pipeline(record_set: RecordSet, options: PipelineOptions,
                      stage: str = 'prefetch') -> Iterator[NextBatch]:
    """slimdata's graph pipeline as users write it, or cut after `stage` (then batched).

    Args:
      record_set: the records.
      options: the shared knobs.
      stage: one of SLIMDATA_STAGES. 'read': the records from parallel_read (the provider's
        reader and common queue); 'parse': + parse_single_example of the features the items
        use, with the label items made from them as the handlers do (the ops slimdata's
        decoder runs before any image is decoded); 'decode': DatasetDataProvider.get of
        every item (images decoded by the Image handler); 'preprocess': + resize;
        'prefetch': + prefetch_queue, the whole pipeline.
        Every stage ends with tf.compat.v1.train.batch and a sess.run per batch.
    """
    task = TASKS[record_set.name]
    dataset = record_set.dataset()
    graph = tf.Graph()
    with graph.as_default():
        if stage in ('read', 'parse'):
            _, record = parallel_reader.parallel_read(
                dataset.data_sources, dataset.reader, num_readers=options.num_readers,
                capacity=options.common_queue_capacity,
                min_after_dequeue=options.common_queue_min)
            example = ({'record': record} if stage == 'read' else
                       _parsed_items(task, tf.io.parse_single_example(record, task.features())))
        else:
            provider = dataset_data_provider.DatasetDataProvider(
                dataset, num_readers=options.num_readers,
                common_queue_capacity=options.common_queue_capacity,
                common_queue_min=options.common_queue_min)
            example = dict(zip(task.items, provider.get(list(task.items))))
            if stage != 'decode':
                example = task.preprocess(example)
        batch = _queue_batch(example, task, options,
                             prefetch_queue.prefetch_queue if stage == 'prefetch' else None)
    with _run_graph(graph, batch) as next_batch:
        yield next_batch


@contextlib.contextmanager
def slimdata_batch_pipeline(record_set: RecordSet,
                            options: PipelineOptions) -> Iterator[NextBatch]:
    """slimdata's fast path for small records: DatasetBatchProvider (a queue-runner step per
    batch, not per example), then prefetch_queue. Only for items of fixed shape that need no
    per-example preprocessing (see `applies`)."""
    task = TASKS[record_set.name]
    dataset = record_set.dataset()
    graph = tf.Graph()
    with graph.as_default():
        provider = dataset_batch_provider.DatasetBatchProvider(
            dataset, options.batch_size, num_readers=options.num_readers,
            common_queue_capacity=options.common_queue_capacity,
            common_queue_min=options.common_queue_min, num_threads=options.batch_threads)
        batch = dict(zip(task.items, provider.get(list(task.items))))
        batch = prefetch_queue.prefetch_queue(batch, capacity=options.prefetch_capacity).dequeue()
    with _run_graph(graph, batch) as next_batch:
        yield next_batch


def applies(pipeline_name: str, set_name: str) -> bool:
    """Whether the pipeline serves the set: the batch fast path needs fixed-shape items that
    are not preprocessed per example."""
    if pipeline_name != 'slimdata_batch':
        return True
    task = TASKS[set_name]
    return not task.padded and task.resize is None


@contextlib.contextmanager
def queue_handoff_pipeline(record_set: RecordSet,
                           options: PipelineOptions) -> Iterator[NextBatch]:
    """A constant scalar per example through tf.compat.v1.train.batch: the cost of one
    queue hand-off (a queue runner's enqueue run per example) and its share of sess.run."""
    graph = tf.Graph()
    with graph.as_default():
        batch = tf.compat.v1.train.batch({'example': tf.constant(0)}, options.batch_size,
                                         num_threads=options.batch_threads,
                                         capacity=options.batch_capacity)
    with _run_graph(graph, batch) as next_batch:
        yield next_batch


@contextlib.contextmanager
def tfdata_read_pipeline(record_set: RecordSet, options: PipelineOptions) -> Iterator[NextBatch]:
    """The records alone, read by tf.data (interleaved, batched): the cost of reading a record
    (I/O from the page cache, CRC checks, copies) in any API, with no queue and no parsing."""
    records = _interleaved_records(record_set, options).batch(options.batch_size)
    with _iterate(records.map(lambda batch: {'record': batch}).prefetch(AUTOTUNE)) as next_batch:
        yield next_batch


@contextlib.contextmanager
def session_run_pipeline(record_set: RecordSet,
                         options: PipelineOptions) -> Iterator[NextBatch]:
    """A sess.run of a constant batch of zeros: the per-call session overhead, no queues."""
    graph = tf.Graph()
    with graph.as_default():
        batch = {'example': tf.zeros([options.batch_size], tf.int32)}
    with _run_graph(graph, batch) as next_batch:
        yield next_batch


Builder = Callable[[RecordSet, PipelineOptions], ContextManager[NextBatch]]

#: name -> builder. The benchmark's table runs BENCHMARK_PIPELINES; the rest serve profiling.
PIPELINES: Dict[str, Builder] = {
    'limit': limit_pipeline,
    'tfdata': tfdata_pipeline,
    'tfdata_shuffled': functools.partial(tfdata_pipeline, shuffled=True),
    'tfdata_vectorised': tfdata_vectorised_pipeline,
    'tf_slim': tf_slim_pipeline,
    'slimdata': slimdata_pipeline,
    'slimdata_batch': slimdata_batch_pipeline,
    **{f'slimdata:{stage}': functools.partial(slimdata_pipeline, stage=stage)
       for stage in SLIMDATA_STAGES[:-1]},
    'tfdata:read': tfdata_read_pipeline,
    'queue_handoff': queue_handoff_pipeline,
    'session_run': session_run_pipeline,
}
BENCHMARK_PIPELINES = ('limit', 'tfdata', 'tfdata_shuffled', 'tfdata_vectorised', 'tf_slim',
                       'slimdata', 'slimdata_batch')
