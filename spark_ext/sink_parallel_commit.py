"""Ending a batch's transactions concurrently, on a bounded number of threads of the driver.

Each EndTxn waits for its coordinator (which appends the PREPARE_COMMIT or
PREPARE_ABORT record of the transaction to its log first), so ending ``n``
transactions one after another costs ``n`` round trips on the driver while
the executors wait for the next micro-batch. :class:`ParallelTransactionCompleter`
runs up to ``parallelism`` of them at a time (option ``commitParallelism``).

What does not change (see :mod:`spark_ext.sink_commit`):

* every transaction is attempted, even when another fails, and the call
  returns only once every one is decided; so Spark records the batch as
  committed only when all of its transactions are, and a refused one fails
  the batch, which a restarted query replays;
* a driver that dies mid-commit leaves some transactions committed and the
  others open, as it did one after another: on replay each task's
  ``init_transactions`` fences its open transaction (aborting it) and the
  task's bookkeeping group says whether its part is already committed;
* the caller orders what must be ordered: the transaction that carries a
  batch's source offsets is ended after this call returns for the others.

A :class:`~spate.client.TransactionCompleter` is not thread-safe, so each
thread uses one of its own: borrowed from ``pool`` (the driver's
:mod:`spark_ext.client_pool`, so the next micro-batch finds its connections
open) or, without a pool, made for the call and closed after it. With
``parallelism`` 1 (or a single transaction) one completer ends them in
order on the calling thread.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from functools import partial
from typing import Callable, Iterable, Iterator, Sequence

from spark_ext.client_pool import ClientPool, PoolKey
from spate.client import KafkaError, OpenTransaction, TransactionCompleter, TransactionCompletionError

logger = logging.getLogger(__name__)

# Measured: on one Python broker, 4 concurrent EndTxn cut an 8-transaction commit most; 8 gained nothing more.
DEFAULT_COMMIT_PARALLELISM = 4
CompleterFactory = Callable[[str], TransactionCompleter]


class _Outcomes:
    """What the threads found, in the order of the transactions (thread-safe)."""

    def __init__(self, transactions: Sequence[OpenTransaction]) -> None:
        self._lock = threading.Lock()
        self._pending = iter(enumerate(transactions))
        self.refused: dict[int, tuple[OpenTransaction, KafkaError]] = {}
        self.undecided: dict[int, BaseException] = {}

    def next(self) -> tuple[int, OpenTransaction] | None:
        with self._lock:
            return next(self._pending, None)

    def record(self, index: int, txn: OpenTransaction, error: BaseException) -> None:
        with self._lock:
            if isinstance(error, TransactionCompletionError):
                self.refused[index] = error.failures[0]
            elif isinstance(error, KafkaError):
                self.refused[index] = (txn, error)
            else:
                self.undecided[index] = error


class ParallelTransactionCompleter:
    """Commits or aborts other producers' transactions, up to ``parallelism`` at a time."""

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        parallelism: int = DEFAULT_COMMIT_PARALLELISM,
        completer_factory: CompleterFactory = TransactionCompleter,
        pool: ClientPool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if parallelism < 1:
            raise ValueError(f"parallelism must be at least 1, not {parallelism}")
        self.bootstrap_servers = bootstrap_servers
        self.parallelism = parallelism
        self._completer_factory = completer_factory
        self._pool = pool
        self._clock = clock

    @contextmanager
    def _completer(self) -> Iterator[TransactionCompleter]:
        make = self._completer_factory
        if self._pool is None:
            with make(self.bootstrap_servers) as completer:
                yield completer
            return
        # A factory with bound settings (security) is keyed by what it binds: each batch's writer makes its own.
        factory, settings = (make.func, make.keywords) if isinstance(make, partial) and not make.args else (make, {})
        key = PoolKey.of("transaction-completer", factory, self.bootstrap_servers, settings)
        with self._pool.borrow(key, lambda: make(self.bootstrap_servers)) as completer:
            yield completer

    def complete_all(self, transactions: Iterable[OpenTransaction], *, commit: bool, timeout_ms: float) -> None:
        """End every transaction (duplicates once); returns once each one is decided.

        Raises as :meth:`TransactionCompleter.complete_all` does: the first
        ClientError (e.g. KafkaTimeoutError) of a transaction that could not
        be decided in time, else a TransactionCompletionError listing every
        refused transaction in the order given.
        """
        txns = list(dict.fromkeys(transactions))
        if not txns:
            return
        workers = min(self.parallelism, len(txns))
        if workers == 1:
            with self._completer() as completer:
                completer.complete_all(txns, commit=commit, timeout_ms=timeout_ms)
            return
        deadline = self._clock() + timeout_ms / 1000
        outcomes = _Outcomes(txns)
        threads = [
            threading.Thread(target=self._work, args=(outcomes, commit, deadline), name=f"spate-sink-commit-{i}",
                             daemon=True)
            for i in range(workers)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()  # every EndTxn is bounded by the deadline
        _raise_failures(outcomes, commit)

    def _work(self, outcomes: _Outcomes, commit: bool, deadline: float) -> None:
        item = outcomes.next()
        if item is None:
            return
        try:
            with self._completer() as completer:
                while item is not None:
                    index, txn = item
                    try:
                        remaining_ms = max(0.0, deadline - self._clock()) * 1000
                        completer.complete(txn, commit=commit, timeout_ms=remaining_ms)
                    except BaseException as exc:  # noqa: BLE001 - reported to the caller, never lost on a thread
                        outcomes.record(index, txn, exc)
                    item = outcomes.next()
        except BaseException as exc:  # noqa: BLE001 - no completer: this transaction stays undecided
            if item is not None:
                outcomes.record(item[0], item[1], exc)
            while (rest := outcomes.next()) is not None:
                outcomes.record(rest[0], rest[1], exc)


def _raise_failures(outcomes: _Outcomes, commit: bool) -> None:
    refused = [outcomes.refused[i] for i in sorted(outcomes.refused)]
    if outcomes.undecided:
        if refused:
            logger.error("%s", TransactionCompletionError(commit, refused))
        raise outcomes.undecided[min(outcomes.undecided)]
    if refused:
        raise TransactionCompletionError(commit, refused)

