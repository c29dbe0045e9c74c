"""The admin client's settings: every keyword ``Admin`` takes, its default, and the error a bad value gets."""

from __future__ import annotations

import random
import re
import socket
import time

import pytest

from spate.client import Admin, TransactionCompleter, TransactionOffsetsWriter
from spate.client.admin.admin_config import AdminConfig

NOWHERE = "127.0.0.1:1"

# Every keyword Admin(...) took when its constructor listed them one by one, with its default then.
SETTINGS = {
    "request_timeout_ms": 30_000,
    "default_api_timeout_ms": 60_000,
    "retry_backoff_ms": 100,
    "retry_backoff_max_ms": 1_000,
    "connect_timeout_ms": 10_000,
    "client_id": "spate-admin",
}
DEPENDENCIES = {"clock": time.monotonic, "rng": random.Random(1), "socket_factory": socket.create_connection}


def test_every_keyword_is_accepted_with_its_default() -> None:
    Admin(NOWHERE, **SETTINGS, **DEPENDENCIES).close()
    config = AdminConfig()
    assert {name: getattr(config, name) for name in SETTINGS} == SETTINGS
    assert AdminConfig(default_api_timeout_ms=1_500).default_api_timeout == 1.5


@pytest.mark.parametrize(
    ("settings", "error", "message"),
    [
        ({"request_timeout_ms": 0}, ValueError, "request_timeout_ms must be positive, not 0"),
        ({"retry_backoff_ms": 200, "retry_backoff_max_ms": 100}, ValueError,
         "need 0 <= retry_backoff_ms <= retry_backoff_max_ms"),
        ({"timeout_ms": 1}, TypeError, "Admin.__init__() got an unexpected keyword argument 'timeout_ms'"),
    ],
)
def test_a_bad_value_gets_the_same_error_as_ever(settings, error, message) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        Admin(NOWHERE, **settings)


@pytest.mark.parametrize("client", [TransactionCompleter, TransactionOffsetsWriter])
def test_coordinator_clients_take_the_same_keywords_as_before(client) -> None:
    settings = {"request_timeout_ms": 30_000, "retry_backoff_ms": 100, "retry_backoff_max_ms": 1_000}
    with client(NOWHERE, **settings, client_id=None, clock=time.monotonic, sleep=time.sleep, rng=random.Random(1)):
        pass
    with client(NOWHERE, client_id="mine"):
        pass
    with pytest.raises(ValueError, match="^request_timeout_ms must be positive, not 0$"):
        client(NOWHERE, request_timeout_ms=0)
