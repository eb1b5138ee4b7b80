"""The Object Detection API's `label_map.pbtxt`, read and written without TensorFlow.

A label map is a `StringIntLabelMap` (research/object_detection/protos/
string_int_label_map.proto) in protobuf's text format::

    item {
      id: 1
      name: 'mask'
      display_name: 'Mask'
    }

The schema is declared here field for field (as `example_schema` declares the Example's), in
a private descriptor pool, and the text is parsed by protobuf's own text-format parser: a
well-kept parser of exactly this format, where a hand-written one would have to get quoting,
escapes and comments right. Every field of the schema is declared, and unknown fields are
errors rather than skipped, so nesting is bounded by the schema (two levels); the file's size
is bounded by the caller's read.
"""

from typing import List, Sequence, Tuple

from google.protobuf import (
    descriptor_pb2,
    descriptor_pool,
    message_factory,
    text_encoding,
    text_format,
)

__all__ = ['format_label_map', 'parse_label_map']

_PACKAGE = 'slimdata.records.label_map'
_TYPE = descriptor_pb2.FieldDescriptorProto
_OPTIONAL = _TYPE.LABEL_OPTIONAL
_REPEATED = _TYPE.LABEL_REPEATED


def _schema() -> descriptor_pb2.FileDescriptorProto:
    """string_int_label_map.proto (proto2), under our own package name."""
    file = descriptor_pb2.FileDescriptorProto(name='slimdata/records/label_map.proto',
                                              package=_PACKAGE, syntax='proto2')
    item = file.message_type.add(name='StringIntLabelMapItem')
    item.field.add(name='name', number=1, label=_OPTIONAL, type=_TYPE.TYPE_STRING)
    item.field.add(name='id', number=2, label=_OPTIONAL, type=_TYPE.TYPE_INT32)
    item.field.add(name='display_name', number=3, label=_OPTIONAL, type=_TYPE.TYPE_STRING)
    keypoint = item.nested_type.add(name='KeypointMap')
    keypoint.field.add(name='id', number=1, label=_OPTIONAL, type=_TYPE.TYPE_INT32)
    keypoint.field.add(name='label', number=2, label=_OPTIONAL, type=_TYPE.TYPE_STRING)
    item.field.add(name='keypoints', number=4, label=_REPEATED, type=_TYPE.TYPE_MESSAGE,
                   type_name=f'.{_PACKAGE}.StringIntLabelMapItem.KeypointMap')
    label_map = file.message_type.add(name='StringIntLabelMap')
    label_map.field.add(name='item', number=1, label=_REPEATED, type=_TYPE.TYPE_MESSAGE,
                        type_name=f'.{_PACKAGE}.StringIntLabelMapItem')
    return file


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_schema())
_LabelMap = message_factory.GetMessageClass(
    _POOL.FindMessageTypeByName(f'{_PACKAGE}.StringIntLabelMap'))


def parse_label_map(text: str, path: str) -> List[Tuple[int, str]]:
    """The (id, name) of every item of a label map, in file order.

    `name` is what the OD API's converters match class names against (label_map_util's
    get_label_map_dict without use_display_name). An item with id 0 is the background,
    which the OD API reserves: it is left out.

    Raises:
      ValueError: naming `path` (and the line, for a syntax error) if the text is not a
        label map, has no item, or an item lacks its id or name or has a negative id.
    """
    label_map = _LabelMap()
    try:
        text_format.Parse(text, label_map)
    except text_format.ParseError as error:
        at = f' line {error.GetLine()}, column {error.GetColumn()}' if error.GetLine() else ''
        reason = str(error).split(' : ', 1)[-1]
        raise ValueError(f'{path} is not a label map (StringIntLabelMap in text format):{at}: '
                         f'{reason}') from error
    if not label_map.item:
        raise ValueError(f'{path}: the label map has no item')
    items = []
    for index, item in enumerate(label_map.item):
        where = f'{path} item {index}'
        if not item.HasField('id') or not item.HasField('name'):
            raise ValueError(f'{where}: every item needs an id and a name')
        if item.id < 0:
            raise ValueError(f'{where} ({item.name!r}): id {item.id} is negative; label ids '
                             'start at 1 (0 is the background)')
        if item.id > 0:
            items.append((item.id, item.name))
    return items


def format_label_map(ids: Sequence[int], names: Sequence[str]) -> str:
    """The text of a label map of these classes, laid out as the OD API's own label maps are
    (one `item { id name }` block each, id first, which protobuf's printer, going by field
    number, would put second); names escaped by protobuf's text-format escaping."""
    return ''.join(f'item {{\n  id: {label}\n  name: "{text_encoding.CEscape(name, True)}"\n}}\n'
                   for label, name in zip(ids, names))
