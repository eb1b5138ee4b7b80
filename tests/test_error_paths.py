"""Every converter's error paths name the file (and the line, record, object or key).

A table of damaged source trees, one damage per row, run through `slimdata convert`: each must
end with exit status 1 and one error line that names the damaged file and the place in it,
never a bare exception message (numpy's, Python's codecs', the unpickler's) that leaves the
user to guess which of a million files is at fault. Other test files check each converter's
results; this one sweeps their failures.
"""

import gzip
import json
import os
import pickle
import shutil
import struct

import numpy as np
import pytest

from slimdata import cli
from source_layouts import build_every_layout


@pytest.fixture(scope='module')
def pristine(tmp_path_factory):
    """One small tree of every source layout, built once; each case damages a copy."""
    return build_every_layout(tmp_path_factory.mktemp('pristine'))


# ----------------------------------------------------------------------------------------------
# Damages: each takes the copied tree and returns (the file it damaged, more expected text)

def _write(path, data):
    path.write_bytes(data)
    return path


def _first(folder, pattern='*'):
    return sorted(folder.rglob(pattern))[0]


def truncated_image(pattern):
    """The damage: the first image matching `pattern` cut after 60 bytes."""
    def damage(root):
        path = _first(root, pattern)
        return _write(path, path.read_bytes()[:60]), ()
    damage.__name__ = f'truncated_image_{pattern.strip("*.").lower()}'
    return damage


def text_in_a_class_folder(root):
    return _write(_first(root / 'ring' if (root / 'ring').exists()
                         else next(p for p in sorted(root.iterdir()) if p.is_dir()))
                  .parent / 'notes.txt', b'not an image'), ('not a JPEG or PNG',)


def empty_image(root):
    return _write(_first(root, '*.png'), b''), ()


def image_too_large(root):
    # A PNG whose header declares 100000 x 100000 pixels (and holds none of them).
    path = _first(root, '*.png')
    data = bytearray(path.read_bytes())
    data[16:24] = struct.pack('>II', 100000, 100000)
    return _write(path, bytes(data)), ()


def idx_header(magic, dims):
    return struct.pack('>I', magic) + b''.join(struct.pack('>I', d) for d in dims)


def idx_dims_overflow(root):
    # Dimensions whose product, 2^63, overflows a signed 64-bit integer (numpy's product
    # wraps it to a negative size).
    return _write(root / 'train-images-idx3-ubyte',
                  idx_header(2051, [1 << 31, 1 << 16, 1 << 16]) + bytes(100)), \
        ('dimensions',)


def idx_bad_magic(root):
    return _write(root / 't10k-labels-idx1-ubyte', idx_header(1234, [2]) + b'\0\0'), \
        ('bad magic number',)


def idx_truncated(root):
    path = root / 'train-images-idx3-ubyte'
    return _write(path, path.read_bytes()[:-10]), ('truncated',)


def idx_label_not_a_digit(root):
    return _write(root / 'train-labels-idx1-ubyte', idx_header(2049, [4]) + bytes([1, 2, 12, 3])), \
        ('label 12 at index 2',)


