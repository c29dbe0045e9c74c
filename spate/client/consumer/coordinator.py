"""The consumer's side of a classic consumer group: membership, rebalances and committed offsets.

A subscribed consumer finds its group's coordinator (FindCoordinator),
joins (JoinGroup; a first join with an empty member id is answered
MEMBER_ID_REQUIRED with the id to join under), and syncs (SyncGroup). The
member the coordinator names leader runs the partition assignor over every
member's subscription and sends the result with its SyncGroup; every member
gets its own share in the answer. Assignments are eager, as in Kafka's
classic protocol: before rejoining, a member commits (with auto-commit)
and gives up all its partitions (``on_revoke``), and it receives its new
ones after the sync (``on_assign``).

Every step is asynchronous and driven by :meth:`ConsumerCoordinator.poll`,
which the consumer calls from each ``poll``: a JoinGroup that the
coordinator holds until the other members have rejoined never blocks the
caller beyond its own timeout, so one thread may poll several consumers of
the same group. The coordinator is found by
:mod:`spate.client.consumer.coordinator_lookup` (group requests go over a
connection of their own to it), the leader's part of a rebalance is
:mod:`spate.client.consumer.group_leader`, and heartbeats come from
:mod:`spate.client.consumer.heartbeat`.

Committed offsets (commits, lookups, auto-commit) are the business of
:class:`~spate.client.consumer.offset_commit.OffsetCommitter` (``self.offsets``),
which uses this class's coordinator connection and generation.
"""

from __future__ import annotations

import enum
import logging
import random
import socket
import time
from collections import deque
from typing import Any, Callable

from spate.client.consumer.consumer_config import ConsumerConfig
from spate.client.consumer.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    decode_assignment,
    encode_subscription,
)
from spate.client.consumer.coordinator_lookup import CoordinatorLookup
from spate.client.consumer.group_leader import GroupLeader
from spate.client.consumer.group_metadata import NO_GENERATION, NO_MEMBER_ID, ConsumerGroupMetadata
from spate.client.consumer.heartbeat import HeartbeatThread, MemberIdentity, leave_group_body
from spate.client.consumer.offset_commit import COORDINATOR_ERRORS, OffsetCommitter
from spate.client.consumer.subscription_state import SubscriptionState, SubscriptionType
from spate.client.errors import ClientError, CommitFailedError, is_retriable
from spate.client.net.connection import InFlightRequest, SocketFactory
from spate.client.net.network_client import NetworkClient
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.errors import ProtocolDecodeError
from spate.protocol.messages.join_group import JoinGroupRequest
from spate.protocol.messages.sync_group import SyncGroupRequest
from spate.structs import TopicPartition

log = logging.getLogger(__name__)

E = ErrorCode
# A JoinGroup or SyncGroup may be held for the whole rebalance timeout; allow this much more.
_REBALANCE_SLACK = 5.0

RebalanceCallback = Callable[[set[TopicPartition]], None]


class MemberState(enum.Enum):
    UNJOINED = "unjoined"
    JOINING = "joining"  # JoinGroup in flight
    SYNCING = "syncing"  # SyncGroup in flight
    STABLE = "stable"  # has its assignment for the current generation


