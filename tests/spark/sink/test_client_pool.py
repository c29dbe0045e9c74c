"""The executor's client pool: one borrower at a time, bounded, idle clients closed, safe across threads."""

from __future__ import annotations

import threading
import time

import pytest

from spark_ext.client_pool import ClientPool, PoolKey


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FakeClient:
    made = 0

    def __init__(self) -> None:
        FakeClient.made += 1
        self.number = FakeClient.made
        self.closed = False
        self.in_use = False
        self.resets = 0

    def close(self) -> None:
        self.closed = True


def key(bootstrap: str = "h:1", kind: str = "producer", **settings: object) -> PoolKey:
    return PoolKey.of(kind, FakeClient, bootstrap, settings)


def pool(**bounds: object) -> ClientPool:
    return ClientPool(reaper=False, clock=Clock(), **bounds)


def test_a_client_handed_back_is_lent_to_the_next_borrower_of_the_same_key() -> None:
    clients = pool()
    with clients.borrow(key(), FakeClient) as first:
        pass
    with clients.borrow(key(), FakeClient) as second:
        assert second is first and not second.closed
    assert (clients.created, clients.reused) == (1, 1)


@pytest.mark.parametrize(
    "other", [key("h:2"), key(kind="admin"), key(acks="1"), key(security_protocol="SSL"),
              PoolKey.of("producer", object, "h:1", {})],
    ids=["bootstrap", "kind", "setting", "security", "factory"],
)
def test_clients_of_another_key_are_never_lent(other: PoolKey) -> None:
    clients = pool()
    with clients.borrow(key(), FakeClient) as first:
        pass
    with clients.borrow(other, FakeClient) as second:
        assert second is not first


def test_a_borrowed_client_is_not_lent_to_a_second_borrower_at_the_same_time() -> None:
    clients = pool()
    with clients.borrow(key(), FakeClient) as first, clients.borrow(key(), FakeClient) as second:
        assert first is not second
    assert clients.idle_count == 2


def test_a_borrower_that_raises_closes_its_client_instead_of_handing_it_back() -> None:
    clients = pool()
    with pytest.raises(RuntimeError), clients.borrow(key(), FakeClient) as broken:
        raise RuntimeError("the flush failed")
    assert broken.closed and clients.idle_count == 0
    with clients.borrow(key(), FakeClient) as fresh:
        assert fresh is not broken


def test_a_client_closed_while_idle_or_borrowed_is_not_lent_again() -> None:
    clients = pool()
    with clients.borrow(key(), FakeClient) as first:
        first.close()
    assert clients.idle_count == 0
    with clients.borrow(key(), FakeClient) as second:
        pass
    second.close()
    with clients.borrow(key(), FakeClient) as third:
        assert third is not second


def test_reset_readies_a_client_for_the_next_borrower_and_a_failed_reset_closes_it() -> None:
    clients = pool()

    def reset(client: FakeClient) -> None:
        client.resets += 1

    with clients.borrow(key(), FakeClient, reset=reset) as client:
        pass
    assert client.resets == 1 and clients.idle_count == 1

    def broken_reset(client: FakeClient) -> None:
        raise RuntimeError("cannot unassign")

    with clients.borrow(key(), FakeClient, reset=broken_reset) as same:
        assert same is client
    assert client.closed and clients.idle_count == 0


def test_idle_clients_are_bounded_per_key_and_in_all() -> None:
    clients = pool(max_idle_per_key=2, max_idle=3)
    borrowed = [clients.borrow(key(), FakeClient) for _ in range(3)]
    held = [b.__enter__() for b in borrowed]
    for b in borrowed:
        b.__exit__(None, None, None)
    assert clients.idle_count == 2 and [c.closed for c in held] == [False, False, True]

    others = [clients.borrow(key("h:2"), FakeClient) for _ in range(2)]
    other_clients = [b.__enter__() for b in others]
    for b in others:
        b.__exit__(None, None, None)
    assert clients.idle_count == 3 and [c.closed for c in other_clients] == [False, True]


def test_clients_idle_for_the_timeout_are_closed() -> None:
    clock = Clock()
    clients = ClientPool(reaper=False, clock=clock, idle_timeout_s=60)
    with clients.borrow(key(), FakeClient) as old:
        pass
    clock.now = 50
    with clients.borrow(key("h:2"), FakeClient) as recent:
        pass
    clock.now = 60
    assert clients.evict_idle() == 1
    assert old.closed and not recent.closed and clients.idle_count == 1


def test_the_eviction_thread_closes_idle_clients_by_itself() -> None:
    clients = ClientPool(idle_timeout_s=0.2)
    with clients.borrow(key(), FakeClient) as client:
        pass
    deadline = time.monotonic() + 5
    while not client.closed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert client.closed and clients.idle_count == 0


def test_closing_the_pool_closes_idle_clients_and_those_handed_back_later() -> None:
    clients = pool()
    with clients.borrow(key(), FakeClient) as idle:
        pass
    late = clients.borrow(key("h:2"), FakeClient)
    still_borrowed = late.__enter__()
    clients.close()
    assert idle.closed and not still_borrowed.closed
    late.__exit__(None, None, None)
    assert still_borrowed.closed


def test_many_threads_never_share_a_client_at_the_same_time() -> None:
    clients = pool(max_idle_per_key=8)
    problems: list[str] = []

    def borrower() -> None:
        for _ in range(200):
            with clients.borrow(key(), FakeClient) as client:
                if client.in_use or client.closed:
                    problems.append(f"client {client.number} lent twice")
                client.in_use = True
                time.sleep(0)
                client.in_use = False

    threads = [threading.Thread(target=borrower) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert problems == [] and clients.idle_count <= 8
    assert clients.created <= 8 and clients.reused >= 1600 - 8


def test_the_key_does_not_show_its_settings() -> None:
    shown = repr(key(sasl_password="hunter2"))
    assert "hunter2" not in shown and "h:1" in shown


def test_a_forked_child_starts_with_an_empty_pool_and_leaves_the_parents_clients_open() -> None:
    import os

    from spark_ext.client_pool import shared_pool

    clients = shared_pool()
    client = FakeClient()
    clients._give_back(key("fork-test:1"), client)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child reports its pool's size, then leaves without running atexit handlers
        os.write(write, str(shared_pool().idle_count).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    assert os.read(read, 16) == b"0"
    os.close(read)
    with clients.borrow(key("fork-test:1"), FakeClient) as again:
        assert again is client and not client.closed
