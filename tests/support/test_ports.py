"""Test ports: below the kernel's ephemeral range, a band per xdist worker, each free when handed out."""

from __future__ import annotations

import socket

import pytest

from tests.support.ports import LOWEST, PortAllocator, ephemeral_low, free_port, free_ports, worker_band


def test_a_process_outside_xdist_has_every_port_below_the_ephemeral_range() -> None:
    assert worker_band({}, top=32_768) == range(LOWEST, 32_768)


def test_workers_get_disjoint_bands_below_the_ephemeral_range() -> None:
    bands = [worker_band({"PYTEST_XDIST_WORKER": f"gw{i}", "PYTEST_XDIST_WORKER_COUNT": "3"}, top=32_768)
             for i in range(3)]
    assert bands[0].start == LOWEST and bands[-1].stop <= 32_768
    assert all(a.stop <= b.start for a, b in zip(bands, bands[1:]))


def test_too_many_workers_for_the_ports_are_refused_with_the_numbers() -> None:
    with pytest.raises(RuntimeError, match="too few for 1000 test workers"):
        worker_band({"PYTEST_XDIST_WORKER": "gw0", "PYTEST_XDIST_WORKER_COUNT": "1000"}, top=32_768)


def test_ports_handed_out_are_free_below_the_ephemeral_range_and_not_repeated() -> None:
    ports = [free_port() for _ in range(20)]
    assert len(set(ports)) == 20
    assert all(LOWEST <= port < ephemeral_low() for port in ports)
    for port in ports:
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))


def test_a_port_something_listens_on_is_skipped() -> None:
    port = free_ports(2)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        allocator = PortAllocator(range(port, port + 3))
        assert allocator.take() == port + 1


def test_consecutive_ports_are_all_free_and_the_band_is_not_overrun() -> None:
    first = free_ports(3)
    for port in range(first, first + 3):
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))
    allocator = PortAllocator(range(LOWEST, LOWEST + 2))
    with pytest.raises(OSError, match="no 3 consecutive free port"):
        allocator.take(3)
