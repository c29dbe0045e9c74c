"""A log dir that fails I/O goes offline alone: the first error reports it once, the other dirs carry on."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from broker_core.storage.errors import LogDirError
from broker_core.storage.files import TopicPartition
from broker_core.storage.log_dir_failures import LogDirFailureChannel
from broker_core.storage.log_manager import LogManager
from tests.broker.storage.batch_factory import FakeClock, append_batches, small_config

CONFIG = small_config(segment_bytes=500)
KAFKA_STORAGE_ERROR = 56


def fail(log_dir: Path) -> None:
    """The disk under ``log_dir`` is gone: nothing new can be created in it (open files still work)."""
    log_dir.rename(log_dir.with_name(log_dir.name + ".gone"))
    log_dir.write_text("")


@pytest.fixture
def dirs(tmp_path: Path) -> list[Path]:
    return [tmp_path / "d1", tmp_path / "d2"]


def test_the_channel_finds_the_log_dir_of_a_path_and_reports_each_dir_once(dirs: list[Path]):
    failed: list[Path] = []
    channel = LogDirFailureChannel(dirs, on_failure=failed.append)
    assert channel.log_dir_of(dirs[1] / "orders-0" / "00000000000000000000.log") == dirs[1]
    assert channel.log_dir_of(dirs[0].parent / "elsewhere") is None
    channel.report(dirs[0] / "orders-0", OSError("EIO"))
    channel.report(dirs[0] / "orders-1", OSError("EIO"))
    channel.report(dirs[0].parent / "elsewhere", OSError("EIO"))
    assert failed == [dirs[0]]
    assert (channel.offline_dirs, channel.live_dirs) == ([dirs[0]], [dirs[1]])


def test_an_io_error_in_a_log_takes_its_dir_offline_and_answers_kafka_storage_error(dirs, clock: FakeClock):
    failed: list[Path] = []
    manager = LogManager(dirs, CONFIG, clock=clock, failures=LogDirFailureChannel(dirs, on_failure=failed.append))
    broken = manager.get_or_create_log("orders", 0)
    healthy = manager.get_or_create_log("orders", 1)
    assert {broken.directory.parent, healthy.directory.parent} == set(dirs)
    append_batches(broken, 2)
    fail(broken.directory.parent)
    with pytest.raises(LogDirError) as caught:
        broken.roll()
    assert caught.value.error_code == KAFKA_STORAGE_ERROR
    assert failed == [broken.directory.parent]
    append_batches(healthy, 3)
    healthy.roll()
    assert healthy.number_of_segments == 2


def test_taking_a_dir_offline_drops_its_logs_and_later_work_skips_it(dirs, clock: FakeClock):
    manager = LogManager(dirs, CONFIG, clock=clock)
    broken, healthy = manager.get_or_create_log("orders", 0), manager.get_or_create_log("orders", 1)
    append_batches(broken, 2)
    append_batches(healthy, 2)
    fail(dirs[0])
    manager.failures.report(dirs[0], OSError("EIO"))
    assert manager.take_offline(dirs[0]) == [TopicPartition("orders", 0)]
    assert set(manager.all_logs()) == {TopicPartition("orders", 1)}
    manager.flush_dirty()
    manager.checkpoint()
    manager.shutdown()
    assert (dirs[1] / ".kafka_cleanshutdown").exists()
    assert dirs[0].is_file() and dirs[0].read_text() == ""  # nothing was written where the disk failed


def test_a_log_that_should_exist_is_not_created_elsewhere_while_a_dir_is_offline(dirs, clock: FakeClock):
    manager = LogManager(dirs, CONFIG, clock=clock)
    manager.failures.report(dirs[0], OSError("EIO"))
    with pytest.raises(LogDirError, match="orders-0") as caught:
        manager.get_or_create_log("orders", 0, is_new=False)
    assert caught.value.error_code == KAFKA_STORAGE_ERROR
    assert manager.get_or_create_log("orders", 0, is_new=True).directory.parent == dirs[1]


def test_a_dir_unusable_at_start_is_offline_while_the_others_load(dirs, clock: FakeClock):
    first = LogManager(dirs, CONFIG, clock=clock)
    kept = first.get_or_create_log("kept", 0)
    lost = first.get_or_create_log("lost", 0)
    append_batches(kept, 3)
    first.shutdown()
    fail(lost.directory.parent)
    second = LogManager(dirs, CONFIG, clock=clock)
    assert second.failures.offline_dirs == [lost.directory.parent]
    assert set(second.all_logs()) == {TopicPartition("kept", 0)}
    assert second.get_log("kept", 0).log_end_offset == 6


def test_with_every_dir_unusable_the_manager_does_not_start(dirs, clock: FakeClock):
    for log_dir in dirs:
        log_dir.parent.mkdir(parents=True, exist_ok=True)
        log_dir.write_text("")
    with pytest.raises(LogDirError, match="not a directory"):
        LogManager(dirs, CONFIG, clock=clock)


def test_running_out_of_descriptors_fails_the_operation_but_not_the_log_dir(dirs: list[Path]):
    failed: list[Path] = []
    channel = LogDirFailureChannel(dirs, on_failure=failed.append)
    wrapped = LogDirError(dirs[0] / "orders-0", "cannot load the log")
    wrapped.__cause__ = OSError(errno.EMFILE, "Too many open files")
    channel.report(dirs[0] / "orders-0", wrapped)
    channel.report(dirs[0] / "orders-1", OSError(errno.ENFILE, "File table overflow"))
    assert (failed, channel.offline_dirs) == ([], [])
    channel.report(dirs[0] / "orders-0", OSError(errno.EIO, "Input/output error"))
    assert failed == [dirs[0]]


def test_a_new_log_that_cannot_be_opened_leaves_no_directory_and_the_dir_online(dirs, clock: FakeClock, monkeypatch):
    manager = LogManager(dirs, CONFIG, clock=clock)

    def out_of_descriptors(directory: Path, *args, **kwargs):
        directory.mkdir(parents=True)  # as far as a real open gets before its first segment file
        raise LogDirError(directory, "cannot load the log") from OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr("broker_core.storage.log_manager.LocalLog.open", out_of_descriptors)
    with pytest.raises(LogDirError):
        manager.get_or_create_log("orders", 0)
    assert [d for d in dirs if (d / "orders-0").exists()] == []
    assert manager.failures.offline_dirs == []
