"""Handing internal-topic partitions led here to the coordinators, in a cluster.

The group coordinator answers for the groups of the ``__consumer_offsets``
partitions this broker leads, the transaction coordinator for the
transactional ids of ``__transaction_state``'s. When a LeaderAndIsr makes
this broker leader of one of them, this leadership listener has the
coordinator take it over through ``ensure_offsets_topic`` /
``ensure_state_topic``, which load every led partition they do not own yet.
Those need the topic in the metadata cache, which the controller's
UpdateMetadata fills just after its LeaderAndIsr, so the hand-over is
retried on the event loop for a short while.

Followers and stopped replicas are not handed back here: the coordinators
own that part of their state.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable

from broker_core.cluster.topic_names import CONSUMER_OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from spate.protocol.errors import KafkaError

logger = logging.getLogger(__name__)

RETRY_S = 0.1
ATTEMPTS = 100


class CoordinatorLeadership:
    def __init__(self, *, take_offsets: Callable[[], object], take_transactions: Callable[[], object]) -> None:
        self._take = {CONSUMER_OFFSETS_TOPIC: take_offsets, TRANSACTION_STATE_TOPIC: take_transactions}
        self._pending: set[str] = set()

    def on_become_leader(self, topic: str, partition: int, leader_epoch: int) -> None:
        if topic in self._take and topic not in self._pending:
            self._pending.add(topic)
            asyncio.get_running_loop().call_soon(self._hand_over, topic, ATTEMPTS)

    def on_become_follower(self, topic: str, partition: int, leader_epoch: int) -> None:
        pass

    def on_stop_replica(self, topic: str, partition: int) -> None:
        pass

    def _hand_over(self, topic: str, attempts: int) -> None:
        try:
            self._take[topic]()
        except KafkaError as exc:
            if attempts > 1:
                asyncio.get_running_loop().call_later(RETRY_S, self._hand_over, topic, attempts - 1)
                return
            logger.warning("the coordinator could not take over the partitions of %s led here: %s", topic, exc)
        except Exception:
            logger.exception("handing the partitions of %s led here to the coordinator failed", topic)
        self._pending.discard(topic)
