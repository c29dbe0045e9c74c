"""Which local process opened a TCP connection, from the kernel's socket tables (Linux ``/proc``).

Every process of a test cluster connects from 127.0.0.1, so an address does
not say who is calling. The kernel knows: the connection's client end is a
socket in ``/proc/net/tcp`` (local and remote address, inode), and the
process holding it has that inode among its open files
(``/proc/<pid>/fd/* -> socket:[inode]``). A proxy uses this to cut one broker
off from the others while clients still pass.

Only the given candidate processes are searched; anything else (the test's
own clients, a connection already gone) is unknown: None.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
_ESTABLISHED = "01"


def owner_pid(client: tuple[str, int], server_port: int, candidates: Iterable[int]) -> int | None:
    """The pid among ``candidates`` holding the client end of a connection from ``client`` to ``server_port``."""
    inode = _socket_inode(client[1], server_port)
    if inode is None:
        return None
    target = f"socket:[{inode}]"
    for pid in candidates:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:  # gone, or not ours to read
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    return pid
            except OSError:
                continue
    return None


def _socket_inode(local_port: int, remote_port: int) -> str | None:
    """The inode of the established socket whose local port is ``local_port`` and remote ``remote_port``."""
    for table in _TABLES:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != _ESTABLISHED:
                continue
            if _port(fields[1]) == local_port and _port(fields[2]) == remote_port:
                return fields[9]
    return None


def _port(address: str) -> int:
    """The port of ``HEXADDR:HEXPORT`` as the kernel writes it."""
    return int(address.rsplit(":", 1)[1], 16)
