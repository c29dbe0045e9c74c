"""A partition leader's own ZooKeeper writes: its ISR in the partition state, and the notification saying so.

Kafka's ZooKeeper-era leaders change their ISR themselves (``Partition.updateIsr``
through ``ReplicationUtils.updateLeaderAndIsr``): the leader rewrites the
partition's state znode with the same leader, leader epoch and controller
epoch and the new ISR, conditionally on the znode version it last knew (the
partition epoch). Then it creates a sequential
``/isr_change_notification/isr_change_<seq>`` naming the partitions, so the
controller re-reads them and tells every broker.

When the condition fails, :meth:`PartitionStateZk.update_isr` reads the znode
back and returns what it holds, so the leader can tell whether it was
deposed (a newer leader epoch) or merely out of date. A write whose answer
was lost and that is tried again is recognised by its content: if the znode
holds exactly what was written, one version on, the first try landed (Kafka
checks the same way).

Blocking calls on the session; the broker makes them from a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from kazoo.exceptions import BadVersionError, NoNodeError

from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.znodes import (
    IsrChangeNotificationsZNode,
    IsrChangeNotificationZNode,
    LeaderIsrAndControllerEpoch,
    LogDirEventNotificationsZNode,
    LogDirEventNotificationZNode,
    TopicPartitionStateZNode,
)
from spate.structs import TopicPartition

NO_VERSION = -1


@dataclass(frozen=True, slots=True)
class IsrUpdate:
    """The outcome of a leader's conditional ISR write.

    ``zk_version`` is the state znode's new version when ``written``; when
    not, the version found (-1: the znode is gone) and ``current`` what it
    holds.
    """

    written: bool
    zk_version: int
    current: LeaderIsrAndControllerEpoch | None = None


class PartitionStateZk:
    def __init__(self, session: ZkSession) -> None:
        self._session = session

    def update_isr(
        self, tp: TopicPartition, state: LeaderIsrAndControllerEpoch, expected_version: int
    ) -> IsrUpdate:
        """Write ``state`` if the state znode is still at ``expected_version``.

        Raises ``ZooKeeperUnavailableError`` when ZooKeeper does not answer
        in time and ``ZNodeDecodeError`` when the znode read back is malformed.
        """
        path = TopicPartitionStateZNode.path(tp.topic, tp.partition)
        data = TopicPartitionStateZNode.encode(state)

        def attempt(retrying: bool) -> IsrUpdate:
            try:
                return IsrUpdate(True, self._session.set(path, data, version=expected_version).version)
            except NoNodeError:
                return IsrUpdate(False, NO_VERSION)
            except BadVersionError:
                found = self.read_state(tp)
                if found is None:
                    return IsrUpdate(False, NO_VERSION)
                current, version = found
                if retrying and current == state and version == expected_version + 1:
                    return IsrUpdate(True, version)
                return IsrUpdate(False, version, current)

        return self._session.retry_write(attempt)

    def read_state(self, tp: TopicPartition) -> tuple[LeaderIsrAndControllerEpoch, int] | None:
        """The partition state znode and its version; None when it does not exist."""
        try:
            data, stat = self._session.get(TopicPartitionStateZNode.path(tp.topic, tp.partition))
        except NoNodeError:
            return None
        return TopicPartitionStateZNode.decode(tp.topic, tp.partition, data), stat.version

    def notify_isr_change(self, partitions: Iterable[TopicPartition]) -> str:
        """Create ``/isr_change_notification/isr_change_<seq>`` naming ``partitions``; returns its path.

        A notification created twice (a retried create whose first answer
        was lost) only makes the controller read the partitions twice.
        """
        return self._notify(IsrChangeNotificationZNode.create_path(), IsrChangeNotificationsZNode.path(),
                            IsrChangeNotificationZNode.encode(partitions))

    def notify_log_dir_failure(self, broker_id: int) -> str:
        """Create ``/log_dir_event_notification/log_dir_event_<seq>`` naming ``broker_id``; returns its path.

        Created twice, it only makes the controller ask the broker twice which replicas it still holds.
        """
        return self._notify(LogDirEventNotificationZNode.create_path(), LogDirEventNotificationsZNode.path(),
                            LogDirEventNotificationZNode.encode(broker_id))

    def _notify(self, create_path: str, parent: str, data: bytes) -> str:
        def attempt(retrying: bool) -> str:
            try:
                return self._session.create(create_path, data, sequence=True)
            except NoNodeError:
                # The controller creates the parent when it starts; a broker may come first.
                self._session.ensure_path(parent)
                return self._session.create(create_path, data, sequence=True)

        return self._session.retry_write(attempt)
