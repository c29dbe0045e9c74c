"""The group state machine: exactly Kafka's transitions are allowed, every other one raises."""

from __future__ import annotations

import itertools

import pytest

from broker_core.coordinator.group.group_metadata import (
    VALID_PREVIOUS_STATES,
    GroupMetadata,
    GroupState,
    IllegalGroupStateTransition,
)

S = GroupState
ALLOWED = {
    (S.EMPTY, S.PREPARING_REBALANCE),
    (S.STABLE, S.PREPARING_REBALANCE),
    (S.COMPLETING_REBALANCE, S.PREPARING_REBALANCE),
    (S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE),
    (S.PREPARING_REBALANCE, S.EMPTY),
    (S.COMPLETING_REBALANCE, S.STABLE),
    *((state, S.DEAD) for state in S),
}
PAIRS = list(itertools.product(S, S))


def test_the_table_lists_kafkas_transitions_and_nothing_else() -> None:
    table = {(source, target) for target, sources in VALID_PREVIOUS_STATES.items() for source in sources}
    assert table == ALLOWED


@pytest.mark.parametrize(("source", "target"), [p for p in PAIRS if p in ALLOWED], ids=str)
def test_allowed_transition_changes_state_and_stamps_the_time(source: GroupState, target: GroupState) -> None:
    group = GroupMetadata("g", state=source, now_ms=1)
    group.transition_to(target, 42)
    assert group.state is target
    assert group.state_timestamp_ms == 42


@pytest.mark.parametrize(("source", "target"), [p for p in PAIRS if p not in ALLOWED], ids=str)
def test_illegal_transition_raises_and_leaves_the_group_untouched(source: GroupState, target: GroupState) -> None:
    group = GroupMetadata("g", state=source, now_ms=1)
    with pytest.raises(IllegalGroupStateTransition) as raised:
        group.transition_to(target, 42)
    assert (raised.value.current, raised.value.target) == (source, target)
    assert group.state is source
    assert group.state_timestamp_ms == 1


def test_state_names_are_the_strings_kafka_reports() -> None:
    assert [str(s) for s in S] == ["Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"]
