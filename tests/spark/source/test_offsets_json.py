"""Partition offsets as Spark-Kafka JSON: ``{"topic": {"0": 23}}``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_ext.offsets import (
    OffsetJsonError,
    offsets_from_dict,
    offsets_to_json,
    parse_offsets_json,
)
from spate.client import TopicPartition


def test_offsets_serialize_like_sparks_kafka_source_with_topics_and_partitions_in_order():
    offsets = {TopicPartition("b", 10): 5, TopicPartition("b", 2): 7, TopicPartition("a", 0): 23}
    assert offsets_to_json(offsets) == '{"a":{"0":23},"b":{"2":7,"10":5}}'


@settings(max_examples=100)
@given(st.dictionaries(
    st.builds(TopicPartition, st.text(alphabet="abc-._", min_size=1, max_size=5), st.integers(0, 50)),
    st.integers(-2, 2**62),
))
def test_offsets_survive_a_json_round_trip(offsets):
    assert parse_offsets_json(offsets_to_json(offsets)) == offsets


@pytest.mark.parametrize("text, problem", [
    ("[1, 2]", "JSON object"),
    ('{"a": 5}', "map partitions"),
    ('{"a": {"x": 1}}', "not a number"),
    ('{"a": {"-1": 1}}', "negative"),
    ('{"a": {"0": 1.5}}', "not an integer"),
    ('{"a": {"0": true}}', "not an integer"),
    ('{"": {"0": 1}}', "non-empty"),
    ("{oops", "not valid JSON"),
])
def test_malformed_offset_json_is_refused_with_the_reason(text, problem):
    with pytest.raises(OffsetJsonError, match=problem):
        parse_offsets_json(text, what="startingOffsets")


def test_error_messages_name_what_was_being_parsed():
    with pytest.raises(OffsetJsonError, match="endingOffsets"):
        offsets_from_dict(json.loads('{"a": []}'), what="endingOffsets")
