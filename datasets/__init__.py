"""Dataset descriptors and converters (installed as `slimdata.datasets`)."""
