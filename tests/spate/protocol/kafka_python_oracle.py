"""kafka-python as an oracle for Spate's codec.

kafka-python generates its messages from Kafka's own JSON files, under the
same snake_case field names, so a Spate value converts to a kafka-python one
by name alone (an unknown name is an error there). Requests go kafka-python
-> bytes -> Spate, responses Spate -> bytes -> kafka-python, and both sides
must write the same bytes.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

Converters = dict[str, Callable[[Any], Any]]


def to_kafka_python(
    value: Any,
    cls: Any,
    version: int,
    converters: Converters | None = None,
    renames: dict[str, str] | None = None,
) -> Any:
    """A kafka-python object of ``cls`` at ``version`` with ``value``'s fields.

    ``converters`` change a field's value and ``renames`` its name, both keyed
    by Spate's field name, where kafka-python patches Kafka's definition.
    """
    converters = converters or {}
    renames = renames or {}
    kwargs = {}
    for f in dataclasses.fields(value):
        item = getattr(value, f.name)
        name = renames.get(f.name, f.name)
        kp_field = cls._struct.fields[name]
        if f.name in converters:
            item = converters[f.name](item)
        elif item is not None and kp_field.is_struct_array():
            item = [to_kafka_python(x, kp_field.data_class, version, converters, renames) for x in item]
        elif item is not None and kp_field.is_struct():
            item = to_kafka_python(item, kp_field.data_class, version, converters, renames)
        kwargs[name] = item
    return cls(**kwargs, version=version)


def assert_request_agrees(value: Any, version: int, kp_cls: Any) -> None:
    """kafka-python's encoding of ``value`` decodes to ``value`` in Spate, byte for byte the same."""
    sent = to_kafka_python(value, kp_cls, version).encode(version=version)
    assert type(value).decode(sent, version) == value
    assert value.encode(version) == sent


def assert_response_agrees(
    value: Any,
    version: int,
    kp_cls: Any,
    converters: Converters | None = None,
    renames: dict[str, str] | None = None,
) -> None:
    """Spate's encoding of ``value`` reads back in kafka-python as the same message."""
    sent = value.encode(version)
    received = kp_cls.decode(sent, version=version)
    expected = to_kafka_python(value, kp_cls, version, converters, renames)
    assert received.to_dict(json=False) == expected.to_dict(json=False)
    assert expected.encode(version=version) == sent
