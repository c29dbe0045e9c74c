"""A compacted log on disk and a cleaner that runs on the test's thread."""

from __future__ import annotations

from pathlib import Path

from broker_core.storage.cleaner.cleaner_checkpoint import CleanerCheckpoints
from broker_core.storage.cleaner.log_cleaner import CleanableLog, CleanerConfig, LogCleaner
from broker_core.storage.config import LogConfig
from broker_core.storage.files import TopicPartition
from broker_core.storage.local_log import LocalLog
from broker_core.storage.unified_log import UnifiedLog
from spate.records import Record, build_batch, iter_batches, iter_records
from tests.broker.storage.batch_factory import FakeClock

TP = TopicPartition("orders", 0)
EPOCH = 1


def open_log(directory: Path, clock: FakeClock, **config: object) -> UnifiedLog:
    settings: dict[str, object] = {"cleanup_policy": "compact", "min_cleanable_dirty_ratio": 0.0}
    settings.update(config)
    local = LocalLog.open(directory, LogConfig(**settings), clock=clock)
    return UnifiedLog(local, clock=clock, producer_id_expiration_ms=86_400_000)


def keyed(pairs: list[tuple[str | None, str | None]], ts: int = 1_000, **batch: object) -> bytes:
    """One batch of ``(key, value)`` records (None value: a tombstone)."""
    records = [
        Record(offset=i, timestamp=ts + i, key=None if k is None else k.encode(), value=None if v is None else v.encode())
        for i, (k, v) in enumerate(pairs)
    ]
    return build_batch(records, **batch)


def append(log: UnifiedLog, pairs: list[tuple[str | None, str | None]], **batch: object) -> int:
    return log.append_as_leader(keyed(pairs, **batch), leader_epoch=EPOCH).base_offset


def contents(log: UnifiedLog, start: int | None = None) -> list[tuple[int, str, str | None]]:
    """Every record from ``start`` (default: the log start) as ``(offset, key, value)``."""
    found = []
    offset = log.log_start_offset if start is None else start
    while offset < log.log_end_offset:
        data = log.read(offset, 1 << 20).read_bytes()
        if not data:
            break
        for record in iter_records(data):
            if record.offset >= offset:
                found.append((record.offset, (record.key or b"").decode(), None if record.value is None else record.value.decode()))
        offset = list(iter_batches(data, check_crc=False))[-1].next_offset
    return found


def cleaner_for(
    log: UnifiedLog, clock: FakeClock, *, buffer: int = 1 << 20, high_watermark: int | None = None
) -> LogCleaner:
    checkpoints = CleanerCheckpoints([log.directory.parent])
    return LogCleaner(
        CleanerConfig(dedupe_buffer_size=buffer),
        lambda: [CleanableLog(TP, log, log.log_end_offset if high_watermark is None else high_watermark)],
        checkpoints,
        run_on_owner=lambda fn: fn(),
        clock=clock,
    )
