"""The record sets of the pipeline benchmark: VOC-like, MNIST-like and deeplab-like.

Each set is real slimdata records (`<split>-NNNNN-of-NNNNN.tfrecord` + `dataset_info.json`, in
the layouts of docs/design.md, "Record layouts"), written by
`slimdata.records.writer.write_sharded`, so
`slimdata.datasets.dataset_factory.get_dataset(spec.dataset_name, spec.split, folder)` reads
them. The pixels are synthetic but photo-like (smooth shading, flat "objects", sensor-like noise),
so JPEG sizes and decode costs are close to real VOC images (~70 KB at 500x375, quality 90).

Every example is a pure function of (seed, index): the sets are deterministic whatever the
number of writer processes. A set is generated once into `<root>/<name>/` and reused while its
`bench_manifest.json` (written last) matches the spec; a folder with another or no manifest is
rebuilt.

    folder = ensure_record_set(RECORD_SETS['voc'], 'bench_out/records')
"""

import dataclasses
import functools
import io
import json
import os
import shutil
import sys
from typing import Any, Dict, Optional, Tuple

import numpy as np
from PIL import Image, ImageDraw

from slimdata.datasets import classification, detection, pascalvoc, segmentation
from slimdata.records import dataset_info, images
from slimdata.records.example import serialize_example
from slimdata.records.writer import write_sharded

#: Bump when the generated content changes, so old folders are rebuilt.
GENERATOR_VERSION = 2
MANIFEST_FILENAME = 'bench_manifest.json'
JPEG_QUALITY = 90


@dataclasses.dataclass(frozen=True)
class RecordSetSpec:
    """What one record set holds.

    Attributes:
      name: the benchmark's name of the set ('voc', 'mnist', 'deeplab').
      dataset_name: its name in `dataset_factory` ('pascalvoc_2007', 'mnist', ...).
      split: the split written.
      num_records: the number of examples.
      num_shards: the number of shard files.
      image_size: (width, height) of every image.
      max_objects: VOC-like only: each image has 1..max_objects boxes.
      seed: the seed every example derives from.
    """
    name: str
    dataset_name: str
    split: str
    num_records: int
    num_shards: int
    image_size: Tuple[int, int]
    max_objects: int = 0
    seed: int = 0

    def describe(self) -> str:
        """One line for the benchmark's tables."""
        width, height = self.image_size
        return (f'{self.name}: {self.num_records} {self.dataset_name} records, '
                f'{width}x{height}, {self.num_shards} shards')


RECORD_SETS: Dict[str, RecordSetSpec] = {
    'voc': RecordSetSpec('voc', 'pascalvoc_2007', 'train', num_records=1500, num_shards=6,
                         image_size=(500, 375), max_objects=6, seed=2007),
    'mnist': RecordSetSpec('mnist', 'mnist', 'train', num_records=20000, num_shards=4,
                           image_size=(28, 28), seed=1998),
    'deeplab': RecordSetSpec('deeplab', 'pascal_voc_seg', 'train', num_records=500,
                             num_shards=4, image_size=(500, 375), seed=2012),
}


# ----------------------------------------------------------------------------------------
# Synthetic pixels


def _example_rng(seed: int, index: int) -> np.random.Generator:
    return np.random.default_rng([seed, index])


