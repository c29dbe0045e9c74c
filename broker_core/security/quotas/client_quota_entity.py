"""Quota entities (user, client-id, or both; each a name or the default) and Kafka's precedence.

A quota is configured for an entity such as ``user=alice, client-id=<default>``.
For a connection of user ``u`` and client ``c``, each quota type takes the
first of these entities that sets it (Kafka's order)::

    user=u, client-id=c          user=<default>, client-id=c      client-id=c
    user=u, client-id=<default>  user=<default>, client-id=<default>  client-id=<default>
    user=u                       user=<default>

(read down each column, left to right). Clients sharing the matched entity
share one rate: a quota set for ``user=alice`` is the budget of all of
alice's clients together, one set for ``user=<default>`` is each user's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

USER = "user"
CLIENT_ID = "client-id"
ENTITY_TYPES = (USER, CLIENT_ID)

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
QUOTA_KEYS = (PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE, REQUEST_PERCENTAGE)


class _Default:
    """The ``<default>`` of an entity type (Kafka's null entity name)."""

    def __repr__(self) -> str:
        return "<default>"


DEFAULT = _Default()
# A component: absent (None), the default, or a name.
Component = str | _Default | None


@dataclass(frozen=True)
class ClientQuotaEntity:
    user: Component = None
    client_id: Component = None

    def __post_init__(self) -> None:
        if self.user is None and self.client_id is None:
            raise ValueError("a quota entity names a user, a client-id or both")

    def components(self) -> dict[str, str | None]:
        """Kafka's wire form: entity type -> name (None for the default)."""
        out: dict[str, str | None] = {}
        for kind, value in ((USER, self.user), (CLIENT_ID, self.client_id)):
            if value is not None:
                out[kind] = None if value is DEFAULT else value  # type: ignore[assignment]
        return out

    @classmethod
    def from_components(cls, components: Mapping[str, str | None]) -> ClientQuotaEntity:
        def part(kind: str) -> Component:
            if kind not in components:
                return None
            name = components[kind]
            return DEFAULT if name is None else name
        return cls(user=part(USER), client_id=part(CLIENT_ID))

    def __str__(self) -> str:
        return ", ".join(f"{k}={'<default>' if v is None else v}" for k, v in self.components().items())


def candidates(user: str, client_id: str) -> list[ClientQuotaEntity]:
    """The entities that may hold a quota for ``user``'s client ``client_id``, in precedence order."""
    E = ClientQuotaEntity
    return [
        E(user, client_id), E(user, DEFAULT), E(user, None),
        E(DEFAULT, client_id), E(DEFAULT, DEFAULT), E(DEFAULT, None),
        E(None, client_id), E(None, DEFAULT),
    ]


@dataclass(frozen=True)
class ResolvedQuota:
    """The bound for one client, and the key of the rate it shares with every client of the same entity."""

    bound: float
    sensor_key: tuple[str, str]


def resolve(quotas: Mapping[ClientQuotaEntity, Mapping[str, float]], key: str, user: str,
            client_id: str) -> ResolvedQuota | None:
    """The quota ``key`` for this user and client, or None when no entity sets it."""
    for entity in candidates(user, client_id):
        values = quotas.get(entity)
        if values is not None and key in values:
            sensor_user = user if entity.user is not None else ""
            sensor_client = client_id if entity.client_id is not None else ""
            return ResolvedQuota(values[key], (sensor_user, sensor_client))
    return None
