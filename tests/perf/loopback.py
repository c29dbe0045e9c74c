"""The machine's raw loopback TCP bandwidth: the ceiling for any broker on it."""

from __future__ import annotations

import socket
import threading
import time


def loopback_bandwidth_mb_s(total_bytes: int = 2 * 1024**3, chunk: int = 1024 * 1024) -> float:
    """MB/s of one sender streaming ``total_bytes`` to one reader over 127.0.0.1."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    received = 0

    def drain() -> None:
        nonlocal received
        conn, _ = server.accept()
        with conn:
            buf = bytearray(chunk)
            while True:
                n = conn.recv_into(buf)
                if not n:
                    return
                received += n

    reader = threading.Thread(target=drain)
    reader.start()
    payload = b"\x00" * chunk
    with socket.create_connection(server.getsockname()) as client:
        start = time.perf_counter()
        for _ in range(total_bytes // chunk):
            client.sendall(payload)
        client.shutdown(socket.SHUT_WR)
        reader.join()
        elapsed = time.perf_counter() - start
    server.close()
    return received / elapsed / 1e6
