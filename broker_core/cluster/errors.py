"""Typed errors of the cluster metadata store.

Errors a client can cause carry ``error_code``, Kafka's number for them, so
request handlers can answer without a lookup table of their own.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar


class MetadataError(Exception):
    """Base class of every metadata store error."""

    error_code: ClassVar[int | None] = None


class InvalidTopicNameError(MetadataError):
    """The name breaks Kafka's topic naming rules or collides with another topic."""

    error_code = 17  # INVALID_TOPIC_EXCEPTION


class UnknownTopicError(MetadataError):
    error_code = 3  # UNKNOWN_TOPIC_OR_PARTITION

    def __init__(self, topic: str) -> None:
        super().__init__(f"topic {topic!r} does not exist")
        self.topic = topic


class UnknownPartitionError(MetadataError):
    error_code = 3  # UNKNOWN_TOPIC_OR_PARTITION

    def __init__(self, topic: str, partition: int) -> None:
        super().__init__(f"partition {partition} of topic {topic!r} does not exist")
        self.topic = topic
        self.partition = partition


class TopicExistsError(MetadataError):
    error_code = 36  # TOPIC_ALREADY_EXISTS

    def __init__(self, topic: str) -> None:
        super().__init__(f"topic {topic!r} already exists")
        self.topic = topic


class InvalidPartitionsError(MetadataError):
    error_code = 37  # INVALID_PARTITIONS


class InvalidReplicationFactorError(MetadataError):
    error_code = 38  # INVALID_REPLICATION_FACTOR


class InvalidReplicaAssignmentError(MetadataError):
    error_code = 39  # INVALID_REPLICA_ASSIGNMENT


class InvalidPartitionStateError(MetadataError):
    """A partition state update that would break a leadership invariant (a caller bug)."""


class StaleVersionError(MetadataError):
    """A conditional write named a version that is no longer current.

    The writer read state that someone else has since changed (a newer
    controller, a concurrent ISR update); it must re-read and decide again.
    """

    def __init__(self, what: str, expected: int, actual: int) -> None:
        super().__init__(f"{what}: expected version {expected}, current version is {actual}")
        self.what = what
        self.expected = expected
        self.actual = actual


class BrokerAlreadyRegisteredError(MetadataError):
    """Another live broker holds this id (two brokers configured with one node.id)."""

    def __init__(self, broker_id: int) -> None:
        super().__init__(f"broker id {broker_id} is already registered by a live broker")
        self.broker_id = broker_id


class UnknownBrokerError(MetadataError):
    def __init__(self, broker_id: int) -> None:
        super().__init__(f"broker id {broker_id} is not registered")
        self.broker_id = broker_id


class MetadataStoreFileError(MetadataError):
    """The store's file cannot be read, parsed or written; the message names it."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"metadata store {path}: {reason}")
        self.path = path
        self.reason = reason
