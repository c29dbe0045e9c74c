"""The znodes every Kafka-layout cluster has, created empty when a store first opens.

Kafka's broker creates these persistent paths on start (``PersistentZkPaths``);
creating them up front lets every later write assume its parent exists, and
lets watches be set on them before anything is written below.
"""

from __future__ import annotations

from broker_core.cluster.zk.znodes.admin import DeleteTopicsZNode
from broker_core.cluster.zk.znodes.brokers import BrokerIdsZNode, BrokerSequenceIdZNode
from broker_core.cluster.zk.znodes.cluster import ProducerIdBlockZNode
from broker_core.cluster.zk.znodes.configs import TOPIC, ConfigChangesZNode, ConfigEntityTypeZNode
from broker_core.cluster.zk.znodes.notifications import IsrChangeNotificationsZNode
from broker_core.cluster.zk.znodes.topics import TopicsZNode

PERSISTENT_PATHS = (
    "/consumers",
    BrokerIdsZNode.path(),
    TopicsZNode.path(),
    ConfigChangesZNode.path(),
    DeleteTopicsZNode.path(),
    BrokerSequenceIdZNode.path(),
    IsrChangeNotificationsZNode.path(),
    ProducerIdBlockZNode.path(),
    "/log_dir_event_notification",
    ConfigEntityTypeZNode.path(TOPIC),
    ConfigEntityTypeZNode.path("clients"),
    ConfigEntityTypeZNode.path("users"),
    ConfigEntityTypeZNode.path("brokers"),
    ConfigEntityTypeZNode.path("ips"),
)
