"""A broker asked to stop while clients are busy must still stop (found by the restart tests).

Clean restarts under a producer's load sometimes hung for good. Reproduced
here deterministically: three connections keep pipelining requests (reading
every response), and SIGTERM arrives.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import threading
import time

import pytest

from spate.protocol import ApiKey, encode_request
from spate.protocol.messages.metadata import MetadataRequest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

CLEAN_STOP_S = 5.0


def flood(port: int, stop: threading.Event) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:

        def read_everything() -> None:
            try:
                while sock.recv(1 << 20):
                    pass
            except OSError:
                pass

        threading.Thread(target=read_everything, daemon=True).start()
        burst = b"".join(encode_request(ApiKey.METADATA, 1, i, "flood", MetadataRequest(topics=None)) for i in range(200))
        try:
            while not stop.is_set():
                sock.sendall(burst)
        except OSError:
            pass


def test_the_broker_stops_promptly_on_sigterm_while_clients_pipeline_requests(spate_broker) -> None:
    stop = threading.Event()
    threads = [threading.Thread(target=flood, args=(spate_broker.port, stop), daemon=True) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(0.5)
        spate_broker.process.send_signal(signal.SIGTERM)
        try:
            code = spate_broker.process.wait(CLEAN_STOP_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the broker was still running {CLEAN_STOP_S}s after SIGTERM:\n{spate_broker.log_tail()}")
        assert code == 0
    finally:
        stop.set()
