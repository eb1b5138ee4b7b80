"""One small source tree of every converter's layout, for the tests that run every KIND."""

import pathlib

from slimdata.datasets import synthetic
from test_cifar import make_cifar10, make_cifar100
from test_classification import build_mnist
from test_coco import build_coco2017
from test_imagenet import add_boxes, make_ilsvrc
from test_segmentation import build_ade20k, build_cityscapes
from test_yolo import build_tree as build_yolo


def build_every_layout(base: pathlib.Path, images_per_class: int = 2) -> pathlib.Path:
    """Under `base`: shapes (image folder), mnist, cifar10, cifar100, imagenet (with box XMLs),
    voc (trainval), coco (COCO 2017's layout, val2017), seg (VOC2012, train), cityscapes and
    ade20k (train), yolo (Roboflow's layout: train and valid), a few images each
    (`images_per_class` in the image folder's 2 classes)."""
    synthetic.make_image_folder(str(base / 'shapes'), num_classes=2,
                                images_per_class=images_per_class, image_size=16)
    build_mnist(str(base / 'mnist'), num_train=4, num_test=2)
    make_cifar10(base / 'cifar10', rows_per_batch=2)
    make_cifar100(base / 'cifar100', rows=2)
    add_boxes(base / 'imagenet', make_ilsvrc(base / 'imagenet'))
    synthetic.make_voc_tree(str(base / 'voc'), num_images=3, image_size=(48, 32),
                            splits={'trainval': 1.0})
    build_coco2017(base / 'coco')
    synthetic.make_voc_seg_tree(str(base / 'seg'), num_images=3, image_size=(48, 32),
                                num_classes=6, splits={'train': 1.0})
    build_cityscapes(str(base / 'cityscapes'), 'train', ['aachen'], per_city=2)
    build_ade20k(str(base / 'ade20k'), 'training', 2)
    build_yolo(base / 'yolo')
    return base
