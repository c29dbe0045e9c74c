"""Kafka's LogDirFailureHandler: what the broker does once a log dir has failed I/O.

The log manager reports the failure from inside the log operation that hit
it; the broker hands it to :meth:`LogDirFailureHandler.handle` on the event
loop's next turn, once that operation has failed. The dir's partitions go
offline here (``ReplicaManager.handle_log_dir_failure``); a cluster broker
then tells the controller, which moves their leadership to other replicas.
With no log dir left the broker stops, as Kafka halts it.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Callable

from broker_core.server.broker_scheduler import BrokerScheduler
from broker_core.server.cluster_membership import ClusterMembership
from broker_core.server.replica_manager import ReplicaManager
from broker_core.storage.errors import LogDirError

logger = logging.getLogger(__name__)


class LogDirFailureHandler:
    def __init__(self, *, replicas: ReplicaManager, node_id: int, membership: ClusterMembership | None,
                 scheduler: BrokerScheduler, stop_broker: Callable[[BaseException], None]) -> None:
        """``membership`` is None for an embedded broker; ``stop_broker`` stops it with what failed."""
        self._replicas = replicas
        self._node_id = node_id
        self._membership = membership
        self._scheduler = scheduler
        self._stop_broker = stop_broker

    def handle(self, log_dir: Path) -> None:
        """On the event loop: ``log_dir`` failed."""
        gone = self._replicas.handle_log_dir_failure(log_dir)
        logger.error("log dir %s failed: %d partition(s) offline on broker %d: %s", log_dir, len(gone),
                     self._node_id, ", ".join(f"{topic}-{index}" for topic, index in gone) or "none")
        if not self._replicas.log_manager.failures.live_dirs:
            self._stop_broker(LogDirError(log_dir, "every log dir of this broker has failed"))
        elif self._membership is not None:
            # Blocking ZooKeeper writes: off the loop.
            self._scheduler.spawn(asyncio.to_thread(self._membership.report_log_dir_failure), name="log-dir-event")
