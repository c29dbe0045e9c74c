"""Controlled shutdown: before a cluster broker stops, it asks the controller to move its leadership away.

Kafka's ``KafkaServer.controlledShutdown``: find the active controller (the
metadata cache names it; ``/controller`` when the cache does not know it
yet), send it ControlledShutdown v3 with this broker's id and epoch, and
repeat until the answer lists no remaining partitions, at most
``controlled.shutdown.max.retries`` times, ``controlled.shutdown.retry.backoff.ms``
apart. Whatever the outcome, the broker then stops; a failed attempt only
means clients see its partitions go offline instead of moving first.

The request goes over a plain connection with the sans-IO client codec,
even to this broker itself when it is the controller, while the broker is
still serving: the controller's LeaderAndIsr and StopReplica requests must
reach it during the move.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

from broker_core.cluster.metadata_store import BrokerRegistration
from broker_core.config.broker_config import BrokerConfig
from broker_core.security.inter_broker import InterBrokerSecurity
from spate.protocol import ClientConnection, ProtocolError
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.controlled_shutdown import ControlledShutdownRequest

logger = logging.getLogger(__name__)

CONTROLLED_SHUTDOWN_VERSION = 3
READ_CHUNK = 64 * 1024

ControllerLookup = Callable[[], Awaitable["BrokerRegistration | None"]]


class ControlledShutdown:
    def __init__(
        self,
        *,
        config: BrokerConfig,
        find_controller: ControllerLookup,
        broker_epoch: Callable[[], int],
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self._broker_id = config.node_id
        self._security = InterBrokerSecurity.from_config(config)
        self._retries = config.get_int("controlled.shutdown.max.retries")
        self._backoff_s = config.get_int("controlled.shutdown.retry.backoff.ms") / 1000
        self._timeout_s = config.get_int("controller.socket.timeout.ms") / 1000
        self._find_controller = find_controller
        self._broker_epoch = broker_epoch
        self._sleep = sleep

    async def run(self) -> bool:
        """True once the controller moved every partition it could; False after the last attempt."""
        for attempt in range(1, self._retries + 1):
            if await self._attempt():
                logger.info("controlled shutdown of broker %d succeeded", self._broker_id)
                return True
            if attempt < self._retries:
                await self._sleep(self._backoff_s)
                logger.info("retrying controlled shutdown (attempt %d of %d)", attempt + 1, self._retries)
        logger.warning("controlled shutdown of broker %d did not complete; stopping anyway", self._broker_id)
        return False

    async def _attempt(self) -> bool:
        try:
            controller = await self._find_controller()
        except Exception as exc:
            logger.info("controlled shutdown: cannot find the controller: %s", exc)
            return False
        if controller is None:
            logger.info("controlled shutdown: no live controller is known")
            return False
        try:
            response = await asyncio.wait_for(self._ask(controller), self._timeout_s)
        except (OSError, ProtocolError, asyncio.TimeoutError, ConnectionError) as exc:
            logger.warning("controlled shutdown request to controller %d at %s:%d failed: %r",
                           controller.broker_id, controller.host, controller.port, exc)
            return False
        error = ErrorCode.of(response.error_code)
        if error != ErrorCode.NONE:
            logger.info("controlled shutdown: controller %d answered %s", controller.broker_id, error.name)
            return False
        if response.remaining_partitions:
            remaining = [f"{p.topic_name}-{p.partition_index}" for p in response.remaining_partitions]
            logger.info("controlled shutdown: partitions still led here: %s", ", ".join(remaining))
            return False
        return True

    async def _ask(self, controller: BrokerRegistration) -> Any:
        reader, writer = await self._security.open_connection(controller.host, controller.port)
        try:
            connection = ClientConnection(f"broker-{self._broker_id}-controlled-shutdown")
            body = ControlledShutdownRequest(broker_id=self._broker_id, broker_epoch=self._broker_epoch())
            _, frame = connection.send_request(ApiKey.CONTROLLED_SHUTDOWN, CONTROLLED_SHUTDOWN_VERSION, body)
            writer.write(frame)
            await writer.drain()
            while True:
                response = connection.next_response()
                if response is not None:
                    return response.body
                data = await reader.read(READ_CHUNK)
                if not data:
                    raise ConnectionError("the controller closed the connection")
                connection.receive_data(data)
        finally:
            writer.close()
