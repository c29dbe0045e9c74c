"""Spate's producer: ``send`` returns a future; a background thread delivers batches.

::

    with Producer("127.0.0.1:9092", compression_type="lz4") as producer:
        future = producer.send("orders", b"value", key=b"customer-7")
        metadata = future.result()          # RecordMetadata(topic, partition, offset, timestamp)
        producer.flush()

``send`` only encodes the record into its partition's open batch (under a
short lock) and returns; the sender thread (``sender.py``) turns ready
batches into Produce requests. Settings follow the Kafka producer's names,
meanings and defaults (``producer_config.py``); idempotence is on unless
they rule it out, so retries never duplicate a record or reorder a partition.

Delivery callbacks (``on_delivery`` or ``future.add_done_callback``) run on
the sender thread: keep them short, and do not call ``flush`` or ``close``
from one.

Transactions, with Kafka's API and meaning::

    producer = Producer(servers, transactional_id="copier-1")
    producer.init_transactions()             # fences older producers with this id
    producer.begin_transaction()
    producer.send("out", b"...")
    producer.send_offsets_to_transaction(consumer_positions, "copier-group")
    producer.commit_transaction()            # or abort_transaction()

Errors say what to do next: :class:`ProducerFencedError` (another instance
took over the id; only ``close`` is left), :class:`TransactionAbortableError`
(something in the transaction failed: ``abort_transaction`` and retry the
work) and :class:`InvalidTxnStateError` (calls out of order). A transaction
still open when the producer closes is aborted, unless ``prepare_handoff``
handed it to another process (see ``transaction_completion.py``). The
transaction calls block up to their ``timeout_ms`` (default
``max_block_ms``); after a KafkaTimeoutError the same call may be made again
to keep waiting for the same outcome.
"""

from __future__ import annotations

import random
import socket
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable, Mapping, Protocol, Sequence

from spate.client.commit_offsets import offsets_to_commit
from spate.client.config import timeout_seconds
from spate.client.errors import ClientClosedError, InvalidTxnStateError, KafkaTimeoutError
from spate.client.net.connection import SocketFactory
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import Backoff
from spate.client.producer.accumulator import RecordAccumulator
from spate.client.producer.batch import ProducerBatch
from spate.client.producer.buffer_memory import BufferMemory
from spate.client.producer.future_record_metadata import DeliveryCallback, FutureRecordMetadata, ProduceResult
from spate.client.producer.open_transaction import OpenTransaction
from spate.client.producer.partitioner import DefaultPartitioner, Partitioner
from spate.client.producer.producer_config import ProducerConfig
from spate.client.producer.producer_metadata import ProducerMetadata
from spate.client.producer.producer_record import RECORD_OVERHEAD, HeadersArg, as_bytes, as_headers, headers_size
from spate.client.producer.sender import Sender
from spate.client.producer.transaction_manager import TransactionManager
from spate.protocol import ErrorCode, KafkaError
from spate.structs import OffsetAndMetadata, TopicPartition


class _HasGroupId(Protocol):
    group_id: str


