"""The transactional-id cache and its backing topic, ``__transaction_state``.

A transactional id belongs to partition ``partition_for(id)`` of the topic;
this broker coordinates it while it leads that partition. When it takes a
partition over it replays the partition's records (the last value of each
id wins; a tombstone removes it) before answering for its ids; until then
they get COORDINATOR_LOAD_IN_PROGRESS. A partition whose log cannot be read
answers COORDINATOR_NOT_AVAILABLE rather than forget open transactions.
When this broker stops leading a partition its ids leave the cache at once
(the new leader loads them from the log). Elections and resignations carry
the partition's leader epoch, which is the coordinator epoch of the
partition's markers; a stale one changes nothing (see
:mod:`broker_core.coordinator.partition_ownership`).

Every change is checked against the state machine, written, and only then
cached: the log never holds an illegal transition, and the cache never holds
what a restart would not bring back.
"""

from __future__ import annotations

import logging
from typing import Iterator

from broker_core.coordinator.internal_topic import CoordinatorTopic
from broker_core.coordinator.partition_ownership import Election, OwnedPartitions, PartitionStatus
from broker_core.coordinator.transaction.txn_log import (
    TxnLogRecordError,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)
from broker_core.coordinator.transaction.txn_metadata import TxnMetadata
from broker_core.coordinator.transaction.txn_state import check_transition
from spate.protocol.errors import ErrorCode, KafkaError

logger = logging.getLogger(__name__)

E = ErrorCode


def _append_error(code: ErrorCode) -> ErrorCode:
    """What a producer is told when writing to ``__transaction_state`` failed (Kafka's mapping)."""
    if code in (E.UNKNOWN_TOPIC_OR_PARTITION, E.NOT_ENOUGH_REPLICAS, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                E.REQUEST_TIMED_OUT):
        return E.COORDINATOR_NOT_AVAILABLE
    if code in (E.NOT_LEADER_OR_FOLLOWER, E.KAFKA_STORAGE_ERROR):
        return E.NOT_COORDINATOR
    return E.UNKNOWN_SERVER_ERROR


