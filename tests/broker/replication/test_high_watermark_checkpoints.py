"""High watermarks survive restarts through each log dir's replication-offset-checkpoint."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from broker_core.replication.high_watermark_checkpoints import HighWatermarkCheckpoints
from broker_core.storage.files import REPLICATION_OFFSET_CHECKPOINT
from spate.structs import TopicPartition

A, B = TopicPartition("orders", 0), TopicPartition("orders", 1)


def test_a_reopened_partition_starts_from_its_checkpointed_high_watermark_capped_by_its_log(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for log_dir in (one, two):
        log_dir.mkdir()
    HighWatermarkCheckpoints([one, two]).write([(one / "orders-0", A, 40), (two / "orders-1", B, 7)])
    assert (one / REPLICATION_OFFSET_CHECKPOINT).read_text() == "0\n1\norders 0 40\n"
    reopened = HighWatermarkCheckpoints([one, two])
    assert reopened.initial(A, log_end_offset=100) == 40
    assert reopened.initial(A, log_end_offset=25) == 25
    assert reopened.initial(B, log_end_offset=100) == 7


def test_a_partition_never_checkpointed_starts_at_zero(tmp_path: Path) -> None:
    assert HighWatermarkCheckpoints([tmp_path]).initial(A, log_end_offset=10) == 0


def test_an_unreadable_checkpoint_is_reported_and_treated_as_empty(tmp_path: Path, caplog) -> None:
    (tmp_path / REPLICATION_OFFSET_CHECKPOINT).write_text("0\n2\norders 0 x\n")
    checkpoints = HighWatermarkCheckpoints([tmp_path])
    assert checkpoints.initial(A, log_end_offset=10) == 0
    assert "ignoring the high watermarks" in caplog.text


def test_a_rewrite_drops_partitions_no_longer_hosted(tmp_path: Path) -> None:
    checkpoints = HighWatermarkCheckpoints([tmp_path])
    checkpoints.write([(tmp_path / "orders-0", A, 3), (tmp_path / "orders-1", B, 4)])
    checkpoints.write([(tmp_path / "orders-1", B, 5)])
    assert HighWatermarkCheckpoints([tmp_path]).initial(A, 10) == 0
    assert HighWatermarkCheckpoints([tmp_path]).initial(B, 10) == 5


def test_writers_on_several_threads_take_turns_and_the_last_write_stands(tmp_path: Path) -> None:
    checkpoints = HighWatermarkCheckpoints([tmp_path])
    writes = [[(tmp_path / "orders-0", A, n)] for n in range(40)]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(checkpoints.write, writes[:-1]))
    checkpoints.write(writes[-1])
    # Interleaved writers would leave a torn or mixed file, or fail on each other's temporary file.
    assert (tmp_path / REPLICATION_OFFSET_CHECKPOINT).read_text() == "0\n1\norders 0 39\n"
