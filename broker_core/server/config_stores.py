"""Where a broker keeps what an administrator changes while it runs: ZooKeeper in a cluster, else files.

SCRAM credentials (``/config/users``), client quotas (``/config/users``,
``/config/clients``), dynamic broker configs (``/config/brokers``) and ACLs
(``/kafka-acl``) are ZooKeeper's in a cluster, as in Kafka, so every broker
reads the same; an embedded broker keeps each in a file beside its metadata
store. ``session`` is the cluster's ZooKeeper session, None when embedded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from broker_core.cluster.zk.client import ZkSession
from broker_core.config.broker_config import BrokerConfig
from broker_core.security.authorizer.acl_store import FileAclStore, ZkAclStore
from broker_core.security.authorizer.authorizer import Authorizer, authorizer_enabled, parse_super_users
from broker_core.security.credentials import FileScramCredentialStore, ZkScramCredentialStore
from broker_core.security.quotas.quota_store import FileClientQuotaStore, ZkClientQuotaStore
from broker_core.server.dynamic_config_store import FileDynamicConfigStore, ZkDynamicConfigStore


def credential_store(session: ZkSession | None, metadata_dir: Path) -> ZkScramCredentialStore | FileScramCredentialStore:
    return ZkScramCredentialStore(session) if session is not None else FileScramCredentialStore(metadata_dir)


def client_quota_store(session: ZkSession | None, metadata_dir: Path) -> ZkClientQuotaStore | FileClientQuotaStore:
    return ZkClientQuotaStore(session) if session is not None else FileClientQuotaStore(metadata_dir)


def dynamic_config_store(session: ZkSession | None, metadata_dir: Path,
                         on_change: Callable[[], None]) -> ZkDynamicConfigStore | FileDynamicConfigStore:
    """In a cluster, ``on_change`` is called (on a ZooKeeper thread) when a change notification arrives."""
    return ZkDynamicConfigStore(session, on_change=on_change) if session is not None \
        else FileDynamicConfigStore(metadata_dir)


def acl_authorizer(session: ZkSession | None, config: BrokerConfig) -> Authorizer | None:
    """The authorizer over the stored ACLs when ``authorizer.class.name`` is set (not started yet), else None."""
    if not authorizer_enabled(config.get_str("authorizer.class.name")):
        return None
    store = ZkAclStore(session) if session is not None else FileAclStore(config.metadata_dir)
    return Authorizer(store, super_users=parse_super_users(config.get_str("super.users")),
                      allow_if_no_acl=config.get_bool("allow.everyone.if.no.acl.found"))
