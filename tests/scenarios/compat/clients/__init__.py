"""One driver per third-party Kafka client, all with the same operations (see ``model``)."""

from __future__ import annotations

from collections.abc import Callable

from tests.scenarios.compat.clients.aiokafka_driver import AiokafkaDriver
from tests.scenarios.compat.clients.confluent_driver import ConfluentDriver
from tests.scenarios.compat.clients.kafka_python_driver import KafkaPythonDriver
from tests.scenarios.compat.clients.model import (
    CODECS,
    ClientDriver,
    ClientOperationError,
    Codec,
    ConsumedRecord,
    OffsetOutOfRangeReported,
    OutgoingRecord,
    Placement,
    TimestampLookup,
)

# Each is called as Driver(bootstrap, *, timeout_s=..., max_request_bytes=...).
DRIVERS: dict[str, Callable[..., ClientDriver]] = {
    "confluent-kafka": ConfluentDriver,
    "kafka-python": KafkaPythonDriver,
    "aiokafka": AiokafkaDriver,
}

__all__ = [
    "CODECS",
    "DRIVERS",
    "AiokafkaDriver",
    "ClientDriver",
    "ClientOperationError",
    "Codec",
    "ConfluentDriver",
    "ConsumedRecord",
    "KafkaPythonDriver",
    "OffsetOutOfRangeReported",
    "OutgoingRecord",
    "Placement",
    "TimestampLookup",
]
