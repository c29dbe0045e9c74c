"""Broker registration: an ephemeral ``/brokers/ids/<id>`` that lives as long as the session.

Creating the znode claims the id; if it exists and belongs to another
session, another live broker holds the id and the registration is refused
(:class:`BrokerAlreadyRegisteredError`). A znode left by this session's own
create whose answer was lost counts as ours, as in Kafka's
``checkedEphemeralCreate``.

When the session expires ZooKeeper deletes the znode. On the next session
the registration is made again (Kafka re-registers on every new session);
``on_registered`` hears each broker id registered that way, and a broker whose
id was taken in the meantime is logged and dropped.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from kazoo.exceptions import NodeExistsError, NoNodeError

from broker_core.cluster.errors import BrokerAlreadyRegisteredError, UnknownBrokerError
from broker_core.cluster.metadata_store import BrokerRegistration
from broker_core.cluster.zk.client import SessionEvent, SessionState, ZkSession
from broker_core.cluster.zk.znodes.brokers import BrokerIdZNode, BrokerInfo

logger = logging.getLogger(__name__)


class BrokerRegistrations:
    """The brokers this process registered through one session."""

    def __init__(
        self,
        session: ZkSession,
        *,
        clock_ms: Callable[[], int],
        on_registered: Callable[[int], None] = lambda broker_id: None,
    ) -> None:
        self._session = session
        self._clock_ms = clock_ms
        self._on_registered = on_registered
        self._lock = threading.Lock()
        # broker id -> (registration, the session that holds its znode)
        self._registered: dict[int, tuple[BrokerRegistration, int | None]] = {}
        self._remove_listener = session.add_listener(self._on_session_event)

    def register(self, registration: BrokerRegistration) -> None:
        with self._lock:
            self._registered[registration.broker_id] = (registration, self._create(registration))

    def unregister(self, broker_id: int) -> None:
        """Delete the broker's znode, whichever session made it; :class:`UnknownBrokerError` if absent."""
        with self._lock:
            self._registered.pop(broker_id, None)
            path = BrokerIdZNode.path(broker_id)

            def attempt(retrying: bool) -> None:
                try:
                    self._session.delete(path)
                except NoNodeError:
                    if not retrying:
                        raise UnknownBrokerError(broker_id) from None

            self._session.retry_write(attempt)

    def registered_ids(self) -> list[int]:
        with self._lock:
            return sorted(self._registered)

    def close(self) -> None:
        """Stop re-registering; the znodes stay until :meth:`unregister` or the session ends."""
        self._remove_listener()

    def _create(self, registration: BrokerRegistration) -> int | None:
        """Create the znode; returns the id of the session that now holds it."""
        path = BrokerIdZNode.path(registration.broker_id)
        data = BrokerIdZNode.encode(BrokerInfo.from_registration(registration, self._clock_ms()))

        def attempt(retrying: bool) -> None:
            try:
                self._session.create(path, data, ephemeral=True)
            except NodeExistsError:
                # After a lost answer the znode may be our own; otherwise the id is taken.
                stat = self._session.exists(path) if retrying else None
                if stat is None or stat.ephemeralOwner != self._session.session_id:
                    raise BrokerAlreadyRegisteredError(registration.broker_id) from None

        self._session.retry_write(attempt)
        return self._session.session_id

    def _on_session_event(self, event: SessionEvent) -> None:
        if event.state is not SessionState.CONNECTED or not event.new_session:
            return
        again: list[int] = []
        with self._lock:
            for broker_id, (registration, session_id) in list(self._registered.items()):
                if session_id == event.session_id:
                    continue  # made on this very session already
                try:
                    self._registered[broker_id] = (registration, self._create(registration))
                except BrokerAlreadyRegisteredError:
                    logger.error("broker id %d was taken while our session was gone; not registered", broker_id)
                    del self._registered[broker_id]
                except Exception:
                    logger.exception("cannot register broker %d again on the new session", broker_id)
                else:
                    logger.info("broker %d registered again on a new session", broker_id)
                    again.append(broker_id)
        for broker_id in again:  # outside the lock: the callback may take the store's lock
            self._on_registered(broker_id)
