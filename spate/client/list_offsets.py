"""ListOffsets: the earliest, latest, or first-at-a-timestamp offset of partitions.

Requests go to each partition's leader; partitions whose leader is unknown
or has moved are retried after a metadata refresh until the deadline.
``EARLIEST`` and ``LATEST`` are Kafka's special timestamps -2 and -1; under
``read_committed`` LATEST is the last stable offset. A lookup by timestamp
for which no record qualifies comes back as None.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping

from spate.client.errors import ClientError
from spate.client.net.connection import InFlightRequest
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import retry_until
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.list_offsets import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, ListOffsetsRequest
from spate.structs import IsolationLevel, OffsetAndTimestamp, TopicPartition

EARLIEST = EARLIEST_TIMESTAMP
LATEST = LATEST_TIMESTAMP

# isolation_level first appears in ListOffsets v2.
_READ_COMMITTED_MIN_VERSION = 2

LookupResult = tuple[ErrorCode, "OffsetAndTimestamp | None"]


def build_request(specs: Mapping[TopicPartition, int], isolation_level: int) -> Any:
    topics: dict[str, list[Any]] = defaultdict(list)
    for tp, timestamp in specs.items():
        topics[tp.topic].append(ListOffsetsRequest.ListOffsetsPartition(partition_index=tp.partition, timestamp=timestamp))
    return ListOffsetsRequest(
        replica_id=-1,
        isolation_level=isolation_level,
        topics=[ListOffsetsRequest.ListOffsetsTopic(name=name, partitions=parts) for name, parts in topics.items()],
    )


def parse_response(body: Any) -> dict[TopicPartition, LookupResult]:
    """Each partition's error code and found offset (None: no such record)."""
    results: dict[TopicPartition, LookupResult] = {}
    for topic in body.topics:
        for part in topic.partitions:
            code = ErrorCode.of(part.error_code)
            found = None
            if code == ErrorCode.NONE and part.offset >= 0:
                found = OffsetAndTimestamp(part.offset, part.timestamp, part.leader_epoch)
            results[TopicPartition(topic.name, part.partition_index)] = (code, found)
    return results


def send_list_offsets(
    network: NetworkClient,
    node: int,
    specs: Mapping[TopicPartition, int],
    isolation_level: int,
    callback: Any = None,
) -> InFlightRequest:
    """One ListOffsets request to ``node`` for ``specs``; ``context`` holds the specs."""
    return network.send(
        node,
        ApiKey.LIST_OFFSETS,
        build_request(specs, isolation_level),
        min_version=_READ_COMMITTED_MIN_VERSION if isolation_level == IsolationLevel.READ_COMMITTED else None,
        context=dict(specs),
        callback=callback,
    )


def list_offsets(
    network: NetworkClient,
    specs: Mapping[TopicPartition, int],
    *,
    isolation_level: int,
    deadline: float,
    what: str = "ListOffsets",
) -> dict[TopicPartition, OffsetAndTimestamp | None]:
    """Blocking lookup of every partition in ``specs``, retried until ``deadline``.

    Raises KafkaError for a partition-level error that retrying cannot cure
    (naming the partition), KafkaTimeoutError when the deadline passes.
    """
    results: dict[TopicPartition, OffsetAndTimestamp | None] = {}
    remaining = dict(specs)

    def attempt(deadline: float) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        snapshot = network.metadata.snapshot
        if any(snapshot.leader(tp.topic, tp.partition) < 0 for tp in remaining):
            snapshot = network.fetch_metadata({tp.topic for tp in remaining} | network.metadata.topics, deadline=deadline)
        by_leader: dict[int, dict[TopicPartition, int]] = defaultdict(dict)
        last_error: KafkaError | None = None
        for tp, timestamp in remaining.items():
            leader = snapshot.leader(tp.topic, tp.partition)
            if leader >= 0:
                by_leader[leader][tp] = timestamp
                continue
            topic_error = snapshot.topic_errors.get(tp.topic)
            count = snapshot.partition_count(tp.topic)
            if count is not None and tp.partition >= count:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{what}: {tp.topic} has no partition {tp.partition}")
            if topic_error is not None and not topic_error.retriable:
                raise KafkaError(topic_error, f"{what}: topic {tp.topic}")
            last_error = KafkaError(topic_error or ErrorCode.LEADER_NOT_AVAILABLE, f"{what}: no leader for {tp}")
        requests = []
        for node, node_specs in by_leader.items():
            try:
                requests.append(send_list_offsets(network, node, node_specs, isolation_level))
            except ClientError as exc:
                if not exc.retriable:
                    raise
                network.metadata.request_update()
                last_error = last_error or KafkaError(ErrorCode.NETWORK_EXCEPTION, str(exc))
        for request in requests:
            while not request.done:
                network.poll(max(0.0, request.deadline - network.clock()))
            if request.error is not None:
                last_error = KafkaError(ErrorCode.NETWORK_EXCEPTION, str(request.error))
                continue
            for tp, (code, found) in parse_response(request.response).items():
                if tp not in remaining:
                    continue
                if code == ErrorCode.NONE:
                    results[tp] = found
                    del remaining[tp]
                elif code.retriable:
                    last_error = KafkaError(code, f"{what}: {tp}")
                else:
                    raise KafkaError(code, f"{what}: {tp}")
        if remaining:
            network.metadata.request_update()
            raise last_error or KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"{what}: no answer for {sorted(remaining)}")
        return results

    return retry_until(deadline, attempt, network.backoff, what=what, clock=network.clock)
