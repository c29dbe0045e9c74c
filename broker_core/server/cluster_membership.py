"""This broker's part in a ZooKeeper cluster: session, store, registration, election, and the controller.

* one :class:`ZkSession` shared by everything (as Kafka shares its ZooKeeper
  client), a :class:`ZkMetadataStore` over it and the admin writer;
* the ephemeral ``/brokers/ids/<id>`` registration (Kafka's JSON, with
  ``broker.rack``); its creation zxid is the *broker epoch* the controller
  sends back in its requests. A live broker already holding the id stops
  this one with :class:`BrokerAlreadyRegisteredError` ("broker id N is
  already registered ...");
* the controller election; winning starts Kafka's controller
  (:class:`KafkaController`) in this process, losing or resigning stops it;
* config change notifications: every change to a topic's overrides is read
  back and handed to ``on_topic_config`` (on the ZooKeeper event thread).

Blocking calls (:meth:`connect`, :meth:`register`, :meth:`close`) are made on
a worker thread by the broker; the election callbacks run on the election's
own thread.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any, Callable, Iterable

from kazoo.exceptions import NoNodeError

from broker_core.cluster.endpoint import EndPoint
from broker_core.cluster.errors import MetadataError, UnknownTopicError
from broker_core.cluster.metadata_store import BrokerRegistration, ChangeKind, MetadataChange
from broker_core.cluster.zk.admin_zk import AdminZkClient
from broker_core.cluster.zk.client import ZkClientConfig, ZkSession
from broker_core.cluster.zk.controller_election import ControllerElection, Leadership
from broker_core.cluster.zk.partition_state_zk import PartitionStateZk
from broker_core.cluster.zk.store import ZkMetadataStore
from broker_core.cluster.zk.znodes.brokers import BrokerIdZNode
from broker_core.cluster.zk.znodes.controller import ControllerZNode
from broker_core.config.broker_config import BrokerConfig
from broker_core.controller.controller import KafkaController
from broker_core.server.metadata_view import MetadataView
from spate.protocol.errors import ErrorCode, KafkaError
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

UNKNOWN_BROKER_EPOCH = -1


class ClusterMembership:
    def __init__(
        self,
        config: BrokerConfig,
        *,
        clock: Callable[[], int],
        on_fatal: Callable[[BaseException], None],
        on_topic_config: Callable[[str, dict[str, str]], None] = lambda topic, configs: None,
    ) -> None:
        self.config = config
        self.broker_id = config.node_id
        self._clock = clock
        self._on_fatal = on_fatal
        self._on_topic_config = on_topic_config
        self.session: ZkSession | None = None
        self.store: ZkMetadataStore | None = None
        self.admin: AdminZkClient | None = None
        self._election: ControllerElection | None = None
        self._controller: Any = None
        self._lock = threading.Lock()
        self._broker_epoch = UNKNOWN_BROKER_EPOCH
        self._stop_watching: Callable[[], None] | None = None

    # --- start-up (blocking) -------------------------------------------------------------------

    def connect(self) -> None:
        """Open the session, the store (creating Kafka's persistent paths) and the admin writer."""
        self.session = ZkSession(ZkClientConfig.from_broker_config(self.config)).start()
        self.store = ZkMetadataStore(self.session)
        self.admin = AdminZkClient(self.session)
        logger.info("broker %d connected to %s (cluster id %s)", self.broker_id, self.session.describe,
                    self.store.cluster_id())

    def register(self, endpoints: tuple[EndPoint, ...]) -> None:
        """Create ``/brokers/ids/<id>`` listing every advertised endpoint; :class:`BrokerAlreadyRegisteredError`
        if a live broker holds the id."""
        rack = self.config.get_optional_str("broker.rack")
        self.store.register_broker(BrokerRegistration.advertising(
            self.broker_id, endpoints, rack, reached_through=self.config.inter_broker_listener_name
        ))
        self._read_broker_epoch()
        self._stop_watching = self.store.watch(self._on_change)
        logger.info("broker %d registered with endpoints %s%s (broker epoch %d)", self.broker_id,
                    ",".join(e.connection_string() for e in endpoints), f", rack {rack}" if rack else "",
                    self._broker_epoch)

    def start_election(self) -> None:
        self._election = ControllerElection(
            self.session, self.broker_id, on_elected=self._on_elected, on_resigned=self._on_resigned,
            clock_ms=self._clock,
        )
        self._election.start()

    def broker_epoch(self) -> int:
        return self._broker_epoch

    def _read_broker_epoch(self) -> None:
        stat = self.session.exists(BrokerIdZNode.path(self.broker_id))
        self._broker_epoch = stat.czxid if stat is not None else UNKNOWN_BROKER_EPOCH

    # --- ZooKeeper changes (on the store's delivery thread) ---------------------------------------

    def _on_change(self, change: MetadataChange) -> None:
        if change.kind is ChangeKind.BROKER_REGISTERED and change.broker_id == self.broker_id:
            self._read_broker_epoch()  # registered again on a new session: a new epoch
        elif change.kind is ChangeKind.TOPIC_CONFIG_CHANGED and change.topic is not None:
            try:
                configs = self.admin.read_topic_configs(change.topic)
            except MetadataError as exc:
                logger.error("cannot reload the configs of topic %s: %s", change.topic, exc)
                return
            self._on_topic_config(change.topic, configs)

    # --- the controller ------------------------------------------------------------------------

    def _on_elected(self, leadership: Leadership) -> None:
        try:
            controller = KafkaController(self.config, self.session, leadership)
            controller.start()
        except Exception as exc:
            logger.error("%s", exc)
            self._on_fatal(exc)
            return
        with self._lock:
            self._controller = controller

    def _on_resigned(self) -> None:
        with self._lock:
            controller, self._controller = self._controller, None
        if controller is not None:
            try:
                controller.stop()
            except Exception:
                logger.exception("stopping the controller failed")

    def active_controller(self) -> Any:
        with self._lock:
            controller = self._controller
        return controller if controller is not None and controller.is_active() else None

    async def controlled_shutdown(self, broker_id: int, broker_epoch: int) -> list[TopicPartition]:
        """What the active controller in this process answers; NOT_CONTROLLER when there is none."""
        controller = self.active_controller()
        if controller is None:
            raise KafkaError(ErrorCode.NOT_CONTROLLER, f"broker {self.broker_id} is not the controller")
        return list(await asyncio.wrap_future(controller.controlled_shutdown(broker_id, broker_epoch)))

    def read_topic_configs(self, topics: Iterable[str]) -> dict[str, dict[str, str]]:
        """Each topic's config overrides (blocking); a topic already gone has none."""
        found = {}
        for topic in topics:
            try:
                found[topic] = self.admin.read_topic_configs(topic)
            except UnknownTopicError:
                found[topic] = {}
        return found

    def report_log_dir_failure(self) -> None:
        """Tell the controller (blocking) that a log dir of this broker failed; a failure to is only logged:
        the replicas stay offline here and answer KAFKA_STORAGE_ERROR, and the next LeaderAndIsr learns it."""
        try:
            PartitionStateZk(self.session).notify_log_dir_failure(self.broker_id)
        except Exception as exc:
            logger.error("cannot tell the controller that a log dir of broker %d failed: %s", self.broker_id, exc)

    async def find_controller(self, cache: MetadataView) -> BrokerRegistration | None:
        """The active controller's endpoint: the cache's, else ``/controller`` and its registration."""
        controller_id = cache.controller_id()
        if controller_id < 0:
            controller_id = await asyncio.to_thread(self.controller_id_in_zookeeper)
            if controller_id is None:
                return None
        found = cache.alive_broker(controller_id)
        if found is None:
            found = await asyncio.to_thread(self.registered_broker, controller_id)
        return found

    def controller_id_in_zookeeper(self) -> int | None:
        """The controller's broker id per ``/controller`` (blocking), or None during an election."""
        try:
            data, _ = self.session.get(ControllerZNode.path())
        except NoNodeError:
            return None
        return ControllerZNode.decode(data).broker_id

    def registered_broker(self, broker_id: int) -> BrokerRegistration | None:
        """A live broker's registration read from ZooKeeper (blocking), reached through the inter-broker
        listener when it advertises one."""
        found = next((b for b in self.store.list_brokers() if b.broker_id == broker_id), None)
        if found is None:
            return None
        return found.through(self.config.inter_broker_listener_name) or found

    # --- shutdown (blocking) -------------------------------------------------------------------

    def close(self) -> None:
        """Resign (stopping a controller running here), withdraw the registration, end the session."""
        if self._stop_watching is not None:
            self._stop_watching()
        if self._election is not None:
            self._election.stop()
        self._on_resigned()
        if self.store is not None:
            self.store.close()
        if self.session is not None:
            self.session.close()
