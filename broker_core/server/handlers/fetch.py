"""Fetch: file ranges of whole batches below the high watermark (or the LSO).

Under read_committed (``isolation_level`` 1) data stops at the last stable
offset and each partition lists the aborted transactions (producer id,
first offset) its data overlaps, which the consumer uses to drop their
records; under read_uncommitted that list is null, as Kafka sends it. A
fetch parked because nothing is below the LSO is woken by the append
notification a transaction marker sends, like any produce.

A follower fetches like a consumer with its broker id as ``replica_id``: it
reads to the log end (not the high watermark), and the fetch offset tells the
leader how far the follower's log reaches. The leader records that
(``Partition.update_follower_fetch``), which may move the high watermark
(waking consumers and acks=all produces waiting on the partition) and may
bring the follower back into the ISR; the answer carries the high watermark
as it is after that. Only the first read of a request records the follower's
position; reads after a wait do not. A follower that is not one of the
partition's replicas is answered NOT_LEADER_OR_FOLLOWER, or UNKNOWN_LEADER_EPOCH
when it named the current leader epoch (it may learn of its assignment later).

From version 9 each partition names the leader epoch the fetcher knows
(KIP-320): an older one is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH.

From version 12 a fetcher names the epoch of the last batch it fetched: when
the leader's log ends that epoch elsewhere (an earlier epoch, or an end
offset below the fetch offset), the partition answers no records and a
``diverging_epoch`` instead (Kafka's KIP-320 check, which consumers use to
detect truncation). From version 13 topics are named by id: an id the broker
does not know answers UNKNOWN_TOPIC_ID; from 15 a follower's id comes in
``replica_state``.

From version 7 a fetcher may open an incremental fetch session (KIP-227,
``fetch_session``): later requests name only the partitions that changed and
the answers carry only partitions with news; the session's partitions are
read as if the request had named them all. When less than ``min_bytes`` is available the request waits in
the purgatory until one of its partitions changes or ``max_wait_ms``; a request with no partition to read
(one closing its session at the final epoch) is answered at once, as Kafka answers it.

With an authorizer, a consumer needs Read on each topic and a follower
ClusterAction on the cluster; a partition refused is answered
TOPIC_AUTHORIZATION_FAILED, as Kafka answers both.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from broker_core.replication.partition import Partition
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from broker_core.server.fetch_session.fetch_manager import SESSION_ERROR, FetchContext
from broker_core.server.handlers import message_format
from broker_core.server.handlers.partition_lookup import leader_partition
from broker_core.server.handlers.topic_ids import topic_names_by_id
from broker_core.storage.errors import OffsetOutOfRangeError
from broker_core.storage.txn_index import AbortedTxn
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode, KafkaError
from spate.protocol.messages.fetch import FetchResponse
from spate.protocol.types import FileRangeRef
from spate.structs import IsolationLevel

R = FetchResponse
TOPIC_IDS_FROM_VERSION = 13
REPLICA_STATE_FROM_VERSION = 15
# Slices below this size are copied into the response; larger ones are sent with sendfile.
INLINE_RECORDS_LIMIT = 16 * 1024
# Reads past batches that down-convert to nothing (transaction markers) before answering no records.
_MARKER_ONLY_READS = 8


@dataclass(slots=True)
class _Outcome:
    response: Any
    bytes: int
    errors: bool
    # Per partition read: (topic, records from the fetch offset on, bytes), for the topic metrics.
    sent: list[tuple[str, int, int]]


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    if request.api_version >= REPLICA_STATE_FROM_VERSION:
        body.replica_id = body.replica_state.replica_id
    session = _fetch_context(ctx, body, request.api_version)
    if session.kind == SESSION_ERROR:
        return session.update_and_generate_response(None)
    body.topics = session.topics_to_read()
    _normalize(ctx, body, request.api_version)
    refused = _refused_topics(ctx, request) if acl_checks.enabled(ctx) else _NONE_REFUSED
    version = request.api_version
    outcome = _read_all(ctx, body, version, refused, record_followers=True)
    if _done(body, outcome):
        return _answer(ctx, body, outcome, session)
    return _long_poll(ctx, body, version, refused, session)


def _fetch_context(ctx: BrokerContext, body: Any, version: int) -> FetchContext:
    if ctx.fetch_sessions is None:
        return FetchContext(body.topics)
    return ctx.fetch_sessions.new_context(body, version, follower=body.replica_id >= 0)


_NONE_REFUSED: frozenset[str] = frozenset()


def _refused_topics(ctx: BrokerContext, request: Request) -> frozenset[str]:
    body = request.body
    if body.replica_id >= 0:
        allowed = acl_checks.cluster(ctx, request, acl_checks.Op.CLUSTER_ACTION)
        return _NONE_REFUSED if allowed else frozenset(t.topic for t in body.topics)
    return frozenset(t.topic for t in body.topics if not acl_checks.topic(ctx, request, acl_checks.Op.READ, t.topic))


def _answer(ctx: BrokerContext, body: Any, outcome: _Outcome, session: FetchContext) -> Any:
    """The response that goes out (only what the fetch session must be told); counted in the topic metrics."""
    if ctx.metrics is not None:
        topics, follower = ctx.metrics.topics, body.replica_id >= 0
        for topic, messages, size in outcome.sent:
            topics.record_fetch(topic, messages, size, follower=follower)
    return session.update_and_generate_response(outcome.response)


def _normalize(ctx: BrokerContext, body: Any, version: int) -> None:
    """Give every version's topics the shape of v12: topic names.

    A topic id the broker does not know leaves its topic's name empty, which
    answers UNKNOWN_TOPIC_ID.
    """
    if version >= TOPIC_IDS_FROM_VERSION:
        names = topic_names_by_id(ctx.metadata)
        for topic in body.topics:
            topic.topic = names.get(topic.topic_id, "")


def _done(body: Any, outcome: _Outcome) -> bool:
    # Nothing to read (a fetch that closes its session, an emptied session): no append can satisfy a wait.
    nothing_to_read = not any(topic.partitions for topic in body.topics)
    return body.max_wait_ms <= 0 or nothing_to_read or outcome.bytes >= max(body.min_bytes, 1) or outcome.errors


async def _long_poll(
    ctx: BrokerContext, body: Any, version: int, refused: frozenset[str], session: FetchContext
) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + body.max_wait_ms / 1000
    keys = [(t.topic, p.partition) for t in body.topics for p in t.partitions]
    while True:
        outcome = _read_all(ctx, body, version, refused)
        remaining = deadline - loop.time()
        if _done(body, outcome) or remaining <= 0:
            return _answer(ctx, body, outcome, session)
        if not await ctx.replicas.purgatory.wait_for_append(keys, remaining):
            return _answer(ctx, body, _read_all(ctx, body, version, refused), session)


def _read_all(
    ctx: BrokerContext, body: Any, version: int, refused: frozenset[str], *, record_followers: bool = False
) -> _Outcome:
    # The broker's fetch.max.bytes caps what the request asks for (KIP-541); the first batch still goes out whole.
    budget = min(body.max_bytes if body.max_bytes > 0 else 0x7FFFFFFF, ctx.config.get_int("fetch.max.bytes"))
    total = 0
    errors = False
    topics = []
    sent = []
    for topic in body.topics:
        if refused and topic.topic in refused:
            errors = True
            partitions = [_error(p.partition, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for p in topic.partitions]
            topics.append(R.FetchableTopicResponse(topic=topic.topic, topic_id=topic.topic_id, partitions=partitions))
            continue
        partitions = []
        for wanted in topic.partitions:
            data, size, messages = _read_partition(ctx, body, version, topic.topic, wanted, budget - total,
                                                   total == 0, record_followers)
            total += size
            errors = errors or data.error_code != ErrorCode.NONE
            partitions.append(data)
            if size:
                sent.append((topic.topic, messages, size))
        topics.append(R.FetchableTopicResponse(topic=topic.topic, topic_id=topic.topic_id, partitions=partitions))
    return _Outcome(R(throttle_time_ms=0, error_code=0, session_id=0, responses=topics), total, errors, sent)


def _read_partition(
    ctx: BrokerContext, body: Any, version: int, topic: str, wanted: Any, budget: int, first: bool,
    record_follower: bool,
) -> tuple[Any, int, int]:
    """The partition's data, its size in bytes and the records it holds from the fetch offset on."""
    index = wanted.partition
    follower_id = body.replica_id if body.replica_id >= 0 else None
    if not topic:
        return _error(index, ErrorCode.UNKNOWN_TOPIC_ID), 0, 0
    try:
        partition = leader_partition(ctx, topic, index, wanted.current_leader_epoch)
        diverging = _diverging_epoch(partition, wanted)
        if diverging is not None:
            return _diverged(index, partition, diverging), 0, 0
        if follower_id is not None and partition.follower(follower_id) is None:
            raise _unknown_follower(partition, follower_id, wanted.current_leader_epoch)
        leader_end_offset = partition.log_end_offset
        legacy_format = message_format.needs_down_conversion(version)
        max_bytes = max(0, min(wanted.partition_max_bytes, budget))
        read = partition.read(
            wanted.fetch_offset, max_bytes, isolation_level=body.isolation_level, min_one_batch=first,
            for_replica=follower_id is not None,
        )
        converted = (_down_converted(partition, read, version, wanted.fetch_offset, max_bytes, first)
                     if legacy_format else None)
    except OffsetOutOfRangeError as exc:
        return _error(index, ErrorCode.OFFSET_OUT_OF_RANGE, exc.log_start, exc.log_end), 0, 0
    except Exception as exc:
        return _error(index, error_code_for(exc, where="fetch")), 0, 0
    high_watermark = read.high_watermark
    if follower_id is not None and record_follower:
        _record_follower_fetch(ctx, partition, follower_id, wanted, leader_end_offset)
        high_watermark = partition.high_watermark
    fetched = read.slice
    if converted is not None:
        records: Any = converted
    elif fetched.size == 0:
        records = b""
    elif fetched.size < INLINE_RECORDS_LIMIT:
        records = fetched.read_bytes()
    else:
        records = FileRangeRef(fetched.size, fetched)
    data = R.PartitionData(
        partition_index=index,
        error_code=ErrorCode.NONE,
        high_watermark=high_watermark,
        last_stable_offset=read.last_stable_offset,
        log_start_offset=read.log_start_offset,
        aborted_transactions=_aborted(read.aborted_transactions, body.isolation_level),
        records=records,
    )
    messages = max(0, fetched.last_offset + 1 - wanted.fetch_offset) if fetched.size else 0
    return data, len(records) if converted is not None else fetched.size, messages


