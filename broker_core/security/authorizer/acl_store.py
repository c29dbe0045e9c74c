"""Where ACLs are kept: ZooKeeper in a cluster (Kafka's layout), a file for the embedded broker.

ZooKeeper, as Kafka's ``AclAuthorizer`` keeps them::

    /kafka-acl/<ResourceType>/<name>                      LITERAL patterns
    /kafka-acl-extended/prefixed/<ResourceType>/<name>    PREFIXED patterns
      {"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow",
                            "operation":"Read","host":"*"}]}

Every change leaves a sequential notification, ``/kafka-acl-changes/acl_changes_``
(data ``Topic:name``) for a literal pattern and
``/kafka-acl-extended-changes/acl_changes_`` (JSON naming the pattern) for a
prefixed one. Each broker watches both and reloads the patterns named (all of
them after a new ZooKeeper session), off ZooKeeper's event thread.

The embedded single broker keeps the same entries in ``spate-acls.json`` in
its metadata directory, replaced atomically on every change.

All methods block (ZooKeeper, the disk): call them off the event loop.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol, Sequence

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from broker_core.cluster.errors import MetadataStoreFileError
from broker_core.cluster.zk.client import SessionEvent, SessionState, ZkSession
from broker_core.security.authorizer.acl import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
    parse_enum,
)
from broker_core.security.authorizer.acl_cache import AclSnapshot
from broker_core.storage.fs import write_atomically

logger = logging.getLogger(__name__)

ACLS_FILE_NAME = "spate-acls.json"
LITERAL_ROOT = "/kafka-acl"
PREFIXED_ROOT = "/kafka-acl-extended/prefixed"
LITERAL_CHANGES = "/kafka-acl-changes"
EXTENDED_CHANGES = "/kafka-acl-extended-changes"
CHANGE_PREFIX = "acl_changes_"

OnChange = Callable[[AclSnapshot], None]


class AclStore(Protocol):
    def start(self, on_change: OnChange) -> None:
        """Report the stored ACLs now, and every later change made elsewhere."""
        ...

    def close(self) -> None: ...

    def add(self, bindings: Sequence[AclBinding]) -> None: ...

    def remove(self, bindings: Sequence[AclBinding]) -> None: ...


def encode_entries(entries: Iterable[AccessControlEntry]) -> bytes:
    acls = [{"principal": e.principal, "permissionType": e.permission.kafka_name,
             "operation": e.operation.kafka_name, "host": e.host}
            for e in sorted(entries, key=lambda e: (e.principal, e.host, e.operation, e.permission))]
    return json.dumps({"version": 1, "acls": acls}).encode()


def decode_entries(data: bytes) -> frozenset[AccessControlEntry]:
    document = json.loads(data.decode()) if data else {"acls": []}
    return frozenset(
        AccessControlEntry(principal=acl["principal"], host=acl["host"],
                           operation=parse_enum(AclOperation, acl["operation"]),  # type: ignore[arg-type]
                           permission=parse_enum(AclPermissionType, acl["permissionType"]))  # type: ignore[arg-type]
        for acl in document.get("acls", ())
    )


def _grouped(bindings: Iterable[AclBinding]) -> dict[ResourcePattern, set[AccessControlEntry]]:
    grouped: dict[ResourcePattern, set[AccessControlEntry]] = {}
    for binding in bindings:
        grouped.setdefault(binding.pattern, set()).add(binding.entry)
    return grouped


class FileAclStore:
    def __init__(self, directory: Path) -> None:
        self._path = directory / ACLS_FILE_NAME
        self._acls = self._read()

    def _read(self) -> dict[ResourcePattern, frozenset[AccessControlEntry]]:
        try:
            document = json.loads(self._path.read_text())
            return {
                ResourcePattern(parse_enum(ResourceType, r["resourceType"]),  # type: ignore[arg-type]
                                r["name"], parse_enum(PatternType, r["patternType"])):  # type: ignore[arg-type]
                decode_entries(json.dumps(r).encode())
                for r in document["resources"]
            }
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise MetadataStoreFileError(self._path, f"cannot read the ACLs: {exc!r}") from None

    def start(self, on_change: OnChange) -> None:
        on_change(AclSnapshot.of(self._acls))

    def close(self) -> None:
        pass

    def add(self, bindings: Sequence[AclBinding]) -> None:
        self._write(AclSnapshot.of(self._acls).with_changes(added=bindings))

    def remove(self, bindings: Sequence[AclBinding]) -> None:
        self._write(AclSnapshot.of(self._acls).with_changes(removed=bindings))

    def _write(self, snapshot: AclSnapshot) -> None:
        resources = [{"resourceType": p.resource_type.kafka_name, "patternType": p.pattern_type.name, "name": p.name,
                      **json.loads(encode_entries(entries))} for p, entries in snapshot.acls.items()]
        write_atomically(self._path, json.dumps({"version": 1, "resources": resources}, sort_keys=True).encode())
        self._acls = dict(snapshot.acls)


def znode_path(pattern: ResourcePattern) -> str:
    root = LITERAL_ROOT if pattern.pattern_type == PatternType.LITERAL else PREFIXED_ROOT
    return f"{root}/{pattern.resource_type.kafka_name}/{pattern.name}"


def change_notification(pattern: ResourcePattern) -> tuple[str, bytes]:
    if pattern.pattern_type == PatternType.LITERAL:
        return f"{LITERAL_CHANGES}/{CHANGE_PREFIX}", f"{pattern.resource_type.kafka_name}:{pattern.name}".encode()
    document = {"version": 1, "resourceType": pattern.resource_type.kafka_name, "name": pattern.name,
                "patternType": pattern.pattern_type.name}
    return f"{EXTENDED_CHANGES}/{CHANGE_PREFIX}", json.dumps(document).encode()


def parse_change(parent: str, data: bytes) -> ResourcePattern | None:
    try:
        if parent == LITERAL_CHANGES:
            kind, _, name = data.decode().partition(":")
            return ResourcePattern(parse_enum(ResourceType, kind), name)  # type: ignore[arg-type]
        document = json.loads(data.decode())
        return ResourcePattern(parse_enum(ResourceType, document["resourceType"]),  # type: ignore[arg-type]
                               document["name"], parse_enum(PatternType, document["patternType"]))  # type: ignore[arg-type]
    except (ValueError, KeyError, TypeError):
        return None


class ZkAclStore:
    def __init__(self, session: ZkSession) -> None:
        self._session = session
        self._on_change: OnChange | None = None
        self._snapshot = AclSnapshot()
        self._seen: dict[str, set[str]] = {LITERAL_CHANGES: set(), EXTENDED_CHANGES: set()}
        self._wake = threading.Event()
        self._full_reload = False
        self._closed = False
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._remove_listener: Callable[[], None] | None = None

    # --- following changes -----------------------------------------------------------------

    def start(self, on_change: OnChange) -> None:
        self._on_change = on_change
        for path in (LITERAL_ROOT, PREFIXED_ROOT, LITERAL_CHANGES, EXTENDED_CHANGES):
            self._session.ensure_path(path)
        for parent in self._seen:
            self._seen[parent] = set(self._session.get_children(parent, watch=self._watch))
        self._publish(AclSnapshot.of(self._read_all()))
        self._remove_listener = self._session.add_listener(self._on_session)
        self._thread = threading.Thread(target=self._follow, name="acl-change-listener", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        if self._remove_listener is not None:
            self._remove_listener()

    def _watch(self, _event: Any) -> None:
        self._wake.set()  # never block ZooKeeper's event thread: the follower thread reads

    def _on_session(self, event: SessionEvent) -> None:
        if event.state == SessionState.CONNECTED and event.new_session:
            self._full_reload = True  # watches died with the old session
            self._wake.set()

    def _follow(self) -> None:
        while not self._closed:
            self._wake.wait()
            self._wake.clear()
            if self._closed:
                return
            try:
                self._apply_notifications()
            except Exception:  # ZooKeeper away: the next session event or watch tries again
                logger.warning("could not read ACL changes from ZooKeeper", exc_info=True)

    def _apply_notifications(self) -> None:
        changed: set[ResourcePattern] = set()
        for parent, seen in self._seen.items():
            names = set(self._session.get_children(parent, watch=self._watch))
            for name in sorted(names - seen):
                try:
                    data, _ = self._session.get(f"{parent}/{name}")
                except NoNodeError:
                    continue
                pattern = parse_change(parent, data)
                if pattern is not None:
                    changed.add(pattern)
            self._seen[parent] = names
        if self._full_reload:
            self._full_reload = False
            self._publish(AclSnapshot.of(self._read_all()))
            return
        if changed:
            with self._lock:
                acls = dict(self._snapshot.acls)
                for pattern in changed:
                    acls[pattern] = self._read(pattern)[0]
                self._publish(AclSnapshot.of(acls))

    def _publish(self, snapshot: AclSnapshot) -> None:
        self._snapshot = snapshot
        if self._on_change is not None:
            self._on_change(snapshot)

    # --- reading ----------------------------------------------------------------------------

    def _read(self, pattern: ResourcePattern) -> tuple[frozenset[AccessControlEntry], int | None]:
        try:
            data, stat = self._session.get(znode_path(pattern))
        except NoNodeError:
            return frozenset(), None
        return decode_entries(data), stat.version

    def _read_all(self) -> dict[ResourcePattern, frozenset[AccessControlEntry]]:
        acls: dict[ResourcePattern, frozenset[AccessControlEntry]] = {}
        for root, pattern_type in ((LITERAL_ROOT, PatternType.LITERAL), (PREFIXED_ROOT, PatternType.PREFIXED)):
            for kind in self._children(root):
                try:
                    resource_type = parse_enum(ResourceType, kind)
                except ValueError:
                    continue
                for name in self._children(f"{root}/{kind}"):
                    pattern = ResourcePattern(resource_type, name, pattern_type)  # type: ignore[arg-type]
                    acls[pattern] = self._read(pattern)[0]
        return acls

    def _children(self, path: str) -> list[str]:
        try:
            return [name for name in self._session.get_children(path) if name != "prefixed"]
        except NoNodeError:
            return []

    # --- writing ------------------------------------------------------------------------------

    def add(self, bindings: Sequence[AclBinding]) -> None:
        for pattern, entries in _grouped(bindings).items():
            self._change(pattern, lambda current, e=entries: current | e)  # type: ignore[misc]

    def remove(self, bindings: Sequence[AclBinding]) -> None:
        for pattern, entries in _grouped(bindings).items():
            self._change(pattern, lambda current, e=entries: current - e)  # type: ignore[misc]

    def _change(self, pattern: ResourcePattern,
                update: Callable[[frozenset[AccessControlEntry]], frozenset[AccessControlEntry]]) -> None:
        """Read-modify-write of the pattern's znode, conditional on its version, plus a change notification."""
        path = znode_path(pattern)
        self._session.ensure_path(path.rsplit("/", 1)[0])
        notification_path, notification = change_notification(pattern)
        for _ in range(10):  # a concurrent writer: read again and reapply
            current, version = self._read(pattern)
            entries = update(current)
            transaction = self._session.transaction()
            if version is None and not entries:
                return
            if version is None:
                transaction.create(path, encode_entries(entries))
            elif entries:
                transaction.set_data(path, encode_entries(entries), version=version)
            else:
                transaction.delete(path, version=version)
            transaction.create(notification_path, notification, sequence=True)
            results = self._session.commit(transaction)
            failure = next((r for r in results if isinstance(r, Exception)), None)
            if failure is None:
                return
            if not isinstance(failure, (NodeExistsError, NoNodeError, BadVersionError)):
                raise failure
        raise RuntimeError(f"could not update the ACLs of {pattern}: concurrent updates")
