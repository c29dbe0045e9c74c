"""connections.max.idle.ms: a connection that completes no request for that long is expired."""

from __future__ import annotations

from dataclasses import dataclass

from broker_core.server.idle_expiry import IdleExpiryManager, scan_interval_s


@dataclass(eq=False)
class FakeConnection:
    requests_read: int = 0
    busy: bool = False


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_connection_with_no_request_for_the_limit_is_expired() -> None:
    clock, quiet = Clock(), FakeConnection()
    expiry = IdleExpiryManager(1000, clock)
    assert expiry.expired([quiet]) == []
    clock.now += 0.999
    assert expiry.expired([quiet]) == []
    clock.now += 0.001
    assert expiry.expired([quiet]) == [quiet]


def test_each_completed_request_restarts_the_idle_time() -> None:
    clock, active = Clock(), FakeConnection()
    expiry = IdleExpiryManager(1000, clock)
    expiry.expired([active])
    for _ in range(5):
        clock.now += 0.8
        active.requests_read += 1
        assert expiry.expired([active]) == []
    clock.now += 1.0
    assert expiry.expired([active]) == [active]


def test_a_connection_waiting_for_an_answer_or_for_memory_is_not_idle() -> None:
    clock, waiting = Clock(), FakeConnection(busy=True)
    expiry = IdleExpiryManager(1000, clock)
    for _ in range(5):
        clock.now += 1.0
        assert expiry.expired([waiting]) == []
    waiting.busy = False
    clock.now += 0.5
    assert expiry.expired([waiting]) == []
    clock.now += 0.5
    assert expiry.expired([waiting]) == [waiting]


def test_closed_connections_are_forgotten() -> None:
    clock, gone, kept = Clock(), FakeConnection(), FakeConnection()
    expiry = IdleExpiryManager(1000, clock)
    expiry.expired([gone, kept])
    clock.now += 0.5
    expiry.expired([kept])
    clock.now += 0.5
    # gone comes back as a new connection would: its idle time starts again.
    assert expiry.expired([gone, kept]) == [kept]


def test_the_scan_interval_is_a_tenth_of_the_limit_between_10_ms_and_a_second() -> None:
    assert scan_interval_s(600_000) == 1.0
    assert scan_interval_s(1000) == 0.1
    assert scan_interval_s(0) == 0.01
