"""A leader for fetcher tests: answers from a real leader ``Partition``, with errors and pauses scripted in.

It implements the fetcher's ``LeaderClient`` in process: Fetch reads the
leader partition to its log end (as a leader answers a replica),
OffsetForLeaderEpoch asks its epoch cache, ListOffsets its log start and
end. A test queues per-partition error codes (``errors``), makes the leader
unreachable (``unreachable``), or holds the next fetch (``hold_fetch``), and
reads back what was asked (``asked``).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict, deque
from typing import Mapping

from broker_core.replication.leader_endpoint import (
    BrokerEndpoint,
    EpochEndOffset,
    FetchedPartition,
    FetchPosition,
    LeaderUnreachableError,
)
from broker_core.replication.partition import Partition
from broker_core.storage.errors import OffsetOutOfRangeError
from spate.protocol import ErrorCode, KafkaError
from spate.structs import TopicPartition

LEADER = BrokerEndpoint(1, "127.0.0.1", 9)


class ScriptedLeader:
    def __init__(self, partitions: Mapping[TopicPartition, Partition], endpoint: BrokerEndpoint = LEADER) -> None:
        self.endpoint = endpoint
        self.partitions = dict(partitions)
        self.errors: dict[str, dict[TopicPartition, deque[ErrorCode]]] = defaultdict(lambda: defaultdict(deque))
        self.unreachable = False
        self.hold_fetch: asyncio.Event | None = None
        self.fetch_started = asyncio.Event()
        self.asked: list[tuple[str, object]] = []
        self.closed = 0

    def fail(self, api: str, tp: TopicPartition, *codes: ErrorCode) -> None:
        """Answer the next requests of ``api`` ("fetch", "epoch", "offsets") for ``tp`` with ``codes``, in turn."""
        self.errors[api][tp].extend(codes)

    def _scripted(self, api: str, tp: TopicPartition) -> ErrorCode | None:
        queue = self.errors[api][tp]
        return queue.popleft() if queue else None

    def _check_reachable(self, what: str) -> None:
        if self.unreachable:
            raise LeaderUnreachableError(f"{what} to {self.endpoint} failed: ConnectionRefusedError()")

    def asked_for(self, api: str) -> list[object]:
        return [what for name, what in self.asked if name == api]

    async def fetch(self, positions: Mapping[TopicPartition, FetchPosition]) -> dict[TopicPartition, FetchedPartition]:
        self.asked.append(("fetch", dict(positions)))
        self.fetch_started.set()
        if self.hold_fetch is not None:
            await self.hold_fetch.wait()
        await asyncio.sleep(0.01)  # a leader with nothing new would long-poll
        self._check_reachable("FETCH")
        answers = {}
        for tp, position in positions.items():
            code = self._scripted("fetch", tp)
            leader = self.partitions[tp]
            if code is not None:
                answers[tp] = FetchedPartition(code)
                continue
            try:
                read = leader.read(position.fetch_offset, 1 << 20, isolation_level=0, min_one_batch=True,
                                   for_replica=True)
            except OffsetOutOfRangeError:
                answers[tp] = FetchedPartition(ErrorCode.OFFSET_OUT_OF_RANGE)
                continue
            answers[tp] = FetchedPartition(ErrorCode.NONE, read.high_watermark, read.log_start_offset,
                                           read.slice.read_bytes() if read.slice.size else b"")
        return answers

    async def fetch_epoch_end_offsets(
        self, wanted: Mapping[TopicPartition, tuple[int, int]]
    ) -> dict[TopicPartition, EpochEndOffset]:
        self.asked.append(("epoch", dict(wanted)))
        await asyncio.sleep(0)
        self._check_reachable("OFFSET_FOR_LEADER_EPOCH")
        answers = {}
        for tp, (_, epoch) in wanted.items():
            code = self._scripted("epoch", tp)
            if code is not None:
                answers[tp] = EpochEndOffset(code)
            else:
                answers[tp] = EpochEndOffset(ErrorCode.NONE, *self.partitions[tp].end_offset_for_epoch(epoch))
        return answers

    async def _offset(self, tp: TopicPartition, which: str) -> int:
        self.asked.append(("offsets", (tp, which)))
        await asyncio.sleep(0)
        self._check_reachable("LIST_OFFSETS")
        code = self._scripted("offsets", tp)
        if code is not None:
            raise KafkaError(code)
        leader = self.partitions[tp]
        return leader.log_start_offset if which == "earliest" else leader.log_end_offset

    async def fetch_earliest_offset(self, tp: TopicPartition, current_leader_epoch: int) -> int:
        return await self._offset(tp, "earliest")

    async def fetch_latest_offset(self, tp: TopicPartition, current_leader_epoch: int) -> int:
        return await self._offset(tp, "latest")

    def close(self) -> None:
        self.closed += 1
