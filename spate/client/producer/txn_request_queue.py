"""A transactional producer's requests to its coordinators, one at a time, in priority order.

The queue takes what the transaction manager needs (an id and epoch, a
group's offsets, the end of the transaction, new partitions) and turns each
need into a request handler (``txn_requests.py``). It hands the sender one
request at a time: the first by priority and arrival, once its retry backoff
has passed, preceded by a FindCoordinator when its coordinator is not known
yet. EndTxn waits until no batch is incomplete and no partition is still
being added. The sender sends the request and brings back the answer; the
queue runs the handler, which reports to the manager, and then either drops
the request (done) or queues it again for a retry.

An abort drops what is queued for the transaction (partitions, offsets, a
commit that can no longer succeed); a fatal error fails everything queued.

Runs on the sender thread. It holds the manager's lock while it takes needs
and runs a handler, so that a handler's reports are one step as far as the
application's threads can see. :class:`TxnRequestSender` sends the queue's
requests over the producer's connections and brings the answers back.
"""

from __future__ import annotations

import logging
import math
from typing import Callable

from spate.client.errors import BrokerUnavailableError, ClientError, TransactionAbortedError
from spate.client.net.connection import InFlightRequest
from spate.client.net.find_coordinator import CoordinatorKey
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import Backoff
from spate.client.producer.transaction_manager import (
    EndNeeded,
    InitNeeded,
    OffsetsNeeded,
    TransactionManager,
)
from spate.client.producer.txn_requests import (
    CONCURRENT_TRANSACTIONS_BACKOFF,
    AddOffsetsToTxn,
    AddPartitionsToTxn,
    EndTxn,
    FindCoordinator,
    InitProducerId,
    Outcome,
    TxnOffsetCommit,
    TxnRequest,
)

log = logging.getLogger(__name__)


class TxnRequestQueue:
    def __init__(self, transactions: TransactionManager) -> None:
        self.transactions = self._txn = transactions
        self._key = CoordinatorKey.transaction(transactions.transactional_id or "")
        self._requests: list[TxnRequest] = []
        self._in_flight: TxnRequest | None = None
        self._finding: dict[CoordinatorKey, FindCoordinator] = {}
        self._coordinators: dict[CoordinatorKey, tuple[int, str, int]] = {}
        self._sequence_number = 0  # keeps requests of equal priority in arrival order

    # --- what to send -------------------------------------------------------------------------

    def next_request(self, now: float, has_incomplete_batches: bool) -> tuple[TxnRequest | None, float]:
        """The request to send now, if any, and otherwise how long until one may be due."""
        txn = self._txn
        with txn.lock:
            self._take_needs()
            if self._in_flight is not None:
                return None, math.inf
            new = txn.take_new_partitions()
            if new:
                self._enqueue(AddPartitionsToTxn(self._key, set(new)))
            while self._requests:
                request = self._requests[0]
                failure = txn.failure
                if failure is not None and (txn.fatal_error is not None or not isinstance(request, FindCoordinator)):
                    self._requests.pop(0)
                    request.fail(failure)
                    continue
                if request.is_end_txn and (has_incomplete_batches or txn.is_adding_partitions):
                    return None, math.inf  # woken by the responses of what is still out
                if request.coordinator is not None and request.coordinator not in self._coordinators:
                    self._find_first(request)
                    request = self._requests[0]
                if request.retry_at > now:
                    return None, request.retry_at - now
                self._requests.pop(0)
                self._in_flight = request
                return request, 0.0
            return None, math.inf

    def coordinator_address(self, request: TxnRequest) -> tuple[int, str, int] | None:
        """Node id, host and port of the request's coordinator; None: any broker will do."""
        if request.coordinator is None:
            return None
        return self._coordinators.get(request.coordinator)

    @property
    def has_request_in_flight(self) -> bool:
        return self._in_flight is not None

    def has_pending_requests(self) -> bool:
        with self._txn.lock:
            return bool(self._requests or self._in_flight or self._txn.has_needs())

    # --- answers ------------------------------------------------------------------------------

    def on_response(self, request: TxnRequest, body: object, now: float, backoff: float) -> None:
        """Apply the answer to the in-flight request; ``backoff`` is the delay before a retry."""
        with self._txn.lock:
            self._take_needs()
            self._finish(request, request.on_response(self._txn, body), now, backoff)
            self._take_needs()

    def on_transport_error(self, request: TxnRequest, error: BaseException, now: float, backoff: float) -> None:
        """The in-flight request (or one that could not be sent) got no answer."""
        with self._txn.lock:
            self._take_needs()
            self._finish(request, request.on_transport_error(self._txn, error), now, backoff)
            self._take_needs()

    def _finish(self, request: TxnRequest, outcome: Outcome, now: float, backoff: float) -> None:
        if self._in_flight is request:
            self._in_flight = None
        if outcome is Outcome.DONE:
            if isinstance(request, FindCoordinator):
                self._found(request)
            if request.follow_up is not None:
                self._enqueue(request.follow_up)
            return
        fatal = self._txn.fatal_error
        if fatal is not None:
            request.fail(fatal)
            return
        if outcome is Outcome.FIND_COORDINATOR and request.coordinator is not None:
            self._coordinators.pop(request.coordinator, None)
        request.attempts += 1
        request.retry_at = now + (CONCURRENT_TRANSACTIONS_BACKOFF if outcome is Outcome.RETRY_SOON else backoff)
        self._enqueue(request)

    # --- coordinators -------------------------------------------------------------------------

    def _find_first(self, request: TxnRequest) -> None:
        """Queue a FindCoordinator ahead of ``request`` (one per coordinator)."""
        key = request.coordinator
        if key is None or key in self._finding:
            return
        finder = self._finding[key] = FindCoordinator(key)
        finder.retry_at = request.retry_at
        self._enqueue(finder)

    def _found(self, finder: FindCoordinator) -> None:
        self._finding.pop(finder.target, None)
        if finder.address is not None:
            self._coordinators[finder.target] = finder.address
            return
        error = finder.result.exception() if finder.result.done() else None
        if error is not None and self._txn.fatal_error is None:
            self._fail_waiting_for(finder.target, error)

    def _fail_waiting_for(self, key: CoordinatorKey, error: BaseException) -> None:
        """The coordinator cannot be found for good: fail the requests that need it."""
        for request in [r for r in self._requests if r.coordinator == key]:
            self._requests.remove(request)
            if isinstance(request, TxnOffsetCommit | AddOffsetsToTxn):
                request.fail_abortable(self._txn, error)
            else:
                request.fail_fatal(self._txn, error)

    # --- from needs to requests ---------------------------------------------------------------

    def _take_needs(self) -> None:
        """Queue what the manager needs; after a fatal error, fail everything queued instead."""
        txn = self._txn
        fatal = txn.fatal_error
        if fatal is not None:
            for request in self._requests:
                request.fail(fatal)
            self._requests.clear()
            return
        for need in txn.take_needs():
            if isinstance(need, InitNeeded):
                self._enqueue(InitProducerId(need.result, self._key))
            elif isinstance(need, OffsetsNeeded):
                self._enqueue(AddOffsetsToTxn(need.result, self._key, need.group_id, need.offsets))
            elif isinstance(need, EndNeeded):
                if not need.commit:
                    self._drop_for_abort()
                self._enqueue(EndTxn(need.result, self._key, need.commit))

    def _drop_for_abort(self) -> None:
        """Drop what is queued for the aborted transaction; lookups, re-initialization and aborts stay."""
        kept: list[TxnRequest] = []
        for request in self._requests:
            if isinstance(request, FindCoordinator | InitProducerId) or (
                isinstance(request, EndTxn) and not request.commit
            ):
                kept.append(request)
                continue
            if isinstance(request, AddPartitionsToTxn):
                self._txn.partitions_not_added(request.partitions)
            # A queued commit's caller was already told why it cannot succeed.
            request.fail(TransactionAbortedError("the transaction was aborted"))
        self._requests = kept

    def _enqueue(self, request: TxnRequest) -> None:
        if request.order is None:
            self._sequence_number += 1
            request.order = (request.priority, self._sequence_number)
        self._requests.append(request)
        self._requests.sort(key=lambda r: r.order)


