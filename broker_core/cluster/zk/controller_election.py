"""Controller election, as Kafka's ZooKeeper-era brokers elect their controller.

Every broker contends; the one whose session creates the ephemeral
``/controller`` znode is the controller. Creating it and bumping
``/controller_epoch`` happen in one transaction, the bump conditional on
the epoch's data version, so each election has its own epoch and an old
controller can be fenced: a controller adds :meth:`Leadership.fence` to the
transactions it commits, and they fail once another controller was elected.

Everyone watches ``/controller``. When it disappears (the controller's
session ended, or it stepped down) the contenders try again; when it names
someone else, a broker that thought it was controller resigns. A broker also
resigns when its own session is lost: ZooKeeper deletes its ``/controller``
with the session. A suspended connection alone does not resign it, as in
Kafka.

The recipe takes a :class:`ZkSession` and knows nothing of brokers beyond an
id; ``on_elected`` and ``on_resigned`` run on the election's own thread, one
at a time, and may call ZooKeeper.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError, NoNodeError, RolledBackError
from kazoo.protocol.states import EventType, WatchedEvent

from broker_core.cluster.errors import MetadataError
from broker_core.cluster.zk.client import SessionEvent, SessionState, ZkSession
from broker_core.cluster.zk.event_thread import EventThread
from broker_core.cluster.zk.znodes.controller import ControllerEpochZNode, ControllerRegistration, ControllerZNode

logger = logging.getLogger(__name__)

# Elections lost to a concurrent epoch bump before this round gives up (the next watch event retries).
MAX_ATTEMPTS = 10


@dataclass(frozen=True)
class Leadership:
    """This broker is controller for ``epoch``; ``epoch_zk_version`` is the epoch znode's data version."""

    broker_id: int
    epoch: int
    epoch_zk_version: int

    def fence(self, transaction: Any) -> None:
        """Make a ZooKeeper transaction fail unless this is still the latest election."""
        transaction.check(ControllerEpochZNode.path(), self.epoch_zk_version)


