"""Transaction markers, written here for the partitions this broker leads and sent to the leaders of the rest.

The transaction coordinator hands over a finished transaction's partitions;
each gets its COMMIT or ABORT control batch through the partition itself
(which ends the producer's transaction there and fences older epochs):

* a partition led here is written at once (:func:`write_local_marker`, the
  same path the WriteTxnMarkers handler takes for markers sent by other
  brokers' coordinators);
* a partition led by another broker goes out as WriteTxnMarkers to its
  leader through the :class:`~broker_core.server.txn_marker_channel.TxnMarkerChannel`,
  when one is given with a leader lookup (a cluster);
* a partition with no leader now, one whose leader moved or could not be
  reached, or one whose write failed is reported back for a retry;
* a partition whose topic was deleted needs no marker, nor does one where a
  newer producer or coordinator epoch already wrote (this transaction is
  over there).

A marker that lands in ``__consumer_offsets`` here is reported to the group
coordinator, whose pending transactional offsets it ends.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable, Iterable

from broker_core.cluster.errors import UnknownTopicError
from broker_core.cluster.metadata_store import MetadataStore
from broker_core.coordinator.transaction.txn_markers import MarkerOutcome, MarkerRequest, MarkersDone
from broker_core.replication.partition import Partition
from broker_core.server.replica_manager import ReplicaManager
from broker_core.server.replication_barrier import until_replicated
from broker_core.server.txn_marker_channel import LeaderLookup, TxnMarkerChannel
from broker_core.storage.producer_state import InvalidProducerEpochError, TransactionCoordinatorFencedError
from spate.protocol.errors import ErrorCode
from spate.protocol.internal_records.consumer_offsets import CONSUMER_OFFSETS_TOPIC
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

# Called after a marker landed in a __consumer_offsets partition: (partition, producer id, commit).
OffsetsMarkerListener = Callable[[int, int, bool], None]

# Answers meaning the partition is past this transaction: a newer producer or coordinator wrote there.
_SUPERSEDED = frozenset({ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED})


def write_local_marker(
    replicas: ReplicaManager,
    partition: Partition,
    request: MarkerRequest,
    *,
    timestamp_ms: int,
    on_offsets_marker: OffsetsMarkerListener | None,
) -> None:
    """Append the marker to a partition led here, wake its fetches, and end the transactional offsets
    it closes if it is a ``__consumer_offsets`` partition. Raises what the partition raises."""
    partition.write_txn_marker(
        producer_id=request.producer_id,
        producer_epoch=request.producer_epoch,
        coordinator_epoch=request.coordinator_epoch,
        commit=request.commit,
        timestamp_ms=timestamp_ms,
    )
    replicas.notify_append(partition)
    if partition.topic == CONSUMER_OFFSETS_TOPIC and on_offsets_marker is not None:
        on_offsets_marker(partition.index, request.producer_id, request.commit)


class BrokerMarkerWriter:
    """A :class:`~broker_core.coordinator.transaction.txn_markers.MarkerWriter` for this broker.

    Whether a partition exists is ``partition_exists`` (the check AddPartitionsToTxn uses), or else the
    topic's partition count in ``store``. Without ``leader_of`` and ``channel`` (embedded mode) a
    partition not led here is retried until it is.
    """

    def __init__(
        self,
        *,
        replicas: ReplicaManager,
        on_offsets_marker: OffsetsMarkerListener,
        clock: Callable[[], int],
        store: MetadataStore | None = None,
        partition_exists: Callable[[TopicPartition], bool] | None = None,
        leader_of: LeaderLookup | None = None,
        channel: TxnMarkerChannel | None = None,
        replication_timeout_ms: int = 30_000,
    ) -> None:
        if partition_exists is None and store is None:
            raise ValueError("a marker writer needs partition_exists or a metadata store")
        self._replicas = replicas
        self._store = store
        self._partition_exists = partition_exists
        self._on_offsets_marker = on_offsets_marker
        self._clock = clock
        self._leader_of = leader_of
        self._channel = channel
        self._replication_timeout_ms = replication_timeout_ms

    def write_markers(self, request: MarkerRequest, partitions: Iterable[TopicPartition], done: MarkersDone) -> None:
        outcome = MarkerOutcome()
        remote: dict[tuple[int, str, int], list[TopicPartition]] = {}
        for tp in partitions:
            if not self._exists(tp):
                logger.info("no marker for %s: the partition no longer exists", tp)
                continue
            partition = self._replicas.get(tp.topic, tp.partition)
            if partition is not None:
                self._write_local(partition, tp, request, outcome)
                continue
            leader = self._remote_leader(tp)
            if leader is None:
                outcome.retry.add(tp)
            else:
                remote.setdefault(leader, []).append(tp)
        # A local marker counts once every in-sync replica holds it, as a remote leader answers only then.
        unreplicated = [tp for tp in outcome.written if not self._replicated(tp)]
        outcome.written.difference_update(unreplicated)
        if not remote and not unreplicated:
            done(outcome)
            return
        waiting = len(remote) + (1 if unreplicated else 0)

        def answered(errors: dict[TopicPartition, ErrorCode]) -> None:
            nonlocal waiting
            for tp, code in errors.items():
                self._record_remote(tp, code, request, outcome)
            waiting -= 1
            if waiting == 0:
                done(outcome)

        for leader, tps in remote.items():
            self._channel.send(leader, request, tps, answered)
        if unreplicated:
            asyncio.ensure_future(self._await_replication(unreplicated, answered))

    def _replicated(self, tp: TopicPartition) -> bool:
        partition = self._replicas.get(tp.topic, tp.partition)
        return partition is None or partition.high_watermark >= partition.log_end_offset

    async def _await_replication(
        self, partitions: list[TopicPartition], answered: Callable[[dict[TopicPartition, ErrorCode]], None]
    ) -> None:
        codes = await asyncio.gather(*(
            until_replicated(self._replicas, tp.topic, tp.partition, self._replication_timeout_ms)
            for tp in partitions
        ))
        answered(dict(zip(partitions, codes)))

    def _exists(self, tp: TopicPartition) -> bool:
        if self._partition_exists is not None:
            return self._partition_exists(tp)
        try:
            return 0 <= tp.partition < self._store.get_topic(tp.topic).partition_count
        except UnknownTopicError:
            return False

    def _remote_leader(self, tp: TopicPartition) -> tuple[int, str, int] | None:
        """The other broker leading ``tp`` now; None while none does (or this one is about to)."""
        if self._leader_of is None or self._channel is None:
            return None
        leader = self._leader_of(tp)
        if leader is None or leader[0] == self._replicas.node_id:
            return None
        return tuple(leader)

    def _write_local(self, partition: Partition, tp: TopicPartition, request: MarkerRequest,
                     outcome: MarkerOutcome) -> None:
        try:
            write_local_marker(self._replicas, partition, request, timestamp_ms=self._clock(),
                               on_offsets_marker=self._on_offsets_marker)
        except (InvalidProducerEpochError, TransactionCoordinatorFencedError) as exc:
            # A newer epoch already wrote to the partition, so this transaction is over there.
            logger.error("marker for producer %d on %s refused: %s", request.producer_id, tp, exc)
        except Exception:
            logger.exception("writing a marker for producer %d on %s failed; will retry", request.producer_id, tp)
            outcome.retry.add(tp)
        else:
            outcome.written.add(tp)

    @staticmethod
    def _record_remote(tp: TopicPartition, code: ErrorCode, request: MarkerRequest, outcome: MarkerOutcome) -> None:
        if code is ErrorCode.NONE:
            outcome.written.add(tp)
        elif code in _SUPERSEDED:
            logger.error("marker for producer %d on %s refused by its leader: %s", request.producer_id, tp, code.name)
        else:
            # NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, NETWORK_EXCEPTION, storage errors: the
            # leader is looked up again on the retry (a deleted topic then needs no marker).
            logger.info("marker for producer %d on %s not written yet: %s", request.producer_id, tp, code.name)
            outcome.retry.add(tp)
