"""Client-caused metadata and config errors carry Kafka's error codes."""

from __future__ import annotations

import pytest

from broker_core.cluster import errors
from broker_core.config import ConfigError
from spate.protocol.errors import ErrorCode

CODES = [
    (errors.InvalidTopicNameError, "INVALID_TOPIC_EXCEPTION"),
    (errors.UnknownTopicError, "UNKNOWN_TOPIC_OR_PARTITION"),
    (errors.UnknownPartitionError, "UNKNOWN_TOPIC_OR_PARTITION"),
    (errors.TopicExistsError, "TOPIC_ALREADY_EXISTS"),
    (errors.InvalidPartitionsError, "INVALID_PARTITIONS"),
    (errors.InvalidReplicationFactorError, "INVALID_REPLICATION_FACTOR"),
    (errors.InvalidReplicaAssignmentError, "INVALID_REPLICA_ASSIGNMENT"),
    (ConfigError, "INVALID_CONFIG"),
]


@pytest.mark.parametrize("error_type, code_name", CODES)
def test_error_carries_the_kafka_code_of_its_name(error_type: type, code_name: str) -> None:
    assert ErrorCode(error_type.error_code).name == code_name


@pytest.mark.parametrize(
    "error_type",
    [errors.StaleVersionError, errors.InvalidPartitionStateError, errors.MetadataStoreFileError],
)
def test_internal_errors_carry_no_client_code(error_type: type) -> None:
    assert error_type.error_code is None
