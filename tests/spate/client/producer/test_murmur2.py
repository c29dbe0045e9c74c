"""Keyed records land where the Java client (and librdkafka's murmur2 partitioners) put them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from spate.client.producer.murmur2 import murmur2, partition_for_key, to_positive

# Outputs of Java's Utils.murmur2 for these keys (the Java client's own test vectors).
JAVA_VECTORS = [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
]


@pytest.mark.parametrize(("key", "expected"), JAVA_VECTORS)
def test_murmur2_matches_the_java_client_signed_result(key: bytes, expected: int) -> None:
    assert murmur2(key) == expected


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_murmur2_matches_kafka_python_for_any_key(key: bytes) -> None:
    # kafka-python returns the same 32 bits as an unsigned number.
    assert murmur2(key) & 0xFFFFFFFF == kafka_python_murmur2(key)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64), st.integers(min_value=1, max_value=1000))
def test_partition_for_key_is_to_positive_hash_modulo_partitions(key: bytes, partitions: int) -> None:
    expected = (kafka_python_murmur2(key) & 0x7FFFFFFF) % partitions
    assert partition_for_key(key, partitions) == expected


def test_to_positive_clears_the_sign_bit_rather_than_negating() -> None:
    assert to_positive(-1) == 0x7FFFFFFF
    assert to_positive(-(2**31)) == 0
    assert to_positive(123) == 123


def test_murmur2_accepts_bytearray_and_memoryview_like_bytes() -> None:
    assert murmur2(bytearray(b"foobar")) == murmur2(memoryview(b"foobar")) == murmur2(b"foobar")
