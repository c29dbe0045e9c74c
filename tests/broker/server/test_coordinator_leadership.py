"""Internal-topic partitions led here are handed to the coordinators, retried until the cache knows the topic."""

from __future__ import annotations

import asyncio

from broker_core.server import coordinator_leadership
from broker_core.server.coordinator_leadership import CoordinatorLeadership
from spate.protocol.errors import ErrorCode, KafkaError


def test_leading_an_internal_partition_hands_it_over_once_the_topic_is_known(monkeypatch) -> None:
    monkeypatch.setattr(coordinator_leadership, "RETRY_S", 0.001)
    calls = {"offsets": 0, "transactions": 0}

    def take_offsets() -> None:
        calls["offsets"] += 1
        if calls["offsets"] < 3:
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, "not in the cache yet")

    def take_transactions() -> None:
        calls["transactions"] += 1

    async def scenario() -> None:
        listener = CoordinatorLeadership(take_offsets=take_offsets, take_transactions=take_transactions)
        listener.on_become_leader("__consumer_offsets", 0, 1)
        listener.on_become_leader("__consumer_offsets", 1, 1)  # one hand-over covers every partition
        listener.on_become_leader("orders", 0, 1)
        listener.on_become_follower("__transaction_state", 0, 1)
        await asyncio.sleep(0.1)

    asyncio.run(scenario())
    assert calls == {"offsets": 3, "transactions": 0}