def _down_converted(
    partition: Partition, read: Any, version: int, fetch_offset: int, max_bytes: int, first: bool
) -> bytes:
    """The batches read as a legacy message set; past batches that convert to nothing (transaction markers).

    A fetcher of a legacy format moves on only with messages it can read, so
    when the batches read hold none (markers only), the next ones are read in
    their place, a bounded number of times.
    """
    fetched = read.slice
    enabled = partition.log.config.message_downconversion_enable
    for _ in range(_MARKER_ONLY_READS):
        if fetched.size == 0:
            return b""
        converted = message_format.down_converted(fetched.read_bytes(), version, max_bytes, fetch_offset,
                                                  enabled=enabled, where=str(partition))
        if converted:
            return converted
        fetch_offset = fetched.last_offset + 1
        fetched = partition.read(fetch_offset, max_bytes, isolation_level=0, min_one_batch=first).slice
    return b""


def _diverging_epoch(partition: Partition, wanted: Any) -> tuple[int, int] | None:
    """``(epoch, end_offset)`` where the fetcher's log leaves the leader's, or None when it does not."""
    if wanted.last_fetched_epoch < 0:
        return None
    epoch, end_offset = partition.end_offset_for_epoch(wanted.last_fetched_epoch)
    if epoch < wanted.last_fetched_epoch or end_offset < wanted.fetch_offset:
        return epoch, end_offset
    return None


