"""slimdata's version, in a module of its own: the record layer records it in
`dataset_info.json` and fingerprints, and setup.py reads it, without importing the package."""

__version__ = '0.4.13'
