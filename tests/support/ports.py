"""Listening ports for the brokers, ZooKeepers and proxies that tests start.

A port asked of the kernel (``bind`` to port 0) comes from the ephemeral
range, the same range the kernel draws from for every outgoing connection,
and it is only free until a process binds it: between the two, a client's
connection or a test running beside this one may take it. Ports here come
from below the ephemeral range instead, from a band of their own for each
pytest-xdist worker, handed out in turn and checked free before use.
"""

from __future__ import annotations

import itertools
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

LOWEST = 10_000
# Linux's default ephemeral range starts here; /proc says what this machine uses.
DEFAULT_EPHEMERAL_LOW = 32_768
LOCAL_PORT_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def ephemeral_low() -> int:
    try:
        return int(LOCAL_PORT_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return DEFAULT_EPHEMERAL_LOW


def worker_band(environ: dict[str, str] | os._Environ = os.environ, top: int | None = None) -> range:
    """The ports of this test process: its share, by xdist worker number, of the ports below ``top``."""
    top = ephemeral_low() if top is None else top
    name = environ.get("PYTEST_XDIST_WORKER", "")
    index = int(name[2:]) if name.startswith("gw") and name[2:].isdigit() else 0
    count = max(int(environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1), index + 1)
    width = (top - LOWEST) // count
    if width < 100:
        raise RuntimeError(f"ports {LOWEST}-{top} are too few for {count} test workers")
    start = LOWEST + index * width
    return range(start, start + width)


def is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@dataclass
class PortAllocator:
    """Hands out the ports of a band in turn, so a port is not given again until the band wraps."""

    band: range
    _next: itertools.cycle = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._next = itertools.cycle(self.band)

    def take(self, count: int = 1) -> int:
        """The first of ``count`` consecutive free ports."""
        for _ in range(len(self.band)):
            first = next(self._next)
            if first + count > self.band.stop:
                continue
            if all(is_free(port) for port in range(first, first + count)):
                for _ in range(count - 1):
                    next(self._next)
                return first
        raise OSError(f"no {count} consecutive free port(s) in {self.band.start}-{self.band.stop - 1}")


_ALLOCATOR = PortAllocator(worker_band())


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now, in this test process's band."""
    return _ALLOCATOR.take()


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive free ports in this test process's band."""
    return _ALLOCATOR.take(count)
