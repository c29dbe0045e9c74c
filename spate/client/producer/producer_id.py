"""Getting an idempotent (non-transactional) producer its id and epoch.

InitProducerId without a transactional id goes to any broker; the sender
sends no produce data until it is answered. Lost connections and retriable
codes are retried with backoff; any other answer is fatal for the producer,
which cannot be idempotent then. A transactional producer gets its id from
its transaction coordinator instead (``txn_requests.InitProducerId``).
"""

from __future__ import annotations

import logging
import math
from typing import Callable

from spate.client.errors import ClientError
from spate.client.net.connection import InFlightRequest
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import Backoff
from spate.client.producer.idempotence import IdempotenceState
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.init_producer_id import InitProducerIdRequest

log = logging.getLogger(__name__)

# Kafka's transaction.timeout.ms default; brokers ignore it without a transactional id.
_TRANSACTION_TIMEOUT_MS = 60_000


class ProducerIdFetcher:
    """Sends InitProducerId until ``idempotence`` has an id; ``on_fatal`` gets a refusal."""

    def __init__(
        self,
        network: NetworkClient,
        idempotence: IdempotenceState,
        backoff: Backoff,
        *,
        request_timeout: float,
        on_fatal: Callable[[BaseException], None],
        clock: Callable[[], float],
    ) -> None:
        self._network = network
        self._request_timeout = request_timeout
        self._idempotence = idempotence
        self._backoff = backoff
        self._on_fatal = on_fatal
        self._clock = clock
        self._request: InFlightRequest | None = None
        self._attempts = 0
        self._retry_at = 0.0

    def maybe_send(self, now: float) -> float:
        """Send InitProducerId if none is in flight and the backoff has passed; seconds until worth looking again."""
        if self._request is not None:
            return self._request_timeout
        if now < self._retry_at:
            return self._retry_at - now
        node = self._network.least_loaded_node(now)
        if node is None:
            return self._backoff.delay(0)
        body = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=_TRANSACTION_TIMEOUT_MS)
        try:
            self._request = self._network.send(node, ApiKey.INIT_PRODUCER_ID, body, callback=self._on_response)
        except ClientError as exc:
            if not exc.retriable:
                self._on_fatal(exc)
                return math.inf  # nothing more to do here: the producer has stopped
            self._retry(exc)
        return self._backoff.delay(0)

    def _on_response(self, request: InFlightRequest) -> None:
        self._request = None
        if request.error is not None:
            self._retry(request.error)
            return
        body = request.response
        code = ErrorCode.of(body.error_code)
        if code == ErrorCode.NONE:
            self._idempotence.set_producer_id(body.producer_id, body.producer_epoch)
            self._attempts = 0
        elif code.retriable:
            self._retry(KafkaError(code, "InitProducerId"))
        else:
            self._on_fatal(KafkaError(code, "InitProducerId refused; the producer cannot be idempotent"))

    def _retry(self, error: BaseException) -> None:
        log.debug("InitProducerId failed, retrying: %s", error)
        self._retry_at = self._clock() + self._backoff.delay(self._attempts)
        self._attempts += 1