class ConsumerCoordinator:
    def __init__(
        self,
        network: NetworkClient,
        subscriptions: SubscriptionState,
        config: ConsumerConfig,
        *,
        on_assignment_changed: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        socket_factory: SocketFactory = socket.create_connection,
    ) -> None:
        self._network = network
        self._subscriptions = subscriptions
        self.config = config
        self.group_id = config.group
        self._on_assignment_changed = on_assignment_changed
        self._clock = clock
        self._rng = rng or random.Random()
        self._socket_factory = socket_factory
        self._request_timeout = config.request_timeout_ms / 1000
        self._rebalance_timeout = max(self._request_timeout, config.max_poll_interval_ms / 1000 + _REBALANCE_SLACK)
        self._errors: deque[BaseException] = deque()
        self._lookup = CoordinatorLookup(network, self.group_id, self._errors, clock)
        self._leader = GroupLeader(
            network, self.group_id, config.assignors, request_timeout=self._request_timeout, clock=clock
        )

        self.state = MemberState.UNJOINED
        self.generation_id = NO_GENERATION
        self.member_id = NO_MEMBER_ID
        self.protocol: str | None = None
        self.leader_id = ""
        self._rejoin_needed = True
        self._join: InFlightRequest | None = None
        self._sync: InFlightRequest | None = None
        self._join_retry_at = 0.0
        self._join_attempts = 0
        self._on_assign: RebalanceCallback | None = None
        self._on_revoke: RebalanceCallback | None = None
        self._pattern_refresh_at = 0.0
        self._heartbeat: HeartbeatThread | None = None
        self._in_poll = False
        self.offsets = OffsetCommitter(self, network, subscriptions, config, clock=clock, errors=self._errors)

    # --- the application's calls --------------------------------------------------------------------

    def set_callbacks(self, on_assign: RebalanceCallback | None, on_revoke: RebalanceCallback | None) -> None:
        self._on_assign = on_assign
        self._on_revoke = on_revoke

    def subscription_changed(self) -> None:
        """The subscribed topics (or pattern) changed: rejoin with the new subscription."""
        self._rejoin_needed = True
        self._pattern_refresh_at = 0.0

    def group_metadata(self) -> ConsumerGroupMetadata:
        return ConsumerGroupMetadata(self.group_id, self.generation_id, self.member_id, self.config.group_instance_id)

    def poll(self) -> None:
        """Make progress without blocking: coordinator, rebalance, committed offsets, auto-commit.

        Rebalance callbacks run from here. Raises the first error the group
        reported since the last call (fatal join errors, heartbeat errors,
        failed callbacks).
        """
        if self._in_poll:
            # Called again from a rebalance callback (e.g. through position()): only the
            # steps that run no callbacks.
            self.find_coordinator(self._clock())
            self.offsets.refresh_committed(self._clock())
            return
        self._in_poll = True
        try:
            now = self._clock()
            if self._heartbeat is not None:
                self._heartbeat.polled()
                self._apply_heartbeat_events()
            self.find_coordinator(now)
            if self._subscriptions.is_subscribed:
                self._maybe_refresh_pattern(now)
                self._check_leader_metadata()
                self._process_join(now)
                self._process_sync(now)
                self._maybe_join(now)
            self.offsets.refresh_committed(now)
            subscribed = self._subscriptions.is_subscribed
            self.offsets.maybe_auto_commit(now, member_ready=not subscribed or self.state is MemberState.STABLE)
            self.offsets.process_async_commits()
        finally:
            self._in_poll = False
        if self._errors:
            raise self._errors.popleft()

    def unsubscribe(self, deadline: float) -> None:
        if self.state is MemberState.STABLE:
            self._revoke(self._subscriptions.assignment())
        self._leave_group(deadline, "unsubscribe")
        self._leader.forget()

    def close(self, deadline: float) -> None:
        """Commit (with auto-commit), give up the partitions and leave the group; best effort."""
        try:
            subscribed = self._subscriptions.is_subscribed
            if self.config.enable_auto_commit and (self.state is MemberState.STABLE or not subscribed):
                try:
                    self.offsets.commit_sync(self.offsets.positions(), deadline)
                except Exception as exc:  # closing goes on whatever the commit's fate
                    log.warning("the final commit of group %r failed: %s", self.group_id, exc)
            if subscribed:
                if self.state is MemberState.STABLE:
                    try:
                        self._revoke(self._subscriptions.assignment())
                    except Exception:
                        log.exception("on_revoke failed while closing")
                self._leave_group(deadline, "close")
            self.offsets.wait_for_async_commits(deadline)
        finally:
            if self._heartbeat is not None:
                self._heartbeat.close()
                self._heartbeat = None

    # --- coordinator discovery ------------------------------------------------------------------

    @property
    def coordinator_known(self) -> bool:
        return self._lookup.node is not None

    def find_coordinator(self, now: float) -> None:
        self._lookup.find(now)

    def ensure_coordinator(self, deadline: float) -> int:
        return self._lookup.ensure(deadline)

    def coordinator_dead(self, why: str) -> None:
        if self._lookup.dead(why) and self._heartbeat is not None:
            self._heartbeat.stop_member()

    # --- joining --------------------------------------------------------------------------------

    def _maybe_join(self, now: float) -> None:
        if self.state in (MemberState.JOINING, MemberState.SYNCING):
            return
        if not (self._rejoin_needed or self.state is MemberState.UNJOINED):
            return
        if self._lookup.node is None or now < self._join_retry_at:
            return
        if self.state is MemberState.STABLE:
            self._prepare_rejoin()
        protocols = [
            JoinGroupRequest.JoinGroupRequestProtocol(
                name=assignor.name, metadata=encode_subscription(self._subscriptions.subscribed_topics)
            )
            for assignor in self.config.assignors
        ]
        body = JoinGroupRequest(
            group_id=self.group_id,
            session_timeout_ms=self.config.session_timeout_ms,
            rebalance_timeout_ms=self.config.max_poll_interval_ms,
            member_id=self.member_id,
            group_instance_id=self.config.group_instance_id,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocols=protocols,
        )
        try:
            self._join = self._network.send(self._lookup.node, ApiKey.JOIN_GROUP, body, timeout=self._rebalance_timeout)
        except ClientError as exc:
            self._join_failed(exc, coordinator=exc.retriable)
            return
        self.state = MemberState.JOINING
        self._rejoin_needed = False

    def _prepare_rejoin(self) -> None:
        """Before rejoining: commit (with auto-commit), then give up every partition."""
        assigned = self._subscriptions.assignment()
        if self.config.enable_auto_commit and assigned:
            try:
                self.offsets.commit_sync(self.offsets.positions(), self._clock() + self._request_timeout)
            except Exception as exc:  # the rebalance goes on; the next owner starts at the last commit
                log.warning("commit before rejoining group %r failed: %s", self.group_id, exc)
        if self._heartbeat is not None:
            self._heartbeat.stop_member()
        # The callback runs while the member still owns its partitions (it may commit them).
        self._revoke(assigned)
        self.state = MemberState.UNJOINED

    def _process_join(self, now: float) -> None:
        request = self._join
        if request is None or not request.done:
            return
        self._join = None
        self.state = MemberState.UNJOINED
        if request.error is not None:
            self._join_failed(request.error, coordinator=True)
            return
        body = request.response
        code = ErrorCode.of(body.error_code)
        if code == E.NONE:
            self._join_attempts = 0
            self.generation_id = body.generation_id
            self.member_id = body.member_id
            self.protocol = body.protocol_name
            self.leader_id = body.leader
            self._send_sync(body)
            return
        log.info("group %r: JoinGroup answered %s", self.group_id, code.name)
        self._rejoin_needed = True
        if code == E.MEMBER_ID_REQUIRED:
            self.member_id = body.member_id  # join again at once, under the id the coordinator chose
        elif code == E.UNKNOWN_MEMBER_ID:
            self.member_id = NO_MEMBER_ID
        elif code in (E.REBALANCE_IN_PROGRESS, E.COORDINATOR_LOAD_IN_PROGRESS):
            self._back_off_join(now)
        elif code in COORDINATOR_ERRORS:
            self.coordinator_dead(code.name)
        else:
            self._back_off_join(now)
            self._errors.append(KafkaError(code, f"join group {self.group_id!r}"))

    def _send_sync(self, joined: Any) -> None:
        assignments: list[Any] = []
        if self.member_id == joined.leader:
            try:
                assignments = self._leader.assign(
                    joined.protocol_name, joined.members, self.generation_id, self._lookup.node
                )
            except (ClientError, KafkaError) as exc:
                self._join_failed(exc, coordinator=is_retriable(exc))
                return
        body = SyncGroupRequest(
            group_id=self.group_id,
            generation_id=self.generation_id,
            member_id=self.member_id,
            group_instance_id=self.config.group_instance_id,
            assignments=assignments,
        )
        try:
            self._sync = self._network.send(self._lookup.node, ApiKey.SYNC_GROUP, body, timeout=self._rebalance_timeout)
        except ClientError as exc:
            self._join_failed(exc, coordinator=exc.retriable)
            return
        self.state = MemberState.SYNCING

    def _process_sync(self, now: float) -> None:
        request = self._sync
        if request is None or not request.done:
            return
        self._sync = None
        self.state = MemberState.UNJOINED
        if request.error is not None:
            self._join_failed(request.error, coordinator=True)
            return
        code = ErrorCode.of(request.response.error_code)
        if code == E.NONE:
            try:
                partitions = decode_assignment(bytes(request.response.assignment or b""))
            except ProtocolDecodeError as exc:
                self._join_failed(KafkaError(E.INCONSISTENT_GROUP_PROTOCOL, f"unreadable assignment: {exc}"),
                                  coordinator=False)
                return
            self._assigned(set(partitions), now)
            return
        log.info("group %r: SyncGroup answered %s", self.group_id, code.name)
        self._rejoin_needed = True
        if code == E.UNKNOWN_MEMBER_ID:
            self.member_id = NO_MEMBER_ID
        elif code in COORDINATOR_ERRORS:
            self.coordinator_dead(code.name)
        elif code not in (E.REBALANCE_IN_PROGRESS, E.ILLEGAL_GENERATION):
            self._back_off_join(now)
            self._errors.append(KafkaError(code, f"sync group {self.group_id!r}"))

    def _assigned(self, partitions: set[TopicPartition], now: float) -> None:
        self.state = MemberState.STABLE
        self._subscriptions.assign_from_subscribed(sorted(partitions))
        self._on_assignment_changed()
        if self.leader_id == self.member_id:
            # The leader watches every group topic, to rebalance when one changes.
            self._network.metadata.add_topics(self._leader.assigned_counts)
        if self._heartbeat is None:
            self._heartbeat = HeartbeatThread(
                self.config, clock=self._clock, rng=self._rng, socket_factory=self._socket_factory
            )
        self._heartbeat.start_member(MemberIdentity(self._lookup.address, self.generation_id, self.member_id))
        self.offsets.restart_auto_commit_timer(now)
        log.info("group %r generation %d: assigned %s", self.group_id, self.generation_id,
                 ", ".join(str(tp) for tp in sorted(partitions)) or "nothing")
        if self._on_assign is not None:
            self._call_back(self._on_assign, partitions, "on_assign")

    def _join_failed(self, error: BaseException, *, coordinator: bool) -> None:
        self.state = MemberState.UNJOINED
        self._rejoin_needed = True
        if coordinator:
            self.coordinator_dead(str(error))
        else:
            self._back_off_join(self._clock())
            self._errors.append(error)

    def _back_off_join(self, now: float) -> None:
        self._join_retry_at = now + self._network.backoff.delay(self._join_attempts)
        self._join_attempts += 1

    def _revoke(self, partitions: set[TopicPartition]) -> None:
        if self._on_revoke is not None and partitions:
            self._call_back(self._on_revoke, partitions, "on_revoke")
        self._subscriptions.assign_from_subscribed([])
        self._on_assignment_changed()

    def _call_back(self, callback: RebalanceCallback, partitions: set[TopicPartition], name: str) -> None:
        try:
            callback(set(partitions))
        except Exception as exc:  # raised from poll once the rebalance step is done
            log.error("%s callback of group %r failed: %s", name, self.group_id, exc)
            self._errors.append(exc)

    def _leave_group(self, deadline: float, why: str) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop_member()
        member, node = self.member_id, self._lookup.node
        self.state = MemberState.UNJOINED
        self.generation_id, self.member_id, self._rejoin_needed = NO_GENERATION, NO_MEMBER_ID, True
        if not member or node is None or self.config.group_instance_id is not None:
            return  # a static member keeps its place until its session times out
        body = leave_group_body(self.group_id, member, self.config.group_instance_id)
        try:
            limit = min(deadline, self._clock() + self._request_timeout)
            self._network.request(node, ApiKey.LEAVE_GROUP, body, deadline=limit)
        except (ClientError, KafkaError) as exc:
            log.info("leaving group %r (%s) failed: %s", self.group_id, why, exc)

    # --- topics ------------------------------------------------------------------------------

    def _check_leader_metadata(self) -> None:
        """The leader rejoins when a group topic appears, disappears or gains partitions."""
        if self.state is not MemberState.STABLE or self.leader_id != self.member_id:
            return
        if self._leader.topics_changed():
            self._rejoin_needed = True

    def _maybe_refresh_pattern(self, now: float) -> None:
        subscriptions = self._subscriptions
        if subscriptions.type is not SubscriptionType.PATTERN or now < self._pattern_refresh_at:
            return
        try:
            snapshot = self._network.fetch_metadata(None, deadline=now + self._request_timeout)
        except ClientError as exc:
            if not exc.retriable:
                raise
            self._pattern_refresh_at = now + self._network.backoff.delay(0)
            return
        self._pattern_refresh_at = now + self._network.metadata.max_age
        matched = {name for name, topic in snapshot.topics.items()
                   if not topic.is_internal and subscriptions.matches_pattern(name)}
        if subscriptions.set_subscribed_topics(matched):
            self._network.metadata.set_topics(subscriptions.topics())
            self._rejoin_needed = True

    # --- heartbeat reports ----------------------------------------------------------------------

    def _apply_heartbeat_events(self) -> None:
        if self._heartbeat is None:
            return
        events = self._heartbeat.take_events()
        if not events.any():
            return
        if events.coordinator_unknown:
            self.coordinator_dead("heartbeat failed")
        if events.reset_member_id:
            self.member_id = NO_MEMBER_ID
            self.generation_id = NO_GENERATION
        if events.rejoin or events.coordinator_unknown:
            self._rejoin_needed = True
        self._errors.extend(events.errors)

    # --- what committing needs (offset_commit.OffsetCommitter) ----------------------------------------

    @property
    def coordinator_node(self) -> int | None:
        return self._lookup.node

    def commit_generation(self) -> tuple[int, str]:
        """Generation and member id a commit carries: -1 and none for a consumer outside the membership."""
        if not self._subscriptions.is_subscribed:
            return NO_GENERATION, NO_MEMBER_ID
        if self.state is not MemberState.STABLE:
            raise CommitFailedError(
                E.REBALANCE_IN_PROGRESS,
                f"group {self.group_id!r} is rebalancing; "
                "commit after the next poll() has assigned partitions",
            )
        return self.generation_id, self.member_id

    def commit_refused(self, code: ErrorCode) -> None:
        """A commit was refused because the group moved on: rejoin (under a new id if it forgot this one)."""
        if not self._subscriptions.is_subscribed:
            return
        self._rejoin_needed = True
        if code == E.UNKNOWN_MEMBER_ID:
            self.member_id, self.generation_id = NO_MEMBER_ID, NO_GENERATION
