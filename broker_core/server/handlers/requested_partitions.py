"""The partitions a request names, nested under their topics: which exist, and an answer for each.

OffsetCommit, TxnOffsetCommit and OffsetDelete refuse partitions of unknown
topics (or beyond a topic's last partition) with UNKNOWN_TOPIC_OR_PARTITION
before the coordinator sees the rest, and answer every partition of the
request, in the request's order, with its own error code.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from broker_core.cluster.errors import UnknownTopicError
from broker_core.server.context import BrokerContext
from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition


def existing_partitions(ctx: BrokerContext, topic: str) -> frozenset[int]:
    try:
        return frozenset(ctx.metadata.get_topic(topic).partitions)
    except UnknownTopicError:
        return frozenset()


def known_partitions(
    ctx: BrokerContext, topics: Iterable[Any]
) -> tuple[list[tuple[TopicPartition, Any]], dict[TopicPartition, ErrorCode]]:
    """Each existing partition with its entry of the request (``partition_index`` and the rest),
    in request order, and UNKNOWN_TOPIC_OR_PARTITION for every other one."""
    known: list[tuple[TopicPartition, Any]] = []
    unknown: dict[TopicPartition, ErrorCode] = {}
    for topic in topics:
        existing = existing_partitions(ctx, topic.name)
        for p in topic.partitions:
            tp = TopicPartition(topic.name, p.partition_index)
            if p.partition_index in existing:
                known.append((tp, p))
            else:
                unknown[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return known, unknown


def answer_each_partition(
    topics: Iterable[Any], topic_result: type, partition_result: type, error_for: Callable[[TopicPartition], ErrorCode]
) -> list[Any]:
    """The response's topics: the request's topics and partitions, each partition with ``error_for`` it."""
    answered = []
    for topic in topics:
        partitions = []
        for p in topic.partitions:
            error = error_for(TopicPartition(topic.name, p.partition_index))
            partitions.append(partition_result(partition_index=p.partition_index, error_code=error))
        answered.append(topic_result(name=topic.name, partitions=partitions))
    return answered
