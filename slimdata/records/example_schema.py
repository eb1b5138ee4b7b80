"""`tf.train.Example` without TensorFlow: the schema, in a descriptor pool of our own.

TensorFlow's `example.proto` (Example, Features, Feature, BytesList, FloatList, Int64List)
is declared here field for field, so the protobuf library parses and writes the same wire
format. It lives in a private `DescriptorPool` under the package `slimdata.records`, so it
can never clash with TensorFlow's own `tensorflow.Example` in the default pool, whichever is
imported first (the PyPI `tfrecord` package's copy of the schema does clash).

    example = Example.FromString(record)          # google.protobuf.message.DecodeError if not
    features = parse_example(record)               # {'image/encoded': ('bytes_list', [b'...'])}
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

__all__ = ['Example', 'Feature', 'DecodeError', 'parse_example']

_PACKAGE = 'slimdata.records'
_OPTIONAL = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
_REPEATED = descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
_TYPE = descriptor_pb2.FieldDescriptorProto


def _message(file: descriptor_pb2.FileDescriptorProto, name: str,
             fields: List[Tuple[str, int, int, int, str]]) -> descriptor_pb2.DescriptorProto:
    """Adds message `name` with fields (name, number, label, type, type name) to `file`."""
    message = file.message_type.add(name=name)
    for field_name, number, label, field_type, type_name in fields:
        field = message.field.add(name=field_name, number=number, label=label, type=field_type)
        if type_name:
            field.type_name = f'.{_PACKAGE}.{type_name}'
    return message


def _schema() -> descriptor_pb2.FileDescriptorProto:
    """tensorflow/core/example/{example,feature}.proto, under our own package name."""
    file = descriptor_pb2.FileDescriptorProto(name='slimdata/records/example.proto',
                                              package=_PACKAGE, syntax='proto3')
    _message(file, 'BytesList', [('value', 1, _REPEATED, _TYPE.TYPE_BYTES, '')])
    float_list = _message(file, 'FloatList', [('value', 1, _REPEATED, _TYPE.TYPE_FLOAT, '')])
    int64_list = _message(file, 'Int64List', [('value', 1, _REPEATED, _TYPE.TYPE_INT64, '')])
    for numbers in (float_list, int64_list):
        numbers.field[0].options.packed = True  # as feature.proto declares them
    feature = _message(file, 'Feature', [
        ('bytes_list', 1, _OPTIONAL, _TYPE.TYPE_MESSAGE, 'BytesList'),
        ('float_list', 2, _OPTIONAL, _TYPE.TYPE_MESSAGE, 'FloatList'),
        ('int64_list', 3, _OPTIONAL, _TYPE.TYPE_MESSAGE, 'Int64List')])
    feature.oneof_decl.add(name='kind')
    for field in feature.field:
        field.oneof_index = 0
    features = _message(file, 'Features',
                        [('feature', 1, _REPEATED, _TYPE.TYPE_MESSAGE, 'Features.FeatureEntry')])
    entry = features.nested_type.add(name='FeatureEntry')
    entry.options.map_entry = True
    entry.field.add(name='key', number=1, label=_OPTIONAL, type=_TYPE.TYPE_STRING)
    entry.field.add(name='value', number=2, label=_OPTIONAL, type=_TYPE.TYPE_MESSAGE,
                    type_name=f'.{_PACKAGE}.Feature')
    _message(file, 'Example', [('features', 1, _OPTIONAL, _TYPE.TYPE_MESSAGE, 'Features')])
    return file


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_schema())


def _message_class(name: str) -> Any:
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f'{_PACKAGE}.{name}'))


Example = _message_class('Example')
Feature = _message_class('Feature')


def parse_example(data: bytes) -> Dict[str, Tuple[Optional[str], Sequence[Any]]]:
    """Feature key -> (list type, values) of a serialized Example.

    The list type is 'bytes_list', 'float_list', 'int64_list', or None for a feature that
    holds no list. Values are a sequence of Python bytes, floats or ints, made one at a time
    as they are read (the message's own repeated field, which compares equal to a list of
    them): a list of 10 million floats costs the 40 MB of the record, not 320 MB of Python
    objects.

    Raises:
      DecodeError: if `data` is not a serialized Example.
    """
    example = Example.FromString(data)
    parsed: Dict[str, Tuple[Optional[str], Sequence[Any]]] = {}
    for key, feature in example.features.feature.items():
        kind = feature.WhichOneof('kind')
        parsed[key] = (kind, getattr(feature, kind).value if kind else [])
    return parsed
