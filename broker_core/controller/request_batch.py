"""Collecting what each broker must be told, then telling it (Kafka's ControllerBrokerRequestBatch).

A state change touches many partitions; the controller adds each partition's
news to a batch and sends one request per broker and kind at the end, in the
order brokers must apply them: StopReplica, then LeaderAndIsr, then
UpdateMetadata (so the metadata a client reads never names a leader that
does not know it leads yet).

UpdateMetadata carries what the context holds when the batch is sent, so the
newest leaders go out even when several changes were batched.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from broker_core.cluster.endpoint import SECURITY_PROTOCOL_IDS
from broker_core.controller.channel_manager import ControllerChannelManager
from broker_core.controller.context import NO_LEADER, ControllerContext, LeaderAndIsr
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.leader_and_isr import TYPE_FULL, TYPE_INCREMENTAL, LeaderAndIsrRequest
from spate.protocol.messages.stop_replica import StopReplicaRequest
from spate.protocol.messages.update_metadata import UpdateMetadataRequest
from spate.protocol.types import ZERO_UUID
from spate.structs import TopicPartition, group_by_topic

logger = logging.getLogger(__name__)

LEADER_AND_ISR_VERSION = 5
UPDATE_METADATA_VERSION = 7
STOP_REPLICA_VERSION = 3
# UpdateMetadata's leader for a partition whose topic is being deleted (Kafka's LeaderDuringDelete).
LEADER_DURING_DELETE = -2

# (broker id, error code per partition named in the request)
StopReplicaCallback = Callable[[int, dict[TopicPartition, int]], None]
LeaderAndIsrCallback = Callable[[int, dict[TopicPartition, int]], None]


@dataclass(frozen=True, slots=True)
class _LeaderAndIsrEntry:
    leadership: LeaderAndIsr
    replicas: tuple[int, ...]
    is_new: bool


class ControllerRequestBatch:
    def __init__(self, context: ControllerContext, channel: ControllerChannelManager, controller_id: int) -> None:
        self._context = context
        self._channel = channel
        self._controller_id = controller_id
        self._leader_and_isr: dict[int, dict[TopicPartition, _LeaderAndIsrEntry]] = defaultdict(dict)
        self._stop_replica: dict[int, dict[TopicPartition, tuple[bool, int]]] = defaultdict(dict)
        self._metadata_brokers: set[int] = set()
        self._metadata_partitions: set[TopicPartition] = set()
        self._full_leader_and_isr: set[int] = set()

    def is_empty(self) -> bool:
        return not (self._leader_and_isr or self._stop_replica or self._metadata_brokers)

    def add_leader_and_isr(
        self, broker_ids: Iterable[int], tp: TopicPartition, leadership: LeaderAndIsr, *, is_new: bool = False
    ) -> None:
        """Tell the replicas of ``tp`` who leads it; every live broker also gets its new metadata."""
        replicas = self._context.replicas_of(tp)
        for broker_id in broker_ids:
            if broker_id >= 0:
                self._leader_and_isr[broker_id][tp] = _LeaderAndIsrEntry(leadership, replicas, is_new)
        self.add_update_metadata(self._context.live_or_shutting_down(), [tp])

    def mark_full(self, broker_id: int) -> None:
        """The LeaderAndIsr for ``broker_id`` lists every partition it hosts (controller failover, broker start)."""
        self._full_leader_and_isr.add(broker_id)

    def add_stop_replica(self, broker_id: int, tp: TopicPartition, *, delete: bool, leader_epoch: int = -1) -> None:
        entries = self._stop_replica[broker_id]
        previous = entries.get(tp)
        # A deletion request wins over a plain stop for the same partition.
        entries[tp] = (delete or (previous is not None and previous[0]), leader_epoch)

    def add_update_metadata(self, broker_ids: Iterable[int], partitions: Iterable[TopicPartition]) -> None:
        self._metadata_brokers.update(b for b in broker_ids if b >= 0)
        self._metadata_partitions.update(partitions)

    def send(self, epoch: int, *, on_stop_replica: StopReplicaCallback | None = None,
             on_leader_and_isr: LeaderAndIsrCallback | None = None) -> None:
        """Queue every collected request to its broker, then start a fresh batch."""
        try:
            for broker_id, entries in self._stop_replica.items():
                self._send_stop_replica(epoch, broker_id, entries, on_stop_replica)
            for broker_id, entries in self._leader_and_isr.items():
                self._send_leader_and_isr(epoch, broker_id, entries, on_leader_and_isr)
            if self._metadata_brokers:
                self._send_update_metadata(epoch)
        finally:
            self._leader_and_isr.clear()
            self._stop_replica.clear()
            self._metadata_brokers.clear()
            self._metadata_partitions.clear()
            self._full_leader_and_isr.clear()

    # --- building requests ---------------------------------------------------------------

    def _send_leader_and_isr(self, epoch: int, broker_id: int, entries: dict[TopicPartition, _LeaderAndIsrEntry],
                             on_response: LeaderAndIsrCallback | None) -> None:
        R = LeaderAndIsrRequest
        leaders = {entry.leadership.leader for entry in entries.values()}
        topic_states = [
            R.LeaderAndIsrTopicState(
                topic_name=topic,
                topic_id=self._context.topic_ids.get(topic) or ZERO_UUID,
                partition_states=[self._partition_state(tp, entries[tp]) for tp in partitions],
            )
            for topic, partitions in group_by_topic(sorted(entries)).items()
        ]
        live_leaders = [
            R.LeaderAndIsrLiveLeader(broker_id=b, host_name=reg.host, port=reg.port)
            for b, reg in sorted(self._context.live_brokers.items())
            if b in leaders
        ]
        body = R(
            controller_id=self._controller_id,
            controller_epoch=epoch,
            broker_epoch=self._context.broker_epochs.get(broker_id, -1),
            type=TYPE_FULL if broker_id in self._full_leader_and_isr else TYPE_INCREMENTAL,
            topic_states=topic_states,
            live_leaders=live_leaders,
        )
        logger.info(
            "controller: LeaderAndIsr to broker %d for %d partition(s) at controller epoch %d",
            broker_id, len(entries), epoch,
        )
        names = {topic_id: name for name, topic_id in self._context.topic_ids.items()}

        def answered(response: Any) -> None:
            _log_leader_and_isr_errors(broker_id, response)
            if on_response is None:
                return
            if response.error_code != ErrorCode.NONE:
                errors = {tp: response.error_code for tp in entries}
            else:
                errors = {TopicPartition(names[topic.topic_id], p.partition_index): p.error_code
                          for topic in response.topics if topic.topic_id in names for p in topic.partition_errors}
            on_response(broker_id, errors)

        self._channel.send(broker_id, ApiKey.LEADER_AND_ISR, LEADER_AND_ISR_VERSION, body, answered)

    @staticmethod
    def _partition_state(tp: TopicPartition, entry: _LeaderAndIsrEntry) -> Any:
        leadership = entry.leadership
        return LeaderAndIsrRequest.LeaderAndIsrPartitionState(
            partition_index=tp.partition,
            controller_epoch=leadership.controller_epoch,
            leader=leadership.leader,
            leader_epoch=leadership.leader_epoch,
            isr=list(leadership.isr),
            partition_epoch=leadership.zk_version,
            replicas=list(entry.replicas),
            adding_replicas=[],
            removing_replicas=[],
            is_new=entry.is_new,
        )

    def _send_update_metadata(self, epoch: int) -> None:
        R = UpdateMetadataRequest
        context = self._context
        states = []
        for tp in sorted(self._metadata_partitions):
            leadership = context.leadership.get(tp)
            if leadership is None and not context.is_deleting(tp.topic):
                continue
            states.append((tp, self._metadata_state(tp, leadership)))
        topic_states = [
            R.UpdateMetadataTopicState(
                topic_name=topic,
                topic_id=context.topic_ids.get(topic) or ZERO_UUID,
                partition_states=[state for _, state in entries],
            )
            for topic, entries in group_by_topic(states, key=lambda entry: entry[0]).items()
        ]
        # Every endpoint of every broker: each broker answers its clients with their listener's endpoints.
        brokers = [
            R.UpdateMetadataBroker(
                id=broker_id,
                endpoints=[
                    R.UpdateMetadataEndpoint(port=e.port, host=e.host, listener=e.listener_name,
                                             security_protocol=SECURITY_PROTOCOL_IDS[e.security_protocol])
                    for e in reg.endpoints
                    if e.security_protocol in SECURITY_PROTOCOL_IDS  # a protocol Kafka has no number for: unusable
                ],
                rack=reg.rack,
            )
            for broker_id, reg in sorted(context.live_brokers.items())
        ]
        for broker_id in sorted(self._metadata_brokers):
            body = R(
                controller_id=self._controller_id,
                controller_epoch=epoch,
                broker_epoch=context.broker_epochs.get(broker_id, -1),
                topic_states=topic_states,
                live_brokers=brokers,
            )
            self._channel.send(broker_id, ApiKey.UPDATE_METADATA, UPDATE_METADATA_VERSION, body,
                               lambda response, b=broker_id: _log_error(b, "UpdateMetadata", response))

    def _metadata_state(self, tp: TopicPartition, leadership: LeaderAndIsr | None) -> Any:
        context = self._context
        replicas = context.replicas_of(tp)
        deleting = context.is_deleting(tp.topic)
        return UpdateMetadataRequest.UpdateMetadataPartitionState(
            partition_index=tp.partition,
            controller_epoch=leadership.controller_epoch if leadership else context.epoch,
            leader=LEADER_DURING_DELETE if deleting else self._live_leader(leadership),
            leader_epoch=leadership.leader_epoch if leadership else -1,
            isr=list(leadership.isr) if leadership else [],
            zk_version=leadership.zk_version if leadership else -1,
            replicas=list(replicas),
            offline_replicas=[r for r in replicas if not context.is_replica_online(r, tp)],
        )

    def _live_leader(self, leadership: LeaderAndIsr | None) -> int:
        """The leader brokers should route to: none while the recorded leader's broker is down."""
        if leadership is None or leadership.leader not in self._context.live_brokers:
            return NO_LEADER
        return leadership.leader

    def _send_stop_replica(
        self,
        epoch: int,
        broker_id: int,
        entries: dict[TopicPartition, tuple[bool, int]],
        on_response: StopReplicaCallback | None,
    ) -> None:
        R = StopReplicaRequest
        topic_states = [
            R.StopReplicaTopicState(
                topic_name=topic,
                partition_states=[
                    R.StopReplicaPartitionState(
                        partition_index=tp.partition, leader_epoch=entries[tp][1], delete_partition=entries[tp][0]
                    )
                    for tp in partitions
                ],
            )
            for topic, partitions in group_by_topic(sorted(entries)).items()
        ]
        body = R(
            controller_id=self._controller_id,
            controller_epoch=epoch,
            broker_epoch=self._context.broker_epochs.get(broker_id, -1),
            topic_states=topic_states,
        )

        def answered(response: Any) -> None:
            errors = {
                TopicPartition(p.topic_name, p.partition_index): p.error_code for p in response.partition_errors
            }
            if response.error_code != ErrorCode.NONE:
                errors = {tp: response.error_code for tp in entries}
            if on_response is not None:
                on_response(broker_id, {tp: errors.get(tp, ErrorCode.NONE) for tp in entries})

        self._channel.send(broker_id, ApiKey.STOP_REPLICA, STOP_REPLICA_VERSION, body, answered)


def _log_error(broker_id: int, what: str, response: Any) -> None:
    if response.error_code != ErrorCode.NONE:
        logger.warning("controller: broker %d answered %s with %s", broker_id, what, ErrorCode.of(response.error_code).name)


def _log_leader_and_isr_errors(broker_id: int, response: Any) -> None:
    _log_error(broker_id, "LeaderAndIsr", response)
    for topic in response.topics:
        for error in topic.partition_errors:
            if error.error_code != ErrorCode.NONE:
                logger.warning(
                    "controller: broker %d could not apply LeaderAndIsr to partition %d of topic id %s: %s",
                    broker_id, error.partition_index, topic.topic_id, ErrorCode.of(error.error_code).name,
                )
