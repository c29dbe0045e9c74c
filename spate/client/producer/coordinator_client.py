"""Connections of a process that ends or extends transactions other producers opened.

:class:`~spate.client.producer.transaction_completion.TransactionCompleter` and
:class:`~spate.client.producer.transaction_offsets.TransactionOffsetsWriter`
are both short-lived clients of the coordinators: no producer state, one
blocking connection set, closed when the work is done.
"""

from __future__ import annotations

import random
import time
from typing import Callable, ClassVar, Self, Sequence

from spate.client.config import ClientConfig
from spate.client.net.network_client import NetworkClient


class CoordinatorClient:
    """One set of connections to the cluster, with a clock and a sleep that tests can replace.

    Not thread-safe. Close it (or use it as a context manager) to drop its
    connections.
    """

    default_client_id: ClassVar[str] = "spate-coordinator-client"

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str],
        *,
        request_timeout_ms: int = 30_000,
        retry_backoff_ms: int = 100,
        retry_backoff_max_ms: int = 1_000,
        client_id: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        network: NetworkClient | None = None,
    ) -> None:
        """``network`` replaces the connections made from the other settings (tests pass a stand-in)."""
        config = ClientConfig(
            client_id=client_id or self.default_client_id,
            request_timeout_ms=request_timeout_ms,
            retry_backoff_ms=retry_backoff_ms,
            retry_backoff_max_ms=retry_backoff_max_ms,
        )
        self._clock = clock
        self._sleep = sleep
        self._network = network or NetworkClient(bootstrap_servers, config, clock=clock, rng=rng)

    def close(self) -> None:
        self._network.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
