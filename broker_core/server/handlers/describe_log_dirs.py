"""DescribeLogDirs: this broker's log dirs and the size of every partition in them.

A null topic list asks for every partition. A dir that failed answers
KAFKA_STORAGE_ERROR with no partitions. The offset lag is 0: Spate keeps no
future replicas (a move between dirs of one broker), and for a current
replica Kafka reports how far its log end is below the high watermark,
which it never is. From v4 each dir carries its file system's total and
usable bytes (-1 when they cannot be read).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from broker_core.server.context import BrokerContext
from broker_core.storage.local_log import LocalLog
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.describe_log_dirs import DescribeLogDirsResponse
from spate.structs import TopicPartition, group_by_topic

R = DescribeLogDirsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    wanted = request.body.topics
    selected = None if wanted is None else {TopicPartition(t.topic, p) for t in wanted for p in t.partitions}
    log_manager = ctx.replicas.log_manager
    logs = {tp: log for tp, log in log_manager.all_logs().items() if selected is None or tp in selected}
    results = [_dir(log_dir, logs, log_manager.failures.is_offline(log_dir)) for log_dir in log_manager.log_dirs]
    return R(throttle_time_ms=0, error_code=ErrorCode.NONE, results=results)


def _dir(log_dir: Path, logs: dict[TopicPartition, LocalLog], offline: bool) -> Any:
    if offline:
        return R.DescribeLogDirsResult(error_code=ErrorCode.KAFKA_STORAGE_ERROR, log_dir=str(log_dir))
    here = sorted(tp for tp, log in logs.items() if log.directory.parent == log_dir)
    by_topic = group_by_topic(here, value=lambda tp: R.DescribeLogDirsPartition(
        partition_index=tp.partition, partition_size=_size(logs[tp]), offset_lag=0, is_future_key=False))
    total, usable = _disk_usage(log_dir)
    return R.DescribeLogDirsResult(
        error_code=ErrorCode.NONE,
        log_dir=str(log_dir),
        topics=[R.DescribeLogDirsTopic(name=name, partitions=partitions) for name, partitions in by_topic.items()],
        total_bytes=total,
        usable_bytes=usable,
    )


def _size(log: LocalLog) -> int:
    try:
        return log.size_in_bytes
    except Exception:  # noqa: BLE001 - a log closed or deleted meanwhile has nothing to report
        return 0


def _disk_usage(log_dir: Path) -> tuple[int, int]:
    try:
        usage = shutil.disk_usage(log_dir)
    except OSError:
        return -1, -1
    return usage.total, usage.free
