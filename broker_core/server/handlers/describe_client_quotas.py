"""DescribeClientQuotas: the configured quotas of the entities matching the request's filter.

A component per entity type: match type 0 with a name matches that entity,
1 (or 0 with a null name) the type's default, 2 any entity of the type.
Every filtered type must be present in a matching entity; ``strict`` also
excludes entities with types the filter does not name. A bad filter (an
unknown type or match type, a type twice) is answered INVALID_REQUEST.
"""

from __future__ import annotations

from typing import Any

from broker_core.security.quotas.client_quota_entity import ENTITY_TYPES, ClientQuotaEntity
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.describe_client_quotas import (
    MATCH_ANY,
    MATCH_DEFAULT,
    MATCH_EXACT,
    DescribeClientQuotasResponse,
)

R = DescribeClientQuotasResponse
_ANY = object()


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    try:
        wanted = _filter(body.components)
    except ValueError as exc:
        return R(throttle_time_ms=0, error_code=int(ErrorCode.INVALID_REQUEST), error_message=str(exc), entries=None)
    quotas = ctx.quota_store.snapshot() if ctx.quota_store is not None else {}
    entries = []
    for entity, values in quotas.items():
        if values and _matches(entity, wanted, body.strict):
            entries.append(R.EntryData(
                entity=[R.EntityData(entity_type=t, entity_name=n) for t, n in entity.components().items()],
                values=[R.ValueData(key=k, value=v) for k, v in sorted(values.items())]))
    return R(throttle_time_ms=0, error_code=0, error_message=None, entries=entries)


def _filter(components: Any) -> dict[str, object]:
    """entity type -> a name, None (the default) or ``_ANY``."""
    wanted: dict[str, object] = {}
    for c in components:
        if c.entity_type not in ENTITY_TYPES:
            raise ValueError(f"Unhandled client quota entity type: {c.entity_type}")
        if c.entity_type in wanted:
            raise ValueError(f"Duplicate {c.entity_type} filter component")
        if c.match_type == MATCH_EXACT:
            wanted[c.entity_type] = c.match
        elif c.match_type == MATCH_DEFAULT:
            wanted[c.entity_type] = None
        elif c.match_type == MATCH_ANY:
            wanted[c.entity_type] = _ANY
        else:
            raise ValueError(f"Unknown match type {c.match_type}")
    return wanted


def _matches(entity: ClientQuotaEntity, wanted: dict[str, object], strict: bool) -> bool:
    have = entity.components()
    if strict and set(have) != set(wanted):
        return False
    for kind, match in wanted.items():
        if kind not in have:
            return False
        if match is not _ANY and have[kind] != match:
            return False
    return True
