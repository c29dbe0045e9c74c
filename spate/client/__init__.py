"""Spate's Kafka client: a producer, a consumer and an admin client.

Speaks the Kafka wire protocol through ``spate.protocol`` and reads and
writes RecordBatch v2 through ``spate.records``, so it talks to Spate
brokers and to any other Kafka-compatible broker alike::

    from spate.client import Admin, Consumer, NewTopic, Producer, TopicPartition

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
which ends it with ``complete_transaction``.

The admin client manages clusters with Kafka's Admin API:
``describe_cluster``, ``elect_leaders``, ``alter_partition_reassignments`` and
``list_partition_reassignments`` (returning :class:`PartitionReassignment`),
and ``incremental_alter_configs`` (taking :class:`AlterConfigOp` changes).

This module is the public API; everything else in the package is internal.
"""

from spate.client.admin.admin import Admin
from spate.client.admin.admin_types import (
    AlterConfigOp,
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
    PartitionDescription,
    PartitionReassignment,
    TopicDescription,
)
from spate.client.consumer.assignors import PartitionAssignor, RangeAssignor, RoundRobinAssignor
from spate.client.consumer.consumer import Consumer
from spate.client.consumer.consumer_record import ConsumerRecord, FetchedBatch, RawBatch
from spate.client.consumer.group_metadata import ConsumerGroupMetadata
from spate.client.consumer.list_offsets import EARLIEST, LATEST
from spate.client.errors import (
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
from spate.client.producer.future_record_metadata import FutureRecordMetadata
from spate.client.producer.murmur2 import murmur2, partition_for_key
from spate.client.producer.open_transaction import OpenTransaction
from spate.client.producer.partitioner import DefaultPartitioner, Partitioner
from spate.client.producer.producer import Producer
from spate.client.producer.record_metadata import RecordMetadata
from spate.client.producer.transaction_completion import (
    TransactionCompleter,
    TransactionCompletionError,
    complete_transaction,
    complete_transactions,
    hand_off_transaction,
)
from spate.client.producer.transaction_offsets import (
    TransactionOffsetsError,
    TransactionOffsetsWriter,
    add_offsets_to_open_transaction,
)
from spate.client.security_properties import SecurityPropertyError, is_security_property, security_settings
from spate.records.compression import Compression
from spate.records.record import TimestampType
from spate.structs import OffsetAndMetadata, OffsetAndTimestamp, TopicPartition

__all__ = [
    "Admin",
    "AdminError",
    "AlterConfigOp",
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
    "EARLIEST",
    "ErrorCode",
    "FetchedBatch",
    "FutureRecordMetadata",
    "GroupDescription",
    "GroupListing",
    "InvalidTxnStateError",
    "KafkaError",
    "KafkaTimeoutError",
    "LATEST",
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
    "PartitionReassignment",
    "Partitioner",
    "Producer",
    "ProducerFencedError",
    "RangeAssignor",
    "RawBatch",
    "RecordMetadata",
    "RoundRobinAssignor",
    "SecurityPropertyError",
    "TimestampType",
    "TopicDescription",
    "TopicPartition",
    "TransactionAbortableError",
    "TransactionAbortedError",
    "TransactionCompleter",
    "TransactionCompletionError",
    "TransactionOffsetsError",
    "TransactionOffsetsWriter",
    "UnsupportedApiError",
    "add_offsets_to_open_transaction",
    "complete_transaction",
    "complete_transactions",
    "hand_off_transaction",
    "is_security_property",
    "murmur2",
    "partition_for_key",
    "security_settings",
]