def idx_gz_damaged(root):
    path = root / 'train-images-idx3-ubyte'
    data = gzip.compress(path.read_bytes())
    path.unlink()
    return _write(root / 'train-images-idx3-ubyte.gz', data[:len(data) // 2]), ('gzip',)


def idx_counts_differ(root):
    return _write(root / 't10k-labels-idx1-ubyte', idx_header(2049, [3]) + bytes(3)), \
        ('t10k-images-idx3-ubyte', '3 labels')


def _pickle(path, value):
    return _write(path, pickle.dumps(value, protocol=2))


def cifar_truncated(root):
    path = root / 'cifar-10-batches-py' / 'data_batch_1'
    return _write(path, path.read_bytes()[:100]), ('not a CIFAR python pickle',)


def cifar_label_out_of_range(root):
    path = root / 'cifar-10-batches-py' / 'data_batch_2'
    return _pickle(path, {b'data': np.zeros((2, 3072), np.uint8), b'labels': [1, 10]}), \
        ("b'labels'[1] is 10",)


def cifar_label_names_not_utf8(root):
    path = root / 'cifar-10-batches-py' / 'batches.meta'
    return _pickle(path, {b'label_names': [b'\xff\xfe'] * 10}), ("b'label_names'[0]",)


def cifar_ndarray_call(root):
    class Uninitialised:
        def __reduce__(self):
            return np.ndarray, ((400000, 3072), np.dtype('uint8'))
    path = root / 'cifar-10-batches-py' / 'test_batch'
    return _pickle(path, {b'data': Uninitialised(), b'labels': []}), ('numpy.ndarray',)


def cifar100_coarse_labels_missing(root):
    path = root / 'cifar-100-python' / 'train'
    return _pickle(path, {b'data': np.zeros((2, 3072), np.uint8), b'fine_labels': [0, 1]}), \
        ("no b'coarse_labels'",)


def imagenet_synset_twice(root):
    return _write(root / 'imagenet_lsvrc_2015_synsets.txt',
                  b'n01440764\nn01443537\nn01440764\nn01484850\n'), ('line 3',)


def imagenet_metadata_without_tab(root):
    return _write(root / 'imagenet_metadata.txt', b'n01440764 tench\n'), ('line 1',)


def imagenet_validation_label_unknown(root):
    return _write(root / 'imagenet_2012_validation_synset_labels.txt',
                  b'n01443537\nn01484850\nn99999999\nn01443537\n'), ('line 3',)


def imagenet_validation_label_nul(root):
    return _write(root / 'imagenet_2012_validation_synset_labels.txt',
                  b'n01443537\nn0148\x004850\nn01440764\nn01443537\n'), ('line 2',)


def imagenet_validation_labels_short(root):
    return _write(root / 'imagenet_2012_validation_synset_labels.txt',
                  b'n01443537\nn01484850\n'), ('2 labels', '4 images')


def imagenet_box_malformed(root):
    return _write(_first(root / 'bboxes', '*.xml'), b'<annotation><object>'), \
        ('not well-formed',)


def imagenet_box_coordinate(root):
    path = _first(root / 'bboxes', '*.xml')
    return _write(path, path.read_bytes().replace(b'<xmin>', b'<xmin>x', 1)), \
        ('object 0', '<xmin>')


def imagenet_synsets_not_utf8(root):
    return _write(root / 'imagenet_lsvrc_2015_synsets.txt', b'n01440764\n\xff\n'), ()


def voc_id_with_nul(root):
    path = _first(root, 'trainval.txt')
    ids = path.read_bytes().split(b'\n')
    return _write(path, b'\n'.join([ids[0] + b'\x00x', *ids[1:]])), (':1', 'control character')


def voc_annotation_missing(root):
    path = _first(root, '*.xml')
    path.unlink()
    return path, ('does not exist',)


def voc_annotation_malformed(root):
    return _write(_first(root, '*.xml'), b'<annotation><size>'), ('not well-formed',)


def voc_unknown_class(root):
    path = _first(root, '*.xml')
    text = path.read_bytes()
    start = text.index(b'<name>', text.index(b'<object>')) + len(b'<name>')
    return _write(path, text[:start] + b'unicorn' + text[text.index(b'</name>', start):]), \
        ('object 0', "'unicorn'")


def voc_bad_coordinate(root):
    path = _first(root, '*.xml')
    return _write(path, path.read_bytes().replace(b'<ymax>', b'<ymax>x', 1)), \
        ('object 0', '<ymax>')


def voc_bad_difficult_flag(root):
    path = _first(root, '*.xml')
    text = path.read_bytes()
    start = text.index(b'<difficult>') + len(b'<difficult>')
    return _write(path, text[:start] + b'maybe' + text[text.index(b'</difficult>'):]), \
        ('object 0', '<difficult>')


def voc_list_not_utf8(root):
    return _write(_first(root, 'trainval.txt'), b'000001\n\xff\xfe\n'), ('not a text file',)


def voc_jpeg_corrupt(root):
    path = _first(root, '*.jpg')
    return _write(path, path.read_bytes()[:200]), ()


def seg_id_with_nul(root):
    path = _first(root, 'train.txt')
    return _write(path, b'a\x00b\n' + path.read_bytes()), (':1', 'control character')


def seg_label_rgb(root):
    from PIL import Image
    path = _first(root / 'VOC2012' / 'SegmentationClassRaw', '*.png') \
        if (root / 'VOC2012' / 'SegmentationClassRaw').exists() \
        else _first(root / 'VOC2012' / 'SegmentationClass', '*.png')
    Image.new('RGB', Image.open(path).size).save(path)
    return path, ("mode 'RGB'",)


def seg_label_truncated(root):
    path = _first(root / 'VOC2012', 'Segmentation*/*.png')
    return _write(path, path.read_bytes()[:40]), ()


def seg_label_size_differs(root):
    from PIL import Image
    path = _first(root / 'VOC2012', 'Segmentation*/*.png')
    Image.fromarray(np.zeros((5, 7), np.uint8)).save(path)
    return path, ('size mismatch', '.jpg')


def seg_label_out_of_range(root):
    from PIL import Image
    path = _first(root / 'VOC2012', 'Segmentation*/*.png')
    size = Image.open(path).size
    Image.fromarray(np.full(size[::-1], 9, np.uint8)).save(path)
    return path, ('values [9]',)


def cityscapes_label_missing(root):
    path = _first(root / 'gtFine', '*_labelTrainIds.png')
    path.unlink()
    return path, ('missing',)


def ade20k_annotation_is_a_jpeg(root):
    path = _first(root / 'annotations', '*.png')
    path.write_bytes(_first(root / 'images', '*.jpg').read_bytes())
    return path, ('not a PNG',)


def yolo_label_field_count(root):
    path = _first(root / 'train' / 'labels', '*.txt')
    return _write(path, path.read_bytes() + b'1 0.5 0.5\n'), (':3:', '3 fields')


def yolo_class_id_unnamed(root):
    path = _first(root / 'train' / 'labels', '*.txt')
    return _write(path, b'7 0.5 0.5 0.1 0.1\n'), (':1:', 'class id 7 has no name')


def yolo_yaml_tag(root):
    path = root / 'data.yaml'
    return _write(path, b'names: !!python/name:os.system\n'), ('tag',)


def coco_annotation_of_an_unknown_image(root):
    path = root / 'annotations' / 'instances_val2017.json'
    document = json.loads(path.read_text())
    document['annotations'][0]['image_id'] = 12345
    path.write_text(json.dumps(document))
    return path, (f'annotation id {document["annotations"][0]["id"]} names image id 12345',)


def coco_bbox_of_three_numbers(root):
    path = root / 'annotations' / 'instances_val2017.json'
    document = json.loads(path.read_text())
    document['annotations'][-1]['bbox'] = [1, 2, 3]
    return _write(path, json.dumps(document).encode()), (
        f'annotation id {document["annotations"][-1]["id"]}: bbox is a JSON array of 3',)


def coco_json_cut_short(root):
    path = root / 'annotations' / 'instances_val2017.json'
    return _write(path, path.read_bytes()[:100]), ('is not valid JSON',)


CASES = {
    'image-folder': ('shapes', ['--validation-ratio', '0'],
                     [truncated_image('*.png'), text_in_a_class_folder, empty_image,
                      image_too_large]),
    'mnist-idx': ('mnist', [], [idx_dims_overflow, idx_bad_magic, idx_truncated,
                                idx_label_not_a_digit, idx_gz_damaged, idx_counts_differ]),
    'cifar10': ('cifar10', [], [cifar_truncated, cifar_label_out_of_range,
                                cifar_label_names_not_utf8, cifar_ndarray_call]),
    'cifar100': ('cifar100', ['--label-mode', 'coarse'], [cifar100_coarse_labels_missing]),
    'imagenet': ('imagenet', ['--bounding-boxes', '{src}/bboxes'],
                 [imagenet_synset_twice, imagenet_metadata_without_tab,
                  imagenet_validation_label_unknown, imagenet_validation_label_nul,
                  imagenet_validation_labels_short,
                  imagenet_box_malformed, imagenet_box_coordinate, imagenet_synsets_not_utf8,
                  truncated_image('*.JPEG'), truncated_image('*.PNG')]),
    'voc': ('voc', ['--year', '2007', '--split', 'trainval'],
            [voc_id_with_nul, voc_annotation_missing, voc_annotation_malformed,
             voc_unknown_class, voc_bad_coordinate, voc_bad_difficult_flag, voc_list_not_utf8,
             voc_jpeg_corrupt,
             truncated_image('*.jpg')]),
    'coco': ('coco', [], [coco_annotation_of_an_unknown_image, coco_bbox_of_three_numbers,
                          coco_json_cut_short, truncated_image('*.jpg'),
                          truncated_image('*.png')]),
    'voc-seg': ('seg', ['--split', 'train', '--num-classes', '6'],
                [seg_id_with_nul, seg_label_rgb, seg_label_truncated, seg_label_size_differs,
                 seg_label_out_of_range,
                 truncated_image('*.jpg')]),
    'cityscapes': ('cityscapes', ['--split', 'train'],
                   [cityscapes_label_missing, truncated_image('*_leftImg8bit.png'),
                    truncated_image('*_labelTrainIds.png')]),
    'ade20k': ('ade20k', ['--split', 'train'], [ade20k_annotation_is_a_jpeg,
                                               truncated_image('*.jpg')]),
    'yolo': ('yolo', ['--split', 'train'], [yolo_label_field_count, yolo_class_id_unnamed,
                                            yolo_yaml_tag, truncated_image('*.jpg')]),
}


@pytest.mark.parametrize('kind, damage', [(kind, damage) for kind, (_, _, damages)
                                          in CASES.items() for damage in damages],
                         ids=lambda value: getattr(value, '__name__', value))
def test_every_error_names_the_file_and_the_place(pristine, tmp_path, capsys, kind, damage):
    tree, options, _ = CASES[kind]
    src = tmp_path / tree
    shutil.copytree(pristine / tree, src)
    damaged, places = damage(src)
    options = [option.format(src=src) for option in options]
    status = cli.main(['convert', kind, str(src), str(tmp_path / 'out'), '--quiet', *options])
    errors = [line for line in capsys.readouterr().err.splitlines()
              if line.startswith(f'slimdata convert {kind}: error: ')]
    assert status == 1 and len(errors) == 1, errors
    assert str(damaged) in errors[0] or os.fsencode(damaged).decode('latin-1') in errors[0], \
        errors[0]
    for place in places:
        assert place in errors[0], errors[0]
