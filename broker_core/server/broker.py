"""The broker's composition root: builds every part from the config and runs them.

Start-up order: metadata store, logs (with crash recovery), hosted
partitions, request handlers, then the listener, so no request arrives before
the partitions it names are open. Shutdown runs the same way backwards and
ends with checkpoints, so the next start skips log recovery.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from typing import Callable

from broker_core.cluster.errors import UnknownTopicError
from broker_core.cluster.local_store import LocalMetadataStore
from broker_core.cluster.metadata_store import BrokerRegistration
from broker_core.config.broker_config import BrokerConfig
from broker_core.config.errors import ConfigError
from broker_core.config.listeners import Listener
from broker_core.config.topic_config import to_log_config_kwargs
from broker_core.coordinator.group import GroupConfig, GroupCoordinator
from broker_core.coordinator.scheduler import LoopScheduler
from broker_core.coordinator.transaction import TransactionCoordinator, TransactionStateManager, TxnConfig
from broker_core.server.connection import ClientConnection
from broker_core.server.context import BrokerContext
from broker_core.server.dispatch import RequestDispatcher
from broker_core.server.handlers import SERVED_APIS, bind_handlers
from broker_core.server.internal_topic_adapter import BrokerInternalTopic
from broker_core.server.producer_ids import ProducerIdManager
from broker_core.server.purgatory import FetchPurgatory
from broker_core.server.replica_manager import ReplicaManager
from broker_core.server.topic_manager import TopicManager
from broker_core.server.txn_marker_writer import BrokerMarkerWriter
from broker_core.storage.config import LogConfig
from broker_core.storage.log_manager import LogManager
from spate.protocol.internal_records.consumer_offsets import CONSUMER_OFFSETS_TOPIC
from spate.protocol.versions import ADVERTISED_VERSIONS
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class Broker:
    def __init__(self, config: BrokerConfig, *, clock: Callable[[], int] = wall_clock_ms) -> None:
        if config.zookeeper_connect is not None:
            raise ConfigError("ZooKeeper clusters are not supported by this broker yet; leave it empty "
                              "for the embedded single-node metadata store", key="zookeeper.connect")
        listener = self._plaintext_listener(config)
        self.config = config
        self._clock = clock
        self._listener = listener
        self._server: asyncio.base_events.Server | None = None
        self._connections: dict[asyncio.Task[None], ClientConnection] = {}
        self._background: list[asyncio.Task[None]] = []
        self._stopped = asyncio.Event()
        self.store: LocalMetadataStore | None = None
        self.replicas: ReplicaManager | None = None
        self._dispatcher: RequestDispatcher | None = None
        self._group_coordinator: GroupCoordinator | None = None
        self._txn_coordinator: TransactionCoordinator | None = None
        self.bound_port: int | None = None
        self._registered = False

    @staticmethod
    def _plaintext_listener(config: BrokerConfig) -> Listener:
        listeners = config.listeners
        for listener in listeners:
            if listener.security_protocol != "PLAINTEXT":
                raise ConfigError(
                    f"security protocol {listener.security_protocol} is not supported; use PLAINTEXT",
                    key="listeners",
                )
        if len(listeners) != 1:
            raise ConfigError("exactly one listener is supported", key="listeners")
        return listeners[0]

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        config = self.config
        for log_dir in config.log_dirs:
            log_dir.mkdir(parents=True, exist_ok=True)
        config.metadata_dir.mkdir(parents=True, exist_ok=True)
        self.store = LocalMetadataStore.in_directory(config.metadata_dir)
        default_log_config = LogConfig(**to_log_config_kwargs(config))
        log_manager = LogManager(list(config.log_dirs), default_log_config, clock=self._clock)
        purgatory = FetchPurgatory()
        self.replicas = ReplicaManager(
            node_id=config.node_id, log_manager=log_manager, broker_config=config, clock=self._clock,
            purgatory=purgatory,
        )
        topics = TopicManager(store=self.store, replicas=self.replicas, config=config)

        # Bind before registering so an ephemeral port (0) is advertised correctly.
        self._server = await asyncio.start_server(
            self._on_connection, self._listener.host or None, self._listener.port, reuse_address=True,
            start_serving=False,
        )
        self.bound_port = self._server.sockets[0].getsockname()[1]
        host, port = self._advertised_endpoint()
        self.store.register_broker(BrokerRegistration(config.node_id, host, port))
        self._registered = True
        topics.load_hosted_partitions()

        self._group_coordinator = self._build_group_coordinator(topics)
        producer_ids = ProducerIdManager(self.store, config.node_id)
        self._txn_coordinator = self._build_txn_coordinator(topics, producer_ids)

        versions = {key: span for key, span in ADVERTISED_VERSIONS.items() if key in SERVED_APIS}
        context = BrokerContext(
            config=config, node_id=config.node_id, advertised_host=host, advertised_port=port,
            store=self.store, replicas=self.replicas, topics=topics,
            producer_ids=producer_ids, versions=versions, clock=self._clock,
            group_coordinator=self._group_coordinator, txn_coordinator=self._txn_coordinator,
        )
        self._versions = versions
        self._dispatcher = RequestDispatcher(
            bind_handlers(context),
            queue_size=config.get_int("queued.max.requests"),
            workers=config.get_int("num.io.threads"),
        )
        self._dispatcher.start()
        self._start_background_tasks(log_manager)
        # Loads groups from __consumer_offsets on the loop's next turns; until then they answer
        # COORDINATOR_LOAD_IN_PROGRESS.
        self._group_coordinator.startup()
        # Transactions found half-way through PrepareCommit/PrepareAbort are completed from here.
        self._txn_coordinator.startup()
        await self._server.start_serving()
        logger.info("broker %d serving on %s:%d (advertised as %s:%d), %d partition(s) loaded",
                    config.node_id, self._listener.host, self.bound_port, host, port, len(list(self.replicas)))

    def _build_group_coordinator(self, topics: TopicManager) -> GroupCoordinator:
        config = GroupConfig.from_broker_config(self.config)
        offsets_topic = BrokerInternalTopic(config.offsets_topic_spec, store=self.store, topics=topics,
                                            replicas=self.replicas)
        return GroupCoordinator(
            config,
            offsets_topic,
            LoopScheduler(asyncio.get_running_loop(), self._clock),
            # Built next; TxnOffsetCommit requests only arrive once both exist.
            txn_verifier=lambda *request: self._txn_coordinator.verify_offset_commit(*request),
        )

    def _build_txn_coordinator(self, topics: TopicManager, producer_ids: ProducerIdManager) -> TransactionCoordinator:
        config = TxnConfig.from_broker_config(self.config)
        store, groups = self.store, self._group_coordinator
        state = TransactionStateManager(
            BrokerInternalTopic(config.state_log_spec, store=store, topics=topics, replicas=self.replicas),
            partitions=config.state_log_partitions,
        )
        markers = BrokerMarkerWriter(
            replicas=self.replicas,
            store=store,
            on_offsets_marker=lambda partition, producer_id, commit: groups.complete_transactional_offsets(
                offsets_partition=partition, producer_id=producer_id, commit=commit
            ),
            clock=self._clock,
        )

        def partition_exists(tp: TopicPartition) -> bool:
            try:
                return 0 <= tp.partition < store.get_topic(tp.topic).partition_count
            except UnknownTopicError:
                return False

        def offsets_partition_for(group_id: str) -> TopicPartition:
            groups.ensure_offsets_topic()
            return TopicPartition(CONSUMER_OFFSETS_TOPIC, groups.partition_for(group_id))

        coordinator = TransactionCoordinator(
            config,
            state,
            markers,
            LoopScheduler(asyncio.get_running_loop(), self._clock),
            next_producer_id=producer_ids.next_id,
            partition_exists=partition_exists,
            offsets_partition_for=offsets_partition_for,
        )
        return coordinator

    def _advertised_endpoint(self) -> tuple[str, int]:
        advertised = self.config.advertised_listeners[0]
        host = advertised.host
        if advertised.binds_all_interfaces or not host:
            host = socket.getfqdn()
        port = self.bound_port if advertised.port == 0 else advertised.port
        return host, port

    def _start_background_tasks(self, log_manager: LogManager) -> None:
        config = self.config
        jobs = [
            ("retention", config.get_int("log.retention.check.interval.ms"), self._run_retention),
            # Also fsyncs segments that rolled, which advances the recovery point.
            ("flush", min(config.log_flush_interval_ms, 1000), lambda: log_manager.flush_dirty(self._clock())),
            ("checkpoint", config.get_int("log.flush.offset.checkpoint.interval.ms"), self.replicas.checkpoint_all),
            ("segment-deletes", 1000, lambda: log_manager.run_pending_deletes(self._clock())),
        ]
        for name, interval_ms, job in jobs:
            if 0 < interval_ms < 2**31:
                self._background.append(asyncio.create_task(self._every(name, interval_ms, job), name=name))

    def _run_retention(self) -> None:
        deleted = self.replicas.log_manager.run_retention(self._clock())
        if deleted:
            logger.info("retention deleted %d segment(s)", deleted)

    async def _every(self, name: str, interval_ms: int, job: Callable[[], object]) -> None:
        while True:
            await asyncio.sleep(interval_ms / 1000)
            try:
                job()
            except Exception:
                logger.exception("background job %s failed", name)

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection = ClientConnection(
            reader, writer, self._dispatcher, versions=self._versions,
            max_request_size=self.config.get_int("socket.request.max.bytes"),
        )
        task = asyncio.current_task()
        self._connections[task] = connection
        try:
            await connection.serve()
        except Exception:
            logger.exception("connection %s failed", connection.peer)
        finally:
            self._connections.pop(task, None)

    async def serve_until_stopped(self) -> None:
        await self._stopped.wait()

    def request_stop(self) -> None:
        self._stopped.set()

    async def stop(self) -> None:
        """Stop accepting, finish nothing new, checkpoint and close every log."""
        if self._server is not None:
            self._server.close()
        for task in self._background:
            task.cancel()
        if self._group_coordinator is not None:
            self._group_coordinator.shutdown()
        if self._txn_coordinator is not None:
            self._txn_coordinator.shutdown()
        # Connections stop their own reader and writer tasks; cancelling the
        # connection task itself would race the stream machinery's callbacks.
        for connection in self._connections.values():
            connection.close()
        # Parked long-poll fetches are dropped rather than waited out.
        if self._dispatcher is not None:
            await self._dispatcher.stop()
        await asyncio.gather(*self._background, *self._connections, return_exceptions=True)
        if self.replicas is not None:
            self.replicas.shutdown()
        if self.store is not None:
            if self._registered:
                self.store.unregister_broker(self.config.node_id)
            self.store.close()
        logger.info("broker %d stopped cleanly", self.config.node_id)
