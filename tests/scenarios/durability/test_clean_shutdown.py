"""SIGTERM shuts the broker down promptly, even while a long-poll Fetch is parked waiting for data.

A Fetch with a long max_wait_ms and a min_bytes that can never be met waits
in the broker until its deadline. Shutdown must not wait for it, whether the
client that sent it is still connected or already gone.
"""

from __future__ import annotations

import socket
import struct
import time

import pytest

from tests.scenarios.compat.clients import ConfluentDriver
from tests.support.broker_under_test import BrokerFactory

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

FETCH_WAIT_MS = 60_000
PROMPT_S = 10.0


def parked_fetch_v4(topic: str) -> bytes:
    """int32 size + header v1 + Fetch v4 body: wait up to FETCH_WAIT_MS for 1 GiB that will never arrive."""
    name = topic.encode()
    body = (
        struct.pack(">iiiib", -1, FETCH_WAIT_MS, 1 << 30, 1 << 20, 0)  # replica, max wait, min/max bytes, isolation
        + struct.pack(">ih", 1, len(name)) + name
        + struct.pack(">iiqi", 1, 0, 0, 1 << 20)  # one partition: index 0, offset 0, partition max bytes
    )  # fmt: skip
    client_id = b"shutdown-test"
    payload = struct.pack(">hhih", 1, 4, 1, len(client_id)) + client_id + body
    return struct.pack(">i", len(payload)) + payload


@pytest.mark.parametrize("client", ["connected", "gone"])
def test_sigterm_is_prompt_while_a_long_poll_fetch_is_parked(broker_factory: BrokerFactory, client: str) -> None:
    broker = broker_factory({})
    topic = f"parked-{client}"
    ConfluentDriver(broker.bootstrap).create_topic(topic, 1)
    conn = socket.create_connection(("127.0.0.1", broker.port), timeout=5)
    try:
        conn.sendall(parked_fetch_v4(topic))
        time.sleep(0.5)  # let the broker read the request and park it
        if client == "gone":
            conn.close()
        try:
            broker.stop(timeout=PROMPT_S)  # kills the broker and raises if it is still running then
            stopped = True
        except RuntimeError:
            stopped = False
    finally:
        conn.close()

    assert stopped, f"SIGTERM did not stop the broker within {PROMPT_S}s while a {FETCH_WAIT_MS} ms fetch was parked"
