"""Transaction markers written to the partitions this broker leads.

The transaction coordinator hands over a finished transaction's partitions;
each gets its COMMIT or ABORT control batch through the partition itself
(which ends the producer's transaction there and fences older epochs). A
partition not led here, or one that failed to take the marker, is reported
back for a retry; a partition whose topic was deleted needs no marker. A
marker that lands in ``__consumer_offsets`` is reported to the group
coordinator, whose pending transactional offsets it ends.
"""

from __future__ import annotations

import logging
from typing import Callable, Iterable

from broker_core.cluster.errors import UnknownTopicError
from broker_core.cluster.metadata_store import MetadataStore
from broker_core.coordinator.transaction.txn_markers import MarkerOutcome, MarkerRequest
from broker_core.server.replica_manager import ReplicaManager
from broker_core.storage.producer_state import InvalidProducerEpochError
from spate.protocol.internal_records.consumer_offsets import CONSUMER_OFFSETS_TOPIC
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

# Called after a marker landed in a __consumer_offsets partition: (partition, producer id, commit).
OffsetsMarkerListener = Callable[[int, int, bool], None]


class BrokerMarkerWriter:
    """A :class:`~broker_core.coordinator.transaction.txn_markers.MarkerWriter` on this broker's partitions."""

    def __init__(
        self,
        *,
        replicas: ReplicaManager,
        store: MetadataStore,
        on_offsets_marker: OffsetsMarkerListener,
        clock: Callable[[], int],
    ) -> None:
        self._replicas = replicas
        self._store = store
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