class ControllerElection:
    """One broker's part in the controller election."""

    def __init__(
        self,
        session: ZkSession,
        broker_id: int,
        *,
        on_elected: Callable[[Leadership], None] = lambda leadership: None,
        on_resigned: Callable[[], None] = lambda: None,
        clock_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
    ) -> None:
        self._session = session
        self._broker_id = broker_id
        self._on_elected = on_elected
        self._on_resigned = on_resigned
        self._clock_ms = clock_ms
        self._events = EventThread(f"controller-election-{broker_id}")
        self._lock = threading.Lock()
        self._leadership: Leadership | None = None
        self._running = False
        self._remove_listener: Callable[[], None] | None = None

    # --- public API ---------------------------------------------------------------------

    def start(self) -> None:
        """Start contending: try now, and again whenever ``/controller`` disappears."""
        self._running = True
        self._remove_listener = self._session.add_listener(self._on_session_event)
        self._events.submit(self._elect)

    def stop(self) -> None:
        """Stop contending; a controller steps down (its ``/controller`` is deleted) and hears ``on_resigned``."""
        self._running = False
        if self._remove_listener is not None:
            self._remove_listener()
        self._events.submit(self._step_down)
        self._events.stop()

    @property
    def broker_id(self) -> int:
        return self._broker_id

    @property
    def leadership(self) -> Leadership | None:
        """What this broker last won, or ``None`` while it is not controller (as far as it knows)."""
        with self._lock:
            return self._leadership

    def is_controller(self) -> bool:
        """Ask ZooKeeper: does ``/controller`` name this broker and belong to this session?"""
        current = self._read_controller()
        return current is not None and self._is_ours(*current)

    def active_controller(self) -> int | None:
        """The controller's broker id according to ZooKeeper, or ``None`` during an election."""
        current = self._read_controller()
        return current[0].broker_id if current is not None else None

    # --- events (all on the election thread) --------------------------------------------

    def _on_session_event(self, event: SessionEvent) -> None:
        if event.state is SessionState.LOST:
            self._events.submit(self._resign, "its ZooKeeper session was lost")
        elif event.state is SessionState.CONNECTED:
            # Kazoo forgets watches on every disconnect: look again (and contend on a new session).
            self._events.submit(self._elect)

    def _on_controller_event(self, event: WatchedEvent) -> None:
        if self._running and event.type != EventType.NONE:
            self._events.submit(self._elect)

    def _elect(self) -> None:
        if not self._running:
            return
        try:
            for _ in range(MAX_ATTEMPTS):
                current = self._read_controller(watch=True)
                if current is not None:
                    if not self._is_ours(*current):
                        self._resign(f"broker {current[0].broker_id} is controller")
                    elif self.leadership is None:
                        self._won()  # our earlier try landed though its answer was lost
                    return
                if self._try_to_win():
                    return
            logger.warning("controller election: the epoch kept moving under %d attempts", MAX_ATTEMPTS)
        except (MetadataError, KazooException) as exc:
            logger.warning("controller election for broker %d failed: %s", self._broker_id, exc)

    def _try_to_win(self) -> bool:
        """One round: create ``/controller`` and bump the epoch together. True once the question is settled."""
        epoch, epoch_version = self._read_epoch()
        registration = ControllerZNode.encode(ControllerRegistration(self._broker_id, self._clock_ms()))

        def attempt(retrying: bool) -> str:
            if retrying:
                current = self._read_controller()
                if current is not None and self._is_ours(*current):
                    return "won"  # the lost try landed
            transaction = self._session.transaction()
            transaction.create(ControllerZNode.path(), registration, ephemeral=True)
            transaction.set_data(ControllerEpochZNode.path(), ControllerEpochZNode.encode(epoch + 1), epoch_version)
            results = self._session.commit(transaction)
            failures = [r for r in results if isinstance(r, Exception) and not isinstance(r, RolledBackError)]
            if not failures:
                return "won"
            if isinstance(failures[0], NodeExistsError):
                return "lost"
            if isinstance(failures[0], BadVersionError):
                return "retry"  # the epoch moved since we read it
            raise MetadataError(f"controller election failed in ZooKeeper: {type(failures[0]).__name__}")

        outcome = self._session.retry_write(attempt)
        if outcome == "retry":
            return False
        if outcome == "won":
            self._won()
        # Watch /controller whatever happened: its deletion is the next chance (or our own resignation).
        # If it is gone already, go round again.
        return self._session.exists(ControllerZNode.path(), watch=self._on_controller_event) is not None

    def _won(self) -> None:
        # Nobody else bumps the epoch while our /controller exists, so what we read is our election's.
        data, stat = self._session.get(ControllerEpochZNode.path())
        leadership = Leadership(self._broker_id, ControllerEpochZNode.decode(data), stat.version)
        with self._lock:
            self._leadership = leadership
        logger.info("broker %d is controller (epoch %d)", self._broker_id, leadership.epoch)
        self._on_elected(leadership)

    def _resign(self, why: str) -> None:
        with self._lock:
            leadership, self._leadership = self._leadership, None
        if leadership is not None:
            logger.info("broker %d is no longer controller (epoch %d): %s", self._broker_id, leadership.epoch, why)
            self._on_resigned()

    def _step_down(self) -> None:
        if not self._session.connected:
            self._resign("it stepped down")  # without a session there is no /controller of ours left
            return
        try:
            current = self._read_controller()
            if current is not None and self._is_ours(*current):
                self._session.delete(ControllerZNode.path(), version=current[2])
        except (MetadataError, KazooException) as exc:
            logger.warning("broker %d could not delete /controller on stepping down: %s", self._broker_id, exc)
        self._resign("it stepped down")

    # --- ZooKeeper reads -------------------------------------------------------------------

    def _read_controller(self, watch: bool = False) -> tuple[ControllerRegistration, int, int] | None:
        """(registration, owning session, data version) of ``/controller``, or ``None`` if absent."""
        callback = self._on_controller_event if watch else None
        try:
            data, stat = self._session.get(ControllerZNode.path(), watch=callback)
        except NoNodeError:
            if watch and self._session.exists(ControllerZNode.path(), watch=callback) is not None:
                return self._read_controller(watch=True)
            return None
        return ControllerZNode.decode(data), stat.ephemeralOwner, stat.version

    def _read_epoch(self) -> tuple[int, int]:
        """(epoch, data version) of ``/controller_epoch``, creating it at the initial epoch if absent."""
        path = ControllerEpochZNode.path()
        try:
            data, stat = self._session.get(path)
        except NoNodeError:
            try:
                self._session.retry(lambda: self._session.create(path, ControllerEpochZNode.encode(0)))
            except NodeExistsError:
                pass
            data, stat = self._session.get(path)
        return ControllerEpochZNode.decode(data), stat.version

    def _is_ours(self, registration: ControllerRegistration, owner: int, version: int) -> bool:
        return registration.broker_id == self._broker_id and owner == self._session.session_id
