"""slimdata: TF-Slim's data layer, maintained for modern TensorFlow."""
import re
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent
# Read, not imported: importing slimdata at build time would need its dependencies.
VERSION = re.search(r"__version__ = '([^']+)'",
                    (HERE / 'slimdata' / 'version.py').read_text()).group(1)

# TensorFlow is an extra, the way TF ecosystem packages declare it, so that users with a
# custom or GPU build keep theirs: pip install slimdata[cpu] | slimdata[gpu] | slimdata.
TENSORFLOW_EXTRAS = {
    'cpu': ['tensorflow-cpu>=2.16'],
    'gpu': ['tensorflow[and-cuda]>=2.16'],
}

setup(
    name='slimdata',
    version=VERSION,
    description="TF-Slim's data layer (Dataset, TFExampleDecoder, DatasetDataProvider, "
                'parallel_reader, prefetch_queue) on modern TensorFlow, plus dataset converters '
                'and TFRecord tools',
    long_description=(HERE / 'README.md').read_text(),
    long_description_content_type='text/markdown',
    # An SPDX expression (PEP 639, setuptools >= 77), not a License :: classifier, which
    # setuptools warns about at every install.
    license_expression='Apache-2.0',
    license_files=['LICENSE'],
    python_requires='>=3.10',
    # datasets/ installs as slimdata.datasets, never as a top-level `datasets` (Hugging Face's).
    packages=find_packages(include=['slimdata', 'slimdata.*']) + ['slimdata.datasets'],
    package_data={'slimdata': ['py.typed']},  # the public API is typed (PEP 561)
    package_dir={'slimdata': 'slimdata', 'slimdata.datasets': 'datasets'},
    install_requires=[
        'numpy>=1.26',  # the oldest the matrix runs (noxfile.py); 1.24 and 1.25 never were
        'tqdm>=4.60',
        'crc32c>=2.3',
        'defusedxml>=0.7',
        'pillow>=10',
        # The Example schema (slimdata.records.example_schema) without TensorFlow.
        'protobuf>=4.21',
        # The facade `from slimdata import slim` re-exports tf_slim's layers and training.
        'tf-slim>=1.1',
        # `slimdata port` edits code through its concrete syntax tree (comments survive).
        'libcst>=1.1',
        # `slimdata convert yolo` reads data.yaml with its safe loader (libcst needs it too).
        'pyyaml>=6',
        # ... and runs 2to3's fixers on Python 2 files first (lib2to3 left Python in 3.13).
        'fissix>=24.4',
    ],
    extras_require={
        **TENSORFLOW_EXTRAS,
        # pycocotools: the tests' independent reader of COCO JSON.
        'dev': ['pytest>=7', 'pytest-xdist>=3', 'hypothesis>=6', 'tfrecord>=1.14', 'ruff>=0.6',
                'mypy>=1.10', 'pycocotools>=2.0.7',
                # make matrix (nox), make docs (pdoc), python -m build (a wheel).
                'nox>=2024.4', 'pdoc>=14', 'build>=1'],
        # Conversion on Apache Beam runners (slimdata convert ... --runner DataflowRunner).
        'beam': ['apache-beam>=2.60'],
    },
    entry_points={'console_scripts': ['slimdata = slimdata.cli:main']},
    classifiers=[
        'Programming Language :: Python :: 3',
        'Topic :: Scientific/Engineering :: Artificial Intelligence',
    ],
)
