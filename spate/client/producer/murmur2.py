"""MurmurHash2 (32-bit) exactly as Kafka's Java client computes it for keyed partitioning.

The Java client hashes the serialized key with seed ``0x9747b28c`` and picks
``to_positive(murmur2(key)) % num_partitions``, where ``to_positive`` clears
the sign bit. librdkafka's ``murmur2`` partitioners do the same, so a key
lands on the same partition whichever of these clients produced it.
"""

from __future__ import annotations

import struct

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF
_WORDS = struct.Struct("<I")


def murmur2(data: bytes | bytearray | memoryview) -> int:
    """The hash as a signed 32-bit integer, like Java's ``Utils.murmur2``."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    body = length & ~3
    for (k,) in _WORDS.iter_unpack(memoryview(data)[:body]):
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = length & 3
    if tail:
        if tail == 3:
            h ^= data[body + 2] << 16
        if tail >= 2:
            h ^= data[body + 1] << 8
        h ^= data[body]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(value: int) -> int:
    """Java's ``Utils.toPositive``: drop the sign bit (not the absolute value)."""
    return value & 0x7FFFFFFF


def partition_for_key(key: bytes | bytearray | memoryview, num_partitions: int) -> int:
    """Kafka's default partition for a non-null key."""
    return to_positive(murmur2(key)) % num_partitions
