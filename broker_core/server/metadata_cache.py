"""The cluster as this broker last heard it from the controller (Kafka's ``ZkMetadataCache``).

Fed only by UpdateMetadata: live brokers (each with every endpoint it
advertises, and its rack), the controller id, and partition states by topic
with topic ids. An update replaces the live brokers and the
controller id and merges its partition states into what is cached, so the
controller may send only what changed; a partition state whose leader is
:data:`LEADER_DURING_DELETE` (-2) removes that partition, and a topic left
without partitions goes with it. Requests the cache answers (Metadata,
DescribeCluster, FindCoordinator, where a partition lives) see one
consistent snapshot: an update builds new maps and swaps them in.

Brokers are named by listener, as Kafka does: the cache itself reaches them
through the inter-broker listener (``listener_name``; a broker without one
through its PLAINTEXT endpoint), which is what this broker's own requests to
other brokers use (:meth:`MetadataCache.inter_broker_endpoint`), while the
clients of each listener see the endpoints of that listener
(:meth:`MetadataCache.for_listener`).

Admin requests that must answer "once applied" wait on the cache
(:meth:`MetadataCache.wait_until`): each update re-checks their conditions.
Everything here runs on the broker's event loop.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any, Callable, Iterable

from broker_core.cluster.endpoint import PLAINTEXT, SECURITY_PROTOCOL_NAMES, EndPoint
from broker_core.cluster.errors import UnknownTopicError
from broker_core.cluster.metadata_store import BrokerRegistration
from broker_core.server.metadata_view import (
    NO_CONTROLLER,
    ListenerMetadataView,
    MetadataView,
    PartitionMetadata,
    TopicMetadata,
)
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

LEADER_DURING_DELETE = -2
_ZERO_UUID = uuid.UUID(int=0)


class MetadataCache:
    """A :class:`~broker_core.server.metadata_view.MetadataView` kept up to date by UpdateMetadata."""

    def __init__(self, *, cluster_id: str, listener_name: str) -> None:
        """``listener_name``: the inter-broker listener, through which the cache's own answers reach brokers."""
        self._cluster_id = cluster_id
        self._listener_name = listener_name
        self._controller_id = NO_CONTROLLER
        # Every live broker with all its endpoints, and those reachable through the inter-broker listener.
        self._registered: dict[int, BrokerRegistration] = {}
        self._brokers: dict[int, BrokerRegistration] = {}
        self._partitions: dict[str, dict[int, PartitionMetadata]] = {}
        self._topic_ids: dict[str, uuid.UUID] = {}
        # One immutable TopicMetadata per topic, made when first asked for and dropped when an update touches
        # the topic: answers built from a snapshot stay valid exactly as long as it is handed out.
        self._snapshots: dict[str, TopicMetadata] = {}
        self._waiters: list[tuple[Callable[[], bool], asyncio.Future[None]]] = []

    # --- MetadataView ----------------------------------------------------------------------

    def cluster_id(self) -> str:
        return self._cluster_id

    def controller_id(self) -> int:
        return self._controller_id

    def alive_brokers(self) -> list[BrokerRegistration]:
        return [self._brokers[broker_id] for broker_id in sorted(self._brokers)]

    def alive_broker(self, broker_id: int) -> BrokerRegistration | None:
        return self._brokers.get(broker_id)

    def is_alive(self, broker_id: int) -> bool:
        return broker_id in self._registered

    def topic_names(self) -> list[str]:
        return sorted(self._partitions)

    def get_topic(self, name: str) -> TopicMetadata:
        snapshot = self._snapshots.get(name)
        if snapshot is None:
            partitions = self._partitions.get(name)
            if partitions is None:
                raise UnknownTopicError(name)
            snapshot = self._snapshots[name] = TopicMetadata(name, self._topic_ids.get(name, _ZERO_UUID), partitions)
        return snapshot

    def partition_count(self, name: str) -> int | None:
        partitions = self._partitions.get(name)
        return len(partitions) if partitions is not None else None

    def contains(self, tp: TopicPartition) -> bool:
        return tp.partition in self._partitions.get(tp.topic, {})

    # --- listeners -------------------------------------------------------------------------

    def for_listener(self, listener_name: str) -> MetadataView:
        """The cluster as the clients of ``listener_name`` see it: brokers at their endpoints on that listener."""
        return ListenerMetadataView(self, lambda: self._registered, listener_name)

    def inter_broker_endpoint(self, broker_id: int) -> EndPoint | None:
        """Where this broker reaches live broker ``broker_id`` (replica fetchers, transaction markers, the
        controller): its inter-broker listener's endpoint, else its PLAINTEXT one; None when not alive."""
        registration = self._registered.get(broker_id)
        if registration is None:
            return None
        return registration.endpoint(self._listener_name) or _plaintext_endpoint(registration)

    # --- updates ---------------------------------------------------------------------------

    def update_metadata(self, body: Any) -> list[TopicPartition]:
        """Apply one UpdateMetadata request (any version); returns the partitions it deleted."""
        registered = {}
        for broker in body.live_brokers:
            registration = _registration(broker)
            if registration is not None:
                registered[registration.broker_id] = registration
        self._registered = registered
        self._brokers = {}
        for broker_id, registration in registered.items():
            endpoint = self.inter_broker_endpoint(broker_id)
            if endpoint is None:
                logger.warning("broker %d has no endpoint for listener %s; leaving it out", broker_id,
                               self._listener_name)
                continue
            self._brokers[broker_id] = BrokerRegistration(
                broker_id, endpoint.host, endpoint.port, registration.rack, registration.endpoints
            )
        self._controller_id = body.controller_id if body.controller_id >= 0 else NO_CONTROLLER

        topic_ids = dict(self._topic_ids)
        touched = {topic.topic_name for topic in body.topic_states}
        for topic in body.topic_states:
            if topic.topic_id != _ZERO_UUID:
                topic_ids[topic.topic_name] = topic.topic_id
            else:
                topic_ids.pop(topic.topic_name, None)
        deleted: list[TopicPartition] = []
        states = list(_partition_states(body))
        if states:
            # Copy on write: the topics an update touches get new maps, the others keep theirs.
            partitions = dict(self._partitions)
            copied: set[str] = set()
            for topic, state in states:
                if topic not in copied:
                    copied.add(topic)
                    if topic in partitions:
                        partitions[topic] = dict(partitions[topic])
                tp = TopicPartition(topic, state.partition_index)
                if state.leader == LEADER_DURING_DELETE:
                    _remove(partitions, topic_ids, tp)
                    deleted.append(tp)
                else:
                    partitions.setdefault(topic, {})[state.partition_index] = _partition_metadata(state)
                    if tp in deleted:
                        deleted.remove(tp)
            self._partitions = partitions
            touched |= copied
        self._topic_ids = {topic: topic_id for topic, topic_id in topic_ids.items() if topic in self._partitions}
        for topic in touched:
            self._snapshots.pop(topic, None)
        logger.info(
            "metadata from controller %d: %d live broker(s), %d partition state(s), %d partition(s) deleted",
            body.controller_id, len(self._brokers), len(states) - len(deleted), len(deleted),
        )
        self._wake_waiters()
        return deleted

    # --- waiting for the cluster to catch up -----------------------------------------------

    async def wait_until(self, condition: Callable[[], bool], timeout_s: float) -> bool:
        """True as soon as ``condition()`` holds (checked now and after every update); False after
        ``timeout_s`` without it."""
        if condition():
            return True
        if timeout_s <= 0:
            return False
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (condition, future)
        self._waiters.append(entry)
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout_s)
            return True
        except asyncio.TimeoutError:
            return condition()
        finally:
            if entry in self._waiters:
                self._waiters.remove(entry)

    def _wake_waiters(self) -> None:
        for condition, future in list(self._waiters):
            if future.done():
                continue
            try:
                satisfied = condition()
            except Exception as exc:  # a broken condition fails its waiter, not the update
                future.set_exception(exc)
                continue
            if satisfied:
                future.set_result(None)


