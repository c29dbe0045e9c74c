"""Partition offsets as JSON, in the shape Spark's Kafka source uses.

One JSON object per query position, topics mapping to partitions (as
strings) mapping to offsets::

    {"orders": {"0": 23, "1": -2}, "clicks": {"0": -1}}

The same shape carries the ``startingOffsets`` / ``endingOffsets`` options
(where -2 means earliest and -1 latest), the per-partition timestamps of
``startingOffsetsByTimestamp``, and the streaming source's checkpointed
offsets (always real offsets there).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from spate.client import TopicPartition

PartitionOffsets = dict[TopicPartition, int]

# Special values inside offset JSON, as in Spark's Kafka source.
EARLIEST_OFFSET = -2
LATEST_OFFSET = -1


class OffsetJsonError(ValueError):
    """Offset JSON that does not have the ``{"topic": {"partition": offset}}`` shape."""


def offsets_to_dict(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """Nested dict for JSON: topics sorted, partitions in numeric order."""
    nested: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        nested.setdefault(tp.topic, {})[str(tp.partition)] = int(offsets[tp])
    return nested


def offsets_to_json(offsets: Mapping[TopicPartition, int]) -> str:
    return json.dumps(offsets_to_dict(offsets), separators=(",", ":"))


def offsets_from_dict(nested: Any, *, what: str = "offsets") -> PartitionOffsets:
    """The inverse of :func:`offsets_to_dict`; ``what`` names the value in error messages."""
    if not isinstance(nested, Mapping):
        raise OffsetJsonError(f"{what} must be a JSON object like {{\"topic\":{{\"0\":23}}}}, not {nested!r}")
    offsets: PartitionOffsets = {}
    for topic, partitions in nested.items():
        if not isinstance(topic, str) or not topic:
            raise OffsetJsonError(f"{what}: topic names must be non-empty strings, not {topic!r}")
        if not isinstance(partitions, Mapping):
            raise OffsetJsonError(f"{what}: topic {topic!r} must map partitions to numbers, not {partitions!r}")
        for partition, offset in partitions.items():
            try:
                number = int(partition)
            except (TypeError, ValueError):
                raise OffsetJsonError(f"{what}: partition {partition!r} of topic {topic!r} is not a number") from None
            if number < 0:
                raise OffsetJsonError(f"{what}: partition {number} of topic {topic!r} is negative")
            # bool is an int in Python, but true/false is no offset.
            if isinstance(offset, bool) or not isinstance(offset, int):
                raise OffsetJsonError(f"{what}: {topic}-{number} maps to {offset!r}, which is not an integer")
            offsets[TopicPartition(topic, number)] = offset
    return offsets


def parse_offsets_json(text: str, *, what: str = "offsets") -> PartitionOffsets:
    try:
        nested = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OffsetJsonError(f"{what} is not valid JSON ({exc.msg} at character {exc.pos}): {text!r}") from None
    return offsets_from_dict(nested, what=what)
