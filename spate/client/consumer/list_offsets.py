"""ListOffsets: the earliest, latest, or first-at-a-timestamp offset of partitions.

Requests go to each partition's leader; partitions whose leader is unknown
or has moved are retried after a metadata refresh until the deadline.
``EARLIEST`` and ``LATEST`` are Kafka's special timestamps -2 and -1; under
``read_committed`` LATEST is the last stable offset. A lookup by timestamp
for which no record qualifies comes back as None.

The consumer looks offsets up with these requests, blocking
(``offsets_for_times``, ``beginning_offsets``, ``end_offsets``) and
asynchronously (the fetcher's position resets); the admin client's
``list_offsets`` is the same blocking lookup, as its group calls read the
consumer's protocol.
"""

from __future__ import annotations

from typing import Any, Mapping

from spate.client.errors import ClientError
from spate.client.net.connection import InFlightRequest
from spate.client.net.metadata import ClusterSnapshot
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import KeyedCall, Retrier
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.list_offsets import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, ListOffsetsRequest
from spate.structs import IsolationLevel, OffsetAndTimestamp, TopicPartition, group_by_topic

EARLIEST = EARLIEST_TIMESTAMP
LATEST = LATEST_TIMESTAMP

# isolation_level first appears in ListOffsets v2.
_READ_COMMITTED_MIN_VERSION = 2

LookupResult = tuple[ErrorCode, "OffsetAndTimestamp | None"]


def build_request(specs: Mapping[TopicPartition, int], isolation_level: int) -> Any:
    topics = group_by_topic(
        specs.items(),
        key=lambda item: item[0],
        value=lambda item: ListOffsetsRequest.ListOffsetsPartition(partition_index=item[0].partition, timestamp=item[1]),
    )
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
    call: KeyedCall[TopicPartition] = KeyedCall(specs)

    def attempt(deadline: float) -> None:
        snapshot = network.metadata.snapshot
        if any(snapshot.leader(tp.topic, tp.partition) < 0 for tp in call.pending):
            snapshot = network.fetch_metadata({tp.topic for tp in call.pending} | network.metadata.topics, deadline=deadline)
        by_leader, leaderless = snapshot.by_leader(call.pending)
        for tp in leaderless:
            _check_leaderless(snapshot, tp, call, what)
        requests = _send_all(network, by_leader, call, isolation_level)
        for request in requests:
            while not request.done:
                network.poll(max(0.0, request.deadline - network.clock()))
            if request.error is not None:
                call.retry(KafkaError(ErrorCode.NETWORK_EXCEPTION, str(request.error)))
                continue
            for tp, (code, found) in parse_response(request.response).items():
                if tp not in call:
                    continue
                if code == ErrorCode.NONE:
                    call.succeed(tp, found)
                elif code.retriable:
                    call.retry(KafkaError(code, f"{what}: {tp}"))
                else:
                    raise KafkaError(code, f"{what}: {tp}")
        if call.pending:
            network.metadata.request_update()
            if not call.retrying:
                call.retry(KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"{what}: no answer for {sorted(call.pending)}"))

    return Retrier(network.backoff, network.clock).call_each(what, call, attempt, deadline).results


def _check_leaderless(snapshot: ClusterSnapshot, tp: TopicPartition, call: KeyedCall[TopicPartition], what: str) -> None:
    """Why ``tp`` has no leader: raise if retrying cannot cure it, else note it for a retry."""
    topic_error = snapshot.topic_errors.get(tp.topic)
    count = snapshot.partition_count(tp.topic)
    if count is not None and tp.partition >= count:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{what}: {tp.topic} has no partition {tp.partition}")
    if topic_error is not None and not topic_error.retriable:
        raise KafkaError(topic_error, f"{what}: topic {tp.topic}")
    call.retry(KafkaError(topic_error or ErrorCode.LEADER_NOT_AVAILABLE, f"{what}: no leader for {tp}"))


def _send_all(
    network: NetworkClient,
    by_leader: dict[int, list[TopicPartition]],
    call: KeyedCall[TopicPartition],
    isolation_level: int,
) -> list[InFlightRequest]:
    """One request per leader; a leader that cannot be reached now is noted for a retry."""
    requests = []
    for node, partitions in by_leader.items():
        try:
            requests.append(send_list_offsets(network, node, {tp: call.pending[tp] for tp in partitions}, isolation_level))
        except ClientError as exc:
            if not exc.retriable:
                raise
            network.metadata.request_update()
            if not call.retrying:
                call.retry(KafkaError(ErrorCode.NETWORK_EXCEPTION, str(exc)))
    return requests
