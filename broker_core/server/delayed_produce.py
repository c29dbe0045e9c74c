"""An acks=all produce waiting for its records to reach every in-sync replica (Kafka's ``DelayedProduce``).

Each partition the request appended to waits until the partition's high
watermark reaches the offset after its last record
(``ProducePartitionStatus.required_offset``). A partition is settled when

* the high watermark got there: NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND
  when the ISR meanwhile shrank below ``min.insync.replicas``;
* the partition is no longer led here: NOT_LEADER_OR_FOLLOWER, or
  KAFKA_STORAGE_ERROR when its log dir failed (the client then refreshes
  its metadata and retries on the new leader, as with Kafka);
* the request's ``timeout_ms`` passed first: REQUEST_TIMED_OUT.

Partitions whose append failed are settled from the start with their error.
The operation watches its partitions in the purgatory, so every append, high
watermark move, ISR or leadership change re-checks it at once on the event
loop. A single replica's high watermark moves with the append itself, so an
acks=all produce to it is answered without waiting.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Callable

from broker_core.replication.partition import Partition
from broker_core.server.purgatory import FetchPurgatory
from spate.protocol.errors import ErrorCode

PartitionLookup = Callable[[str, int], Partition | None]
OfflineCheck = Callable[[str, int], bool]


@dataclass(slots=True)
class ProducePartitionStatus:
    """One partition of a produce request: where its append landed and how it is answered."""

    topic: str
    index: int
    error: ErrorCode
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    # Produce v8+: why the append failed, and which records of the batch made it fail.
    error_message: str | None = None
    record_errors: tuple[tuple[int, str], ...] = ()
    # acks=all: the high watermark this partition waits for (its last offset + 1).
    required_offset: int = -1
    acks_pending: bool = False


class DelayedProduce:
    def __init__(self, statuses: list[ProducePartitionStatus], led_partition: PartitionLookup, *,
                 offline: OfflineCheck = lambda topic, index: False) -> None:
        """``led_partition(topic, index)`` is the partition if this broker leads it, else None;
        ``offline(topic, index)`` tells whether its log is in a failed log dir."""
        self._statuses = statuses
        self._led_partition = led_partition
        self._offline = offline
        self._done: asyncio.Future[None] | None = None

    @property
    def statuses(self) -> list[ProducePartitionStatus]:
        return self._statuses

    def try_complete(self) -> bool:
        """Settle what can be settled now; True when every partition is."""
        for status in self._statuses:
            if not status.acks_pending:
                continue
            partition = self._led_partition(status.topic, status.index)
            if partition is None:
                lost = ErrorCode.KAFKA_STORAGE_ERROR if self._offline(status.topic, status.index) else None
                done, error = True, lost or ErrorCode.NOT_LEADER_OR_FOLLOWER
            else:
                done, error = partition.check_enough_replicas_reach_offset(status.required_offset)
            if done or error != ErrorCode.NONE:
                status.acks_pending = False
                status.error = error
        finished = not any(status.acks_pending for status in self._statuses)
        if finished and self._done is not None and not self._done.done():
            self._done.set_result(None)
        return finished

    async def wait(self, purgatory: FetchPurgatory, timeout_ms: int) -> None:
        """Until every partition is settled, or ``timeout_ms`` passed: those still waiting get REQUEST_TIMED_OUT."""
        if self.try_complete():
            return
        self._done = asyncio.get_running_loop().create_future()
        keys = {(status.topic, status.index) for status in self._statuses if status.acks_pending}
        unwatch = purgatory.watch(keys, self.try_complete)
        try:
            await asyncio.wait_for(asyncio.shield(self._done), max(timeout_ms, 0) / 1000)
        except asyncio.TimeoutError:
            self._expire()
        finally:
            unwatch()

    def _expire(self) -> None:
        for status in self._statuses:
            if status.acks_pending:
                status.acks_pending = False
                status.error = ErrorCode.REQUEST_TIMED_OUT
