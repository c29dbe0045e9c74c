"""AlterClientQuotas: set or remove quotas of user / client-id entities, per entity all or nothing.

Checks, as Kafka makes them, answered INVALID_REQUEST for that entity: an
entity type other than ``user`` and ``client-id`` or the same type twice, an
unknown quota key, a value that is not positive, a byte rate that is not a
whole number. The store may block (ZooKeeper, the disk), so the work runs on
a worker thread.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

from broker_core.security.quotas.client_quota_entity import (
    ENTITY_TYPES,
    QUOTA_KEYS,
    REQUEST_PERCENTAGE,
    ClientQuotaEntity,
)
from broker_core.security.quotas.quota_store import ClientQuotaStore
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.alter_client_quotas import AlterClientQuotasResponse

R = AlterClientQuotasResponse


class InvalidQuotaError(ValueError):
    pass


def handle(ctx: BrokerContext, request: Request) -> Any:
    return asyncio.to_thread(alter, ctx.quota_store, request.body)


def entity_of(components: Any) -> ClientQuotaEntity:
    names: dict[str, str | None] = {}
    for component in components:
        if component.entity_type not in ENTITY_TYPES:
            raise InvalidQuotaError(f"Unhandled client quota entity type: {component.entity_type}")
        if component.entity_type in names:
            raise InvalidQuotaError(f"Duplicate {component.entity_type} entity type in the quota entity")
        names[component.entity_type] = component.entity_name
    if not names:
        raise InvalidQuotaError("Invalid empty client quota entity")
    return ClientQuotaEntity.from_components(names)


def updates_of(ops: Any) -> dict[str, float | None]:
    updates: dict[str, float | None] = {}
    for op in ops:
        if op.key not in QUOTA_KEYS:
            raise InvalidQuotaError(f"Invalid configuration key {op.key} (known: {', '.join(QUOTA_KEYS)})")
        if op.key in updates:
            raise InvalidQuotaError(f"Duplicate quota key {op.key}")
        if op.remove:
            updates[op.key] = None
            continue
        if not math.isfinite(op.value) or op.value <= 0:
            raise InvalidQuotaError(f"Invalid value {op.value} for {op.key}: must be positive")
        if op.key != REQUEST_PERCENTAGE and op.value != int(op.value):
            raise InvalidQuotaError(f"Invalid value {op.value} for {op.key}: must be a whole number of bytes")
        updates[op.key] = op.value
    return updates


def alter(store: ClientQuotaStore | None, body: Any) -> Any:
    results = []
    for entry in body.entries:
        code, message = ErrorCode.NONE, None
        try:
            entity, updates = entity_of(entry.entity), updates_of(entry.ops)
            if store is None:
                code, message = ErrorCode.UNKNOWN_SERVER_ERROR, "no client quota store"
            elif not body.validate_only:
                store.alter(entity, updates)
        except InvalidQuotaError as exc:
            code, message = ErrorCode.INVALID_REQUEST, str(exc)
        entity_data = [R.EntityData(entity_type=c.entity_type, entity_name=c.entity_name) for c in entry.entity]
        results.append(R.EntryData(error_code=int(code), error_message=message, entity=entity_data))
    return R(throttle_time_ms=0, entries=results)
