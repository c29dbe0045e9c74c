"""Spate's Kafka client: a producer, a consumer and an admin client.

Speaks the Kafka wire protocol through ``broker_core.protocol`` and reads and
writes RecordBatch v2 through ``broker_core.records``, so it talks to Spate
brokers and to any other Kafka-compatible broker alike::

    from broker_core.client import Admin, Consumer, NewTopic, Producer, TopicPartition

    with Admin("127.0.0.1:9092") as admin:
        admin.create_topics([NewTopic("orders", num_partitions=3)])
    with Producer("127.0.0.1:9092") as producer:
        producer.send("orders", b"hello", key=b"k").result()
    with Consumer("127.0.0.1:9092", auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition("orders", p) for p in range(3)])
        records = consumer.poll(timeout_ms=1000)

Consumer groups (``Consumer(group_id=...).subscribe``, ``commit``,
``committed``) and transactions (``Producer(transactional_id=...)``,
``init_transactions``, ``begin_transaction``, ``send_offsets_to_transaction``,
``commit_transaction``, ``abort_transaction``) follow Kafka's client API;
``Producer.prepare_handoff`` hands an open transaction to another process,
which ends it with ``transaction_completion.complete_transaction``.

This module is the public API; everything else in the package is internal.
"""

from broker_core.client.admin import Admin
from broker_core.client.admin_types import (
    BrokerDescription,
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    ConfigResourceType,
    ConfigSource,
    GroupDescription,
    GroupListing,
    MemberDescription,
    NewTopic,
    OffsetAndMetadata,
    PartitionDescription,
    TopicDescription,
)
from broker_core.client.assignors import PartitionAssignor, RangeAssignor, RoundRobinAssignor
from broker_core.client.consumer import Consumer
from broker_core.client.consumer_coordinator import ConsumerGroupMetadata
from broker_core.client.consumer_record import ConsumerRecord, FetchedBatch
from broker_core.client.errors import (
    AdminError,
    BrokerUnavailableError,
    ClientClosedError,
    ClientError,
    CommitFailedError,
    ErrorCode,
    InvalidTxnStateError,
    KafkaError,
    KafkaTimeoutError,
    NetworkError,
    NoOffsetForPartitionError,
    OffsetOutOfRangeError,
    ProducerFencedError,
    TransactionAbortableError,
    TransactionAbortedError,
    UnsupportedApiError,
)
from broker_core.client.future_record_metadata import FutureRecordMetadata
from broker_core.client.list_offsets import EARLIEST, LATEST
from broker_core.client.murmur2 import murmur2, partition_for_key
from broker_core.client.open_transaction import OpenTransaction
from broker_core.client.partitioner import DefaultPartitioner, Partitioner
from broker_core.client.producer import Producer
from broker_core.client.record_metadata import RecordMetadata
from broker_core.client.topic_partition import OffsetAndTimestamp, TopicPartition
from broker_core.records.compression import Compression
from broker_core.records.record import TimestampType

__all__ = [
    "EARLIEST",
    "LATEST",
    "Admin",
    "AdminError",
    "BrokerDescription",
    "BrokerUnavailableError",
    "ClientClosedError",
    "ClientError",
    "ClusterDescription",
    "CommitFailedError",
    "Compression",
    "ConfigEntry",
    "ConfigResource",
    "ConfigResourceType",
    "ConfigSource",
    "Consumer",
    "ConsumerGroupMetadata",
    "ConsumerRecord",
    "DefaultPartitioner",
    "ErrorCode",
    "FetchedBatch",
    "FutureRecordMetadata",
    "GroupDescription",
    "GroupListing",
    "InvalidTxnStateError",
    "KafkaError",
    "KafkaTimeoutError",
    "MemberDescription",
    "NetworkError",
    "NewTopic",
    "NoOffsetForPartitionError",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "OffsetOutOfRangeError",
    "OpenTransaction",
    "PartitionAssignor",
    "PartitionDescription",
    "Partitioner",
    "Producer",
    "ProducerFencedError",
    "RangeAssignor",
    "RecordMetadata",
    "RoundRobinAssignor",
    "TimestampType",
    "TopicDescription",
    "TopicPartition",
    "TransactionAbortableError",
    "TransactionAbortedError",
    "UnsupportedApiError",
    "murmur2",
    "partition_for_key",
]
