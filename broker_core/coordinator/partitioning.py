"""Which partition of an internal topic holds a coordinator key (group id or transactional id).

Kafka places a key on partition ``Utils.abs(key.hashCode()) % partitions``,
where ``hashCode`` is Java's ``String.hashCode`` over UTF-16 code units with
32-bit overflow, and ``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0. Using the
same function keeps group placement identical to a Kafka cluster's, so tools
that compute it themselves agree with this broker.
"""

from __future__ import annotations

_INT32_MIN = -(2**31)


def java_string_hashcode(text: str) -> int:
    """``String.hashCode()``: ``s[0]*31^(n-1) + ... + s[n-1]`` in signed 32-bit arithmetic."""
    encoded = text.encode("utf-16-be", "surrogatepass")
    value = 0
    for i in range(0, len(encoded), 2):
        value = (value * 31 + ((encoded[i] << 8) | encoded[i + 1])) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def kafka_abs(value: int) -> int:
    """Kafka's ``Utils.abs``: the absolute value, except that ``Integer.MIN_VALUE`` gives 0."""
    return 0 if value == _INT32_MIN else abs(value)


def partition_for(key: str, partitions: int) -> int:
    if partitions <= 0:
        raise ValueError(f"an internal topic needs at least one partition, not {partitions}")
    return kafka_abs(java_string_hashcode(key)) % partitions
