"""Kafka's ZooKeeper layout: one class per znode, with ``path(...)``, ``encode(...)``, ``decode(...)``.

Paths and JSON follow Kafka's ZooKeeper-era brokers (``kafka/zk/ZkData.scala``
in Kafka 3.x), so the data reads the same to Kafka's tools. Encoders write
Kafka's compact JSON; decoders are strict and raise
:class:`~broker_core.cluster.zk.errors.ZNodeDecodeError` naming the path on
anything malformed. The classes hold no state and do no I/O.
"""

from broker_core.cluster.zk.znodes.admin import (
    DeleteTopicsZNode,
    DeleteTopicZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
)
from broker_core.cluster.zk.znodes.brokers import (
    BrokerIdsZNode,
    BrokerIdZNode,
    BrokerInfo,
    BrokerSequenceIdZNode,
    EndPoint,
)
from broker_core.cluster.zk.znodes.cluster import ClusterIdZNode, ProducerIdBlockZNode
from broker_core.cluster.zk.znodes.configs import (
    ConfigChangeNotificationZNode,
    ConfigChangesZNode,
    ConfigEntityZNode,
    TopicConfigZNode,
)
from broker_core.cluster.zk.znodes.controller import ControllerEpochZNode, ControllerRegistration, ControllerZNode
from broker_core.cluster.zk.znodes.layout import PERSISTENT_PATHS
from broker_core.cluster.zk.znodes.notifications import (
    IsrChangeNotificationsZNode,
    IsrChangeNotificationZNode,
    LogDirEventNotificationsZNode,
    LogDirEventNotificationZNode,
)
from broker_core.cluster.zk.znodes.topics import (
    LeaderIsrAndControllerEpoch,
    TopicAssignment,
    TopicPartitionStateZNode,
    TopicPartitionsZNode,
    TopicPartitionZNode,
    TopicsZNode,
    TopicZNode,
)

__all__ = [
    "PERSISTENT_PATHS",
    "BrokerIdZNode",
    "BrokerIdsZNode",
    "BrokerInfo",
    "BrokerSequenceIdZNode",
    "ClusterIdZNode",
    "ConfigChangeNotificationZNode",
    "ConfigChangesZNode",
    "ConfigEntityZNode",
    "ControllerEpochZNode",
    "ControllerRegistration",
    "ControllerZNode",
    "DeleteTopicZNode",
    "DeleteTopicsZNode",
    "EndPoint",
    "IsrChangeNotificationZNode",
    "LogDirEventNotificationsZNode",
    "LogDirEventNotificationZNode",
    "IsrChangeNotificationsZNode",
    "LeaderIsrAndControllerEpoch",
    "PreferredReplicaElectionZNode",
    "ProducerIdBlockZNode",
    "ReassignPartitionsZNode",
    "TopicAssignment",
    "TopicConfigZNode",
    "TopicPartitionStateZNode",
    "TopicPartitionZNode",
    "TopicPartitionsZNode",
    "TopicZNode",
    "TopicsZNode",
]