def _diverged(index: int, partition: Partition, diverging: tuple[int, int]) -> Any:
    data = _error(index, ErrorCode.NONE, partition.log_start_offset, partition.high_watermark)
    data.last_stable_offset = partition.last_stable_offset
    data.diverging_epoch = R.EpochEndOffset(epoch=diverging[0], end_offset=diverging[1])
    return data


def _unknown_follower(partition: Partition, follower_id: int, current_leader_epoch: int) -> KafkaError:
    # With the current epoch named, the follower may simply not have heard of its assignment yet (Kafka's choice).
    code = ErrorCode.UNKNOWN_LEADER_EPOCH if current_leader_epoch >= 0 else ErrorCode.NOT_LEADER_OR_FOLLOWER
    return KafkaError(code, f"broker {follower_id} is not among the replicas {list(partition.replicas)} of {partition}")


def _record_follower_fetch(
    ctx: BrokerContext, partition: Partition, follower_id: int, wanted: Any, leader_end_offset: int
) -> None:
    """The follower holds everything below its fetch offset: move the high watermark, maybe grow the ISR."""
    moved = partition.update_follower_fetch(
        follower_id, wanted.fetch_offset, ctx.clock(), log_start_offset=wanted.log_start_offset,
        leader_end_offset=leader_end_offset,
    )
    if moved:
        ctx.replicas.notify_append(partition)
    if ctx.isr_manager is not None:
        ctx.isr_manager.maybe_expand_isr(partition, follower_id)


def _aborted(aborted: list[AbortedTxn] | None, isolation_level: int) -> list[Any] | None:
    if isolation_level != IsolationLevel.READ_COMMITTED:
        return None
    return [R.AbortedTransaction(producer_id=txn.producer_id, first_offset=txn.first_offset) for txn in aborted or ()]


def _error(index: int, code: ErrorCode, log_start: int = -1, high_watermark: int = -1) -> Any:
    return R.PartitionData(
        partition_index=index,
        error_code=code,
        high_watermark=high_watermark,
        last_stable_offset=high_watermark,
        log_start_offset=log_start,
        aborted_transactions=None,
        # librdkafka rejects a null record set, even beside an error code.
        records=b"",
    )
