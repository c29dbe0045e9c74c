"""The group member's heartbeat thread, as in Kafka's consumer.

A member proves it is alive by sending Heartbeat every
``heartbeat_interval_ms``; the coordinator removes it after
``session_timeout_ms`` without one. Heartbeats run on their own thread and
their own connection to the coordinator, so an application that takes long
to process a batch is not thrown out of the group for that. Taking long
between polls has its own limit, ``max_poll_interval_ms``: past it the
thread makes the member leave the group, so that its partitions go to a
member that is making progress, as Kafka's consumer does.

The thread only reports; the consumer's own thread acts on the reports on
its next poll (:meth:`HeartbeatThread.take_events`):

* REBALANCE_IN_PROGRESS: rejoin;
* ILLEGAL_GENERATION: rejoin; UNKNOWN_MEMBER_ID: rejoin under a new member id;
* the coordinator moved or cannot be reached: find it again;
* FENCED_INSTANCE_ID, GROUP_AUTHORIZATION_FAILED: raised from the next poll.

Heartbeats stop after any of these until the consumer has rejoined
(``start_member``). ``clock`` and the network are passed in for tests.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from spate.client.consumer.consumer_config import ConsumerConfig
from spate.client.errors import ClientError
from spate.client.net.connection import SocketFactory
from spate.client.net.network_client import NetworkClient
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.heartbeat import HeartbeatRequest
from spate.protocol.messages.leave_group import LeaveGroupRequest

log = logging.getLogger(__name__)

E = ErrorCode
_BOOTSTRAP_NODE = -1  # the thread's client knows the coordinator as its only bootstrap server


@dataclass(slots=True)
class GroupEvents:
    """What the heartbeat thread found since the consumer last looked."""

    rejoin: bool = False
    reset_member_id: bool = False
    coordinator_unknown: bool = False
    poll_timeout_expired: bool = False
    errors: list[BaseException] = field(default_factory=list)

    def any(self) -> bool:
        return self.rejoin or self.reset_member_id or self.coordinator_unknown or self.poll_timeout_expired or bool(
            self.errors
        )


@dataclass(frozen=True, slots=True)
class MemberIdentity:
    coordinator: str  # host:port
    generation_id: int
    member_id: str


class HeartbeatThread:
    def __init__(
        self,
        config: ConsumerConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        socket_factory: SocketFactory = socket.create_connection,
    ) -> None:
        """Start the thread; ``config`` gives the group, its timeouts and the connection settings."""
        self.group_id = config.group
        self.group_instance_id = config.group_instance_id
        self.session_timeout = config.session_timeout_ms / 1000
        self.interval = config.heartbeat_interval_ms / 1000
        self.max_poll_interval = config.max_poll_interval_ms / 1000
        self._config = config
        self._clock = clock
        self._rng = rng or random.Random()
        self._socket_factory = socket_factory
        self._cond = threading.Condition()
        self._member: MemberIdentity | None = None
        self._events = GroupEvents()
        self._last_poll = clock()
        self._next_heartbeat = 0.0
        self._closed = False
        self._network: NetworkClient | None = None
        self._network_address: str | None = None
        self._thread = threading.Thread(target=self._run, name="spate-consumer-heartbeat", daemon=True)
        self._thread.start()

    # --- called by the consumer's thread ------------------------------------------------------

    def start_member(self, identity: MemberIdentity) -> None:
        """Heartbeat for this generation from now on (the first one after one interval)."""
        with self._cond:
            self._member = identity
            self._last_poll = self._clock()
            self._next_heartbeat = self._clock() + self.interval
            self._cond.notify_all()

    def stop_member(self) -> None:
        """No heartbeats until the next ``start_member`` (a rebalance is under way, or the member left)."""
        with self._cond:
            self._member = None
            self._cond.notify_all()

    def polled(self) -> None:
        with self._cond:
            self._last_poll = self._clock()

    def take_events(self) -> GroupEvents:
        with self._cond:
            events, self._events = self._events, GroupEvents()
            return events

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._member = None
            self._cond.notify_all()
        self._thread.join(5)

    # --- the thread ---------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    if self._closed:
                        return
                    member = self._member
                    now = self._clock()
                    if member is None:
                        self._cond.wait()
                        continue
                    if now - self._last_poll > self.max_poll_interval:
                        self._member = None
                        self._events.poll_timeout_expired = True
                        self._events.rejoin = True
                        self._events.reset_member_id = True
                        expired = True
                    else:
                        expired = False
                        if now < self._next_heartbeat:
                            self._cond.wait(self._next_heartbeat - now)
                            continue
                try:
                    if expired:
                        log.warning(
                            "no poll() for more than max_poll_interval_ms (%.0f ms): leaving group %r so that its "
                            "partitions go to another member", self.max_poll_interval * 1000, self.group_id,
                        )
                        self._leave(member)
                    else:
                        self._heartbeat(member)
                except Exception:  # a bug here must not stop heartbeats for good: start over with a new connection
                    log.exception("heartbeat of group %r failed unexpectedly", self.group_id)
                    self._drop_client()
                    self._report(member, coordinator_unknown=True)
        finally:
            if self._network is not None:
                self._network.close()

    def _drop_client(self) -> None:
        if self._network is not None:
            self._network.close()
        self._network = None
        self._network_address = None

    def _client(self, address: str) -> NetworkClient:
        if self._network is None or self._network_address != address:
            if self._network is not None:
                self._network.close()
            self._network = NetworkClient(
                address, self._config, clock=self._clock, rng=self._rng, socket_factory=self._socket_factory
            )
            self._network_address = address
        return self._network

    def _heartbeat(self, member: MemberIdentity) -> None:
        sent_at = self._clock()
        body = HeartbeatRequest(
            group_id=self.group_id,
            generation_id=member.generation_id,
            member_id=member.member_id,
            group_instance_id=self.group_instance_id,
        )
        deadline = sent_at + min(self._config.request_timeout_ms / 1000, max(self.session_timeout, 0.5))
        try:
            _, response = self._client(member.coordinator).request(
                _BOOTSTRAP_NODE, ApiKey.HEARTBEAT, body, deadline=deadline
            )
            code = ErrorCode.of(response.error_code)
        except (ClientError, KafkaError) as exc:
            log.info("heartbeat to the coordinator of group %r failed: %s", self.group_id, exc)
            self._report(member, coordinator_unknown=True)
            return
        if code == E.NONE:
            with self._cond:
                if self._member == member:
                    self._next_heartbeat = sent_at + self.interval
            return
        log.info("heartbeat of group %r answered %s", self.group_id, code.name)
        if code == E.REBALANCE_IN_PROGRESS:
            self._report(member, rejoin=True)
        elif code == E.ILLEGAL_GENERATION:
            self._report(member, rejoin=True)
        elif code == E.UNKNOWN_MEMBER_ID:
            self._report(member, rejoin=True, reset_member_id=True)
        elif code in (E.NOT_COORDINATOR, E.COORDINATOR_NOT_AVAILABLE):
            self._report(member, coordinator_unknown=True)
        elif code.retriable:
            with self._cond:
                self._next_heartbeat = self._clock() + self._config.retry_backoff_ms / 1000
        else:
            self._report(member, error=KafkaError(code, f"heartbeat of group {self.group_id!r}"))

    def _report(
        self,
        member: MemberIdentity,
        *,
        rejoin: bool = False,
        reset_member_id: bool = False,
        coordinator_unknown: bool = False,
        error: BaseException | None = None,
    ) -> None:
        with self._cond:
            if self._member != member:
                return  # the consumer has moved on to another generation meanwhile
            self._member = None
            self._events.rejoin |= rejoin or reset_member_id
            self._events.reset_member_id |= reset_member_id
            self._events.coordinator_unknown |= coordinator_unknown
            if error is not None:
                self._events.errors.append(error)

    def _leave(self, member: MemberIdentity) -> None:
        if self.group_instance_id is not None:
            return  # a static member keeps its place until its session times out
        body = leave_group_body(self.group_id, member.member_id, self.group_instance_id)
        try:
            self._client(member.coordinator).request(
                _BOOTSTRAP_NODE, ApiKey.LEAVE_GROUP, body, deadline=self._clock() + self._config.request_timeout_ms / 1000
            )
        except (ClientError, KafkaError) as exc:
            log.info("leaving group %r failed: %s", self.group_id, exc)


def leave_group_body(group_id: str, member_id: str, group_instance_id: str | None) -> LeaveGroupRequest:
    """A LeaveGroup for one member, readable by every version (v3+ takes a member list)."""
    return LeaveGroupRequest(
        group_id=group_id,
        member_id=member_id,
        members=[LeaveGroupRequest.MemberIdentity(member_id=member_id, group_instance_id=group_instance_id)],
    )
