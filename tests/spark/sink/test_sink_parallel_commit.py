"""The driver ends a batch's transactions concurrently, bounded, and reports only once every one is decided."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import pytest

from spark_ext.client_pool import ClientPool
from spark_ext.sink_commit import SinkCommitError, commit_transactions
from spark_ext.sink_options import SinkOptionError, parse_sink_options
from spark_ext.sink_parallel_commit import DEFAULT_COMMIT_PARALLELISM, ParallelTransactionCompleter
from spark_ext.sink_task import SinkCommitMessage
from spate.client import ErrorCode, KafkaError, KafkaTimeoutError, OpenTransaction, TransactionCompletionError


@dataclass(eq=False)  # hashable: its factory keys a client pool
class Coordinator:
    """What fake completers did, across threads."""

    delay_s: float = 0.02
    refuse: set[str] = field(default_factory=set)
    time_out: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: int = 0
    most_in_flight: int = 0
    ended: list[tuple[str, bool]] = field(default_factory=list)
    completers: list[FakeCompleter] = field(default_factory=list)

    def factory(self, bootstrap: str) -> FakeCompleter:
        completer = FakeCompleter(self)
        with self.lock:
            self.completers.append(completer)
        return completer


class FakeCompleter:
    def __init__(self, coordinator: Coordinator) -> None:
        self.coordinator = coordinator
        self.closed = False
        self.threads: set[int] = set()

    def complete(self, txn: OpenTransaction, *, commit: bool, timeout_ms: float) -> None:
        c = self.coordinator
        self.threads.add(threading.get_ident())
        with c.lock:
            c.in_flight += 1
            c.most_in_flight = max(c.most_in_flight, c.in_flight)
        try:
            time.sleep(c.delay_s)
            if txn.transactional_id in c.time_out:
                raise KafkaTimeoutError(f"{txn.transactional_id}: no coordinator in time")
            if txn.transactional_id in c.refuse:
                error = KafkaError(ErrorCode.PRODUCER_FENCED, "aborted after transaction.timeout.ms")
                raise TransactionCompletionError(commit, [(txn, error)])
            with c.lock:
                c.ended.append((txn.transactional_id, commit))
        finally:
            with c.lock:
                c.in_flight -= 1

    def complete_all(self, transactions, *, commit: bool, timeout_ms: float) -> None:
        for txn in transactions:
            self.complete(txn, commit=commit, timeout_ms=timeout_ms)

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> FakeCompleter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def txns(count: int) -> list[OpenTransaction]:
    return [OpenTransaction(f"sink-{i}", 1000 + i, 0) for i in range(count)]


def end(coordinator: Coordinator, transactions, *, parallelism: int, commit: bool = True) -> None:
    ParallelTransactionCompleter("h:1", parallelism=parallelism, completer_factory=coordinator.factory).complete_all(
        transactions, commit=commit, timeout_ms=5_000
    )


def test_every_transaction_is_ended_once_with_at_most_parallelism_in_flight() -> None:
    coordinator = Coordinator()
    batch = txns(10)
    end(coordinator, batch + batch[:3], parallelism=3)
    assert sorted(coordinator.ended) == sorted((t.transactional_id, True) for t in batch)
    assert coordinator.most_in_flight == 3


def test_ending_concurrently_takes_about_the_time_of_the_slowest_wave() -> None:
    coordinator = Coordinator(delay_s=0.1)
    started = time.monotonic()
    end(coordinator, txns(8), parallelism=8)
    assert time.monotonic() - started < 0.5  # one after another: 0.8 s


def test_each_thread_has_a_completer_of_its_own_and_every_completer_is_closed() -> None:
    coordinator = Coordinator()
    end(coordinator, txns(6), parallelism=3, commit=False)
    assert 1 <= len(coordinator.completers) <= 3  # a thread that finds nothing left makes none
    assert all(len(c.threads) == 1 for c in coordinator.completers)
    assert len({next(iter(c.threads)) for c in coordinator.completers}) == len(coordinator.completers)
    assert all(c.closed for c in coordinator.completers)
    assert {commit for _, commit in coordinator.ended} == {False}


def test_one_refused_transaction_does_not_stop_the_others_and_is_reported_by_name() -> None:
    coordinator = Coordinator(refuse={"sink-4", "sink-1"})
    with pytest.raises(TransactionCompletionError) as raised:
        end(coordinator, txns(6), parallelism=4)
    assert [t.transactional_id for t, _ in raised.value.failures] == ["sink-1", "sink-4"]  # in the batch's order
    assert sorted(name for name, _ in coordinator.ended) == ["sink-0", "sink-2", "sink-3", "sink-5"]


def test_a_transaction_not_decided_in_time_is_raised_after_all_others_were_tried() -> None:
    coordinator = Coordinator(time_out={"sink-2"}, refuse={"sink-0"})
    with pytest.raises(KafkaTimeoutError, match="sink-2"):
        end(coordinator, txns(5), parallelism=2)
    assert sorted(name for name, _ in coordinator.ended) == ["sink-1", "sink-3", "sink-4"]


def test_parallelism_one_ends_them_in_order_with_one_completer() -> None:
    coordinator = Coordinator(delay_s=0)
    end(coordinator, txns(4), parallelism=1)
    assert [name for name, _ in coordinator.ended] == ["sink-0", "sink-1", "sink-2", "sink-3"]
    assert len(coordinator.completers) == 1 and coordinator.most_in_flight == 1


def test_parallelism_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ParallelTransactionCompleter("h:1", parallelism=0)


def message(partition: int) -> SinkCommitMessage:
    txn = OpenTransaction(f"sink-{partition}", 1000 + partition, 0)
    return SinkCommitMessage(partition=partition, rows=3, batch_id=7, transaction=txn)


def test_a_batch_with_a_refused_transaction_fails_only_after_the_others_committed() -> None:
    coordinator = Coordinator(refuse={"sink-5"})
    with pytest.raises(SinkCommitError, match=r"micro-batch 7: 1 of 8 transaction\(s\) could not be committed \(sink-5\)"):
        commit_transactions("h:1", [message(p) for p in range(8)], batch_id=7, timeout_ms=5_000,
                            completer_factory=coordinator.factory, parallelism=4)
    assert len(coordinator.ended) == 7 and coordinator.in_flight == 0


def test_commit_parallelism_is_a_sink_option() -> None:
    base = {"bootstrap.servers": "h:1", "transactionalIdPrefix": "s"}
    assert parse_sink_options(base, streaming=True).commit_parallelism == DEFAULT_COMMIT_PARALLELISM
    assert parse_sink_options({**base, "commitparallelism": "2"}, streaming=True).commit_parallelism == 2
    with pytest.raises(SinkOptionError, match="commitParallelism.*at least 1"):
        parse_sink_options({**base, "commitParallelism": "0"}, streaming=True)


def test_with_a_pool_the_next_batch_reuses_the_completers_and_their_connections() -> None:
    coordinator = Coordinator(delay_s=0.01)
    pool = ClientPool(reaper=False)
    committer = ParallelTransactionCompleter(
        "h:1", parallelism=4, completer_factory=coordinator.factory, pool=pool
    )
    committer.complete_all(txns(8), commit=True, timeout_ms=5_000)
    made = len(coordinator.completers)
    committer.complete_all(txns(8), commit=True, timeout_ms=5_000)
    assert 1 <= made <= 4 and len(coordinator.completers) <= 4
    assert not any(c.closed for c in coordinator.completers) and pool.idle_count == len(coordinator.completers)
    pool.close()
    assert all(c.closed for c in coordinator.completers)
