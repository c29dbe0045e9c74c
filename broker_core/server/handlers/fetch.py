"""Fetch: file ranges of whole batches below the high watermark (or the LSO).

Under read_committed (``isolation_level`` 1) data stops at the last stable
offset and each partition lists the aborted transactions (producer id,
first offset) its data overlaps, which the consumer uses to drop their
records; under read_uncommitted that list is null, as Kafka sends it. A
fetch parked because nothing is below the LSO is woken by the append
notification a transaction marker sends, like any produce.

Fetch sessions are declined (session id 0), so every request names all its
partitions. When less than ``min_bytes`` is available the request waits in
the purgatory until an append to one of its partitions or ``max_wait_ms``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from broker_core.server.handlers.partition_lookup import check_leader_epoch, leader_partition
from broker_core.storage.errors import OffsetOutOfRangeError
from broker_core.storage.txn_index import AbortedTxn
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.fetch import FetchResponse
from spate.protocol.types import FileRangeRef
from spate.structs import IsolationLevel

R = FetchResponse
# Slices below this size are copied into the response; larger ones are sent with sendfile.
INLINE_RECORDS_LIMIT = 16 * 1024


@dataclass(slots=True)
class _Outcome:
    response: Any
    bytes: int
    errors: bool


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    outcome = _read_all(ctx, body)
    if _done(body, outcome):
        return outcome.response
    return _long_poll(ctx, body)


def _done(body: Any, outcome: _Outcome) -> bool:
    return body.max_wait_ms <= 0 or outcome.bytes >= max(body.min_bytes, 1) or outcome.errors


async def _long_poll(ctx: BrokerContext, body: Any) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + body.max_wait_ms / 1000
    keys = [(t.topic, p.partition) for t in body.topics for p in t.partitions]
    while True:
        outcome = _read_all(ctx, body)
        remaining = deadline - loop.time()
        if _done(body, outcome) or remaining <= 0:
            return outcome.response
        if not await ctx.replicas.purgatory.wait_for_append(keys, remaining):
            return _read_all(ctx, body).response


def _read_all(ctx: BrokerContext, body: Any) -> _Outcome:
    budget = body.max_bytes if body.max_bytes > 0 else 0x7FFFFFFF
    total = 0
    errors = False
    topics = []
    for topic in body.topics:
        partitions = []
        for wanted in topic.partitions:
            data, size = _read_partition(ctx, body.isolation_level, topic.topic, wanted, budget - total, total == 0)
            total += size
            errors = errors or data.error_code != ErrorCode.NONE
            partitions.append(data)
        topics.append(R.FetchableTopicResponse(topic=topic.topic, partitions=partitions))
    return _Outcome(R(throttle_time_ms=0, error_code=0, session_id=0, responses=topics), total, errors)


def _read_partition(
    ctx: BrokerContext, isolation_level: int, topic: str, wanted: Any, budget: int, first: bool
) -> tuple[Any, int]:
    index = wanted.partition
    try:
        partition = leader_partition(ctx, topic, index)
        check_leader_epoch(partition, wanted.current_leader_epoch)
        max_bytes = max(0, min(wanted.partition_max_bytes, budget))
        read = partition.read(
            wanted.fetch_offset, max_bytes, isolation_level=isolation_level, min_one_batch=first
        )
    except OffsetOutOfRangeError as exc:
        return _error(index, ErrorCode.OFFSET_OUT_OF_RANGE, exc.log_start, exc.log_end), 0
    except Exception as exc:
        return _error(index, error_code_for(exc, where="fetch")), 0
    fetched = read.slice
    if fetched.size == 0:
        records: Any = b""
    elif fetched.size < INLINE_RECORDS_LIMIT:
        records = fetched.read_bytes()
    else:
        records = FileRangeRef(fetched.size, fetched)
    data = R.PartitionData(
        partition_index=index,
        error_code=ErrorCode.NONE,
        high_watermark=read.high_watermark,
        last_stable_offset=read.last_stable_offset,
        log_start_offset=read.log_start_offset,
        aborted_transactions=_aborted(read.aborted_transactions, isolation_level),
        records=records,
    )
    return data, fetched.size


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
