"""A group lives on partition abs(String.hashCode(group)) % partitions, exactly as in Kafka."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from broker_core.coordinator.partitioning import (
    java_string_hashcode,
    kafka_abs,
    partition_for,
)


def reference_hashcode(text: str) -> int:
    """Java's definition, term by term: sum of s[i] * 31^(n-1-i) over UTF-16 code units, wrapped to int32."""
    units = text.encode("utf-16-be", "surrogatepass")
    code_units = [int.from_bytes(units[i : i + 2], "big") for i in range(0, len(units), 2)]
    n = len(code_units)
    total = sum(u * 31 ** (n - 1 - i) for i, u in enumerate(code_units)) % 2**32
    return total - 2**32 if total >= 2**31 else total


def test_hashcode_matches_values_java_prints() -> None:
    assert java_string_hashcode("") == 0
    assert java_string_hashcode("a") == 97
    assert java_string_hashcode("hello") == 99162322
    assert java_string_hashcode("Aa") == java_string_hashcode("BB") == 2112  # the classic collision


def test_hashcode_counts_utf16_code_units_for_characters_outside_the_bmp() -> None:
    # U+1F600 is the surrogate pair D83D DE00 in Java.
    assert java_string_hashcode("\U0001F600") == 0xD83D * 31 + 0xDE00


def test_the_one_string_hashing_to_int_min_lands_on_partition_zero() -> None:
    assert java_string_hashcode("polygenelubricants") == -(2**31)
    assert kafka_abs(-(2**31)) == 0
    assert partition_for("polygenelubricants", 50) == 0


def test_partition_for_uses_the_absolute_value_of_a_negative_hash() -> None:
    negative = reference_hashcode("consumer-group-analytics")
    assert negative < 0
    assert partition_for("consumer-group-analytics", 50) == -negative % 50


@settings(max_examples=200)
@given(st.text(max_size=40), st.integers(min_value=1, max_value=200))
def test_hashcode_and_partition_agree_with_javas_definition(text: str, partitions: int) -> None:
    expected = reference_hashcode(text)
    assert java_string_hashcode(text) == expected
    assert partition_for(text, partitions) == (0 if expected == -(2**31) else abs(expected)) % partitions
