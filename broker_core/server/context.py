"""What request handlers see of the broker."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping

from broker_core.config.broker_config import BrokerConfig
from broker_core.coordinator.group.group_coordinator import GroupCoordinator
from broker_core.coordinator.transaction.txn_coordinator import TransactionCoordinator
from broker_core.security.credentials import ScramCredentialStore
from broker_core.security.quotas.quota_store import ClientQuotaStore
from broker_core.server.clean_plan_service import CleanPlanService
from broker_core.server.cluster_membership import ClusterMembership
from broker_core.server.dynamic_config_manager import DynamicConfigManager
from broker_core.server.fetch_session.fetch_manager import FetchManager
from broker_core.server.isr_manager import IsrManager
from broker_core.server.metadata_answer_cache import MetadataAnswerCache
from broker_core.server.metadata_view import MetadataView
from broker_core.server.producer_ids import ProducerIdManager
from broker_core.server.replica_manager import ReplicaManager
from broker_core.server.replica_state_changes import ReplicaStateChanges
from broker_core.server.topic_admin import TopicAdmin
from spate.protocol.api_keys import ApiKey
from spate.protocol.versions import VersionRange

if TYPE_CHECKING:
    from broker_core.metrics.broker_metrics import BrokerMetrics
    from broker_core.security.authorizer.authorizer import Authorizer


@dataclass(frozen=True)
class BrokerContext:
    config: BrokerConfig
    node_id: int
    # The listener these handlers serve, and this broker's endpoint on it.
    listener_name: str
    advertised_host: str
    advertised_port: int
    replicas: ReplicaManager
    producer_ids: ProducerIdManager
    versions: Mapping[ApiKey, VersionRange]
    clock: Callable[[], int]
    # What handlers read of the cluster (the local store embedded, the metadata cache in a cluster), with
    # brokers at their endpoints on this listener, and where admin requests go; neither makes a handler
    # wait on ZooKeeper.
    metadata: MetadataView
    admin: TopicAdmin
    group_coordinator: GroupCoordinator | None = None
    txn_coordinator: TransactionCoordinator | None = None
    # Cluster mode only: the controller's requests, and this broker's part in the cluster.
    state_changes: ReplicaStateChanges | None = None
    membership: ClusterMembership | None = None
    # Cluster mode only: the leader's ISR upkeep (a follower's fetch may bring it back into the ISR).
    isr_manager: IsrManager | None = None
    # Where the Produce and Fetch handlers count messages and bytes; None when metrics.http.listener is unset.
    metrics: BrokerMetrics | None = None
    # SCRAM users (AlterUserScramCredentials / DescribeUserScramCredentials).
    credentials: ScramCredentialStore | None = None
    # Compaction plans made outside the broker (the CleanPlan request).
    clean_plans: CleanPlanService | None = None
    # ACL checks (authorizer.class.name); None: every request is allowed.
    authorizer: Authorizer | None = None
    # Client quotas (AlterClientQuotas / DescribeClientQuotas).
    quota_store: ClientQuotaStore | None = None
    # Incremental fetch sessions (KIP-227), shared by every listener; None: every fetch is sessionless.
    fetch_sessions: FetchManager | None = None

    # Dynamic broker configs (resource BROKER of AlterConfigs / DescribeConfigs) and the configuration in force.
    dynamic_config: DynamicConfigManager | None = None
    # Metadata answers' encoded topic entries; every listener's context shares the broker's one.
    metadata_answers: MetadataAnswerCache = field(default_factory=MetadataAnswerCache)

    @property
    def current_config(self) -> BrokerConfig:
        """``config`` with the dynamic broker configs applied."""
        return self.dynamic_config.current if self.dynamic_config is not None else self.config
