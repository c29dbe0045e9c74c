"""Where SCRAM credentials live: user -> mechanism -> :class:`ScramCredential`.

In a cluster, Kafka's layout: each user's credentials are the config
overrides of entity ``users/<user>`` (``/config/users/<sanitized user>``),
one entry per mechanism in Kafka's text form::

    {"version":1,"config":{"SCRAM-SHA-256":"salt=...,stored_key=...,server_key=...,iterations=4096"}}

and every change leaves a ``/config/changes`` notification, as topic config
changes do. Brokers read the znode when a client authenticates, so a new or
changed user works at once on every broker.

The embedded single broker keeps the same per-user maps in
``spate-scram-credentials.json`` in its metadata directory, replaced
atomically (temp file, fsync, rename) on every change.

Both are blocking (ZooKeeper, the disk): call them off the event loop.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Protocol
from urllib.parse import quote, unquote

from kazoo.exceptions import NoNodeError

from broker_core.cluster.errors import MetadataStoreFileError
from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.config_entity_zk import ConfigUpdate, update_config_entity
from broker_core.cluster.zk.znodes.configs import (
    ConfigEntityTypeZNode,
    ConfigEntityZNode,
)
from broker_core.security.sasl.scram import ScramCredential, ScramMechanism
from broker_core.storage.fs import write_atomically

USERS = "users"
CREDENTIALS_FILE_NAME = "spate-scram-credentials.json"


class ScramCredentialStore(Protocol):
    def get(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None: ...

    def describe(self) -> dict[str, dict[str, ScramCredential]]:
        """Every user with credentials: user -> mechanism name -> credential."""
        ...

    def upsert(self, user: str, mechanism: ScramMechanism, credential: ScramCredential) -> None: ...

    def delete(self, user: str, mechanism: ScramMechanism) -> bool:
        """Remove one mechanism's credential; False when there was none."""
        ...


def _decode(entries: dict[str, str]) -> dict[str, ScramCredential]:
    return {name: ScramCredential.from_text(text) for name, text in entries.items() if name.startswith("SCRAM-")}


class FileScramCredentialStore:
    def __init__(self, directory: Path) -> None:
        self._path = directory / CREDENTIALS_FILE_NAME
        self._lock = threading.Lock()
        self._users = self._read()

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self._path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MetadataStoreFileError(self._path, f"cannot read the SCRAM credentials: {exc}") from None
        users = data.get("users") if isinstance(data, dict) else None
        if not isinstance(users, dict) or not all(isinstance(e, dict) for e in users.values()):
            raise MetadataStoreFileError(self._path, "corrupt: expected {\"version\":1,\"users\":{...}}")
        return {str(user): {str(k): str(v) for k, v in entries.items()} for user, entries in users.items()}

    def get(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        text = self._users.get(user, {}).get(mechanism.name)
        return ScramCredential.from_text(text) if text is not None else None

    def describe(self) -> dict[str, dict[str, ScramCredential]]:
        return {user: _decode(entries) for user, entries in sorted(self._users.items()) if entries}

    def upsert(self, user: str, mechanism: ScramMechanism, credential: ScramCredential) -> None:
        with self._lock:
            users = {name: dict(entries) for name, entries in self._users.items()}
            users.setdefault(user, {})[mechanism.name] = credential.to_text()
            self._write(users)

    def delete(self, user: str, mechanism: ScramMechanism) -> bool:
        with self._lock:
            if mechanism.name not in self._users.get(user, {}):
                return False
            users = {name: dict(entries) for name, entries in self._users.items()}
            del users[user][mechanism.name]
            if not users[user]:
                del users[user]
            self._write(users)
            return True

    def _write(self, users: dict[str, dict[str, str]]) -> None:
        write_atomically(self._path, json.dumps({"version": 1, "users": users}, sort_keys=True).encode())
        self._users = users


def sanitize(user: str) -> str:
    """Kafka's ``Sanitizer``: a user name as a znode name (URL-encoded)."""
    return quote(user, safe="")


class ZkScramCredentialStore:
    def __init__(self, session: ZkSession) -> None:
        self._session = session

    def _entries(self, user: str) -> tuple[dict[str, str], int] | None:
        path = ConfigEntityZNode.path(USERS, sanitize(user))
        try:
            data, stat = self._session.get(path)
        except NoNodeError:
            return None
        return ConfigEntityZNode.decode(USERS, user, data), stat.version

    def get(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        found = self._entries(user)
        text = found[0].get(mechanism.name) if found else None
        return ScramCredential.from_text(text) if text is not None else None

    def describe(self) -> dict[str, dict[str, ScramCredential]]:
        try:
            names = self._session.get_children(ConfigEntityTypeZNode.path(USERS))
        except NoNodeError:
            return {}
        result: dict[str, dict[str, ScramCredential]] = {}
        for name in sorted(names):
            found = self._entries(unquote(name))
            credentials = _decode(found[0]) if found else {}
            if credentials:
                result[unquote(name)] = credentials
        return result

    def upsert(self, user: str, mechanism: ScramMechanism, credential: ScramCredential) -> None:
        self._change(user, lambda entries: {**entries, mechanism.name: credential.to_text()})

    def delete(self, user: str, mechanism: ScramMechanism) -> bool:
        found = self._entries(user)
        if found is None or mechanism.name not in found[0]:
            return False
        self._change(user, lambda entries: {k: v for k, v in entries.items() if k != mechanism.name})
        return True

    def _change(self, user: str, update: ConfigUpdate) -> None:
        self._session.ensure_path(ConfigEntityTypeZNode.path(USERS))
        update_config_entity(self._session, f"{USERS}/{sanitize(user)}", update)


