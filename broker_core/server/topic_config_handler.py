"""Kafka's TopicConfigHandler: a topic's config overrides changed in the cluster; its logs here take them.

The change arrives on a ZooKeeper thread and is applied on the event loop's
next turn. One that arrives before this broker opened its logs is dropped
(the logs open with the overrides read at start); one the logs refuse is
logged, and they keep their previous configs.
"""

from __future__ import annotations

import logging
from typing import Callable

from broker_core.server.replica_manager import ReplicaManager

logger = logging.getLogger(__name__)


class TopicConfigHandler:
    def __init__(self, replicas: Callable[[], ReplicaManager | None],
                 call_soon: Callable[[Callable[[], None]], None]) -> None:
        """``replicas`` is None until the broker opened its logs; ``call_soon`` runs a callback on the loop."""
        self._replicas = replicas
        self._call_soon = call_soon

    def process_config_changes(self, topic: str, configs: dict[str, str]) -> None:
        """On a ZooKeeper thread: ``topic``'s overrides are now ``configs``."""

        def apply() -> None:
            replicas = self._replicas()
            if replicas is None:
                return
            try:
                replicas.update_topic_config(topic, configs)
            except Exception as exc:
                logger.error("cannot apply the new configs of topic %s: %s", topic, exc)
                return
            logger.info("reloaded the config overrides of topic %s: %s", topic, configs)

        self._call_soon(apply)
