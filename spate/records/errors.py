"""The one error type raised for malformed record data."""

from __future__ import annotations


class CorruptRecordError(ValueError):
    """Record bytes that cannot be trusted: truncated, wrong magic, bad CRC,
    impossible lengths, varint overflow, or a decompressed size past the limit.

    The broker maps it to Kafka's CORRUPT_MESSAGE (2); storage recovery treats
    it as the point where a torn log tail starts.
    """
