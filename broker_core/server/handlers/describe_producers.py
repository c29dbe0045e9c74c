"""DescribeProducers: the producers a led partition remembers (KIP-664, ``kafka-transactions.sh``).

Each partition lists the producer ids in its producer state with their
epoch, last sequence and timestamp, the coordinator epoch of their last
transaction marker and, for an open transaction, the offset it began at
(what holds back the last stable offset). A partition this broker does not
lead answers NOT_LEADER_OR_FOLLOWER or UNKNOWN_TOPIC_OR_PARTITION, as Kafka
does.
"""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from broker_core.server.handlers.partition_lookup import leader_partition
from broker_core.storage.producer_state.entry import ProducerStateEntry
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode, KafkaError
from spate.protocol.messages.describe_producers import DescribeProducersResponse

R = DescribeProducersResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    topics = [
        R.TopicResponse(name=topic.name, partitions=[_describe(ctx, topic.name, p) for p in topic.partition_indexes])
        for topic in request.body.topics
    ]
    return R(throttle_time_ms=0, topics=topics)


def _describe(ctx: BrokerContext, topic: str, index: int) -> Any:
    try:
        partition = leader_partition(ctx, topic, index, -1)
        entries = list(partition.log.producer_state.active_producers().values())
    except Exception as exc:
        message = exc.message if isinstance(exc, KafkaError) else None
        return R.PartitionResponse(partition_index=index, error_code=error_code_for(exc, where="describe_producers"),
                                   error_message=message)
    return R.PartitionResponse(
        partition_index=index,
        error_code=ErrorCode.NONE,
        active_producers=[_producer(entry) for entry in sorted(entries, key=lambda e: e.producer_id)],
    )


def _producer(entry: ProducerStateEntry) -> Any:
    return R.ProducerState(
        producer_id=entry.producer_id,
        producer_epoch=entry.producer_epoch,
        last_sequence=entry.last_seq,
        last_timestamp=entry.last_timestamp,
        coordinator_epoch=entry.coordinator_epoch,
        current_txn_start_offset=-1 if entry.current_txn_first_offset is None else entry.current_txn_first_offset,
    )
