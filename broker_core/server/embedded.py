"""A broker on a background thread of this process, for demos, notebooks and tests.

    with EmbeddedBroker(data_dir) as broker:
        producer = Producer(broker.bootstrap_servers)

It binds an ephemeral port on 127.0.0.1 unless told otherwise and stops
cleanly (checkpoints written) when the block ends.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Mapping

from broker_core.config.broker_config import load_broker_config
from broker_core.server.broker import Broker

START_TIMEOUT_S = 30.0


class EmbeddedBroker:
    def __init__(self, data_dir: Path, overrides: Mapping[str, str] | None = None, *, port: int = 0) -> None:
        settings = {
            "listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "log.dirs": str(Path(data_dir) / "logs"),
            **(overrides or {}),
        }
        self._config = load_broker_config(None, [f"{k}={v}" for k, v in settings.items()])
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._broker: Broker | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None

    @property
    def bootstrap_servers(self) -> str:
        if self._broker is None or self._broker.bound_port is None:
            raise RuntimeError("the embedded broker is not running")
        return f"127.0.0.1:{self._broker.bound_port}"

    def start(self) -> "EmbeddedBroker":
        self._thread = threading.Thread(target=self._run, name="spate-embedded-broker", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            raise TimeoutError(f"embedded broker did not start within {START_TIMEOUT_S}s")
        if self._failure is not None:
            raise self._failure
        return self

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        self._broker = Broker(self._config)
        try:
            await self._broker.start()
        except BaseException as exc:
            self._failure = exc
            self._ready.set()
            await self._broker.stop()
            return
        self._ready.set()
        try:
            await self._broker.serve_until_stopped()
        finally:
            await self._broker.stop()

    def stop(self) -> None:
        if self._loop is not None and self._broker is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._broker.request_stop)
            self._thread.join(START_TIMEOUT_S)
        self._thread = None

    def __enter__(self) -> "EmbeddedBroker":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
