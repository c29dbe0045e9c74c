"""The metadata stores the contract tests run against, behind one small interface.

A backend is one place a store keeps its state: a file for the embedded
store, a chroot for the ZooKeeper store. ``open()`` opens a store there
(again, for reopen tests), ``durable_state()`` snapshots what is kept there,
and ``fresh()`` gives another, empty place.
"""

from __future__ import annotations

import itertools
import uuid
from pathlib import Path
from typing import Callable

from broker_core.cluster import local_store
from broker_core.cluster.local_store import METADATA_FILE_NAME, LocalMetadataStore
from broker_core.cluster.zk import change_delivery
from broker_core.cluster.zk import store as zk_store
from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.store import ZkMetadataStore
from tests.support.zookeeper import ZooKeeperForTests

IdSource = Callable[[], uuid.UUID]


class LocalBackend:
    name = "local"
    collision_logger = local_store.__name__
    listener_logger = local_store.__name__

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / "meta" / METADATA_FILE_NAME
        self._stores: list[LocalMetadataStore] = []
        self._fresh = itertools.count(1)

    def open(self, id_source: IdSource = uuid.uuid4) -> LocalMetadataStore:
        store = LocalMetadataStore(self.path, id_source=id_source)
        self._stores.append(store)
        return store

    def durable_state(self) -> object:
        return self.path.read_bytes()

    def fresh(self) -> LocalBackend:
        return LocalBackend(self.directory / f"fresh-{next(self._fresh)}")

    def close(self) -> None:
        for store in self._stores:
            store.close()


class ZooKeeperBackend:
    name = "zookeeper"
    collision_logger = zk_store.__name__
    listener_logger = change_delivery.__name__

    def __init__(self, zookeeper: ZooKeeperForTests) -> None:
        self.zookeeper = zookeeper
        self.chroot = zookeeper.new_chroot()
        self._stores: list[ZkMetadataStore] = []
        self._backends: list[ZooKeeperBackend] = []

    def open(self, id_source: IdSource = uuid.uuid4) -> ZkMetadataStore:
        store = ZkMetadataStore.connect(self.zookeeper.client_config(self.chroot), id_source=id_source)
        self._stores.append(store)
        return store

    def durable_state(self) -> object:
        """Every znode under the chroot with its data."""
        session = self.zookeeper.session(self.chroot)
        try:
            return dict(_walk(session, "/"))
        finally:
            session.close()

    def fresh(self) -> ZooKeeperBackend:
        backend = ZooKeeperBackend(self.zookeeper)
        self._backends.append(backend)
        return backend

    def close(self) -> None:
        for store in self._stores:
            store.close()
        for backend in self._backends:
            backend.close()


def _walk(session: ZkSession, path: str):
    data, _ = session.get(path)
    yield path, data
    for child in sorted(session.get_children(path)):
        yield from _walk(session, f"{path.rstrip('/')}/{child}")


Backend = LocalBackend | ZooKeeperBackend
