"""Consumer-group members of three client libraries, each polling on its own thread.

Every member exposes the same small surface: ``start()``, ``assignment()``
(the partitions it holds right now, as ints), ``close()`` (a clean leave),
and counters of the rebalance callbacks it has seen. Polling continuously is
what keeps a member alive: librdkafka serves rebalances from ``poll``, and
kafka-python and aiokafka heartbeat from background tasks that need the
consumer open.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

HEARTBEAT_MS = 500


def wait_until(predicate: Callable[[], bool], timeout: float, what: str, interval: float = 0.05) -> float:
    """Seconds until ``predicate()`` held; fails the test with ``what`` after ``timeout``."""
    start = time.monotonic()
    deadline = start + timeout
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic() - start
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@dataclass
class Member:
    """Base of the per-library members: a polling thread and the assignment it last saw."""

    bootstrap: str
    group: str
    topic: str
    session_ms: int = 6000
    assignor: str = "range"
    instance_id: str | None = None
    extra: dict = field(default_factory=dict)
    assigned_calls: int = 0
    revoked_calls: int = 0
    revoked: list[set[int]] = field(default_factory=list)
    records: list[tuple[int, int]] = field(default_factory=list)
    _assignment: frozenset[int] = frozenset()
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _error: BaseException | None = None

    def start(self) -> "Member":
        self._thread = threading.Thread(target=self._guarded_run, name=f"{type(self).__name__}-{self.group}", daemon=True)
        self._thread.start()
        return self

    def _guarded_run(self) -> None:
        try:
            self._run()
        except BaseException as exc:  # surfaced by assignment()/close() in the test thread
            self._error = exc

    def _run(self) -> None:
        raise NotImplementedError

    def assignment(self) -> frozenset[int]:
        if self._error is not None:
            raise AssertionError(f"{type(self).__name__} failed: {self._error!r}") from self._error
        return self._assignment

    def close(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise AssertionError(f"{type(self).__name__} did not close within {timeout}s")
        if self._error is not None:
            raise AssertionError(f"{type(self).__name__} failed: {self._error!r}") from self._error


class ConfluentMember(Member):
    def _run(self) -> None:
        from confluent_kafka import Consumer

        config = {
            "bootstrap.servers": self.bootstrap,
            "group.id": self.group,
            "session.timeout.ms": self.session_ms,
            "heartbeat.interval.ms": HEARTBEAT_MS,
            "partition.assignment.strategy": self.assignor,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
            **({"group.instance.id": self.instance_id} if self.instance_id else {}),
            **self.extra,
        }
        consumer = Consumer(config)

        def on_assign(c, partitions) -> None:
            self.assigned_calls += 1

        def on_revoke(c, partitions) -> None:
            self.revoked_calls += 1
            self.revoked.append({p.partition for p in partitions})

        consumer.subscribe([self.topic], on_assign=on_assign, on_revoke=on_revoke)
        try:
            while not self._stop.is_set():
                message = consumer.poll(0.05)
                if message is not None and message.error() is None:
                    self.records.append((message.partition(), message.offset()))
                self._assignment = frozenset(tp.partition for tp in consumer.assignment())
        finally:
            consumer.close()
            self._assignment = frozenset()


class KafkaPythonMember(Member):
    def _run(self) -> None:
        from kafka import KafkaConsumer
        from kafka.coordinator.assignors.range import RangePartitionAssignor
        from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

        assignors = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}
        consumer = KafkaConsumer(
            bootstrap_servers=self.bootstrap,
            group_id=self.group,
            session_timeout_ms=self.session_ms,
            heartbeat_interval_ms=HEARTBEAT_MS,
            partition_assignment_strategy=[assignors[self.assignor]],
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            **self.extra,
        )
        consumer.subscribe([self.topic])
        try:
            while not self._stop.is_set():
                for partition_records in consumer.poll(timeout_ms=50).values():
                    self.records.extend((r.partition, r.offset) for r in partition_records)
                self._assignment = frozenset(tp.partition for tp in consumer.assignment())
        finally:
            consumer.close()
            self._assignment = frozenset()


class AiokafkaMember(Member):
    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        from aiokafka import AIOKafkaConsumer
        from aiokafka.coordinator.assignors.range import RangePartitionAssignor
        from aiokafka.coordinator.assignors.roundrobin import (
            RoundRobinPartitionAssignor,
        )

        assignors = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}
        consumer = AIOKafkaConsumer(
            self.topic,
            bootstrap_servers=self.bootstrap,
            group_id=self.group,
            session_timeout_ms=self.session_ms,
            heartbeat_interval_ms=HEARTBEAT_MS,
            partition_assignment_strategy=(assignors[self.assignor],),
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            **self.extra,
        )
        await consumer.start()
        try:
            while not self._stop.is_set():
                batches = await consumer.getmany(timeout_ms=50)
                for partition_records in batches.values():
                    self.records.extend((r.partition, r.offset) for r in partition_records)
                self._assignment = frozenset(tp.partition for tp in consumer.assignment())
        finally:
            await consumer.stop()
            self._assignment = frozenset()


# The member class of each client library, by the name tests and ``consumer_process`` use.
MEMBERS: dict[str, type[Member]] = {
    "confluent": ConfluentMember,
    "kafka-python": KafkaPythonMember,
    "aiokafka": AiokafkaMember,
}


def start_all(members: list[Member]) -> list[Member]:
    for member in members:
        member.start()
    return members


def close_all(members: list[Member]) -> None:
    """Close concurrently: leaving one by one would rebalance the rest each time."""
    threads = [threading.Thread(target=m.close) for m in members]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)


def spread(members: list[Member]) -> list[int]:
    """How many partitions each member holds, smallest first."""
    return sorted(len(m.assignment()) for m in members)


def covered(members: list[Member], partitions: int) -> bool:
    """Every partition held by exactly one member."""
    held = [p for m in members for p in m.assignment()]
    return sorted(held) == list(range(partitions))


def balanced(members: list[Member], partitions: int) -> bool:
    counts = spread(members)
    return covered(members, partitions) and counts[-1] - counts[0] <= 1
