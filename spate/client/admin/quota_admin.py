"""Client quotas through the admin client: DescribeClientQuotas and AlterClientQuotas.

An entity is a mapping of entity type (``"user"``, ``"client-id"``) to a
name, None meaning the type's default (``<default>``), as in Kafka's
``ClientQuotaEntity``. Alterations set a quota key to a value or remove it
(None). Per-entity refusals are collected into one :class:`AdminError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from spate.client.errors import AdminError
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import Retrier
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.alter_client_quotas import AlterClientQuotasRequest
from spate.protocol.messages.describe_client_quotas import (
    MATCH_ANY,
    MATCH_DEFAULT,
    MATCH_EXACT,
    DescribeClientQuotasRequest,
)

ANY = "*any*"  # a filter component matching every entity of its type


@dataclass(frozen=True)
class ClientQuotaAlteration:
    entity: Mapping[str, str | None]
    ops: Mapping[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True)
class ClientQuotaEntry:
    entity: dict[str, str | None]
    values: dict[str, float]


def entity_text(entity: Mapping[str, str | None]) -> str:
    return ", ".join(f"{kind}={'<default>' if name is None else name}" for kind, name in entity.items())


class QuotaAdmin:
    def __init__(self, network: NetworkClient, retrier: Retrier) -> None:
        self._network = network
        self._retrier = retrier

    def describe(self, components: Mapping[str, str | None], strict: bool, deadline: float) -> list[ClientQuotaEntry]:
        """``components``: entity type -> a name, None (the default) or :data:`ANY`."""
        Q = DescribeClientQuotasRequest
        filters = []
        for kind, match in components.items():
            if match is None:
                filters.append(Q.ComponentData(entity_type=kind, match_type=MATCH_DEFAULT, match=None))
            elif match == ANY:
                filters.append(Q.ComponentData(entity_type=kind, match_type=MATCH_ANY, match=None))
            else:
                filters.append(Q.ComponentData(entity_type=kind, match_type=MATCH_EXACT, match=match))
        request = Q(components=filters, strict=strict)

        def attempt(deadline: float) -> list[ClientQuotaEntry]:
            _, response = self._network.request(self._network.any_node(), ApiKey.DESCRIBE_CLIENT_QUOTAS, request,
                                                deadline=deadline)
            if response.error_code != ErrorCode.NONE:
                raise KafkaError(ErrorCode.of(response.error_code), response.error_message or "describe quotas")
            return [ClientQuotaEntry({e.entity_type: e.entity_name for e in entry.entity},
                                     {v.key: v.value for v in entry.values}) for entry in response.entries or ()]

        return self._retrier.call("describe_client_quotas", attempt, deadline)

    def alter(self, alterations: Iterable[ClientQuotaAlteration], validate_only: bool, deadline: float) -> None:
        R = AlterClientQuotasRequest
        entries = [
            R.EntryData(
                entity=[R.EntityData(entity_type=k, entity_name=n) for k, n in a.entity.items()],
                ops=[R.OpData(key=key, value=0.0 if value is None else float(value), remove=value is None)
                     for key, value in a.ops.items()])
            for a in alterations
        ]
        request = R(entries=entries, validate_only=validate_only)

        def attempt(deadline: float) -> None:
            _, response = self._network.request(self._network.any_node(), ApiKey.ALTER_CLIENT_QUOTAS, request,
                                                deadline=deadline)
            errors = {}
            for entry in response.entries:
                if entry.error_code != ErrorCode.NONE:
                    name = entity_text({e.entity_type: e.entity_name for e in entry.entity})
                    errors[name] = KafkaError(ErrorCode.of(entry.error_code), entry.error_message or "")
            if errors:
                raise AdminError("alter_client_quotas", errors)

        self._retrier.call("alter_client_quotas", attempt, deadline)
