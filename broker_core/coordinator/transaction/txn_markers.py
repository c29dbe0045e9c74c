"""Writing transaction markers to the partitions of a finished transaction.

A commit or abort ends with one control batch in every partition the
transaction touched (PROTOCOL.md: control bit set, key ``version, type``,
value ``version, coordinatorEpoch``). Markers are idempotent to re-send: a
marker for a producer with no open transaction in a partition changes no
state, so after a restart the coordinator simply writes all of them again.

This broker leads every partition it writes markers to; a partition led
elsewhere (once there are several brokers) is reported back for a retry.
A partition whose topic was deleted needs no marker.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Iterable, Protocol

from broker_core.cluster.errors import UnknownTopicError
from broker_core.cluster.topic_names import CONSUMER_OFFSETS_TOPIC
from broker_core.storage.files import TopicPartition
from broker_core.storage.producer_state import InvalidProducerEpochError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MarkerRequest:
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    commit: bool


@dataclass
class MarkerOutcome:
    written: set[TopicPartition] = field(default_factory=set)
    retry: set[TopicPartition] = field(default_factory=set)


class MarkerWriter(Protocol):
    def write_markers(self, request: MarkerRequest, partitions: Iterable[TopicPartition]) -> MarkerOutcome:
        ...


# Called after a marker landed in a __consumer_offsets partition: (partition, producer id, commit).
OffsetsMarkerListener = Callable[[int, int, bool], None]


class BrokerMarkerWriter:
    """Markers appended to the partitions this broker leads."""

    def __init__(self, *, replicas, store, on_offsets_marker: OffsetsMarkerListener, clock: Callable[[], int]) -> None:
        self._replicas = replicas  # broker_core.server.replica_manager.ReplicaManager
        self._store = store  # broker_core.cluster.metadata_store.MetadataStore
        self._on_offsets_marker = on_offsets_marker
        self._clock = clock

    def write_markers(self, request: MarkerRequest, partitions: Iterable[TopicPartition]) -> MarkerOutcome:
        outcome = MarkerOutcome()
        for tp in partitions:
            if not self._exists(tp):
                logger.info("no marker for %s: the partition no longer exists", tp)
                continue
            partition = self._replicas.get(tp.topic, tp.partition)
            if partition is None:
                outcome.retry.add(tp)
                continue
            try:
                partition.write_txn_marker(
                    producer_id=request.producer_id,
                    producer_epoch=request.producer_epoch,
                    coordinator_epoch=request.coordinator_epoch,
                    commit=request.commit,
                    timestamp_ms=self._clock(),
                )
            except InvalidProducerEpochError as exc:
                # A newer epoch already wrote to the partition, so this transaction is over there.
                logger.error("marker for producer %d on %s refused: %s", request.producer_id, tp, exc)
                continue
            except Exception:
                logger.exception("writing a marker for producer %d on %s failed; will retry", request.producer_id, tp)
                outcome.retry.add(tp)
                continue
            self._replicas.notify_append(partition)
            outcome.written.add(tp)
            if tp.topic == CONSUMER_OFFSETS_TOPIC:
                self._on_offsets_marker(tp.partition, request.producer_id, request.commit)
        return outcome

    def _exists(self, tp: TopicPartition) -> bool:
        try:
            return tp.partition < self._store.get_topic(tp.topic).partition_count
        except UnknownTopicError:
            return False