def _registration(broker: Any) -> BrokerRegistration | None:
    """A live broker of an UpdateMetadata request with every endpoint whose security protocol is known."""
    endpoints = list(broker.endpoints)
    if not endpoints:  # v0: one plaintext endpoint
        if not broker.v0_host:
            return None
        return BrokerRegistration(broker.id, broker.v0_host, broker.v0_port, broker.rack or None)
    known = []
    for endpoint in endpoints:
        protocol = SECURITY_PROTOCOL_NAMES.get(endpoint.security_protocol)
        if protocol is None:
            continue
        # Before v3 endpoints had no listener name: the protocol's name is the listener's (Kafka's rule).
        known.append(EndPoint(endpoint.listener or protocol, endpoint.host, endpoint.port, protocol))
    if not known:
        return None
    first = known[0]
    return BrokerRegistration(broker.id, first.host, first.port, broker.rack or None, tuple(known))


def _plaintext_endpoint(registration: BrokerRegistration) -> EndPoint | None:
    return next((e for e in registration.endpoints if e.security_protocol == PLAINTEXT), None)


def _partition_states(body: Any) -> Iterable[tuple[str, Any]]:
    """(topic, partition state) pairs of either layout: grouped by topic (v5+) or flat (v0-v4)."""
    for topic in body.topic_states:
        for state in topic.partition_states:
            yield topic.topic_name, state
    for state in body.ungrouped_partition_states:
        yield state.topic_name, state


def _partition_metadata(state: Any) -> PartitionMetadata:
    return PartitionMetadata(
        leader=state.leader,
        leader_epoch=state.leader_epoch,
        isr=tuple(state.isr),
        replicas=tuple(state.replicas),
        offline_replicas=tuple(state.offline_replicas),
        partition_epoch=state.zk_version,
    )


def _remove(partitions: dict[str, dict[int, PartitionMetadata]], topic_ids: dict[str, uuid.UUID],
            tp: TopicPartition) -> None:
    by_index = partitions.get(tp.topic)
    if by_index is None:
        return
    by_index.pop(tp.partition, None)
    if not by_index:
        del partitions[tp.topic]
        topic_ids.pop(tp.topic, None)
