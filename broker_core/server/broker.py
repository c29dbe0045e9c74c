"""The broker's composition root: builds every part from the config and runs them.

Two modes share it. Embedded (no ``zookeeper.connect``): a local metadata
store, every partition led here. Cluster: a ZooKeeper session, registration
and controller election (``cluster_membership``), a metadata cache fed by
the controller, partitions hosted as LeaderAndIsr says, admin requests
written to ZooKeeper.

Start-up order: metadata (store or ZooKeeper), logs (with crash recovery),
hosted partitions, request handlers, then the listeners, so no request
arrives before the partitions it names are open; a cluster broker contends
for controller last. Shutdown runs the same way backwards, a cluster broker
first moving its leadership away (controlled shutdown) while it still
serves, and ends with checkpoints, so the next start skips log recovery;
serving stops in bounded time (``broker_shutdown``).

Every listener is served (``socket_server``), its connections held by the
``processor``; the requests of each are handled with a context of their own,
whose metadata view names the brokers by their endpoints on that listener
(Kafka's rule), so clients and brokers can be told different addresses. The
periodic jobs run on the ``broker_scheduler``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from typing import Any, Callable

from broker_core.cluster.endpoint import EndPoint
from broker_core.cluster.local_store import LocalMetadataStore
from broker_core.cluster.metadata_store import BrokerRegistration, MetadataStore
from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.partition_state_zk import PartitionStateZk
from broker_core.config.broker_config import BrokerConfig
from broker_core.config.dynamic_broker_config import LOG_CONFIGS, SOCKET_SERVER_CONFIGS
from broker_core.config.errors import ConfigError
from broker_core.config.topic_config import to_log_config_kwargs
from broker_core.coordinator.group import GroupCoordinator
from broker_core.coordinator.leadership_listener import CoordinatorLeadershipListener
from broker_core.coordinator.transaction import TransactionCoordinator, TransactionStateManager, TxnConfig
from broker_core.metrics.broker_metrics import BrokerMetrics
from broker_core.metrics.cleaner_metrics import CleanerCollector
from broker_core.metrics.fetch_session_metrics import FetchSessionCollector
from broker_core.metrics.listener_address import PROPERTY as METRICS_LISTENER
from broker_core.metrics.listener_address import parse_metrics_listener
from broker_core.security.authorizer.authorizer import Authorizer
from broker_core.security.quotas.client_quota_manager import ClientQuotaManager
from broker_core.security.quotas.quota_store import FileClientQuotaStore, ZkClientQuotaStore
from broker_core.security.quotas.rate_sensor import RateConfig
from broker_core.server.broker_coordinators import CoordinatorWiring
from broker_core.server.broker_scheduler import BrokerScheduler, schedule_log_jobs
from broker_core.server.broker_shutdown import move_leadership_away, stop_serving
from broker_core.server.clean_plan_service import CleanPlanService
from broker_core.server.cluster_membership import ClusterMembership
from broker_core.server.config_stores import acl_authorizer, client_quota_store, credential_store, dynamic_config_store
from broker_core.server.connection import ClientConnection
from broker_core.server.connection_quotas import ConnectionLimits
from broker_core.server.context import BrokerContext
from broker_core.server.dispatch import RequestDispatcher
from broker_core.server.dynamic_config_manager import DynamicConfigManager
from broker_core.server.fetch_session.fetch_manager import FetchManager
from broker_core.server.handlers import bind_handlers, served_apis
from broker_core.server.isr_manager import IsrManager
from broker_core.server.log_cleaner_service import start_log_cleaner
from broker_core.server.log_dir_failure_handler import LogDirFailureHandler
from broker_core.server.memory_pool import MemoryPool
from broker_core.server.metadata_cache import MetadataCache
from broker_core.server.metadata_view import MetadataView, StoreMetadataView
from broker_core.server.partition_limits import LOG_MAX_OPEN_FILES, raise_open_file_limit, segment_file_cap
from broker_core.server.processor import Processor, RequestHandling
from broker_core.server.producer_ids import ProducerIdManager
from broker_core.server.purgatory import FetchPurgatory
from broker_core.server.replica_manager import ReplicaManager
from broker_core.server.replica_state_changes import ReplicaStateChanges
from broker_core.server.socket_server import SocketServer
from broker_core.server.topic_admin import EmbeddedTopicAdmin
from broker_core.server.topic_config_handler import TopicConfigHandler
from broker_core.server.topic_manager import TopicManager
from broker_core.server.txn_marker_channel import TxnMarkerChannel
from broker_core.server.zk_admin_manager import ZkAdminManager
from broker_core.storage.cleaner.log_cleaner import LogCleaner
from broker_core.storage.config import LogConfig
from broker_core.storage.log_manager import LogManager
from spate.protocol.versions import ADVERTISED_VERSIONS

logger = logging.getLogger(__name__)


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class Broker:
    def __init__(self, config: BrokerConfig, *, clock: Callable[[], int] = wall_clock_ms) -> None:
        self._socket_server = SocketServer(config, lambda *accepted: self._processor.serve(*accepted), clock=clock)
        self.cluster_mode = config.zookeeper_connect is not None
        if self.cluster_mode and not (config.is_set("broker.id") or config.is_set("node.id")):
            raise ConfigError("is required when zookeeper.connect is set: each broker of a cluster needs its own id",
                              key="broker.id")
        self.config = config
        self._clock = clock
        self._processor = Processor(self._socket_server, MemoryPool(config.get_int("queued.max.request.bytes")))
        self._scheduler = BrokerScheduler()
        self._stopped = asyncio.Event()
        self._fatal: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.store: MetadataStore | None = None
        self.replicas: ReplicaManager | None = None
        self.membership: ClusterMembership | None = None
        self.metadata_cache: MetadataCache | None = None
        self._admin: ZkAdminManager | None = None
        self._producer_ids: ProducerIdManager | None = None
        self._dispatcher: RequestDispatcher | None = None
        self._group_coordinator: GroupCoordinator | None = None
        self._txn_coordinator: TransactionCoordinator | None = None
        self._marker_channel: TxnMarkerChannel | None = None
        self._isr_manager: IsrManager | None = None
        self._txn_state: TransactionStateManager | None = None
        # metrics.http.listener: GET /metrics, when set.
        self._metrics_listener = parse_metrics_listener(config.get_optional_str(METRICS_LISTENER))
        self.metrics = BrokerMetrics(self._socket_server.authentications) if self._metrics_listener else None
        self._registered = False
        self.quota_store: ZkClientQuotaStore | FileClientQuotaStore | None = None
        self.dynamic_config: DynamicConfigManager | None = None
        self.quotas: ClientQuotaManager | None = None
        self._log_cleaner: LogCleaner | None = None
        self._clean_plans = CleanPlanService()
        self.fetch_sessions = FetchManager.from_config(config, self._clock)
        self._serving = False
        self.authorizer: Authorizer | None = None

    @property
    def open_connections(self) -> list[ClientConnection]:
        """The client connections served now, each with its listener, peer and principal."""
        return self._processor.open_connections

    @property
    def failed_authentications(self) -> int:
        """SASL authentications that failed since the broker started."""
        return self._socket_server.authentications.failed_total

    @property
    def bound_port(self) -> int | None:
        """The port the first listener bound (None before :meth:`start`)."""
        return self._socket_server.first_port

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        config = self.config
        self._loop = asyncio.get_running_loop()
        if self.metrics is not None:
            # First, so a listener that cannot be bound stops the start before anything else runs.
            self.metrics.serve(self._metrics_listener)
            self.metrics.attach(self._loop)
        # Segment files share the open-file limit with connections: count on the hard limit, not a shell's default.
        file_limit = raise_open_file_limit()
        topic_configs: dict[str, dict[str, str]] = {}
        if self.cluster_mode:
            topics_changed = TopicConfigHandler(lambda: self.replicas, self._call_soon).process_config_changes
            self.membership = ClusterMembership(
                config, clock=self._clock, on_fatal=self._fail_from_thread, on_topic_config=topics_changed
            )
            await asyncio.to_thread(self.membership.connect)
            self.store = self.membership.store
            # Logs on disk open with their topic's overrides, as Kafka's log manager reads them at start.
            topic_configs = await asyncio.to_thread(self.membership.admin.read_all_topic_configs)
        else:
            config.metadata_dir.mkdir(parents=True, exist_ok=True)
            self.store = LocalMetadataStore.in_directory(config.metadata_dir)
        # SCRAM users, ACLs, client quotas and dynamic configs: ZooKeeper in a cluster, files when embedded.
        session = self.membership.session if self.membership is not None else None
        self.credentials = credential_store(session, config.metadata_dir)
        for security in self._socket_server.security.values():
            security.credentials = self.credentials
        await asyncio.to_thread(self._start_authorizer, session)
        self.quota_store = await asyncio.to_thread(client_quota_store, session, config.metadata_dir)
        self.quotas = ClientQuotaManager(self.quota_store, RateConfig(
            config.get_int("quota.window.num"), config.get_int("quota.window.size.seconds")))
        # Dynamic broker configs: in force from the start, as Kafka reads /config/brokers before its logs.
        self.dynamic_config = await asyncio.to_thread(self._open_dynamic_config, session)
        config = self.config = self.dynamic_config.current
        default_log_config = LogConfig(**to_log_config_kwargs(config))
        log_manager = LogManager(
            list(config.log_dirs), default_log_config, clock=self._clock,
            topic_config=lambda topic: (
                LogConfig(**to_log_config_kwargs(config, topic_configs[topic])) if topic in topic_configs else None
            ),
            max_open_files=segment_file_cap(config.get_int(LOG_MAX_OPEN_FILES), file_limit),
            recovery_threads_per_dir=config.get_int("num.recovery.threads.per.data.dir"),
        )
        self.replicas = ReplicaManager(
            node_id=config.node_id, log_manager=log_manager, broker_config=config, clock=self._clock,
            purgatory=FetchPurgatory(),
        )
        self._follow_dynamic_config()
        failures = LogDirFailureHandler(replicas=self.replicas, node_id=config.node_id, membership=self.membership,
                                        scheduler=self._scheduler, stop_broker=self._stop_with)
        # Reported from inside a log operation: handled on the loop's next turn, once that operation has failed.
        log_manager.failures.on_failure = lambda log_dir: self._call_soon(lambda: failures.handle(log_dir))
        # Bind before registering so an ephemeral port (0) is advertised correctly.
        await self._socket_server.bind()
        endpoints = self._socket_server.advertised_endpoints()
        if self.cluster_mode:
            context, view = await self._start_cluster(endpoints)
        else:
            context, view = self._start_embedded(endpoints)
        self._dispatcher = RequestDispatcher(
            {
                name: bind_handlers(self._listener_context(context, view, name), cluster=self.cluster_mode)
                for name in self._socket_server.bound
            },
            queue_size=config.get_int("queued.max.requests"),
            workers=config.get_int("num.io.threads"),
            metrics=self.metrics.requests if self.metrics is not None else None,
        )
        self._dispatcher.start()
        self._processor.handle_requests_with(RequestHandling(
            self._dispatcher, context.versions, max_request_size=config.get_int("socket.request.max.bytes"),
            quotas=self.quotas,
        ))
        if self.metrics is not None:
            self._watch_state(view)
        self._start_background_tasks(log_manager)
        self._log_cleaner = start_log_cleaner(config, self.replicas, self._loop, self._clock)
        self._clean_plans.attach(self._log_cleaner)
        if self.metrics is not None:
            self.metrics.watch(FetchSessionCollector(self.fetch_sessions))
        if self.metrics is not None and self._log_cleaner is not None:
            self.metrics.watch(CleanerCollector(self._log_cleaner))
        # Loads groups from __consumer_offsets on the loop's next turns; until then they answer
        # COORDINATOR_LOAD_IN_PROGRESS.
        self._group_coordinator.startup()
        # Transactions found half-way through PrepareCommit/PrepareAbort are completed from here.
        self._txn_coordinator.startup()
        await self._socket_server.start_serving()
        self._serving = True
        if self.membership is not None:
            await asyncio.to_thread(self.membership.start_election)
        logger.info("broker %d serving %s, %d partition(s) loaded%s%s", config.node_id,
                    self._socket_server.describe(), len(list(self.replicas)),
                    ", in a ZooKeeper cluster" if self.cluster_mode else "",
                    f", metrics at {self.metrics.url}" if self.metrics is not None else "")

    def _watch_state(self, view: MetadataView) -> None:
        membership, isr = self.membership, self._isr_manager
        self.metrics.watch_broker(
            queue_size=lambda: self._dispatcher.queue_size, replicas=self.replicas,
            isr_changes=lambda: (isr.shrinks, isr.expands) if isr is not None else (0, 0),
            is_controller=(lambda: membership.active_controller() is not None) if membership else (lambda: True),
            view=view, group_manager=self._group_coordinator.group_manager, txn_state=self._txn_state,
        )

    @property
    def metrics_url(self) -> str | None:
        """Where ``GET /metrics`` is served (None when metrics.http.listener is unset)."""
        return self.metrics.url if self.metrics is not None else None

    def _start_embedded(self, endpoints: tuple[EndPoint, ...]) -> tuple[BrokerContext, StoreMetadataView]:
        config, store = self.config, self.store
        store.register_broker(BrokerRegistration.advertising(
            config.node_id, endpoints, config.get_optional_str("broker.rack"),
            reached_through=config.inter_broker_listener_name,
        ))
        self._registered = True
        topics = TopicManager(store=store, replicas=self.replicas, config=config)
        topics.load_hosted_partitions()
        view = StoreMetadataView(store, config.node_id)
        self._producer_ids = ProducerIdManager(store, config.node_id)
        self._build_coordinators(store, topics, view)
        return self._context(view, EmbeddedTopicAdmin(topics, store, view, config)), view

    async def _start_cluster(self, endpoints: tuple[EndPoint, ...]) -> tuple[BrokerContext, MetadataCache]:
        config, membership = self.config, self.membership
        await asyncio.to_thread(membership.register, endpoints)
        self._registered = True
        cache = self.metadata_cache = MetadataCache(cluster_id=membership.store.cluster_id(),
                                                    listener_name=config.inter_broker_listener_name)
        self._admin = ZkAdminManager(config=config, cache=cache, admin_zk=membership.admin)
        self._producer_ids = ProducerIdManager(membership.store, config.node_id, background=True)
        self._producer_ids.start()
        # The coordinators read their topics from the cache and have them created through the admin path;
        # they take over the internal-topic partitions that LeaderAndIsr makes this broker lead.
        self._build_coordinators(cache, self._admin, cache)
        groups, transactions = self._group_coordinator, self._txn_coordinator
        self.replicas.add_leadership_listener(CoordinatorLeadershipListener(groups=groups, transactions=transactions))
        state_changes = ReplicaStateChanges(
            node_id=config.node_id, replicas=self.replicas, cache=cache, topic_configs=membership.read_topic_configs,
            broker_epoch=membership.broker_epoch,
        )
        # Leaders shrink and expand their partitions' ISRs themselves, writing them to ZooKeeper.
        self._isr_manager = IsrManager(
            replicas=self.replicas, writer=PartitionStateZk(membership.session), clock=self._clock,
            max_lag_ms=config.get_int("replica.lag.time.max.ms"),
            broker_alive=lambda broker_id: cache.alive_broker(broker_id) is not None,
        )
        self._isr_manager.start()
        return self._context(cache, self._admin, state_changes=state_changes, isr_manager=self._isr_manager), cache

    def _context(self, view: StoreMetadataView | MetadataCache, admin: Any, **cluster: Any) -> BrokerContext:
        """The handlers' context as the inter-broker listener sees it; :meth:`_listener_context` makes each
        listener's."""
        apis = served_apis(cluster=self.cluster_mode)
        inter_broker = self._socket_server.bound[self.config.inter_broker_listener_name]
        return BrokerContext(
            config=self.config, node_id=self.config.node_id, listener_name=inter_broker.listener.name,
            advertised_host=inter_broker.endpoint.host, advertised_port=inter_broker.endpoint.port,
            replicas=self.replicas, producer_ids=self._producer_ids,
            versions={key: span for key, span in ADVERTISED_VERSIONS.items() if key in apis}, clock=self._clock,
            metadata=view, admin=admin, group_coordinator=self._group_coordinator,
            txn_coordinator=self._txn_coordinator, membership=self.membership, metrics=self.metrics,
            credentials=self.credentials, clean_plans=self._clean_plans, authorizer=self.authorizer,
            quota_store=self.quota_store, fetch_sessions=self.fetch_sessions, dynamic_config=self.dynamic_config,
            **cluster,
        )

    def _open_dynamic_config(self, session: ZkSession | None) -> DynamicConfigManager:
        """/config/brokers in a cluster (every broker follows its change notifications), else a file."""
        def reload() -> None:
            if self.dynamic_config is not None:
                self.dynamic_config.reload_from_thread()

        store = dynamic_config_store(session, self.config.metadata_dir, on_change=reload)
        return DynamicConfigManager(self.config, store, call_soon=self._call_soon if session is not None else None)

    def _follow_dynamic_config(self) -> None:
        """What a running broker applies of a dynamic config change: log defaults and connection limits."""
        replicas, sockets = self.replicas, self._socket_server
        self.dynamic_config.add_reconfigurable(LOG_CONFIGS, lambda _old, new: replicas.reconfigure(new))

        def limit_connections(_old: BrokerConfig, new: BrokerConfig) -> None:
            sockets.quotas.limits = ConnectionLimits.from_config(new)

        self.dynamic_config.add_reconfigurable(SOCKET_SERVER_CONFIGS, limit_connections)
        limit_connections(self.config, self.dynamic_config.current)  # the socket server was made with the file's

    def _start_authorizer(self, session: ZkSession | None) -> None:
        """authorizer.class.name set: ACLs from ZooKeeper (a cluster) or a file beside the embedded store."""
        self.authorizer = acl_authorizer(session, self.config)
        if self.authorizer is not None:
            self.authorizer.start()

    def _listener_context(self, context: BrokerContext, view: StoreMetadataView | MetadataCache,
                          listener_name: str) -> BrokerContext:
        """What the requests arriving on ``listener_name`` see: brokers at their endpoints on that listener."""
        endpoint = self._socket_server.bound[listener_name].endpoint
        return dataclasses.replace(
            context, listener_name=listener_name, advertised_host=endpoint.host, advertised_port=endpoint.port,
            metadata=view.for_listener(listener_name),
        )

    def _build_coordinators(self, store: Any, topics: Any, view: MetadataView) -> None:
        """The group and transaction coordinators over ``store`` (what reads their topics) and ``topics``
        (what creates them): the local store and topic manager embedded, the cache and admin path in a cluster."""
        wiring = CoordinatorWiring(self.config, self.replicas, store, topics, view, self._clock,
                                   asyncio.get_running_loop())
        groups = self._group_coordinator = wiring.group_coordinator(
            # Built next; TxnOffsetCommit requests only arrive once both exist.
            txn_verifier=lambda *request: self._txn_coordinator.verify_offset_commit(*request),
        )
        txn_config = TxnConfig.from_broker_config(self.config)
        state = self._txn_state = wiring.transaction_state(txn_config)
        self._marker_channel = wiring.marker_channel()
        self._txn_coordinator = wiring.transaction_coordinator(txn_config, state, self._marker_channel, groups,
                                                               next_producer_id=self._producer_ids.next_id)

    # --- cluster callbacks ---------------------------------------------------------------------

    def _fail_from_thread(self, exc: BaseException) -> None:
        self._call_soon(lambda: self._stop_with(exc))

    def _stop_with(self, exc: BaseException) -> None:
        """Stop the broker; :meth:`serve_until_stopped` raises ``exc`` (the first one, when several come)."""
        self._fatal = self._fatal or exc
        self.request_stop()

    def _call_soon(self, callback: Callable[[], None]) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(callback)
            except RuntimeError:  # the loop closed in between: the broker is gone
                pass

    # --- background jobs ---------------------------------------------------------------------

    def _start_background_tasks(self, log_manager: LogManager) -> None:
        schedule_log_jobs(self._scheduler, self.config, self.replicas, log_manager, self._clock, self.metrics)
        max_idle_ms = self.config.get_int("connections.max.idle.ms")
        if max_idle_ms >= 0:
            self._scheduler.spawn(self._processor.expire_idle_connections(max_idle_ms), name="idle-connections")

    # --- shutdown ------------------------------------------------------------------------------

    async def serve_until_stopped(self) -> None:
        """Wait for a stop request; raises what stopped the broker if something failed (the controller)."""
        await self._stopped.wait()
        if self._fatal is not None:
            raise self._fatal

    def request_stop(self) -> None:
        self._stopped.set()

    async def stop(self) -> None:
        """Move leadership away (cluster), stop serving (bounded), checkpoint and close every log."""
        if self._serving and self.membership is not None and self._fatal is None:
            await move_leadership_away(self.config, self.membership, self.metadata_cache)
        self._serving = False
        await stop_serving(self._socket_server, self._processor, self._dispatcher)
        self._scheduler.cancel_all()
        if self._log_cleaner is not None:
            await asyncio.to_thread(self._log_cleaner.shutdown)
        if self._group_coordinator is not None:
            self._group_coordinator.shutdown()
        if self._txn_coordinator is not None:
            self._txn_coordinator.shutdown()
        if self._marker_channel is not None:
            await self._marker_channel.close()
        if self._isr_manager is not None:
            await self._isr_manager.close()
        if self.replicas is not None:
            await self.replicas.shutdown_fetchers()
        await self._scheduler.join()
        if self._admin is not None:
            await self._admin.close()
        if self._producer_ids is not None:
            self._producer_ids.close()
        if self.authorizer is not None:
            self.authorizer.close()
        if self.quota_store is not None:
            self.quota_store.close()
        if self.dynamic_config is not None:
            self.dynamic_config.close()
        if self.membership is not None:
            # Resigns as controller and ends the session: the registration goes with it.
            await asyncio.to_thread(self.membership.close)
        if self.replicas is not None:
            self.replicas.shutdown()
        if self.store is not None and self.membership is None:
            if self._registered:
                self.store.unregister_broker(self.config.node_id)
            self.store.close()
        if self.metrics is not None:
            self.metrics.stop_timing()
            await asyncio.to_thread(self.metrics.close)
        logger.info("broker %d stopped cleanly", self.config.node_id)
