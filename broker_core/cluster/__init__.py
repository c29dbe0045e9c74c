"""Cluster metadata: the store interface, the embedded store, naming and placement rules."""

from broker_core.cluster.assignment import assign_added_partitions, assign_replicas, validate_assignment
from broker_core.cluster.errors import (
    BrokerAlreadyRegisteredError,
    InvalidPartitionsError,
    InvalidPartitionStateError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicNameError,
    MetadataError,
    MetadataStoreFileError,
    StaleVersionError,
    TopicExistsError,
    UnknownBrokerError,
    UnknownPartitionError,
    UnknownTopicError,
)
from broker_core.cluster.local_store import METADATA_FILE_NAME, LocalMetadataStore
from broker_core.cluster.metadata_store import (
    NO_LEADER,
    BrokerRegistration,
    ChangeKind,
    MetadataChange,
    MetadataStore,
    PartitionState,
    ProducerIdBlock,
    TopicDescription,
)
from broker_core.cluster.topic_names import validate_topic_name

__all__ = [
    "METADATA_FILE_NAME",
    "NO_LEADER",
    "BrokerAlreadyRegisteredError",
    "BrokerRegistration",
    "ChangeKind",
    "InvalidPartitionStateError",
    "InvalidPartitionsError",
    "InvalidReplicaAssignmentError",
    "InvalidReplicationFactorError",
    "InvalidTopicNameError",
    "LocalMetadataStore",
    "MetadataChange",
    "MetadataError",
    "MetadataStore",
    "MetadataStoreFileError",
    "PartitionState",
    "ProducerIdBlock",
    "StaleVersionError",
    "TopicDescription",
    "TopicExistsError",
    "UnknownBrokerError",
    "UnknownPartitionError",
    "UnknownTopicError",
    "assign_added_partitions",
    "assign_replicas",
    "validate_assignment",
    "validate_topic_name",
]