def _random_boxes(rng: np.random.Generator, width: int, height: int,
                  count: int) -> np.ndarray:
    """`count` boxes as int pixel corners [x0, y0, x1, y1], each at least 20 pixels a side."""
    x0 = rng.integers(0, width - 20, count)
    y0 = rng.integers(0, height - 20, count)
    x1 = np.minimum(x0 + rng.integers(20, width // 2, count), width)
    y1 = np.minimum(y0 + rng.integers(20, height // 2, count), height)
    return np.stack([x0, y0, x1, y1], axis=1)


def photo_like(rng: np.random.Generator, width: int, height: int,
               boxes: np.ndarray) -> np.ndarray:
    """A uint8 [height, width, 3] image: smooth shading, a flat patch per box, noise.

    The noise (sigma 12) is what gives JPEGs of realistic size and decode cost; flat or
    purely smooth images compress to a few KB and decode unrealistically fast.
    """
    x, y = np.arange(width, dtype=np.float32), np.arange(height, dtype=np.float32)
    image = np.empty((height, width, 3), np.float32)
    for channel in range(3):
        fx, fy = rng.uniform(0.005, 0.05, 2)
        image[..., channel] = 128 + 60 * np.outer(np.cos(y * fy),
                                                  np.sin(x * fx + rng.uniform(0, 2 * np.pi)))
    for x0, y0, x1, y1 in boxes:
        image[y0:y1, x0:x1] = rng.uniform(0, 255, 3)
    image += 12 * rng.standard_normal(image.shape, dtype=np.float32)
    return np.clip(image, 0, 255).astype(np.uint8)


def encode_jpeg(pixels: np.ndarray) -> bytes:
    """Encodes uint8 [height, width, 3] pixels as a JPEG (Pillow, fixed quality)."""
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format='JPEG', quality=JPEG_QUALITY)
    return buffer.getvalue()


def digit_like(rng: np.random.Generator, size: int) -> np.ndarray:
    """A uint8 [size, size] MNIST-like image: 2-4 thick bright strokes on black."""
    image = Image.new('L', (size, size), 0)
    draw = ImageDraw.Draw(image)
    points = [tuple(p) for p in rng.integers(4, size - 4, (int(rng.integers(3, 6)), 2)).tolist()]
    draw.line(points, fill=int(rng.integers(180, 256)), width=int(rng.integers(2, 4)))
    return np.asarray(image)


# ----------------------------------------------------------------------------------------
# One example per set (top-level functions: the writer pickles them to its processes)


def encode_voc_example(index: int, spec: RecordSetSpec) -> bytes:
    """The VOC-like example `index`: a JPEG with 1..max_objects labelled boxes."""
    rng = _example_rng(spec.seed, index)
    width, height = spec.image_size
    boxes = _random_boxes(rng, width, height, int(rng.integers(1, spec.max_objects + 1)))
    labels = rng.integers(1, pascalvoc.NUM_CLASSES, len(boxes))
    # Normalised to [0, 1], (ymin, xmin, ymax, xmax), as the converter stores them.
    x0, y0, x1, y1 = (boxes / np.array([width, height, width, height])).T
    objects = detection.ObjectColumns(
        labels=labels.tolist(), texts=[pascalvoc.CLASS_NAMES[label].encode() for label in labels],
        boxes=list(zip(y0.tolist(), x0.tolist(), y1.tolist(), x1.tolist())),
        difficult=rng.integers(0, 2, len(boxes)).tolist(),
        truncated=rng.integers(0, 2, len(boxes)).tolist(), views=[b''] * len(boxes))
    return serialize_example(detection.ssd_features(
        encode_jpeg(photo_like(rng, width, height, boxes)),
        images.ImageInfo('jpeg', width, height, 3), objects))


def encode_mnist_example(index: int, spec: RecordSetSpec) -> bytes:
    """The MNIST-like example `index`: a 28x28 grayscale PNG and a label 0..9."""
    rng = _example_rng(spec.seed, index)
    return classification.encode_pixels((digit_like(rng, spec.image_size[0]),
                                         int(rng.integers(0, 10))))


def encode_deeplab_example(index: int, spec: RecordSetSpec) -> bytes:
    """The deeplab-like example `index`: a JPEG and a PNG map of class indices."""
    rng = _example_rng(spec.seed, index)
    width, height = spec.image_size
    boxes = _random_boxes(rng, width, height, int(rng.integers(1, 7)))
    labels = np.zeros((height, width), np.uint8)
    for (x0, y0, x1, y1), label in zip(boxes, rng.integers(1, 21, len(boxes))):
        labels[y0:y1, x0:x1] = label
        # deeplab's VOC labels outline every object with ignore_label.
        labels[y0, x0:x1] = labels[y1 - 1, x0:x1] = 255
        labels[y0:y1, x0] = labels[y0:y1, x1 - 1] = 255
    return serialize_example(segmentation.record_features(
        encode_jpeg(photo_like(rng, width, height, boxes)), 'jpeg', f'{index:06d}', labels))


#: set name -> (encode(index, spec), descriptor module, labels, extra of dataset_info.json)
_WRITERS: Dict[str, Tuple[Any, Any, Optional[Dict[int, str]], Dict[str, Any]]] = {
    'voc': (encode_voc_example, pascalvoc, pascalvoc.LABELS_TO_NAMES,
            {'num_classes': pascalvoc.NUM_CLASSES}),
    'mnist': (encode_mnist_example, classification, {i: str(i) for i in range(10)},
              {'num_classes': 10}),
    'deeplab': (encode_deeplab_example, segmentation,
                segmentation.PUBLISHED_DATASETS['pascal_voc_seg'].labels_to_names,
                {'num_classes': 21, 'ignore_label': 255}),
}


# ----------------------------------------------------------------------------------------
# Generating once, reusing after


def _manifest(spec: RecordSetSpec) -> Dict[str, Any]:
    return {'generator_version': GENERATOR_VERSION, **dataclasses.asdict(spec),
            'image_size': list(spec.image_size)}


def is_complete(spec: RecordSetSpec, folder: str) -> bool:
    """True if `folder` holds the set `spec` describes (its manifest matches)."""
    path = os.path.join(folder, MANIFEST_FILENAME)
    if not os.path.exists(path):
        return False
    with open(path) as f:
        return json.load(f) == _manifest(spec)


def generate_record_set(spec: RecordSetSpec, folder: str, workers: int = 2) -> None:
    """Writes the set into `folder` (emptied first), then its manifest.

    Args:
      spec: the set to write.
      folder: the output folder; anything in it is deleted.
      workers: processes that encode images.
    """
    if os.path.exists(folder):
        shutil.rmtree(folder)
    encode, module, labels_to_names, extra = _WRITERS[spec.name]
    summary = write_sharded(list(range(spec.num_records)), functools.partial(encode, spec=spec),
                            folder, spec.split, spec.num_shards, processes=workers,
                            desc=f'bench records {spec.name}')
    print(summary.format(), file=sys.stderr)
    dataset_info.write_dataset_info(folder, spec.dataset_name, {spec.split: summary.shards},
                                    labels_to_names=labels_to_names,
                                    keys_to_features=module.keys_to_features(), extra=extra)
    with open(os.path.join(folder, MANIFEST_FILENAME), 'w') as f:
        json.dump(_manifest(spec), f, indent=2, sort_keys=True)


def ensure_record_set(spec: RecordSetSpec, root: str, workers: int = 2) -> str:
    """Returns `<root>/<spec.name>`, generating the set there unless it is already complete."""
    folder = os.path.join(root, spec.name)
    if not is_complete(spec, folder):
        generate_record_set(spec, folder, workers)
    return folder
