"""The server-side assignors: ``uniform`` balances and sticks, ``range`` hands out contiguous ranges."""

from __future__ import annotations

import pytest

from broker_core.coordinator.group.consumer_group.assignors import (
    AssignmentSpec,
    RangeAssignor,
    UniformAssignor,
    UnsupportedAssignorError,
    assignors_named,
)


def spec(subscriptions: dict[str, set[str]], counts: dict[str, int], previous=None) -> AssignmentSpec:
    return AssignmentSpec({m: frozenset(t) for m, t in subscriptions.items()}, counts, previous or {})


def loads(assignment) -> dict[str, int]:
    return {m: sum(len(ps) for ps in topics.values()) for m, topics in assignment.items()}


def all_pairs(assignment) -> list[tuple[str, int]]:
    return sorted((t, p) for topics in assignment.values() for t, ps in topics.items() for p in ps)


@pytest.mark.parametrize(("members", "partitions"), [(1, 6), (3, 6), (4, 6), (7, 3), (100, 1000), (10, 7)])
def test_uniform_gives_every_partition_once_and_loads_differ_by_at_most_one(members, partitions) -> None:
    result = UniformAssignor().assign(spec({f"m{i:03}": {"t"} for i in range(members)}, {"t": partitions}))
    assert all_pairs(result) == [("t", p) for p in range(partitions)]
    assert max(loads(result).values()) - min(loads(result).values()) <= 1


def test_uniform_moves_only_what_a_new_member_needs() -> None:
    before = UniformAssignor().assign(spec({"a": {"t"}, "b": {"t"}}, {"t": 6}))
    after = UniformAssignor().assign(spec({"a": {"t"}, "b": {"t"}, "c": {"t"}}, {"t": 6}, previous=before))
    assert loads(after) == {"a": 2, "b": 2, "c": 2}
    for member in ("a", "b"):
        assert after[member]["t"] <= before[member]["t"]  # kept partitions only: nothing swaps between a and b


def test_uniform_balances_members_with_different_subscriptions() -> None:
    result = UniformAssignor().assign(spec({"a": {"x", "y"}, "b": {"y"}}, {"x": 2, "y": 2}))
    assert all_pairs(result) == [("x", 0), ("x", 1), ("y", 0), ("y", 1)]
    assert loads(result) == {"a": 2, "b": 2}
    assert "x" not in result["b"]


def test_uniform_skips_topics_that_do_not_exist() -> None:
    assert UniformAssignor().assign(spec({"a": {"missing"}}, {"missing": 0})) == {"a": {}}


def test_range_gives_each_subscriber_a_contiguous_range_the_first_ones_one_more() -> None:
    result = RangeAssignor().assign(spec({"b": {"t"}, "a": {"t"}, "c": {"t"}}, {"t": 7}))
    assert result == {"a": {"t": frozenset({0, 1, 2})}, "b": {"t": frozenset({3, 4})}, "c": {"t": frozenset({5, 6})}}


def test_range_assigns_each_topic_among_its_own_subscribers() -> None:
    result = RangeAssignor().assign(spec({"a": {"x", "y"}, "b": {"y"}}, {"x": 2, "y": 2}))
    assert result == {"a": {"x": frozenset({0, 1}), "y": frozenset({0})}, "b": {"y": frozenset({1})}}


def test_an_unknown_assignor_name_is_refused_naming_the_setting() -> None:
    with pytest.raises(UnsupportedAssignorError, match="group.consumer.assignors"):
        assignors_named(["uniform", "sticky"])
    assert [a.name for a in assignors_named(["range", "uniform"])] == ["range", "uniform"]
