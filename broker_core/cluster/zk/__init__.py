"""Cluster metadata in ZooKeeper, in Kafka's ZooKeeper-era layout.

Layers, bottom up (kazoo's own split: serialization, connection, recipes):

* :mod:`~broker_core.cluster.zk.znodes`: one class per znode with ``path``,
  ``encode`` and ``decode`` (pure; Kafka's paths and JSON);
* :mod:`~broker_core.cluster.zk.client`: :class:`ZkSession`, the one place
  that talks to ZooKeeper (kazoo), with Kafka's ``zookeeper.*`` settings,
  bounded waits and typed session events;
* recipes taking a session: broker registration, producer id blocks,
  :class:`ControllerElection`, the change feed behind ``watch()``;
* :class:`ZkMetadataStore`: the
  :class:`~broker_core.cluster.metadata_store.MetadataStore` over all of it;
* :mod:`~broker_core.cluster.zk.server`: a real ZooKeeper server process from
  the jars in the pyspark wheel (``spate zookeeper start``, tests).
"""

from broker_core.cluster.zk.client import (
    RetryPolicy,
    SessionEvent,
    SessionListener,
    SessionState,
    ZkClientConfig,
    ZkSession,
)
from broker_core.cluster.zk.controller_election import ControllerElection, Leadership
from broker_core.cluster.zk.errors import ZNodeDecodeError, ZooKeeperServerError, ZooKeeperUnavailableError
from broker_core.cluster.zk.server import ZooKeeperServer
from broker_core.cluster.zk.server_files import ZooKeeperServerConfig
from broker_core.cluster.zk.store import ZkMetadataStore

__all__ = [
    "ControllerElection",
    "Leadership",
    "RetryPolicy",
    "SessionEvent",
    "SessionListener",
    "SessionState",
    "ZNodeDecodeError",
    "ZkClientConfig",
    "ZkMetadataStore",
    "ZkSession",
    "ZooKeeperServer",
    "ZooKeeperServerConfig",
    "ZooKeeperServerError",
    "ZooKeeperUnavailableError",
]