class TransactionStateManager:
    def __init__(self, topic: CoordinatorTopic, *, partitions: int) -> None:
        self._topic = topic
        self._partitions = OwnedPartitions(partitions)
        self._txns: dict[str, TxnMetadata] = {}

    # --- ownership and loading -------------------------------------------------------------

    @property
    def partition_count(self) -> int:
        return self._partitions.partition_count

    def partition_for(self, transactional_id: str) -> int:
        return self._partitions.partition_for(transactional_id)

    def startup(self) -> None:
        """Own and load, at once, the partitions this broker leads now (in a cluster, elections arrive later)."""
        count = self._topic.partition_count()
        if count is not None:
            self._partitions.partition_count = count
            self._adopt_led_partitions()

    def ensure_topic(self) -> int:
        """Create ``__transaction_state`` on first use and own the partitions led here."""
        self._partitions.partition_count = self._topic.create()
        self._adopt_led_partitions()
        return self._partitions.partition_count

    def topic_exists(self) -> bool:
        return self._topic.partition_count() is not None

    def _adopt_led_partitions(self) -> None:
        for partition in self._topic.led_partitions():
            if self._partitions.status(partition) is None:
                epoch = self._topic.leader_epoch(partition)
                if self.begin_load(partition, epoch):
                    self.load_partition(partition, epoch)

    def begin_load(self, partition: int, epoch: int) -> bool:
        """This broker leads ``partition`` at ``epoch``. True when its records must now be (re)loaded:
        its transactional ids are dropped from the cache and answer COORDINATOR_LOAD_IN_PROGRESS.

        False for a stale epoch or a repeated one. A newer epoch of a partition
        already owned reloads it, as Kafka's transaction coordinator does.
        """
        count = self._topic.partition_count()
        if count is not None:
            self._partitions.partition_count = count
        election = self._partitions.elect(partition, epoch, reload_owned=True)
        if election is Election.STALE:
            logger.info("not loading __transaction_state-%d at epoch %d: epoch %s is newer", partition, epoch,
                        self._partitions.epoch(partition))
        if election is not Election.LOAD:
            return False
        self._forget(partition)
        return True

    def load_partition(self, partition: int, epoch: int) -> bool:
        """Replay the partition into the cache; False, changing nothing, when the partition has moved on
        (resigned, or elected again at another epoch) since ``begin_load``, or its log cannot be read."""
        if not self._partitions.is_loading_at(partition, epoch):
            logger.info("dropping the load of __transaction_state-%d at epoch %d: the partition has moved on",
                        partition, epoch)
            return False
        loaded: dict[str, TxnMetadata] = {}
        try:
            for batch in self._topic.read_batches(partition):
                if batch.header.is_control:
                    continue
                for record in batch.records:
                    self._replay(record.key, record.value, loaded)
        except Exception:
            logger.exception("cannot load __transaction_state-%d; its transactional ids stay unavailable", partition)
            self._partitions.set_status(partition, PartitionStatus.FAILED)
            return False
        self._forget(partition)
        self._txns.update(loaded)
        self._partitions.set_status(partition, PartitionStatus.LOADED)
        logger.info("loaded %d transactional id(s) from __transaction_state-%d at epoch %d", len(loaded), partition,
                    epoch)
        return True

    def unload_partition(self, partition: int, epoch: int | None) -> bool:
        """This broker no longer leads ``partition``: its transactional ids leave the cache. False,
        changing nothing, when a newer election of the partition has already been seen."""
        if not self._partitions.resign(partition, epoch):
            logger.info("not unloading __transaction_state-%d at epoch %s: epoch %s is newer", partition, epoch,
                        self._partitions.epoch(partition))
            return False
        dropped = self._forget(partition)
        logger.info("unloaded %d transactional id(s) of __transaction_state-%d", dropped, partition)
        return True

    def _forget(self, partition: int) -> int:
        gone = [t for t in self._txns if self.partition_for(t) == partition]
        for transactional_id in gone:
            del self._txns[transactional_id]
        return len(gone)

    @staticmethod
    def _replay(key: bytes | None, value: bytes | None, loaded: dict[str, TxnMetadata]) -> None:
        try:
            transactional_id = decode_key(key)
            if value is None:
                loaded.pop(transactional_id, None)
            else:
                loaded[transactional_id] = decode_value(transactional_id, value)
        except TxnLogRecordError as exc:
            # One unreadable record must not make every other id of the partition unavailable.
            logger.warning("skipping a __transaction_state record: %s", exc)

    @property
    def is_loading(self) -> bool:
        """Whether some partition of ``__transaction_state`` this broker took over is still being read."""
        return self._partitions.is_loading

    def coordinator_error(self, transactional_id: str) -> ErrorCode:
        """NONE when this broker answers for the id now, else the code that sends the client elsewhere."""
        return self._partitions.coordinator_error(transactional_id)

    def coordinator_epoch(self, transactional_id: str) -> int:
        """The leader epoch of the id's partition: the coordinator epoch its markers carry."""
        epoch = self._partitions.epoch(self.partition_for(transactional_id))
        return -1 if epoch is None else epoch

    # --- reads and writes ------------------------------------------------------------------

    def get(self, transactional_id: str) -> TxnMetadata | None:
        return self._txns.get(transactional_id)

    def __iter__(self) -> Iterator[TxnMetadata]:
        return iter(list(self._txns.values()))

    def put(self, new: TxnMetadata, now: int) -> ErrorCode:
        """Write ``new`` as the id's state if the state machine allows it, then cache it."""
        current = self._txns.get(new.transactional_id)
        check_transition(new.transactional_id, current.state if current is not None else None, new.state)
        return self._write(new.transactional_id, encode_value(new), now, new)

    def remove(self, transactional_id: str, now: int) -> ErrorCode:
        """Write a tombstone for an expired id, then forget it."""
        return self._write(transactional_id, None, now, None)

    def _write(self, transactional_id: str, value: bytes | None, now: int, cached: TxnMetadata | None) -> ErrorCode:
        try:
            self._topic.append(self.partition_for(transactional_id), [(encode_key(transactional_id), value)], now)
        except KafkaError as exc:
            logger.warning("writing the state of transactional id %r failed: %s", transactional_id, exc)
            return _append_error(exc.code)
        if cached is None:
            self._txns.pop(transactional_id, None)
        else:
            self._txns[transactional_id] = cached
        return E.NONE