class Producer:
    def __init__(
        self,
        bootstrap_servers: str | Sequence[str],
        *,
        partitioner: Partitioner | None = None,
        clock: Callable[[], float] = time.monotonic,
        time_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
        rng: random.Random | None = None,
        socket_factory: SocketFactory = socket.create_connection,
        **options: Any,
    ) -> None:
        """Create a producer and start its sender thread (no connection is made yet).

        ``options`` are its settings (``acks``, ``linger_ms``, ``transactional_id``, ...), as
        :class:`~spate.client.producer.producer_config.ProducerConfig` names, defaults and checks them.
        ``partitioner`` picks the partition of a record sent without one (default: Kafka's).
        ``clock``, ``time_ms``, ``rng`` and ``socket_factory`` are for tests.
        """
        self._config = config = ProducerConfig.from_options("Producer", options)
        self.idempotent = config.idempotent
        self._clock = clock
        self._time_ms = time_ms
        rng = rng or random.Random()
        self._connect(bootstrap_servers, rng, socket_factory)
        self._partitioner: Partitioner = partitioner or DefaultPartitioner(rng)
        self._accumulator = RecordAccumulator(
            batch_size=config.batch_size,
            linger=config.linger,
            compression=config.compression,
            delivery_timeout=config.delivery_timeout,
        )
        # Settings send() reads for every record, as plain attributes.
        self._max_block = config.max_block
        self._max_request_size = config.max_request_size
        self._no_linger = config.linger_ms <= 0
        self._lock = threading.Lock()
        self._memory = BufferMemory(config.buffer_memory, self._lock, clock)
        self._closed = False
        self._fatal: BaseException | None = None
        self._transactions = (
            TransactionManager(config.transactional_id, config.transaction_timeout_ms) if self.idempotent else None
        )
        # The manager when transactional: send() checks every record against the transaction.
        self._transactional = (
            self._transactions if self._transactions is not None and self._transactions.is_transactional else None
        )
        # Set by prepare_handoff: close() then leaves the open transaction to its new owner.
        self._handed_off = False
        self._sender = self._start_sender(rng)

    def _start_sender(self, rng: random.Random) -> Sender:
        config = self._config
        sender = Sender(
            network=self._network,
            accumulator=self._accumulator,
            lock=self._lock,
            partitioner=self._partitioner,
            transactions=self._transactions,
            config=config,
            backoff=Backoff(config.retry_backoff_ms, config.retry_backoff_max_ms, rng),
            on_batch_done=self._on_batch_done,
            on_fatal_error=self._on_fatal_error,
            clock=self._clock,
        )
        sender.start()
        return sender

    def _connect(self, bootstrap_servers: str | Sequence[str], rng: random.Random, socket_factory: SocketFactory) -> None:
        """The network client, and the producer's view of the metadata it keeps."""
        self._network = NetworkClient(
            bootstrap_servers, self._config, clock=self._clock, rng=rng, socket_factory=socket_factory,
            allow_auto_topic_creation=True,
        )
        self._metadata = self._network.metadata
        self._producer_metadata = ProducerMetadata(
            self._metadata,
            wakeup=self._network.wakeup,
            check_usable=self._check_still_usable,
            max_block=self._config.max_block,
            clock=self._clock,
        )
        # The same dict: send() reads it without a call per record.
        self._topics = self._producer_metadata.topics

    # --- sending ----------------------------------------------------------------------------------

    def send(
        self,
        topic: str,
        value: bytes | str | None = None,
        key: bytes | str | None = None,
        partition: int | None = None,
        timestamp: int | None = None,
        headers: HeadersArg = None,
        *,
        on_delivery: DeliveryCallback | None = None,
    ) -> FutureRecordMetadata:
        """Queue one record; the future resolves to its RecordMetadata or fails with the reason.

        The future is a :class:`FutureRecordMetadata` (``result``,
        ``exception``, ``done``, ``add_done_callback``, as on
        ``concurrent.futures.Future``); the records of a batch share one
        outcome, so sending costs no lock or condition per record.
        ``timestamp`` is milliseconds since the epoch (default: now).
        ``headers`` is a mapping or a sequence of ``(name, value)`` pairs.
        ``on_delivery(metadata, error)`` runs on the sender thread when the
        outcome is known. Blocks up to ``max_block_ms`` while the topic's
        metadata is unknown or the buffer memory is used up, then raises
        KafkaTimeoutError.
        """
        # The hot path, run once per record: the common case stays inline (a call costs
        # measurable time here), and every rare case is a call.
        if self._closed or self._fatal is not None or (partition is not None and partition < 0):
            self._refuse_send(partition)
        txn = self._transactional
        if txn is not None:
            self._check_transactional_send(txn)
        if value is not None and type(value) is not bytes:
            value = as_bytes(value, "value")
        if key is not None and type(key) is not bytes:
            key = as_bytes(key, "key")
        record_headers = as_headers(headers) if headers else ()
        stamp = self._time_ms() if timestamp is None else int(timestamp)
        known = self._topics.get(topic)
        if known is not None and known[0] is self._metadata.snapshot:
            _, count, available = known
        else:
            count, available = self._producer_metadata.lookup(topic)
        deadline = None
        if count is None or (partition is not None and partition >= count):
            deadline = self._clock() + self._max_block
            snapshot, count = self._producer_metadata.wait_for_partitions(topic, partition, deadline)
            available = snapshot.available_partitions(topic)
        size = RECORD_OVERHEAD + (len(key) if key is not None else 0) + (len(value) if value is not None else 0)
        if record_headers:
            size += headers_size(record_headers)
        if size > self._max_request_size:
            return self._refuse_oversized(topic, partition, size, on_delivery)

        # acquire/release rather than ``with``: a third of the cost on this path.
        lock = self._lock
        memory = self._memory
        lock.acquire()
        try:
            if memory.used >= memory.limit:
                deadline = self._clock() + self._max_block if deadline is None else deadline
                memory.wait_for_room(deadline, self._max_block, self._check_not_failed)
            if partition is None:
                partition = self._partitioner.partition(topic, key, count, available)
            if txn is not None:
                txn.check_send(TopicPartition(topic, partition))
            batch, new_batch, batch_closed = self._accumulator.append_record(
                topic, partition, stamp, key, value, record_headers, self._clock
            )
            index = batch.record_count - 1
            if on_delivery is not None:
                batch.result.add_callback_unlocked(index, on_delivery)
            if new_batch:
                memory.reserve(batch, max(self._accumulator.batch_size, batch.size_in_bytes))
            if batch_closed:
                self._partitioner.batch_closed(topic, partition, count, available)
        finally:
            lock.release()
        if (new_batch or batch_closed) and (self._sender.idle or (new_batch and self._no_linger)):
            # An idle sender waits for nothing but a timer: wake it to send, or to start
            # the linger timer. One with requests in flight looks at the queues again at
            # the next response, except that without linger a new batch is sendable at
            # once and must not wait for a round trip. Waking costs a syscall (and a GIL
            # hand-over) only while the sender is blocked in poll.
            self._network.wakeup()
        return FutureRecordMetadata(batch.result, index)

    def _refuse_send(self, partition: int | None) -> None:
        if self._closed:
            raise ClientClosedError("send() after the producer was closed")
        if self._fatal is not None:
            raise self._fatal
        raise ValueError(f"partition must not be negative, not {partition}")

    def _check_transactional_send(self, txn: TransactionManager) -> None:
        if self._handed_off:
            raise InvalidTxnStateError("send() after prepare_handoff(): the transaction belongs to its new owner")
        txn.check_send(None)

    def _refuse_oversized(
        self, topic: str, partition: int | None, size: int, on_delivery: DeliveryCallback | None
    ) -> FutureRecordMetadata:
        """A future already failed with MESSAGE_TOO_LARGE; the record is not queued."""
        error = KafkaError(
            ErrorCode.MESSAGE_TOO_LARGE,
            f"a {size}-byte record exceeds max_request_size ({self._max_request_size} bytes)",
        )
        if self._transactional is not None:
            self._transactional.send_failed(error)  # the transaction would commit without this record
        refused = ProduceResult(topic, -1 if partition is None else partition)
        if on_delivery is not None:
            refused.add_callback(0, on_delivery)
        refused.fail(error)
        return FutureRecordMetadata(refused, 0)

    def _check_still_usable(self) -> None:
        """Raised from waits: the producer failed or was closed meanwhile."""
        if self._fatal is not None:
            raise self._fatal
        if self._closed:
            raise ClientClosedError("the producer was closed while waiting for metadata")

    def _check_not_failed(self) -> None:
        if self._fatal is not None:
            raise self._fatal

    # --- flush ------------------------------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> None:
        """Send everything queued now and wait (seconds; None: no limit) until each record's outcome is known.

        As in Kafka's producer, the records' delivery callbacks have all run
        when ``flush`` returns. Raises KafkaTimeoutError when the timeout passes first.
        """
        with self._lock:
            pending = self._memory.incomplete()
            self._accumulator.begin_flush()
        self._network.wakeup()
        try:
            finished = self._memory.wait_until_done(pending, timeout)
        finally:
            with self._lock:
                self._accumulator.end_flush()
        if not finished:
            undone = sum(batch.record_count for batch in pending if not batch.done)
            raise KafkaTimeoutError(f"flush timed out with {undone} record(s) still undelivered")

    # --- transactions -----------------------------------------------------------------------------

    def init_transactions(self, timeout_ms: float | None = None) -> None:
        """Register the transactional id with its coordinator; call once, before the first transaction.

        Fences any older producer with the same id and completes or aborts
        the transaction it left open. Retries while the coordinator is
        loading or busy (COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS,
        NOT_COORDINATOR) until ``timeout_ms``.
        """
        txn = self._transaction_manager("init_transactions")
        self._await(txn.begin_init(), timeout_ms, "init_transactions")

    def begin_transaction(self) -> None:
        """Start a transaction: records sent from now on commit or abort together."""
        self._transaction_manager("begin_transaction").begin_transaction()

    def send_offsets_to_transaction(
        self,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
        group_id: str | _HasGroupId,
        timeout_ms: float | None = None,
    ) -> None:
        """Commit a consumer group's positions as part of the transaction.

        ``offsets`` are the next offsets to consume (last processed + 1).
        ``group_id`` is the group's id, or a consumer's ``group_metadata()``.
        The group sees them only if the transaction commits.
        """
        txn = self._transaction_manager("send_offsets_to_transaction")
        group = group_id if isinstance(group_id, str) else group_id.group_id
        if not group:
            raise ValueError("send_offsets_to_transaction needs a group id")
        committed = offsets_to_commit(offsets)
        if not committed:
            return
        self._await(txn.begin_send_offsets(committed, group), timeout_ms, "send_offsets_to_transaction")

    def commit_transaction(self, timeout_ms: float | None = None) -> None:
        """Send everything of the transaction, then commit it.

        Raises TransactionAbortableError if a record or the offsets of the
        transaction failed: call ``abort_transaction`` then.
        """
        txn = self._transaction_manager("commit_transaction")
        result = txn.begin_commit()
        with self._lock:
            self._accumulator.begin_flush()
        try:
            self._await(result, timeout_ms, "commit_transaction")
        finally:
            with self._lock:
                self._accumulator.end_flush()

    def abort_transaction(self, timeout_ms: float | None = None) -> None:
        """Abort the transaction: records not yet sent are dropped, sent ones are never read as committed."""
        txn = self._transaction_manager("abort_transaction")
        self._await(txn.begin_abort(), timeout_ms, "abort_transaction")

    def transaction_identity(self) -> OpenTransaction:
        """``(transactional_id, producer_id, producer_epoch)`` this producer writes under.

        Available once ``init_transactions`` has completed, and still after
        ``close``. Another process can end this producer's open transaction
        with it (see ``prepare_handoff``). Raises InvalidTxnStateError for a
        producer that is not transactional or not yet initialised.
        """
        txn = self._transactional
        if txn is None:
            raise InvalidTxnStateError("transaction_identity() needs a producer created with a transactional_id")
        producer_id, producer_epoch = txn.producer_id, txn.producer_epoch
        if producer_id < 0 or producer_epoch < 0:
            raise InvalidTxnStateError("transaction_identity() needs init_transactions() to have completed")
        return OpenTransaction(txn.transactional_id, producer_id, producer_epoch)  # type: ignore[arg-type]

    def prepare_handoff(self, timeout_ms: float | None = None) -> OpenTransaction:
        """Get the open transaction ready for another process to commit or abort; returns its identity.

        Call it after the transaction's last ``send`` and
        ``send_offsets_to_transaction``. Waits (up to ``timeout_ms``, default
        ``max_block_ms``) until every record of the transaction is
        acknowledged, then checks the transaction is open and healthy.
        Afterwards ``close`` leaves the transaction open instead of aborting
        it, so it stays open until its new owner ends it (EndTxn with this
        identity, see ``transaction_completion.py``) or the coordinator
        aborts it after ``transaction_timeout_ms``. From then on ``send`` and
        the transaction calls raise InvalidTxnStateError; calling
        ``prepare_handoff`` again returns the same identity.

        Raises InvalidTxnStateError when no transaction is open (none was
        begun, or it is committing or aborting), TransactionAbortableError
        when part of it failed (abort it; this producer still aborts it on
        ``close``), ProducerFencedError or another fatal error, and
        KafkaTimeoutError when the records are not acknowledged in time.
        """
        txn = self._transaction_manager("prepare_handoff", after_handoff=True)
        if self._handed_off:
            return self.transaction_identity()
        timeout = timeout_seconds(timeout_ms, self._max_block)
        txn.check_open("prepare_handoff")
        self.flush(timeout)
        txn.check_open("prepare_handoff")
        identity = self.transaction_identity()
        self._handed_off = True
        return identity

    def _transaction_manager(self, call: str, *, after_handoff: bool = False) -> TransactionManager:
        if self._closed:
            raise ClientClosedError(f"{call}() after the producer was closed")
        txn = self._transactional
        if txn is None:
            raise InvalidTxnStateError(f"{call}() needs a producer created with a transactional_id")
        if self._handed_off and not after_handoff:
            raise InvalidTxnStateError(
                f"{call}() after prepare_handoff(): the transaction belongs to its new owner; close the producer"
            )
        return txn

    def _await(self, result: Future[None], timeout_ms: float | None, call: str) -> None:
        self._network.wakeup()
        timeout = timeout_seconds(timeout_ms, self._max_block)
        try:
            result.result(timeout)
        except TimeoutError:
            raise KafkaTimeoutError(
                f"{call}() did not complete within {timeout * 1000:.0f} ms; call it again to keep waiting"
            ) from None

    # --- close ------------------------------------------------------------------------------------

    def close(self, timeout: float | None = None, *, abort_open_transaction: bool | None = None) -> None:
        """Deliver what is queued (waiting at most ``timeout`` seconds), then stop.

        Records still undelivered when the timeout passes fail with
        ClientClosedError. An open transaction is aborted, unless
        ``abort_open_transaction`` is False, or it is None (the default) and
        ``prepare_handoff`` handed the transaction over: then it stays open
        for its new owner. Calling close again does nothing.
        """
        if self._closed:
            return
        self._closed = True
        with self._lock:
            self._accumulator.closing = True
        abort = not self._handed_off if abort_open_transaction is None else abort_open_transaction
        if abort and self._transactional is not None:
            self._transactional.abort_on_close()
        self._sender.initiate_close()
        if threading.current_thread() is self._sender.thread:
            return  # closing from a delivery callback: the sender winds down by itself
        self._sender.thread.join(timeout)
        if self._sender.thread.is_alive():
            self._sender.force_close()
            self._sender.thread.join()

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # --- information ------------------------------------------------------------------------------

    def partitions_for(self, topic: str) -> list[int]:
        """The topic's partition numbers, waiting up to ``max_block_ms`` for its metadata."""
        count = self._metadata.snapshot.partition_count(topic)
        if count is None:
            _, count = self._producer_metadata.wait_for_partitions(topic, None, self._clock() + self._max_block)
        return list(range(count))

    @property
    def closed(self) -> bool:
        return self._closed

    # --- sender callbacks -------------------------------------------------------------------------

    def _on_batch_done(self, batch: ProducerBatch) -> None:
        self._memory.release(batch)

    def _on_fatal_error(self, error: BaseException) -> None:
        self._fatal = error
        self._memory.wake_waiters()
