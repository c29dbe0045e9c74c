"""Finding a consumer group's coordinator, without blocking the consumer's thread.

FindCoordinator goes to the least loaded broker; the answer's broker gets a
connection of its own, under an id no broker uses (``COORDINATOR_ID_BASE``
minus its node id, as in Kafka's clients), so that group requests never
queue behind fetches. A coordinator that fails (lost connection,
NOT_COORDINATOR) is dropped and looked up again.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Callable

from spate.client.errors import ClientError, KafkaTimeoutError
from spate.client.net.connection import InFlightRequest
from spate.client.net.network_client import NetworkClient
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.find_coordinator import KEY_TYPE_GROUP, FindCoordinatorRequest

log = logging.getLogger(__name__)

COORDINATOR_ID_BASE = 2**31 - 1
# How long ensure() waits for network events at a time, between its checks.
_ENSURE_STEP = 0.05


class CoordinatorLookup:
    """The group's coordinator: ``node`` (a connection id) once found, else None.

    ``errors`` is the consumer's queue of errors to raise from ``poll``: a
    lookup the broker refuses for good lands there.
    """

    def __init__(
        self, network: NetworkClient, group_id: str, errors: deque[BaseException], clock: Callable[[], float]
    ) -> None:
        self._network = network
        self.group_id = group_id
        self._errors = errors
        self._clock = clock
        self.node: int | None = None
        self.address = ""  # host:port of the coordinator once found
        self._find: InFlightRequest | None = None
        self._retry_at = 0.0

    def find(self, now: float) -> None:
        """Take the answer of a lookup in flight, or send one if the coordinator is unknown."""
        request = self._find
        if request is not None:
            if not request.done:
                return
            self._find = None
            self._take_answer(request, now)
        if self.node is not None or now < self._retry_at:
            return
        node = self._network.least_loaded_node(now)
        if node is None:
            return
        body = FindCoordinatorRequest(key=self.group_id, key_type=KEY_TYPE_GROUP)
        try:
            self._find = self._network.send(node, ApiKey.FIND_COORDINATOR, body)
        except ClientError as exc:
            if not exc.retriable:
                self._errors.append(exc)
            self._retry_at = now + self._network.backoff.delay(0)

    def _take_answer(self, request: InFlightRequest, now: float) -> None:
        if request.error is None:
            body = request.response
            code = ErrorCode.of(body.error_code)
            if code == ErrorCode.NONE:
                self._found(body.node_id, body.host, body.port)
                return
            if not code.retriable:
                self._errors.append(KafkaError(code, f"find the coordinator of group {self.group_id!r}"))
        self._retry_at = now + self._network.backoff.delay(0)

    def _found(self, node_id: int, host: str, port: int) -> None:
        connection_id = COORDINATOR_ID_BASE - node_id
        self._network.register_node(connection_id, host, port)
        self.node = connection_id
        self.address = f"{host}:{port}"
        log.debug("group %r: coordinator is broker %d at %s", self.group_id, node_id, self.address)

    def ensure(self, deadline: float) -> int:
        """The coordinator's node, looking it up (and waiting) until ``deadline``."""
        while self.node is None:
            self.find(self._clock())
            if self.node is not None:
                break
            if self._errors:
                raise self._errors.popleft()
            remaining = deadline - self._clock()
            if remaining <= 0:
                raise KafkaTimeoutError(f"the coordinator of group {self.group_id!r} was not found in time")
            self._network.poll(min(remaining, _ENSURE_STEP))
        return self.node

    def dead(self, why: str) -> bool:
        """Drop the coordinator (and its connection) to look it up again; False if none was known."""
        if self.node is None:
            return False
        log.info("group %r: coordinator %s unusable (%s); looking it up again", self.group_id, self.address, why)
        node, self.node = self.node, None
        self._network.disconnect(node)
        return True
