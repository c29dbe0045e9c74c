"""Where dynamic broker configs live: the cluster-wide defaults and each broker's own.

In a cluster, Kafka's layout: ``/config/brokers/<default>`` and
``/config/brokers/<id>``, each change committed with a ``/config/changes``
notification (``entity_path`` ``brokers/<id>``) that makes every broker read
them again (and every 30 s in case a watch was lost with the
session; see ``config_change_follower``). The embedded single broker keeps them in
``spate-dynamic-broker-configs.json`` in its metadata directory, replaced
atomically on every change.

Reads and writes block (ZooKeeper, the disk): call them off the event loop.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Callable, Protocol

from kazoo.exceptions import NoNodeError

from broker_core.cluster.errors import MetadataStoreFileError
from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.config_change_follower import ConfigChangeFollower
from broker_core.cluster.zk.config_entity_zk import ConfigUpdate, update_config_entity
from broker_core.cluster.zk.znodes.configs import ConfigEntityZNode
from broker_core.config.dynamic_broker_config import DEFAULT_ENTITY
from broker_core.storage.fs import write_atomically

CONFIGS_FILE_NAME = "spate-dynamic-broker-configs.json"
BROKERS = "brokers"


class DynamicConfigStore(Protocol):
    def read(self, entity: str) -> dict[str, str]:
        """The configs of ``<default>`` or of a broker id."""
        ...

    def update(self, entity: str, update: ConfigUpdate) -> dict[str, str]:
        """Replace the configs of ``entity`` by ``update`` of them (which may raise to change nothing); the new
        configs."""
        ...

    def close(self) -> None: ...


class FileDynamicConfigStore:
    def __init__(self, directory: Path) -> None:
        self._path = directory / CONFIGS_FILE_NAME
        self._lock = threading.Lock()
        self._entities = self._load()

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            entities = json.loads(self._path.read_text())["brokers"]
            return {str(entity): {str(k): str(v) for k, v in configs.items()} for entity, configs in entities.items()}
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise MetadataStoreFileError(self._path, f"cannot read the dynamic broker configs: {exc!r}") from None

    def read(self, entity: str) -> dict[str, str]:
        with self._lock:  # from the file: what the last writer left there
            self._entities = self._load()
            return dict(self._entities.get(entity, {}))

    def update(self, entity: str, update: ConfigUpdate) -> dict[str, str]:
        with self._lock:
            entities = dict(self._entities)
            configs = entities[entity] = update(dict(entities.get(entity, {})))
            if not configs:
                del entities[entity]
            document = {"version": 1, "brokers": entities}
            write_atomically(self._path, json.dumps(document, sort_keys=True, indent=1).encode())
            self._entities = entities
            return dict(configs)

    def close(self) -> None:
        pass


class ZkDynamicConfigStore:
    """``/config/brokers``; ``on_change`` runs on a background thread after a notification."""

    def __init__(self, session: ZkSession, on_change: Callable[[], None] | None = None) -> None:
        self._session = session
        self._follower = ConfigChangeFollower(session, on_change or (lambda: None), "dynamic broker configs").start()

    def read(self, entity: str) -> dict[str, str]:
        try:
            data, _ = self._session.get(ConfigEntityZNode.path(BROKERS, entity))
        except NoNodeError:
            return {}
        return ConfigEntityZNode.decode(BROKERS, entity, data) if data else {}

    def update(self, entity: str, update: ConfigUpdate) -> dict[str, str]:
        self._session.ensure_path(f"/config/{BROKERS}")
        written: list[dict[str, str]] = []

        def record(current: dict[str, str]) -> dict[str, str]:
            written[:] = [update(current)]
            return written[0]

        update_config_entity(self._session, f"{BROKERS}/{entity}", record)
        return dict(written[0])

    def close(self) -> None:
        self._follower.close()


def entity_name(node_id: int | None) -> str:
    return DEFAULT_ENTITY if node_id is None else str(node_id)
