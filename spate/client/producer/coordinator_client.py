"""Connections of a process that ends or extends transactions other producers opened.

:class:`~spate.client.producer.transaction_completion.TransactionCompleter` and
:class:`~spate.client.producer.transaction_offsets.TransactionOffsetsWriter`
are both short-lived clients of the coordinators: no producer state, one
blocking connection set, closed when the work is done.
"""

from __future__ import annotations

import random
import time
from typing import Any, Callable, ClassVar, Self, Sequence

from spate.client.config import ClientConfig
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import Retrier


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
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        network: NetworkClient | None = None,
        **options: Any,
    ) -> None:
        """``options`` are :class:`ClientConfig` settings (``client_id`` None or left out: the class's own).

        ``network`` replaces the connections made from the settings (tests pass a stand-in).
        """
        if options.get("client_id") is None:
            options["client_id"] = self.default_client_id
        config = ClientConfig.from_options(type(self).__name__, options)
        self._clock = clock
        self._sleep = sleep
        self._network = network or NetworkClient(bootstrap_servers, config, clock=clock, rng=rng)
        self._retrier = Retrier(
            self._network.backoff, clock, sleep, before_retry=lambda _: self._network.metadata.request_update()
        )

    def close(self) -> None:
        self._network.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
