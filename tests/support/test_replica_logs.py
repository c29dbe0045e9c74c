"""Comparing a partition's replicas on disk: agreeing logs give nothing, every kind of divergence is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.storage.config import LogConfig
from broker_core.storage.local_log import LocalLog
from broker_core.storage.unified_log import UnifiedLog
from spate.records import Record, build_batch
from tests.support.faults.replica_logs import compare_replicas, read_replica_log


class Clock:
    now = 1_700_000_000_000

    def __call__(self) -> int:
        return self.now


def open_log(directory: Path, **config: object) -> UnifiedLog:
    directory.parent.mkdir(parents=True, exist_ok=True)
    clock = Clock()
    return UnifiedLog(LocalLog.open(directory, LogConfig(**config), clock=clock), clock=clock,
                      producer_id_expiration_ms=86_400_000)


def batch(seq: int, count: int = 2, value: bytes = b"v") -> bytes:
    records = [Record(offset=i, timestamp=1_000 + i, key=None, value=value + b"%d" % i) for i in range(count)]
    return build_batch(records, producer_id=7, producer_epoch=0, base_sequence=seq)


def replicate(leader: UnifiedLog, follower: UnifiedLog) -> None:
    """What a follower's fetches do: the leader's batches from the follower's end, a segment at a time."""
    while follower.log_end_offset < leader.log_end_offset:
        follower.append_as_follower(leader.read(follower.log_end_offset, 1 << 20).read_bytes())


@pytest.fixture
def logs(tmp_path: Path) -> dict[int, UnifiedLog]:
    # Small segments: the batches spread over several segment files.
    opened = {broker_id: open_log(tmp_path / f"broker-{broker_id}" / "orders-0", segment_bytes=1024)
              for broker_id in (1, 2, 3)}
    yield opened
    for log in opened.values():
        log.close()


def dirs(logs: dict[int, UnifiedLog]) -> dict[int, Path]:
    for log in logs.values():
        log.flush()
    return {broker_id: log.directory for broker_id, log in logs.items()}


def fill(logs: dict[int, UnifiedLog], batches: int = 20) -> None:
    leader = logs[1]
    for i in range(batches):
        leader.append_as_leader(batch(2 * i), leader_epoch=1)
    for follower in (2, 3):
        replicate(leader, logs[follower])


def test_replicas_holding_the_leaders_batches_agree(logs) -> None:
    fill(logs)
    assert len(list(logs[1].directory.glob("*.log"))) > 1
    assert compare_replicas(dirs(logs), high_watermark=40) == []
    read = read_replica_log(logs[2].directory)
    assert read.unreadable is None and [b.base_offset for b in read.batches] == list(range(0, 40, 2))


def test_a_replica_missing_batches_below_the_high_watermark_is_named_but_a_short_tail_above_is_not(logs) -> None:
    fill(logs)
    logs[3].truncate_to(30)
    assert compare_replicas(dirs(logs), high_watermark=30) == []
    differences = compare_replicas(dirs(logs), high_watermark=34)
    assert [(d.base_offset, d.kind) for d in differences] == [(30, "missing"), (32, "missing")]
    assert "brokers [3] have no batch here" in differences[0].detail


def test_a_replica_with_other_bytes_at_the_same_offsets_differs(logs) -> None:
    fill(logs, batches=5)
    logs[2].truncate_to(6)
    logs[2].append_as_leader(batch(6, value=b"x"), leader_epoch=2)  # a deposed leader's own write
    logs[2].append_as_leader(batch(8), leader_epoch=2)
    differences = compare_replicas(dirs(logs), high_watermark=10)
    assert [(d.base_offset, d.kind) for d in differences] == [(6, "differs"), (8, "differs")]
    assert "brokers [1, 3]" in differences[0].detail and "brokers [2]" in differences[0].detail
    assert "leader epoch 2" in differences[1].detail and "first differing byte" in differences[0].detail


def test_a_corrupt_batch_below_the_high_watermark_makes_the_rest_unreadable(logs) -> None:
    fill(logs, batches=5)
    directories = dirs(logs)
    (segment,) = sorted(directories[3].glob("*.log"))[:1]
    data = bytearray(segment.read_bytes())
    data[-1] ^= 0xFF  # the last batch of the first segment fails its CRC
    segment.write_bytes(bytes(data))
    differences = compare_replicas(directories, high_watermark=10)
    assert differences[0].kind == "unreadable" and "broker 3" in differences[0].detail
    assert all(d.kind == "missing" for d in differences[1:]) and differences[1:]


def test_batches_before_every_replicas_first_offset_are_not_compared(logs) -> None:
    fill(logs, batches=10)
    logs[3].truncate_fully_and_start_at(20)  # a replica that joined after the leader deleted up to 20
    assert compare_replicas(dirs(logs), high_watermark=20) == []
    logs[1].append_as_leader(batch(20), leader_epoch=1)
    for follower in (2, 3):
        replicate(logs[1], logs[follower])
    assert compare_replicas(dirs(logs), high_watermark=22) == []
    assert [d.base_offset for d in compare_replicas(dirs(logs), high_watermark=22, start_offset=0)][:2] == [0, 2]
