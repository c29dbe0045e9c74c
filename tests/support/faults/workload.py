"""The replication fault tests' workload: an idempotent acks=all producer on a thread, then a full read.

:class:`IdempotentWorkload` writes ``"<partition>:<seq>"`` values round-robin
over a topic's partitions with confluent-kafka (``enable.idempotence``,
``acks=all``) at a bounded rate and up to a bounded count, from its own
thread, and records each value's delivery report in a
:class:`~tests.support.faults.history.WorkloadHistory`: acknowledged with
its offset, failed with its error, or unresolved when the workload stopped
before the report came. :func:`read_committed` then reads every partition
from its start to its end with a ``read_committed`` consumer, for
:func:`~tests.support.faults.history.check_history`.

Every wait is bounded: a workload that cannot stop in time, or a read that
cannot reach the end, raises naming what was missing.
"""

from __future__ import annotations

import bisect
import logging
import threading
import time
import uuid
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition

from tests.support.faults.history import WorkloadHistory, value_of

CLIENT_LOG = logging.getLogger("tests.faults.rdkafka")
DEFAULT_RATE = 200  # values per second
DEFAULT_MAX_VALUES = 20_000
READ_TIMEOUT_S = 60.0


class IdempotentWorkload:
    def __init__(
        self,
        bootstrap: str,
        topic: str,
        partitions: int,
        *,
        rate: float = DEFAULT_RATE,
        max_values: int = DEFAULT_MAX_VALUES,
        delivery_timeout_ms: int = 30_000,
        producer_config: dict[str, Any] | None = None,
    ) -> None:
        self.history = WorkloadHistory(topic=topic, partitions=partitions)
        self._rate = rate
        self._max_values = max_values
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._pending: set[str] = set()
        self._next_seq = [0] * partitions
        # When each partition's acknowledgements came (time.monotonic()), for the pauses a fault caused.
        self._ack_times: list[list[float]] = [[] for _ in range(partitions)]
        self._producer = Producer({
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 5,
            "delivery.timeout.ms": delivery_timeout_ms,
            "request.timeout.ms": min(delivery_timeout_ms, 10_000),
            "retry.backoff.ms": 100,
            "topic.metadata.refresh.interval.ms": 1000,
            "error_cb": self._on_error,
            # librdkafka's connection complaints (expected while brokers die) go to logging, not stderr.
            "logger": CLIENT_LOG,
            **(producer_config or {}),
        })
        self._thread = threading.Thread(target=self._run, name=f"workload-{topic}", daemon=True)

    # --- control ---------------------------------------------------------------------------

    def start(self) -> IdempotentWorkload:
        self._thread.start()
        return self

    def running(self) -> bool:
        return self._thread.is_alive()

    def acknowledged(self) -> int:
        with self._lock:
            return len(self.history.acked)

    def wait_for_acks(self, count: int, timeout_s: float = 60.0) -> None:
        """Until ``count`` values more than now are acknowledged; AssertionError after ``timeout_s``."""
        target = self.acknowledged() + count
        deadline = time.monotonic() + timeout_s
        while self.acknowledged() < target:
            if time.monotonic() >= deadline or not self._thread.is_alive():
                raise AssertionError(
                    f"only {self.acknowledged()} of {target} values acknowledged after {timeout_s:g}s "
                    f"(fatal error: {self.history.fatal_error})"
                )
            time.sleep(0.05)

    def longest_pause(self, start: float, end: float) -> float:
        """The longest time a partition went without an acknowledgement around ``start``..``end``
        (``time.monotonic()`` instants): see :func:`longest_pause`."""
        with self._lock:
            times = [list(partition_times) for partition_times in self._ack_times]
        return longest_pause(times, start, end, now=time.monotonic())

    def stop(self, flush_timeout_s: float = 60.0) -> WorkloadHistory:
        """Stop sending, wait (bounded) for outstanding delivery reports, and return the history."""
        self._stop.set()
        self._thread.join(timeout=30)
        if self._thread.is_alive():
            raise AssertionError("the workload thread did not stop within 30s")
        self._producer.flush(flush_timeout_s)
        with self._lock:
            self.history.unresolved = set(self._pending)
            return self.history

    # --- the producing thread --------------------------------------------------------------

    def _run(self) -> None:
        interval = 1.0 / self._rate
        next_send = time.monotonic()
        partitions = self.history.partitions
        while not self._stop.is_set() and self.history.sent < self._max_values:
            partition = self.history.sent % partitions
            value = value_of(partition, self._next_seq[partition])
            with self._lock:
                self._pending.add(value)
            try:
                self._producer.produce(self.history.topic, value.encode(), partition=partition,
                                       on_delivery=self._on_delivery)
            except BufferError:  # the local queue is full: serve delivery reports, then try again
                with self._lock:
                    self._pending.discard(value)
                self._producer.poll(0.1)
                continue
            except KafkaException as exc:  # fatal: the idempotent producer cannot go on
                with self._lock:
                    self._pending.discard(value)
                    self.history.fatal_error = self.history.fatal_error or str(exc)
                return
            self._next_seq[partition] += 1
            self.history.sent += 1
            self._producer.poll(0)
            next_send += interval
            delay = next_send - time.monotonic()
            if delay > 0:
                self._stop.wait(delay)
            else:
                next_send = time.monotonic()  # behind: do not burst to catch up
        self._producer.poll(0)

    def _on_delivery(self, error: KafkaError | None, message: Any) -> None:
        value = message.value().decode()
        with self._lock:
            self._pending.discard(value)
            if error is None:
                self.history.acked[value] = message.offset()
                self._ack_times[message.partition()].append(time.monotonic())
            else:
                self.history.failed[value] = error.name()

    def _on_error(self, error: KafkaError) -> None:
        if error.fatal():
            with self._lock:
                self.history.fatal_error = self.history.fatal_error or f"{error.name()}: {error.str()}"


