"""The producer's background thread: drains the accumulator into Produce requests.

One loop iteration: refresh metadata if due; make sure an idempotent
producer has its producer id; ask the accumulator which leaders have
sendable batches; drain those whose connection has room (fewer than
``max_in_flight`` requests); send one Produce request per leader; expire
batches past their delivery timeout; then wait for responses until the next
batch could become ready. The sender owns the network client and the
transaction manager; it touches the accumulator and the partitioner only
under the producer's lock.

Response handling, per batch:

* no error: resolve the futures with the offsets;
* DUPLICATE_SEQUENCE_NUMBER: an earlier attempt was appended; resolve
  without offsets;
* retriable error (including OUT_OF_ORDER_SEQUENCE_NUMBER for a batch behind
  one that is being retried), attempts and delivery time left: back off and
  re-queue in sequence order, and refresh metadata when the leader may have
  moved;
* anything else: fail the futures; if the batch had a sequence number the
  producer identity is reset so later batches are not stuck behind the gap
  (a transactional producer instead makes its transaction abortable, see
  ``transaction_manager.py``).

A transactional producer's requests to its coordinators (FindCoordinator,
InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit,
EndTxn) go out from the same loop, one at a time, ahead of produce data, in
the order ``txn_request_queue.py`` decides;
while the transaction is being aborted, batches not yet sent are failed
instead of sent.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Callable

from spate.client.errors import (
    BrokerUnavailableError,
    ClientClosedError,
    ClientError,
    KafkaTimeoutError,
    NetworkError,
    is_retriable,
)
from spate.client.net.connection import InFlightRequest
from spate.client.net.metadata import LEADER_MOVED_ERRORS
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import Backoff
from spate.client.producer.accumulator import RecordAccumulator
from spate.client.producer.batch import ProducerBatch
from spate.client.producer.partitioner import Partitioner
from spate.client.producer.producer_config import ProducerConfig
from spate.client.producer.producer_id import ProducerIdFetcher
from spate.client.producer.transaction_manager import TransactionManager
from spate.client.producer.txn_request_queue import TxnRequestQueue, TxnRequestSender
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.produce import ProduceRequest
from spate.structs import TopicPartition, group_by_topic

log = logging.getLogger(__name__)

# Idle wait when nothing at all is scheduled; a wakeup cuts it short.
_IDLE_POLL = 1.0


class Sender:
    def __init__(
        self,
        *,
        network: NetworkClient,
        accumulator: RecordAccumulator,
        lock: threading.Lock,
        partitioner: Partitioner,
        transactions: TransactionManager | None,
        config: ProducerConfig,
        backoff: Backoff,
        on_batch_done: Callable[[ProducerBatch], None],
        on_fatal_error: Callable[[BaseException], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.network = network
        self.accumulator = accumulator
        self.lock = lock
        self.partitioner = partitioner
        self.transactions = transactions
        # A transactional producer's requests to its coordinators.
        self.txn_requests = (
            TxnRequestQueue(transactions) if transactions is not None and transactions.is_transactional else None
        )
        self._txn_sender = (
            TxnRequestSender(self.txn_requests, network, backoff, on_fatal=self._transaction_failed, clock=clock)
            if self.txn_requests is not None
            else None
        )
        self.acks: int = config.acks  # type: ignore[assignment]  # parsed by the config
        self.request_timeout_ms = config.request_timeout_ms
        self.max_request_size = config.max_request_size
        self.max_in_flight = config.max_in_flight_requests_per_connection
        self.retries = config.retries
        self.backoff = backoff
        self.on_batch_done = on_batch_done
        self.on_fatal_error = on_fatal_error
        self.clock = clock
        self._running = True
        self._forced = False
        self._in_flight_batches = 0
        # An idempotent producer's id, when it has no transaction coordinator to get it from.
        self._producer_id = (
            ProducerIdFetcher(
                network, transactions, backoff,
                request_timeout=config.request_timeout_ms / 1000, on_fatal=self._fatal_error, clock=clock,
            )
            if transactions is not None and not transactions.is_transactional
            else None
        )
        self._fatal: BaseException | None = None
        self._close_started: float | None = None
        self.thread = threading.Thread(target=self.run, name="spate-producer-sender", daemon=True)

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        self.thread.start()

    def initiate_close(self) -> None:
        """Finish sending what is queued (and an abort under way), then stop."""
        self._close_started = self.clock()
        self._running = False
        self.network.wakeup()

    def force_close(self) -> None:
        """Stop now; whatever is undelivered fails with ClientClosedError."""
        self._running = False
        self._forced = True
        self.network.wakeup()

    def run(self) -> None:
        try:
            while self._running:
                self.run_once()
            while not self._forced and self._fatal is None and self._has_pending_work():
                self.run_once()
        except BaseException as exc:  # a bug here must not leave futures hanging forever
            log.exception("producer sender thread failed")
            self._fatal = exc
            self.on_fatal_error(exc)
        finally:
            if self._forced or self._fatal is not None:
                self._fail_everything()
            self.network.close()

    @property
    def idle(self) -> bool:
        """No produce request in flight: nothing will wake the sender but a timer or ``wakeup``."""
        return self._in_flight_batches == 0

    def _has_pending_work(self) -> bool:
        with self.lock:
            queued = self.accumulator.has_batches()
        if queued or self._in_flight_batches > 0:
            return True
        txn, requests = self.transactions, self.txn_requests
        if txn is None or requests is None or not txn.is_completing or not requests.has_pending_requests():
            return False
        # Ending a transaction while closing is worth one request timeout, not more:
        # the coordinator aborts an abandoned transaction by itself.
        started = self._close_started if self._close_started is not None else self.clock()
        return self.clock() - started < self.request_timeout_ms / 1000

    def _final_error(self) -> BaseException:
        return self._fatal or ClientClosedError("the producer was closed before the record was delivered")

    def _fail_everything(self) -> None:
        """Fail queued batches, and in-flight ones by closing their connections."""
        with self.lock:
            queued = self.accumulator.abort_all()
        for batch in queued:
            self._finish(batch, error=self._final_error())
        self.network.disconnect_all()

    # --- one iteration ----------------------------------------------------------------------------

    def run_once(self) -> None:
        now = self.clock()
        timeout = min(_IDLE_POLL, self.network.maybe_update_metadata(now))
        if self._fatal is None:
            timeout = min(timeout, self._send_produce_data(now))
        self.network.poll(timeout)

    def _send_produce_data(self, now: float) -> float:
        txn = self.transactions
        txn_wait = math.inf
        if txn is not None and txn.is_transactional:
            txn_wait = self._maybe_send_txn_request(now)
            if self._fatal is not None:
                return _IDLE_POLL
            abort_error = txn.should_abort_queued_batches()
            if abort_error is not None:
                self._abort_queued(abort_error)
            if not txn.has_producer_id:
                self._expire(now)
                return txn_wait
        elif self._producer_id is not None and txn is not None and not txn.has_producer_id:
            wait = self._producer_id.maybe_send(now)
            self._expire(now)
            return wait
        snapshot = self.network.metadata.snapshot
        leader = snapshot.leader

        def leader_of(tp: TopicPartition) -> int:
            return leader(tp.topic, tp.partition)

        can_send = txn.can_send if txn is not None else _always
        with self.lock:
            check = self.accumulator.ready(leader_of, now, can_send)
        if check.unknown_leader_topics:
            self.network.metadata.add_topics(check.unknown_leader_topics)
            self.network.metadata.request_update()
        nodes, timeout = self._sendable_nodes(check.nodes, now, check.next_check)
        with self.lock:
            drained = self.accumulator.drain(leader_of, nodes, self.max_request_size, now, can_send) if nodes else {}
            for batches in drained.values():
                for batch in batches:
                    tp = batch.topic_partition
                    count = snapshot.partition_count(tp.topic) or 0
                    self.partitioner.batch_closed(tp.topic, tp.partition, count, snapshot.available_partitions(tp.topic))
        self._expire(now)
        for node, batches in drained.items():
            self._send_produce(node, batches)
        # More batches may already be ready behind the ones just sent: look again
        # right after collecting whatever responses have arrived.
        return 0.0 if drained else min(timeout, txn_wait)

    def _sendable_nodes(self, ready: set[int], now: float, timeout: float) -> tuple[set[int], float]:
        """The ready nodes with room for a request and a connection (opened now if need be).

        Returns them with ``timeout`` shortened to the earliest reconnect of the others.
        """
        nodes = set()
        for node in ready:
            if self.network.in_flight_count(node) >= self.max_in_flight:
                continue
            if not self.network.is_connected(node):
                delay = self.network.connect_delay(node, now)
                if delay > 0:
                    timeout = min(timeout, delay)
                    continue
                try:
                    self.network.connect(node)
                except BrokerUnavailableError as exc:
                    log.debug("cannot connect to leader %s: %s", node, exc)
                    timeout = min(timeout, self.network.connect_delay(node, self.clock()))
                    continue
            nodes.add(node)
        return nodes, timeout

    def _expire(self, now: float) -> None:
        with self.lock:
            expired = self.accumulator.expire(now)
        for batch in expired:
            waited = (now - batch.created_at) * 1000
            self._give_up(
                batch,
                KafkaTimeoutError(
                    f"{batch.record_count} record(s) for {batch.topic_partition} expired: "
                    f"{waited:.0f} ms passed since the batch was created"
                ),
            )

    # --- transactions ---------------------------------------------------------------------------

    def _maybe_send_txn_request(self, now: float) -> float:
        """Send the transaction's next coordinator request if one is due; seconds until one may be."""
        if self._txn_sender is None:
            return math.inf
        with self.lock:
            incomplete = self.accumulator.has_batches()
        return self._txn_sender.maybe_send(now, incomplete or self._in_flight_batches > 0)

    def _transaction_failed(self, error: BaseException) -> None:
        if self._fatal is None:
            log.warning("transactional producer stopped: %s", error)
            self._fatal_error(error)

    def _abort_queued(self, error: BaseException) -> None:
        """Fail every batch not yet sent (the transaction is being, or must be, aborted)."""
        with self.lock:
            batches = self.accumulator.abort_all()
        for batch in batches:
            self._give_up(batch, error)

    # --- failing ---------------------------------------------------------------------------------

    def _fatal_error(self, error: BaseException) -> None:
        self._fatal = error
        self.on_fatal_error(error)
        self._fail_everything()

    # --- produce ----------------------------------------------------------------------------------

    def _send_produce(self, node: int, batches: list[ProducerBatch]) -> None:
        txn = self.transactions
        parts = []
        for batch in batches:
            if txn is not None:
                txn.assign_sequence(batch)
            tp = batch.topic_partition
            parts.append((tp, ProduceRequest.PartitionProduceData(index=tp.partition, records=batch.encode())))
            batch.in_flight = True
            batch.attempts += 1
            if txn is not None:
                txn.sent(batch)
        self._in_flight_batches += len(batches)
        topics = group_by_topic(parts, key=lambda part: part[0], value=lambda part: part[1])
        body = ProduceRequest(
            transactional_id=txn.transactional_id if txn is not None else None,
            acks=self.acks,
            timeout_ms=self.request_timeout_ms,
            topic_data=[ProduceRequest.TopicProduceData(name=name, partition_data=parts) for name, parts in topics.items()],
        )
        try:
            self.network.send(node, ApiKey.PRODUCE, body, context=batches, callback=self._on_produce_response)
        except ClientError as exc:
            for batch in batches:
                self._batch_failed(batch, exc, None)

    def _on_produce_response(self, request: InFlightRequest) -> None:
        batches: list[ProducerBatch] = request.context
        if request.error is not None:
            for batch in batches:
                self._batch_failed(batch, request.error, None)
            return
        if request.response is None:  # acks=0: nothing comes back
            for batch in batches:
                self._batch_succeeded(batch, -1, -1)
            return
        results = {
            (topic.name, partition.index): partition
            for topic in request.response.responses
            for partition in topic.partition_responses
        }
        for batch in batches:
            tp = batch.topic_partition
            result = results.get((tp.topic, tp.partition))
            if result is None:
                self._batch_failed(batch, NetworkError(f"the produce response left out {tp}"), None)
                continue
            code = ErrorCode.of(result.error_code)
            if code == ErrorCode.NONE:
                self._batch_succeeded(batch, result.base_offset, result.log_append_time_ms)
            elif code == ErrorCode.DUPLICATE_SEQUENCE_NUMBER:
                self._batch_succeeded(batch, -1, -1)
            else:
                self._batch_failed(batch, KafkaError(code, f"produce to {tp}"), code)

    def _batch_succeeded(self, batch: ProducerBatch, base_offset: int, log_append_time: int) -> None:
        self._returned(batch)
        if self.transactions is not None:
            self.transactions.acknowledged(batch)
        self._finish(batch, base_offset=base_offset, log_append_time=log_append_time)

    def _batch_failed(self, batch: ProducerBatch, error: BaseException, code: ErrorCode | None) -> None:
        self._returned(batch)
        if self._forced or self._fatal is not None:
            self._finish(batch, error=self._final_error())
            return
        txn = self.transactions
        now = self.clock()
        stale = txn is not None and txn.is_stale(batch)
        retriable = is_retriable(error) or stale
        if code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER and txn is not None and not txn.is_next_to_acknowledge(batch):
            retriable = True  # an earlier batch of the partition is being retried
        if code in LEADER_MOVED_ERRORS or isinstance(error, NetworkError):
            self.network.metadata.request_update()
        expired = now - batch.created_at >= self.accumulator.delivery_timeout
        if retriable and not expired and batch.attempts <= self.retries:
            if stale:
                batch.clear_sequence()
            batch.retry_at = now + self.backoff.delay(batch.attempts - 1)
            log.debug("retrying %r after %s", batch, error)
            with self.lock:
                self.accumulator.reenqueue(batch)
            return
        if retriable and expired:
            waited = (now - batch.created_at) * 1000
            timeout = KafkaTimeoutError(
                f"{batch.record_count} record(s) for {batch.topic_partition} were not delivered within "
                f"the delivery timeout ({waited:.0f} ms since the batch was created); last error: {error}"
            )
            timeout.__cause__ = error
            error = timeout
        self._give_up(batch, error)

    def _returned(self, batch: ProducerBatch) -> None:
        if batch.in_flight:
            batch.in_flight = False
            self._in_flight_batches -= 1
            if self.transactions is not None:
                self.transactions.returned(batch)

    def _give_up(self, batch: ProducerBatch, error: BaseException) -> None:
        """Fail a batch for good; a numbered one leaves a gap, so the identity is reset."""
        txn = self.transactions
        if txn is not None and txn.is_transactional:
            fatal = txn.batch_failed(batch, error)
            self._finish(batch, error=error)
            if fatal is not None and self._fatal is None:
                self._fatal_error(fatal)
            return
        if txn is not None and batch.has_sequence and not txn.is_stale(batch):
            log.warning("resetting the producer id after %r failed: %s", batch, error)
            txn.reset_producer_id()
            with self.lock:
                for queued in self.accumulator.queued_batches():
                    queued.clear_sequence()
        self._finish(batch, error=error)

    def _finish(
        self,
        batch: ProducerBatch,
        *,
        base_offset: int = -1,
        log_append_time: int = -1,
        error: BaseException | None = None,
    ) -> None:
        if error is None:
            batch.complete(base_offset, log_append_time)
        else:
            batch.fail(error)
        self.on_batch_done(batch)


def _always(_: ProducerBatch) -> bool:
    return True
