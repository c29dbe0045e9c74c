"""The ACLs a broker holds: an immutable snapshot indexed for lookup by resource.

Every broker keeps the whole ACL set in memory (as Kafka's authorizer does)
and replaces the snapshot when the store reports a change; readers never
see a half-applied change. :meth:`AclSnapshot.matching` gives the entries
that apply to one resource: its literal pattern, the literal ``*`` of its
type, and every PREFIXED pattern that is a prefix of its name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, Mapping

from broker_core.security.authorizer.acl import (
    WILDCARD,
    AccessControlEntry,
    AclBinding,
    PatternType,
    ResourcePattern,
    ResourceType,
)

AclMap = Mapping[ResourcePattern, frozenset[AccessControlEntry]]


@dataclass(frozen=True)
class AclSnapshot:
    acls: AclMap = field(default_factory=dict)
    # Per resource type: literal name -> entries, and the prefixed patterns (usually few).
    _literal: dict[ResourceType, dict[str, frozenset[AccessControlEntry]]] = field(default_factory=dict, repr=False)
    _prefixed: dict[ResourceType, tuple[tuple[str, frozenset[AccessControlEntry]], ...]] = field(
        default_factory=dict, repr=False)

    @classmethod
    def of(cls, acls: AclMap) -> AclSnapshot:
        acls = {pattern: entries for pattern, entries in acls.items() if entries}
        literal: dict[ResourceType, dict[str, frozenset[AccessControlEntry]]] = {}
        prefixed: dict[ResourceType, list[tuple[str, frozenset[AccessControlEntry]]]] = {}
        for pattern, entries in acls.items():
            if pattern.pattern_type == PatternType.LITERAL:
                literal.setdefault(pattern.resource_type, {})[pattern.name] = entries
            else:
                prefixed.setdefault(pattern.resource_type, []).append((pattern.name, entries))
        return cls(acls, literal, {kind: tuple(items) for kind, items in prefixed.items()})

    def matching(self, resource_type: ResourceType, name: str) -> list[AccessControlEntry]:
        found: list[AccessControlEntry] = []
        literal = self._literal.get(resource_type)
        if literal:
            found.extend(literal.get(name, ()))
            if name != WILDCARD:
                found.extend(literal.get(WILDCARD, ()))
        for prefix, entries in self._prefixed.get(resource_type, ()):
            if name.startswith(prefix):
                found.extend(entries)
        return found

    def of_type(self, resource_type: ResourceType) -> Iterator[tuple[ResourcePattern, frozenset[AccessControlEntry]]]:
        return ((p, e) for p, e in self.acls.items() if p.resource_type == resource_type)

    def bindings(self) -> Iterator[AclBinding]:
        for pattern in sorted(self.acls, key=lambda p: (p.resource_type, p.pattern_type, p.name)):
            for entry in sorted(self.acls[pattern], key=_entry_order):
                yield AclBinding(pattern, entry)

    def with_changes(self, added: Iterable[AclBinding] = (), removed: Iterable[AclBinding] = ()) -> AclSnapshot:
        acls = {pattern: set(entries) for pattern, entries in self.acls.items()}
        for binding in added:
            acls.setdefault(binding.pattern, set()).add(binding.entry)
        for binding in removed:
            acls.get(binding.pattern, set()).discard(binding.entry)
        return AclSnapshot.of({pattern: frozenset(entries) for pattern, entries in acls.items()})


def _entry_order(entry: AccessControlEntry) -> tuple[str, str, int, int]:
    return entry.principal, entry.host, entry.operation, entry.permission