def longest_pause(ack_times: list[list[float]], start: float, end: float, *, now: float) -> float:
    """The longest stretch without an acknowledgement, over the partitions (each one's acknowledgement
    instants in order), among the stretches overlapping ``start``..``end``: from the last acknowledgement
    before ``start`` (or ``start``) to the next, and so on to the first one after ``end`` (or ``now``)."""
    longest = 0.0
    for times in ack_times:
        first_after_start = bisect.bisect_right(times, start)
        previous = times[first_after_start - 1] if first_after_start else start
        for instant in times[first_after_start:]:
            longest = max(longest, instant - previous)
            previous = instant
            if instant > end:
                break
        else:
            longest = max(longest, now - previous)
    return longest


def read_committed(
    bootstrap: str, topic: str, partitions: int, *, timeout_s: float = READ_TIMEOUT_S
) -> dict[int, list[tuple[int, str]]]:
    """Every value of every partition, as (offset, value) in offset order, read with ``read_committed``
    from the log start to the end each partition had when the read began."""
    return read_all(bootstrap, topic, partitions, isolation_level="read_committed", timeout_s=timeout_s)


def read_all(
    bootstrap: str, topic: str, partitions: int, *, isolation_level: str, timeout_s: float = READ_TIMEOUT_S
) -> dict[int, list[tuple[int, str]]]:
    """As :func:`read_committed`, at ``isolation_level`` (``read_uncommitted`` also returns what aborted
    transactions wrote)."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": f"fault-check-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "isolation.level": isolation_level,
        "logger": CLIENT_LOG,
    })
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)}
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        read: dict[int, list[tuple[int, str]]] = {p: [] for p in range(partitions)}
        deadline = time.monotonic() + timeout_s
        while not _reached(consumer, topic, ends):
            if time.monotonic() >= deadline:
                positions = {tp.partition: tp.offset for tp in consumer.position(_assignment(topic, ends))}
                raise AssertionError(f"read of {topic} reached {positions}, not the ends {ends}, in {timeout_s:g}s")
            message = consumer.poll(0.2)
            if message is None or message.error():
                continue
            read[message.partition()].append((message.offset(), message.value().decode()))
        return read
    finally:
        consumer.close()


def _assignment(topic: str, ends: dict[int, int]) -> list[TopicPartition]:
    return [TopicPartition(topic, p) for p in ends]


def _reached(consumer: Consumer, topic: str, ends: dict[int, int]) -> bool:
    positions = {tp.partition: tp.offset for tp in consumer.position(_assignment(topic, ends))}
    return all(end == 0 or positions.get(p, -1) >= end for p, end in ends.items())
