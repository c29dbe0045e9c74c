"""ConsumerGroupHeartbeat: a consumer-group member (KIP-848) joins, reconciles, stays alive or leaves.

Topics travel as ids on the wire and as names inside the coordinator; owned
partitions of topics this broker no longer knows are dropped (the member
revokes them as the assignment no longer holds them). Reading a topic's id
builds its whole partition map, too costly on every heartbeat of a large
group, so the ids are looked up at most once a second (``TopicIdCache``): a
topic deleted and created again under the same name within that second is
announced with its old id until the next heartbeat.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Mapping

from broker_core.coordinator.group.consumer_group.consumer_group_log import TopicIds
from broker_core.coordinator.group.consumer_group.heartbeat_types import ConsumerHeartbeat, TopicsImage
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.topic_ids import topic_id_of, topic_names_by_id
from spate.protocol.connection import Request
from spate.protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatResponse
from spate.protocol.types import ZERO_UUID

R = ConsumerGroupHeartbeatResponse
TOPIC_IDS_MAX_AGE_S = 1.0


@dataclass
class TopicIdCache:
    view: Any
    read_at: float = float("-inf")
    by_id: dict[uuid.UUID, str] = field(default_factory=dict)
    by_name: dict[str, uuid.UUID] = field(default_factory=dict)

    def fresh(self) -> TopicIdCache:
        if time.monotonic() - self.read_at > TOPIC_IDS_MAX_AGE_S:
            self.by_id = topic_names_by_id(self.view)
            self.by_name = {name: topic_id for topic_id, name in self.by_id.items()}
            self.read_at = time.monotonic()
        return self

    def id_of(self, name: str) -> uuid.UUID:
        topic_id = self.by_name.get(name)
        return topic_id if topic_id is not None else topic_id_of(self.view, name)

    def as_topic_ids(self) -> TopicIds:
        """For the coordinator's records: unknown topics are None."""
        def id_of(name: str) -> uuid.UUID | None:
            topic_id = self.fresh().id_of(name)
            return None if topic_id == ZERO_UUID else topic_id
        return TopicIds(id_of=id_of, name_of=lambda topic_id: self.fresh().by_id.get(topic_id))


_CACHES: dict[int, TopicIdCache] = {}


def _topic_ids(ctx: BrokerContext) -> TopicIdCache:
    cache = _CACHES.get(id(ctx))
    if cache is None or cache.view is not ctx.metadata:
        cache = _CACHES[id(ctx)] = TopicIdCache(ctx.metadata)
    return cache.fresh()


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    owned = None
    ids = _topic_ids(ctx)
    if body.topic_partitions is not None:
        names = ids.by_id
        owned = {names[tp.topic_id]: frozenset(tp.partitions) for tp in body.topic_partitions
                 if tp.topic_id in names}
    heartbeat = ConsumerHeartbeat(
        group_id=body.group_id,
        member_id=body.member_id,
        member_epoch=body.member_epoch,
        instance_id=body.instance_id,
        rack_id=body.rack_id,
        rebalance_timeout_ms=body.rebalance_timeout_ms,
        subscribed_topic_names=None if body.subscribed_topic_names is None else tuple(body.subscribed_topic_names),
        subscribed_topic_regex=body.subscribed_topic_regex,
        server_assignor=body.server_assignor,
        owned=owned,
        client_id=request.header.client_id or "",
        client_host=f"/{request.client_host}" if request.client_host else "",
    )
    topics = TopicsImage(names=ctx.metadata.topic_names, partition_count=ctx.metadata.partition_count)
    result = ctx.group_coordinator.consumer_group_heartbeat(heartbeat, topics)
    return R(
        throttle_time_ms=0,
        error_code=result.error,
        error_message=result.message,
        member_id=result.member_id,
        member_epoch=result.member_epoch,
        heartbeat_interval_ms=result.heartbeat_interval_ms,
        assignment=None if result.assignment is None else R.Assignment(topic_partitions=_by_id(ids, result.assignment)),
    )


def _by_id(ids: TopicIdCache, assignment: Mapping[str, frozenset[int]]) -> list[Any]:
    topics = []
    for name, partitions in sorted(assignment.items()):
        topic_id: uuid.UUID = ids.id_of(name)
        topics.append(R.TopicPartitions(topic_id=topic_id, partitions=sorted(partitions)))
    return topics
