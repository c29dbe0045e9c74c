"""Kafka's topic naming rules and the '.'/'_' collision rule."""

from __future__ import annotations

import pytest

from broker_core.cluster.errors import InvalidTopicNameError
from broker_core.cluster.topic_names import (
    collision_warning,
    find_collision,
    is_internal_topic,
    is_valid_topic_name,
    unify_collision_chars,
    validate_topic_name,
)

VALID = ["a", "orders", "Orders-2024", "my.topic", "my_topic", "__consumer_offsets", "-", "...", "..a", "x" * 249, "0"]

INVALID = [
    ("", "empty"),
    (".", "cannot be '.'"),
    ("..", "cannot be '..'"),
    ("x" * 250, "250 characters long; the limit is 249"),
    ("has space", "contains ' '"),
    ("slash/topic", "contains '/'"),
    ("tab\ttopic", "contains '\\t'"),
    ("émoji", "contains 'é'"),
    ("star*", "contains '*'"),
    ("colon:x", "contains ':'"),
]


@pytest.mark.parametrize("name", VALID)
def test_valid_topic_names_are_accepted(name: str) -> None:
    validate_topic_name(name)
    assert is_valid_topic_name(name)


@pytest.mark.parametrize("name, reason", INVALID)
def test_invalid_topic_names_say_which_rule_they_break(name: str, reason: str) -> None:
    with pytest.raises(InvalidTopicNameError) as info:
        validate_topic_name(name)
    assert reason in str(info.value)
    assert info.value.error_code == 17
    assert not is_valid_topic_name(name)


COLLISIONS = [
    ("my.topic", ["my_topic"], "my_topic"),
    ("my_topic", ["other", "my.topic"], "my.topic"),
    ("a.b_c", ["a_b.c"], "a_b.c"),
    ("my.topic", ["my.topic"], None),
    ("plain", ["plain"], None),
    ("my.topic", ["my-topic", "mytopic"], None),
]


@pytest.mark.parametrize("name, existing, expected", COLLISIONS)
def test_names_differing_only_in_dot_and_underscore_collide(name: str, existing: list[str], expected: str | None) -> None:
    assert find_collision(name, existing) == expected


def test_unify_maps_dots_to_underscores() -> None:
    assert unify_collision_chars("a.b_c.d") == "a_b_c_d"


def test_names_with_dot_or_underscore_get_a_warning() -> None:
    assert collision_warning("plain-name") is None
    warning = collision_warning("with.dot")
    assert warning is not None and "with.dot" in warning


def test_internal_and_system_topics_get_no_collision_warning() -> None:
    assert collision_warning("__consumer_offsets") is None
    assert collision_warning("__transaction_state") is None
    assert collision_warning("_spate_sink_batches") is None


def test_internal_topics_are_recognised() -> None:
    assert is_internal_topic("__consumer_offsets")
    assert is_internal_topic("__transaction_state")
    assert not is_internal_topic("orders")
