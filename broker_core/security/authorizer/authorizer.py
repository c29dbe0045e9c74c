"""The authorization decision, Kafka's rules, with a decision cache for the request hot path.

A request is allowed when its principal is a super user (``super.users``:
``User:admin;User:broker``); otherwise the ACLs that apply to the resource
(:meth:`AclSnapshot.matching`) decide:

* no ACL at all on the resource: ``allow.everyone.if.no.acl.found`` (default false);
* a Deny for the principal (or ``User:*``), the host (or ``*``) and the
  operation (or All) refuses, whatever Allows there are: Deny wins;
* an Allow for the principal, host and the operation, All, or an operation
  implying it (Read, Write, Delete and Alter imply Describe; AlterConfigs
  implies DescribeConfigs) grants it;
* anything else is refused.

Decisions are cached by (principal, host, operation, resource type, name):
the Produce and Fetch paths pay one dict lookup per topic. The cache is
dropped whenever the ACLs change (:meth:`Authorizer.update`) and when it
grows past :data:`DECISION_CACHE_SIZE`.

``authorizer.class.name`` selects this authorizer by Kafka's names
(``kafka.security.authorizer.AclAuthorizer``,
``org.apache.kafka.metadata.authorizer.StandardAuthorizer``) or Spate's own;
empty means no authorization at all.
"""

from __future__ import annotations

import threading
from typing import Iterable, Sequence

from broker_core.security.authorizer.acl import (
    IMPLIED_BY,
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from broker_core.security.authorizer.acl_cache import AclSnapshot
from broker_core.security.authorizer.acl_store import AclStore

DECISION_CACHE_SIZE = 100_000
_ALLOW, _DENY, _ALL = AclPermissionType.ALLOW, AclPermissionType.DENY, AclOperation.ALL


def authorizer_enabled(class_name: str) -> bool:
    """Whether ``authorizer.class.name`` turns authorization on (the config checks the name is known)."""
    return bool(class_name.strip())


def parse_super_users(text: str) -> frozenset[str]:
    """``super.users``: principals separated by ``;`` (``User:admin;User:broker``)."""
    return frozenset(part.strip() for part in text.split(";") if part.strip())


class Authorizer:
    def __init__(self, store: AclStore, *, super_users: Iterable[str] = (), allow_if_no_acl: bool = False) -> None:
        self._store = store
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_if_no_acl
        self._snapshot = AclSnapshot()
        self._decisions: dict[tuple[str, str, int, int, str], bool] = {}
        self._write_lock = threading.Lock()

    def start(self) -> None:
        """Load the ACLs and follow the store's changes (blocking: ZooKeeper or the disk)."""
        self._store.start(self.update)

    def close(self) -> None:
        self._store.close()

    @property
    def snapshot(self) -> AclSnapshot:
        return self._snapshot

    def update(self, snapshot: AclSnapshot) -> None:
        """The ACLs changed: take the new set and forget every cached decision."""
        self._snapshot = snapshot
        self._decisions = {}

    # --- decisions ----------------------------------------------------------------------

    def authorize(self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType,
                  name: str) -> bool:
        key = (principal, host, operation, resource_type, name)
        decisions = self._decisions
        decision = decisions.get(key)
        if decision is None:
            decision = self._decide(principal, host, operation, resource_type, name)
            if len(decisions) >= DECISION_CACHE_SIZE:
                decisions = self._decisions = {}
            decisions[key] = decision
        return decision

    def _decide(self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType,
                name: str) -> bool:
        if principal in self.super_users:
            return True
        entries = self._snapshot.matching(resource_type, name)
        if not entries:
            return self.allow_if_no_acl
        principals, hosts = (principal, WILDCARD_PRINCIPAL), (host, WILDCARD)
        granting = IMPLIED_BY.get(operation, frozenset((operation,)))
        allowed = False
        for entry in entries:
            if entry.principal not in principals or entry.host not in hosts:
                continue
            if entry.permission == _DENY:
                if entry.operation == operation or entry.operation == _ALL:
                    return False
            elif entry.operation in granting or entry.operation == _ALL:
                allowed = True
        return allowed

    def authorize_any(self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType) -> bool:
        """Kafka's ``authorizeByResourceType``: may the principal do ``operation`` on some resource of the type?
        (InitProducerId without a transactional id accepts Write on any topic instead of IdempotentWrite.)"""
        if principal in self.super_users:
            return True
        principals, hosts = (principal, WILDCARD_PRINCIPAL), (host, WILDCARD)
        patterns = list(self._snapshot.of_type(resource_type))
        if not patterns:
            return self.allow_if_no_acl

        def applies(entry_operation: AclOperation, entry_principal: str, entry_host: str) -> bool:
            return (entry_principal in principals and entry_host in hosts
                    and (entry_operation == operation or entry_operation == _ALL))

        denied = [p for p, entries in patterns
                  if any(e.permission == _DENY and applies(e.operation, e.principal, e.host) for e in entries)]
        if any(p.pattern_type == PatternType.LITERAL and p.name == WILDCARD for p in denied):
            return False
        for pattern, entries in patterns:
            if not any(e.permission == _ALLOW and applies(e.operation, e.principal, e.host) for e in entries):
                continue
            covered = any(d == pattern or (d.pattern_type == PatternType.PREFIXED and pattern.name.startswith(d.name))
                          for d in denied)
            if not covered:
                return True
        return False

    # --- administration (blocking: call off the event loop) --------------------------------

    def describe(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        return [binding for binding in self._snapshot.bindings() if acl_filter.matches(binding)]

    def create(self, bindings: Sequence[AclBinding]) -> None:
        with self._write_lock:
            self._store.add(bindings)
            self.update(self._snapshot.with_changes(added=bindings))

    def delete(self, filters: Sequence[AclBindingFilter]) -> list[list[AclBinding]]:
        """Remove what each filter matches; per filter, the bindings it removed."""
        with self._write_lock:
            current = list(self._snapshot.bindings())
            matched = [[binding for binding in current if f.matches(binding)] for f in filters]
            removed = list(dict.fromkeys(binding for found in matched for binding in found))
            if removed:
                self._store.remove(removed)
                self.update(self._snapshot.with_changes(removed=removed))
            return matched
