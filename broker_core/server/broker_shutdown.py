"""How a broker stops: leadership moved away first (a cluster broker), then serving stopped in bounded time.

Serving stops before anything it needs: the listeners close, connections read
no more requests, requests still queued are dropped and parked ones (long-poll
fetches, delayed produces) get ``SHUTDOWN_PARKED_GRACE_S`` to complete; the
writers answer what was handled within ``SHUTDOWN_FLUSH_GRACE_S`` (a client
that does not read its answers is cut off then), and every connection is
closed before the rest of the broker stops. A stop therefore ends in bounded
time however many clients are connecting or sending meanwhile.
"""

from __future__ import annotations

import asyncio
import logging

from broker_core.config.broker_config import BrokerConfig
from broker_core.server.cluster_membership import ClusterMembership
from broker_core.server.controlled_shutdown import ControlledShutdown
from broker_core.server.dispatch import RequestDispatcher
from broker_core.server.metadata_cache import MetadataCache
from broker_core.server.processor import Processor
from broker_core.server.socket_server import SocketServer

logger = logging.getLogger(__name__)

# On stop: how long parked requests may still complete, then how long writers may take to send what was answered.
SHUTDOWN_PARKED_GRACE_S = 0.5
SHUTDOWN_FLUSH_GRACE_S = 2.0


async def move_leadership_away(config: BrokerConfig, membership: ClusterMembership,
                               cache: MetadataCache | None) -> None:
    """Controlled shutdown, when ``controlled.shutdown.enable``; its failure only means the broker stops anyway."""
    if not config.get_bool("controlled.shutdown.enable"):
        return
    shutdown = ControlledShutdown(
        config=config, find_controller=lambda: membership.find_controller(cache),
        broker_epoch=membership.broker_epoch,
    )
    try:
        await shutdown.run()
    except Exception:
        logger.exception("controlled shutdown failed; stopping anyway")


async def stop_serving(socket_server: SocketServer, processor: Processor,
                       dispatcher: RequestDispatcher | None) -> None:
    """Stop accepting and reading, let handled requests be answered, then close every connection; bounded."""
    socket_server.stop_accepting()
    processor.stop_reading()
    if dispatcher is not None:
        await dispatcher.stop(grace_s=SHUTDOWN_PARKED_GRACE_S)
    # Every writer now ends at its first dropped request, or once it has sent all it has.
    tasks = set(socket_server.connection_tasks)
    if tasks:
        _, late = await asyncio.wait(tasks, timeout=SHUTDOWN_FLUSH_GRACE_S)
        processor.abort_all()
        if late:
            _, stuck = await asyncio.wait(late, timeout=SHUTDOWN_FLUSH_GRACE_S)
            if stuck:
                logger.warning("%d connection(s) did not close; stopping anyway", len(stuck))
