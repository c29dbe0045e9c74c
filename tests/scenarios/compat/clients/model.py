"""What every client driver takes and returns, independent of the client library.

A driver wraps one third-party Kafka client behind the few operations the
compatibility tests need, so one test body can run against each client. The
drivers translate each library's own results and errors into these types and
nothing more: no retries or corrections of their own, so a broker bug shows up
exactly as the library reports it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Codec = Literal["none", "gzip", "snappy", "lz4", "zstd"]
CODECS: tuple[Codec, ...] = ("none", "gzip", "snappy", "lz4", "zstd")

# What a consumer does when its fetch position is outside the log:
# "error" hands the out-of-range error to the application, "earliest" resumes
# at the log start offset.
ResetPolicy = Literal["error", "earliest"]

Headers = tuple[tuple[str, bytes], ...]


@dataclass(frozen=True)
class OutgoingRecord:
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp_ms: int


@dataclass(frozen=True)
class Placement:
    """Where the broker acknowledged a record: its partition and offset."""

    partition: int
    offset: int


@dataclass(frozen=True)
class ConsumedRecord:
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp_ms: int
    # True for CreateTime (the producer's timestamp), False for LogAppendTime.
    create_time: bool


def consumed_from_python_client(partition: int, message: Any) -> ConsumedRecord:
    """A record as kafka-python and aiokafka hand it out (their ConsumerRecord shapes agree)."""
    return ConsumedRecord(
        partition=partition,
        offset=message.offset,
        key=message.key,
        value=message.value,
        headers=tuple((k, v) for k, v in message.headers),
        timestamp_ms=message.timestamp,
        create_time=message.timestamp_type == 0,
    )


@dataclass(frozen=True)
class TimestampLookup:
    """ListOffsets by timestamp: the first offset at or after the time, and that record's timestamp."""

    offset: int
    timestamp_ms: int | None


class OffsetOutOfRangeReported(Exception):
    """The client told the application that its fetch position is outside the log."""

    def __init__(self, partition: int, detail: str) -> None:
        super().__init__(f"partition {partition}: {detail}")
        self.partition = partition

    @classmethod
    def from_python_client(cls, exc: Exception) -> OffsetOutOfRangeReported:
        """kafka-python's and aiokafka's OffsetOutOfRangeError, whose first argument maps partitions to positions."""
        positions = exc.args[0] if exc.args and isinstance(exc.args[0], dict) else {}
        partition = next(iter(positions)).partition if positions else -1
        return cls(partition, repr(exc))


class ClientOperationError(Exception):
    """A client call failed; ``code`` is the Kafka error code where the client exposes one."""

    def __init__(self, code: int | None, detail: str) -> None:
        super().__init__(f"error code {code}: {detail}")
        self.code = code


@dataclass
class DriverSettings:
    """The settings every driver is made with: ``Driver(bootstrap, timeout_s=..., max_request_bytes=...)``."""

    bootstrap: str
    timeout_s: float = 20.0
    # Client-side request size limit; raise it to let the broker be the one that says "too large".
    max_request_bytes: int | None = None

    @property
    def timeout_ms(self) -> int:
        return int(self.timeout_s * 1000)

    def python_client_producer_options(self, codec: Codec) -> dict[str, Any]:
        """Producer options that kafka-python and aiokafka name alike: acks=all, idempotence, ``codec``."""
        return {
            "bootstrap_servers": self.bootstrap,
            "acks": "all",
            "enable_idempotence": True,
            "compression_type": None if codec == "none" else codec,
            "linger_ms": 20,
            "request_timeout_ms": self.timeout_ms,
            **({"max_request_size": self.max_request_bytes} if self.max_request_bytes else {}),
        }

    def python_client_consumer_options(self, reset: ResetPolicy) -> dict[str, Any]:
        """Consumer options that kafka-python and aiokafka name alike: no group, no auto-commit, ``reset``."""
        return {
            "bootstrap_servers": self.bootstrap,
            "group_id": None,
            "enable_auto_commit": False,
            # "none" makes the client raise OffsetOutOfRangeError instead of resetting.
            "auto_offset_reset": "earliest" if reset == "earliest" else "none",
            "fetch_max_wait_ms": 100,
            "request_timeout_ms": self.timeout_ms,
        }


@dataclass
class ReadUntil:
    """Records read so far, until every partition reaches its end offset or the time is up."""

    end: dict[int, int]
    timeout_s: float
    records: list[ConsumedRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._next_offset = {p: -1 for p in self.end}
        self._deadline = time.monotonic() + self.timeout_s

    def wanting(self) -> bool:
        """Whether some partition is short of its end offset; TimeoutError once the time is up."""
        if all(self._next_offset[p] >= self.end[p] for p in self.end):
            return False
        if time.monotonic() > self._deadline:
            raise TimeoutError(f"read up to {self._next_offset}, expected {self.end} within {self.timeout_s}s")
        return True

    def add(self, record: ConsumedRecord) -> None:
        self.records.append(record)
        self._next_offset[record.partition] = record.offset + 1


class ClientDriver(Protocol):
    """The operations each third-party client offers to the tests."""

    name: str
    bootstrap: str
    timeout_s: float
    max_request_bytes: int | None

    def create_topic(self, topic: str, partitions: int, configs: dict[str, str] | None = None) -> None:
        """Create through the client's admin API; raise ClientOperationError on failure."""

    def produce(
        self, topic: str, records: list[OutgoingRecord], *, codec: Codec = "none", partition: int | None = None
    ) -> list[Placement]:
        """Send with acks=all and idempotence; return each record's placement, in input order."""

    def consume(
        self, topic: str, start: dict[int, int], end: dict[int, int], *, reset: ResetPolicy = "error"
    ) -> list[ConsumedRecord]:
        """Assign (no group) each partition at its start offset; read until every partition reaches its end offset."""

    def offset_for_time(self, topic: str, partition: int, timestamp_ms: int) -> TimestampLookup | None:
        """ListOffsets by timestamp; None when no record has a timestamp at or after it."""

    def delete_records(self, topic: str, partition: int, before_offset: int) -> int:
        """DeleteRecords through the admin API; return the new low watermark."""

    def log_start_offset(self, topic: str, partition: int) -> int:
        """ListOffsets for the earliest offset."""
