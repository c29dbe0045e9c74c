"""Where client quotas live: entity -> quota key -> value.

In a cluster, Kafka's layout: the config overrides of ``/config/users/<user>``,
``/config/clients/<client-id>`` and ``/config/users/<user>/clients/<client-id>``
(``<default>`` for the defaults, other names URL-encoded), with a
``/config/changes`` notification (``entity_path`` ``users/alice/clients/app``)
for every change. A user's znode holds their SCRAM credentials too, so a
write keeps the keys it does not own. Every broker keeps a snapshot, read
again when a notification appears (and every 30 s in case a
watch was lost with the session; see ``config_change_follower``).

The embedded single broker keeps them in ``spate-client-quotas.json`` in its
metadata directory, replaced atomically on every change.

Writes and reloads block (ZooKeeper, the disk): call them off the event loop;
:meth:`snapshot` does not block.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Mapping, Protocol
from urllib.parse import quote, unquote

from kazoo.exceptions import NodeExistsError, NoNodeError

from broker_core.cluster.errors import MetadataStoreFileError
from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.config_change_follower import ConfigChangeFollower
from broker_core.cluster.zk.config_entity_zk import update_config_entity
from broker_core.cluster.zk.znodes.configs import ConfigEntityZNode
from broker_core.security.quotas.client_quota_entity import DEFAULT, QUOTA_KEYS, ClientQuotaEntity, Component
from broker_core.storage.fs import write_atomically

logger = logging.getLogger(__name__)

QUOTAS_FILE_NAME = "spate-client-quotas.json"
DEFAULT_NAME = "<default>"
QuotaMap = dict[ClientQuotaEntity, dict[str, float]]


class ClientQuotaStore(Protocol):
    def snapshot(self) -> Mapping[ClientQuotaEntity, Mapping[str, float]]: ...

    def alter(self, entity: ClientQuotaEntity, updates: Mapping[str, float | None]) -> None:
        """Set (a value) or remove (None) quota keys of one entity."""
        ...

    def close(self) -> None: ...


def _applied(current: Mapping[str, float], updates: Mapping[str, float | None]) -> dict[str, float]:
    values = dict(current)
    for key, value in updates.items():
        if value is None:
            values.pop(key, None)
        else:
            values[key] = value
    return values


def entity_path(entity: ClientQuotaEntity) -> str:
    """``users/<u>``, ``clients/<c>`` or ``users/<u>/clients/<c>`` (names sanitized, defaults ``<default>``)."""
    def name(part: Component) -> str:
        return DEFAULT_NAME if part is DEFAULT else quote(str(part), safe="")
    if entity.user is None:
        return f"clients/{name(entity.client_id)}"
    path = f"users/{name(entity.user)}"
    return path if entity.client_id is None else f"{path}/clients/{name(entity.client_id)}"


def parse_entity_path(path: str) -> ClientQuotaEntity:
    def part(text: str) -> Component:
        return DEFAULT if text == DEFAULT_NAME else unquote(text)
    pieces = path.split("/")
    if len(pieces) == 2 and pieces[0] == "clients":
        return ClientQuotaEntity(None, part(pieces[1]))
    if len(pieces) == 2 and pieces[0] == "users":
        return ClientQuotaEntity(part(pieces[1]), None)
    if len(pieces) == 4 and pieces[0] == "users" and pieces[2] == "clients":
        return ClientQuotaEntity(part(pieces[1]), part(pieces[3]))
    raise ValueError(f"not a client quota entity path: {path!r}")


def _quota_values(config: Mapping[str, str]) -> dict[str, float]:
    out = {}
    for key in QUOTA_KEYS:
        if key in config:
            try:
                out[key] = float(config[key])
            except ValueError:
                logger.warning("ignoring client quota %s=%r: not a number", key, config[key])
    return out


class FileClientQuotaStore:
    def __init__(self, directory: Path) -> None:
        self._path = directory / QUOTAS_FILE_NAME
        self._lock = threading.Lock()
        self._quotas: QuotaMap = self._read()

    def _read(self) -> QuotaMap:
        try:
            data = json.loads(self._path.read_text())
            entries = data["entities"]
            return {parse_entity_path(path): {k: float(v) for k, v in values.items()}
                    for path, values in entries.items()}
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise MetadataStoreFileError(self._path, f"cannot read the client quotas: {exc!r}") from None

    def snapshot(self) -> Mapping[ClientQuotaEntity, Mapping[str, float]]:
        return self._quotas

    def alter(self, entity: ClientQuotaEntity, updates: Mapping[str, float | None]) -> None:
        with self._lock:
            quotas = dict(self._quotas)
            values = _applied(quotas.get(entity, {}), updates)
            if values:
                quotas[entity] = values
            else:
                quotas.pop(entity, None)
            document = {"version": 1, "entities": {entity_path(e): v for e, v in quotas.items()}}
            write_atomically(self._path, json.dumps(document, sort_keys=True).encode())
            self._quotas = quotas

    def close(self) -> None:
        pass


class ZkClientQuotaStore:
    def __init__(self, session: ZkSession) -> None:
        self._session = session
        self._quotas: QuotaMap = {}
        # The watch is armed before the first read, so no change made in between goes unseen.
        self._follower = ConfigChangeFollower(session, self.reload, "client quotas")
        self.reload()
        self._follower.start()

    def snapshot(self) -> Mapping[ClientQuotaEntity, Mapping[str, float]]:
        return self._quotas

    def _children(self, path: str) -> list[str]:
        try:
            return self._session.get_children(path)
        except NoNodeError:
            return []

    def reload(self) -> None:
        """Read every quota entity again."""
        paths = [f"clients/{c}" for c in self._children("/config/clients")]
        for user in self._children("/config/users"):
            paths.append(f"users/{user}")
            paths.extend(f"users/{user}/clients/{c}" for c in self._children(f"/config/users/{user}/clients"))
        quotas: QuotaMap = {}
        found = self._session.get_many([f"/config/{p}" for p in paths])
        for path in paths:
            item = found.get(f"/config/{path}")
            if item is None or not item[0]:  # gone, or a parent made without data
                continue
            kind, _, name = path.partition("/")
            values = _quota_values(ConfigEntityZNode.decode(kind, name, item[0]))
            if values:
                quotas[parse_entity_path(path)] = values
        self._quotas = quotas

    def close(self) -> None:
        self._follower.close()

    def _ensure_parents(self, znode: str) -> None:
        """``/config/users/<u>/clients`` needs ``/config/users/<u>``: made as an entity without overrides, which
        SCRAM lookups of that user can read."""
        pieces = znode.split("/")  # "", "config", "users", <u>, "clients", <c>
        if len(pieces) == 6:
            self._session.ensure_path("/config/users")
            try:
                self._session.create("/".join(pieces[:4]), ConfigEntityZNode.encode({}))
            except NodeExistsError:
                pass
        self._session.ensure_path(znode.rsplit("/", 1)[0])

    def alter(self, entity: ClientQuotaEntity, updates: Mapping[str, float | None]) -> None:
        """Read-modify-write of the entity's znode (keeping other keys, SCRAM's too) and a notification."""
        path = entity_path(entity)
        self._ensure_parents(f"/config/{path}")

        def merged(config: dict[str, str]) -> dict[str, str]:
            quota_part = _applied(_quota_values(config), updates)
            kept = {k: v for k, v in config.items() if k not in QUOTA_KEYS}
            return {**kept, **{k: repr(v) for k, v in quota_part.items()}}

        update_config_entity(self._session, path, merged)
        self.reload()


