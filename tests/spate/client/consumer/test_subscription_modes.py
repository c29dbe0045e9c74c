"""Which group calls a consumer accepts, before any broker is involved."""

from __future__ import annotations

import re

import pytest

from spate.client import Consumer, TopicPartition
from spate.client.consumer.subscription_state import (
    OffsetResetStrategy,
    SubscriptionState,
)

NOWHERE = "127.0.0.1:1"  # nothing is sent by any call below


def test_group_calls_need_a_group_id() -> None:
    with Consumer(NOWHERE) as consumer:
        for call in (lambda: consumer.subscribe(["t"]), consumer.commit, consumer.group_metadata,
                     lambda: consumer.committed([TopicPartition("t", 0)])):
            with pytest.raises(ValueError, match="group_id"):
                call()


def test_assign_and_subscribe_exclude_each_other_until_unsubscribe() -> None:
    with Consumer(NOWHERE, group_id="g") as consumer:
        consumer.assign([TopicPartition("t", 0)])
        with pytest.raises(ValueError, match="unsubscribe"):
            consumer.subscribe(["t"])
        consumer.unsubscribe()
        consumer.subscribe(["t"])
        with pytest.raises(ValueError, match="unsubscribe"):
            consumer.assign([TopicPartition("t", 0)])
        assert consumer.subscription() == {"t"}


def test_a_string_starting_with_a_caret_subscribes_to_a_pattern() -> None:
    with Consumer(NOWHERE, group_id="g") as consumer:
        consumer.subscribe("^orders-.*")
        assert consumer._subscriptions.pattern == re.compile("^orders-.*")


def test_an_empty_subscription_or_assignment_is_an_unsubscribe() -> None:
    with Consumer(NOWHERE, group_id="g") as consumer:
        consumer.subscribe(["t"])
        consumer.subscribe([])
        assert consumer.subscription() == set()
        consumer.assign([])
        consumer.subscribe(["t"])


def test_without_a_group_positions_fall_back_to_the_reset_strategy_at_once() -> None:
    state = SubscriptionState(OffsetResetStrategy.EARLIEST, use_committed_offsets=False)
    state.assign([TopicPartition("t", 0)])
    assert state.missing_positions() == [TopicPartition("t", 0)] and state.awaiting_committed() == []


def test_with_a_group_positions_wait_for_the_committed_offset_lookup() -> None:
    tp = TopicPartition("t", 0)
    state = SubscriptionState(OffsetResetStrategy.EARLIEST, use_committed_offsets=True)
    state.assign([tp])
    assert state.missing_positions() == [] and state.awaiting_committed() == [tp]
    state.state(tp).committed_checked = True  # the group had nothing committed
    assert state.missing_positions() == [tp] and state.awaiting_committed() == []


def test_group_settings_are_checked_when_the_consumer_is_made() -> None:
    with pytest.raises(ValueError):
        Consumer(NOWHERE, group_id="g", heartbeat_interval_ms=10_000, session_timeout_ms=6_000)
    with pytest.raises(ValueError):
        Consumer(NOWHERE, group_id="g", partition_assignment_strategy="sticky")
    with pytest.raises(ValueError):
        Consumer(NOWHERE, group_id="")