class TxnRequestSender:
    """Sends the queue's next request when one is due, and hands the answer back to the queue.

    ``on_fatal`` gets the transaction's fatal error once a request has made
    the producer stop.
    """

    def __init__(
        self,
        queue: TxnRequestQueue,
        network: NetworkClient,
        backoff: Backoff,
        *,
        on_fatal: Callable[[BaseException], None],
        clock: Callable[[], float],
    ) -> None:
        self._queue = queue
        self._network = network
        self._backoff = backoff
        self._on_fatal = on_fatal
        self._clock = clock

    def maybe_send(self, now: float, has_incomplete_batches: bool) -> float:
        """Send the next request if one is due; seconds until one may be (0: look again at once)."""
        queue = self._queue
        if queue.has_request_in_flight:
            return math.inf
        request, wait = queue.next_request(now, has_incomplete_batches)
        if request is None:
            return wait
        try:
            node = self._node_for(request, now)
            self._network.send(
                node,
                request.api_key,
                request.body(queue.transactions),
                min_version=request.min_version,
                context=request,
                callback=self._on_response,
            )
        except ClientError as exc:
            log.debug("%r not sent: %s", request, exc)
            queue.on_transport_error(request, exc, self._clock(), self._backoff.delay(request.attempts))
            self._check_fatal()
            return 0.0
        return math.inf

    def _node_for(self, request: TxnRequest, now: float) -> int:
        address = self._queue.coordinator_address(request)
        if address is None:
            node = self._network.least_loaded_node(now)
            if node is None:
                raise BrokerUnavailableError("no broker can be reached")
            return node
        node, host, port = address
        if self._network.node(node) is None:
            self._network.register_node(node, host, port)
        return node

    def _on_response(self, sent: InFlightRequest) -> None:
        request: TxnRequest = sent.context
        now, backoff = self._clock(), self._backoff.delay(request.attempts)
        if sent.error is not None:
            log.debug("%r failed: %s", request, sent.error)
            self._queue.on_transport_error(request, sent.error, now, backoff)
        else:
            self._queue.on_response(request, sent.response, now, backoff)
        self._check_fatal()

    def _check_fatal(self) -> None:
        error = self._queue.transactions.fatal_error
        if error is not None:
            self._on_fatal(error)
