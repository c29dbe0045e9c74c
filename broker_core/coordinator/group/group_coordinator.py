"""The group coordinator: the broker's entry point for every consumer-group API.

It owns the groups of the ``__consumer_offsets`` partitions this broker
leads (:class:`GroupMetadataManager`, with :class:`OffsetExpiry`), runs the
classic rebalance protocol over them — JoinGroup (``join``), SyncGroup
(``sync``), Heartbeat (``heartbeat``), LeaveGroup (``leave``), with the
phases and timers of a rebalance in ``rebalance`` and ``rebalance_timers``
— and serves committed offsets (OffsetCommit, OffsetFetch, TxnOffsetCommit)
and group administration (DescribeGroups, ListGroups, DeleteGroups,
OffsetDelete) itself.

Offsets committed in a transaction (TxnOffsetCommit) are written at once but
stay invisible until the transaction coordinator, having written the
transaction's marker to the group's partition, reports its outcome through
:meth:`GroupCoordinator.complete_transactional_offsets`. Whether a
transaction may commit offsets for a group at all is the transaction
coordinator's to say; it is asked through the injected ``txn_verifier``.

Everything runs on one thread, the broker's event loop, so there are no
locks; time and timers come from the injected scheduler, and every write to
``__consumer_offsets`` completes before the cache or the client hears of it.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Callable, Mapping, Sequence

from broker_core.coordinator.group.consumer_group.consumer_group_config import ConsumerGroupConfig
from broker_core.coordinator.group.consumer_group.consumer_group_coordinator import ConsumerGroupCoordinator
from broker_core.coordinator.group.consumer_group.consumer_group_log import ConsumerGroupLog, TopicIds
from broker_core.coordinator.group.consumer_group.heartbeat_types import (
    ConsumerHeartbeat,
    ConsumerHeartbeatResult,
    TopicsImage,
    failed,
)
from broker_core.coordinator.group.group_config import GroupConfig
from broker_core.coordinator.group.group_metadata import GroupMetadata, GroupState
from broker_core.coordinator.group.group_metadata_manager import GroupMetadataManager
from broker_core.coordinator.group.heartbeat import Heartbeats
from broker_core.coordinator.group.join import GroupJoin
from broker_core.coordinator.group.leave import GroupLeave
from broker_core.coordinator.group.offset_expiry import OffsetExpiry
from broker_core.coordinator.group.offsets_topic import OffsetsTopic, TxnProducer
from broker_core.coordinator.group.rebalance import Rebalancer
from broker_core.coordinator.group.rebalance_timers import RebalanceTimers
from broker_core.coordinator.group.results import (
    FetchedOffset,
    GroupDescription,
    JoinGroupResult,
    ListedGroup,
    ListGroupsResult,
    OffsetCommitEntry,
    OffsetDeleteResult,
    OffsetFetchResult,
)
from broker_core.coordinator.group.sync import GroupSync
from broker_core.coordinator.scheduler import Scheduler
from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

E = ErrorCode
S = GroupState


# (transactional id, producer id, producer epoch, group id) -> NONE when that producer's
# transaction is open and AddOffsetsToTxn added the group, else the error to answer.
TxnVerifier = Callable[[str, int, int, str], ErrorCode]


def _random_suffix() -> str:
    return str(uuid.uuid4())


def _accept_every_transaction(transactional_id: str, producer_id: int, producer_epoch: int,
                              group_id: str) -> ErrorCode:
    return E.NONE


class GroupCoordinator:
    def __init__(
        self,
        config: GroupConfig,
        offsets_topic: OffsetsTopic,
        scheduler: Scheduler,
        *,
        member_id_suffix: Callable[[], str] = _random_suffix,
        txn_verifier: TxnVerifier = _accept_every_transaction,
        consumer_config: ConsumerGroupConfig | None = None,
        topic_ids: TopicIds | None = None,
    ) -> None:
        self._scheduler = scheduler
        self._txn_verifier = txn_verifier
        # Loaded members get a full session to find this broker and heartbeat again.
        # Consumer groups' records are read back by their own log (topic ids need the cluster's names).
        consumer_log = ConsumerGroupLog(topic_ids) if topic_ids is not None else None
        groups = self.group_manager = GroupMetadataManager(
            config, offsets_topic, scheduler, on_group_loaded=lambda group: self._heartbeats.keep_group_alive(group),
            on_consumer_group_records=lambda records: consumer_log and self.consumer_groups.load(
                consumer_log.replay(records)),
        )
        self._expiry = OffsetExpiry(config, groups, scheduler)
        # A member whose session ran out is removed as if it had left (the rebalancer is built next).
        self._heartbeats = Heartbeats(
            groups, scheduler, on_member_failure=lambda group, member: self._rebalancer.remove_member_and_update_group(
                group, member
            )
        )
        self._rebalancer = Rebalancer(groups, scheduler, self._heartbeats, RebalanceTimers(config, groups, scheduler))
        # The membership APIs are served by the classes that implement them.
        self._classic_join = GroupJoin(
            config, groups, scheduler, self._heartbeats, self._rebalancer, member_id_suffix=member_id_suffix
        ).join_group
        self.sync_group = GroupSync(groups, scheduler, self._heartbeats, self._rebalancer).sync_group
        self.heartbeat = self._heartbeats.heartbeat
        self.leave_group = GroupLeave(groups, self._rebalancer).leave_group
        # Groups of the next-generation protocol (KIP-848); their offsets live in the classic group's cache.
        self.consumer_groups = ConsumerGroupCoordinator(
            consumer_config or ConsumerGroupConfig(), scheduler, log=consumer_log,
            writer=lambda group_id, records: groups.append(group_id, records, for_offsets=False)[0],
        )

    # --- group types: classic or consumer --------------------------------------------------

    def join_group(self, **request: Any) -> None:
        """JoinGroup for a classic group, or an empty consumer group that becomes one."""
        consumer = self.consumer_groups.groups.get(request["group_id"])
        if consumer is not None:
            if not consumer.is_empty or not self.consumer_groups.config.downgrades:
                request["respond"](JoinGroupResult(E.INCONSISTENT_GROUP_PROTOCOL, member_id=request["member_id"]))
                return
            self.consumer_groups.drop_group(consumer.group_id)
            logger.info("empty consumer group %r becomes a classic group", consumer.group_id)
        self._classic_join(**request)

    def consumer_group_heartbeat(self, request: ConsumerHeartbeat, topics: TopicsImage) -> ConsumerHeartbeatResult:
        """ConsumerGroupHeartbeat for a consumer group, or an empty classic group that becomes one."""
        error = self.group_manager.check(request.group_id, allow_empty_id=True)
        if error is not E.NONE:
            return failed(error, None)
        if request.group_id not in self.consumer_groups.groups:
            classic = self.group_manager.get_group(request.group_id)
            if classic is not None and not classic.is_(S.DEAD) and (
                not classic.is_(S.EMPTY) or not self.consumer_groups.config.upgrades
            ):
                return failed(E.GROUP_ID_NOT_FOUND, f"Group {request.group_id} is not a consumer group.")
        return self.consumer_groups.heartbeat(request, topics)

    # --- lifecycle -------------------------------------------------------------------------

    def startup(self) -> None:
        """Serve: load the groups of the partitions this broker leads, start the expiry task."""
        self.group_manager.startup()
        self._expiry.start()

    def shutdown(self) -> None:
        """Stop serving: answer every parked request with NOT_COORDINATOR and cancel all timers."""
        self.group_manager.shutdown()
        self._expiry.stop()
        self._rebalancer.shutdown()

    def on_elected(self, partition: int, leader_epoch: int) -> None:
        """This broker now leads ``__consumer_offsets-<partition>`` at ``leader_epoch``: its groups are
        loaded on the loop's next turns and answer COORDINATOR_LOAD_IN_PROGRESS until then."""
        self.group_manager.on_elected(partition, leader_epoch)

    def on_resigned(self, partition: int, leader_epoch: int | None) -> None:
        """This broker no longer leads ``__consumer_offsets-<partition>``: its groups are dropped, their
        parked JoinGroup and SyncGroup requests answered NOT_COORDINATOR, their timers stopped; members
        find the new coordinator and carry on there."""
        for group in self.group_manager.on_resigned(partition, leader_epoch):
            self._rebalancer.unload(group)
        self.consumer_groups.unload(lambda group_id: self.partition_for(group_id) == partition
                                    and self.group_manager.coordinator_error(group_id) is not E.NONE)

    def ensure_offsets_topic(self) -> int:
        """Create ``__consumer_offsets`` on first use (FindCoordinator); returns its partition count."""
        return self.group_manager.ensure_topic()

    def partition_for(self, group_id: str) -> int:
        return self.group_manager.partition_for(group_id)

    def _now(self) -> int:
        return self._scheduler.now_ms()

    # --- offsets ---------------------------------------------------------------------------

    def commit_offsets(
        self,
        *,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Mapping[TopicPartition, OffsetCommitEntry],
        retention_time_ms: int = -1,
    ) -> dict[TopicPartition, ErrorCode]:
        """Store committed offsets; generation -1 commits for a group not managed here ("simple" commits)."""

        def all_failed(error: ErrorCode) -> dict[TopicPartition, ErrorCode]:
            return {tp: error for tp in offsets}

        error = self.group_manager.check(group_id, allow_empty_id=True)
        if error is not E.NONE:
            return all_failed(error)
        group = self.group_manager.get_group(group_id)
        consumer_error = self.consumer_groups.validate_offset_commit(group_id, member_id, generation_id)
        if consumer_error is not None:
            # A consumer group: the generation is the member epoch (OffsetCommit v9).
            if consumer_error is not E.NONE:
                return all_failed(consumer_error)
            group = group or self.group_manager.add_group(GroupMetadata(group_id, now_ms=self._now()))
            return self.group_manager.store_offsets(group, offsets, retention_ms=retention_time_ms)
        if group is None:
            if generation_id >= 0:
                # A generation of a group this coordinator does not know: stale by definition.
                return all_failed(E.ILLEGAL_GENERATION)
            group = self.group_manager.add_group(GroupMetadata(group_id, now_ms=self._now()))
        if group.is_(S.DEAD):
            return all_failed(E.COORDINATOR_NOT_AVAILABLE)
        if group.is_static_member_fenced(group_instance_id, member_id):
            return all_failed(E.FENCED_INSTANCE_ID)
        if not (generation_id < 0 and group.is_(S.EMPTY)):
            if not group.has_member(member_id):
                return all_failed(E.UNKNOWN_MEMBER_ID)
            if generation_id != group.generation_id:
                return all_failed(E.ILLEGAL_GENERATION)
            if group.is_(S.COMPLETING_REBALANCE):
                # The member knows the new generation but not yet its assignment.
                return all_failed(E.REBALANCE_IN_PROGRESS)
            # Committing during PreparingRebalance is allowed: the heartbeat tells the member to rejoin.
            self._heartbeats.keep_alive(group, group.get_member(member_id))
        return self.group_manager.store_offsets(group, offsets, retention_ms=retention_time_ms)

    def handle_txn_offset_commit(
        self,
        *,
        transactional_id: str,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        offsets: Mapping[TopicPartition, OffsetCommitEntry],
        generation_id: int = -1,
        member_id: str = "",
        group_instance_id: str | None = None,
    ) -> dict[TopicPartition, ErrorCode]:
        """TxnOffsetCommit: write offsets as part of the producer's open transaction.

        They are stored at once (one transactional batch) but stay pending in
        the group, invisible to OffsetFetch, until the transaction ends. The
        member fields (TxnOffsetCommit v3+) are checked only when given, as
        Kafka does; a group that does not exist yet is created, Empty.
        """

        def all_failed(error: ErrorCode) -> dict[TopicPartition, ErrorCode]:
            return {tp: error for tp in offsets}

        error = self.group_manager.check(group_id, allow_empty_id=False)
        if error is not E.NONE:
            return all_failed(error)
        error = self._txn_verifier(transactional_id, producer_id, producer_epoch, group_id)
        if error is not E.NONE:
            return all_failed(error)
        group = self.group_manager.get_group(group_id)
        if group is None:
            group = self.group_manager.add_group(GroupMetadata(group_id, now_ms=self._now()))
        if group.is_(S.DEAD):
            return all_failed(E.COORDINATOR_NOT_AVAILABLE)
        if group.is_static_member_fenced(group_instance_id, member_id):
            return all_failed(E.FENCED_INSTANCE_ID)
        if member_id and not group.has_member(member_id):
            return all_failed(E.UNKNOWN_MEMBER_ID)
        if generation_id >= 0 and generation_id != group.generation_id:
            return all_failed(E.ILLEGAL_GENERATION)
        return self.group_manager.store_txn_offsets(group, TxnProducer(producer_id, producer_epoch), offsets)

    def complete_transactional_offsets(self, *, offsets_partition: int, producer_id: int, commit: bool) -> None:
        """The transaction coordinator wrote ``producer_id``'s COMMIT or ABORT marker to
        ``__consumer_offsets-<offsets_partition>``: its pending offsets there become
        committed offsets (commit) or are dropped (abort)."""
        self.group_manager.complete_txn_offsets(offsets_partition, producer_id, commit=commit)

    def fetch_offsets(
        self, *, group_id: str, partitions: Sequence[TopicPartition] | None, require_stable: bool = False
    ) -> OffsetFetchResult:
        """Committed offsets for ``partitions`` (None: every partition the group has committed).

        Offsets of open transactions are never returned; with ``require_stable``
        (OffsetFetch v7+) a partition that has some answers UNSTABLE_OFFSET_COMMIT
        instead, so the client retries once the transaction is over.
        """
        error = self.group_manager.check(group_id, allow_empty_id=True)
        if error is not E.NONE:
            return OffsetFetchResult(error)
        group = self.group_manager.get_group(group_id)
        if group is not None and group.is_(S.DEAD):
            group = None
        stored = group.offsets if group is not None else {}
        wanted = list(stored) if partitions is None else partitions
        offsets = {}
        for tp in wanted:
            committed = stored.get(tp)
            if require_stable and group is not None and group.has_pending_txn_offset(tp):
                offsets[tp] = FetchedOffset(error=E.UNSTABLE_OFFSET_COMMIT)
            elif committed is not None:
                offsets[tp] = FetchedOffset(committed.offset, committed.leader_epoch, committed.metadata)
            else:
                offsets[tp] = FetchedOffset()
        return OffsetFetchResult(E.NONE, offsets)

    # --- admin -----------------------------------------------------------------------------

    def describe_group(self, group_id: str) -> GroupDescription:
        error = self.group_manager.check(group_id, allow_empty_id=True)
        if error is not E.NONE:
            return GroupDescription(group_id, error, state="", protocol_type="", protocol_name="")
        if group_id in self.consumer_groups.groups:
            return GroupDescription(group_id, E.GROUP_ID_NOT_FOUND, state="", protocol_type="", protocol_name="")
        group = self.group_manager.get_group(group_id)
        if group is None:
            return GroupDescription(group_id, E.NONE)
        return group.describe()

    def list_groups(self) -> ListGroupsResult:
        if not self.group_manager.is_active:
            return ListGroupsResult(E.COORDINATOR_NOT_AVAILABLE)
        consumer = self.consumer_groups.groups
        listed = tuple(
            ListedGroup(g.group_id, g.protocol_type or "", str(g.state))
            for g in self.group_manager.groups()
            if not g.is_(S.DEAD) and g.group_id not in consumer
            and self.group_manager.coordinator_error(g.group_id) is E.NONE
        ) + tuple(
            ListedGroup(g.group_id, "consumer", str(g.state), group_type="consumer")
            for g in consumer.values() if self.group_manager.coordinator_error(g.group_id) is E.NONE
        )
        return ListGroupsResult(E.COORDINATOR_LOAD_IN_PROGRESS if self.group_manager.is_loading else E.NONE, listed)

    def delete_groups(self, group_ids: Sequence[str]) -> dict[str, ErrorCode]:
        return {group_id: self._delete_group(group_id) for group_id in group_ids}

    def _delete_group(self, group_id: str) -> ErrorCode:
        error = self.group_manager.check(group_id, allow_empty_id=True)
        if error is not E.NONE:
            return error
        group = self.group_manager.get_group(group_id)
        if group_id in self.consumer_groups.groups:
            error = self.consumer_groups.delete_group(group_id)
            if error is not E.NONE or group is None:
                return error  # its offsets, if any, go with the classic entry that holds them
        if group is None or group.is_(S.DEAD):
            return E.GROUP_ID_NOT_FOUND
        if not group.is_(S.EMPTY) or group.pending_txn_offsets:
            # Offsets of an open transaction still belong to the group: it goes once that ends.
            return E.NON_EMPTY_GROUP
        error = self.group_manager.delete_group(group)
        if error is E.NONE:
            self._rebalancer.cancel_timers(group)
            logger.info("deleted group %r", group_id)
        return error

    def delete_offsets(self, *, group_id: str, partitions: Sequence[TopicPartition]) -> OffsetDeleteResult:
        """OffsetDelete: only partitions of topics the group is not consuming may lose their offsets."""
        error = self.group_manager.check(group_id, allow_empty_id=False)
        if error is not E.NONE:
            return OffsetDeleteResult(error)
        group = self.group_manager.get_group(group_id)
        if group is None or group.is_(S.DEAD):
            return OffsetDeleteResult(E.GROUP_ID_NOT_FOUND)
        consumer = self.consumer_groups.groups.get(group_id)
        if consumer is not None and not consumer.is_empty:
            topics = consumer.subscribed_topics()
            subscribed: set[TopicPartition] = {tp for tp in partitions if tp.topic in topics}
        elif group.is_(S.EMPTY):
            subscribed = set()
        elif group.is_consumer_group:
            subscribed = {tp for tp in partitions if group.is_subscribed_to(tp.topic)}
        else:
            return OffsetDeleteResult(E.NON_EMPTY_GROUP)
        deletable = [tp for tp in partitions if tp not in subscribed]
        write_error = self.group_manager.delete_offsets(group, deletable)
        return OffsetDeleteResult(
            E.NONE,
            {tp: E.GROUP_SUBSCRIBED_TO_TOPIC if tp in subscribed else write_error for tp in partitions},
        )
