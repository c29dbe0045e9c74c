"""What the group member the coordinator names leader does: assign partitions, and watch for topic changes.

The leader runs the partition assignor the group chose over every member's
subscription (Kafka's ConsumerProtocol, see ``consumer_protocol.py``) with
the partition counts of every subscribed topic, and sends the result with
its SyncGroup. It then keeps those topics in its metadata and rejoins (so
the group rebalances) when one of them appears, disappears or gains
partitions.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Iterable

from spate.client.consumer.assignors import PartitionAssignor
from spate.client.consumer.consumer_protocol import Subscription, decode_subscription, encode_assignment
from spate.client.net.network_client import NetworkClient
from spate.protocol import ErrorCode, KafkaError
from spate.protocol.errors import ProtocolDecodeError
from spate.protocol.messages.sync_group import SyncGroupRequest

log = logging.getLogger(__name__)


class GroupLeader:
    def __init__(
        self,
        network: NetworkClient,
        group_id: str,
        assignors: tuple[PartitionAssignor, ...],
        *,
        request_timeout: float,
        clock: Callable[[], float],
    ) -> None:
        self._network = network
        self.group_id = group_id
        self._assignors = assignors
        self._request_timeout = request_timeout
        self._clock = clock
        # The leader's view when it assigned: partition counts of every group topic.
        self.assigned_counts: dict[str, int | None] = {}
        self._metadata_version_seen = -1

    def assign(self, protocol: str, members: Iterable[Any], generation_id: int, node: int | None) -> list[Any]:
        """The SyncGroup assignments for ``members`` (JoinGroup's member list), by the assignor ``protocol``.

        Partition counts come from a metadata request to ``node`` (the coordinator's connection).
        """
        assignor = next((a for a in self._assignors if a.name == protocol), None)
        if assignor is None:
            raise KafkaError(
                ErrorCode.INCONSISTENT_GROUP_PROTOCOL, f"the group chose assignor {protocol!r}, unknown here"
            )
        subscriptions = {member.member_id: self._subscription(member) for member in members}
        topics = sorted({topic for sub in subscriptions.values() for topic in sub.topics})
        self._network.metadata.add_topics(topics)
        counts: dict[str, int | None] = {}
        if topics:
            snapshot = self._network.fetch_metadata(topics, deadline=self._clock() + self._request_timeout, node=node)
            counts = {topic: snapshot.partition_count(topic) for topic in topics}
        self.assigned_counts = counts
        self._metadata_version_seen = self._network.metadata.version
        result = assignor.assign({t: c for t, c in counts.items() if c}, subscriptions)
        log.info("group %r generation %d: leader assigned with %s: %s", self.group_id, generation_id,
                 assignor.name, {m: [str(tp) for tp in tps] for m, tps in result.items()})
        return [
            SyncGroupRequest.SyncGroupRequestAssignment(member_id=member, assignment=encode_assignment(tps))
            for member, tps in result.items()
        ]

    def _subscription(self, member: Any) -> Subscription:
        try:
            return decode_subscription(bytes(member.metadata))
        except ProtocolDecodeError as exc:
            log.warning("member %s of group %r sent an unreadable subscription (%s); it gets nothing",
                        member.member_id, self.group_id, exc)
            return Subscription(())

    def topics_changed(self) -> bool:
        """Whether a group topic appeared, disappeared or gained partitions since the assignment."""
        metadata = self._network.metadata
        if not self.assigned_counts or metadata.version == self._metadata_version_seen:
            return False
        self._metadata_version_seen = metadata.version
        snapshot = metadata.snapshot
        for topic, count in self.assigned_counts.items():
            now_count = snapshot.partition_count(topic)
            if now_count != count and (now_count is not None or topic in snapshot.topic_errors):
                log.info("group %r: topic %s now has %s partitions (assigned with %s); rebalancing",
                         self.group_id, topic, now_count, count)
                return True
        return False

    def forget(self) -> None:
        self.assigned_counts = {}
