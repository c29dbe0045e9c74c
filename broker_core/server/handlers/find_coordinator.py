"""FindCoordinator: the broker that leads the internal-topic partition a group id hashes to.

For groups ``__consumer_offsets``, for transactional ids
``__transaction_state``; either is created on first use (in a cluster, its
creation is requested and the answer is COORDINATOR_NOT_AVAILABLE until the
controller has elected its leaders). The leader comes from the metadata
view, so any broker of a cluster answers; a partition without a live
leader answers COORDINATOR_NOT_AVAILABLE.

From v4 a request names several keys of one type and each key gets its own
entry (node or error); the single-key versions answer at the top level.
Share-group keys (type 2, v6) are not served: INVALID_REQUEST.
"""

from __future__ import annotations

from typing import Any

from broker_core.cluster.topic_names import CONSUMER_OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.metadata_view import leader_of
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode, KafkaError
from spate.protocol.messages.find_coordinator import (
    BATCHED_KEYS_FROM_VERSION,
    KEY_TYPE_GROUP,
    KEY_TYPE_TRANSACTION,
    FindCoordinatorResponse,
)

R = FindCoordinatorResponse


def _error(code: ErrorCode, message: str) -> Any:
    return R(throttle_time_ms=0, error_code=code, error_message=message, node_id=-1, host="", port=-1)


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    if request.api_version < BATCHED_KEYS_FROM_VERSION:
        return _find(ctx, request, body.key_type, body.key)
    coordinators = [_entry(key, _find(ctx, request, body.key_type, key)) for key in body.coordinator_keys]
    return R(throttle_time_ms=0, coordinators=coordinators)


def _entry(key: str, found: Any) -> Any:
    return R.Coordinator(key=key, node_id=found.node_id, host=found.host, port=found.port,
                         error_code=found.error_code, error_message=found.error_message)


def _find(ctx: BrokerContext, request: Request, key_type: int, key: str) -> Any:
    """The coordinator of one key, as the single-key versions answer it (Describe on the key needed)."""
    if key_type == KEY_TYPE_TRANSACTION:
        if not acl_checks.transactional_id(ctx, request, acl_checks.Op.DESCRIBE, key):
            return _error(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "Transactional Id authorization failed.")
        return _transaction_coordinator(ctx, key)
    if key_type != KEY_TYPE_GROUP:
        return _error(ErrorCode.INVALID_REQUEST, f"unknown coordinator key type {key_type}")
    if not acl_checks.group(ctx, request, acl_checks.Op.DESCRIBE, key):
        return _error(ErrorCode.GROUP_AUTHORIZATION_FAILED, "Group authorization failed.")
    coordinator = ctx.group_coordinator
    if coordinator is None:
        return _error(ErrorCode.COORDINATOR_NOT_AVAILABLE, "the group coordinator is not running")
    try:
        coordinator.ensure_offsets_topic()
    except KafkaError as exc:
        return _error(exc.code, exc.message or "")
    return _leader_of(ctx, CONSUMER_OFFSETS_TOPIC, coordinator.partition_for(key))


def _transaction_coordinator(ctx: BrokerContext, transactional_id: str) -> Any:
    coordinator = ctx.txn_coordinator
    if coordinator is None:
        return _error(ErrorCode.COORDINATOR_NOT_AVAILABLE, "the transaction coordinator is not running")
    if not transactional_id:
        return _error(ErrorCode.INVALID_REQUEST, "the transactional id is empty")
    try:
        coordinator.ensure_state_topic()
    except KafkaError as exc:
        return _error(exc.code, exc.message or "")
    return _leader_of(ctx, TRANSACTION_STATE_TOPIC, coordinator.partition_for(transactional_id))


def _leader_of(ctx: BrokerContext, topic: str, partition: int) -> Any:
    leader = leader_of(ctx.metadata, topic, partition)
    if leader is None:
        return _error(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{topic}-{partition} has no live leader")
    if leader.broker_id == ctx.node_id:
        return R(throttle_time_ms=0, error_code=ErrorCode.NONE, node_id=leader.broker_id, host=ctx.advertised_host,
                 port=ctx.advertised_port)
    return R(throttle_time_ms=0, error_code=ErrorCode.NONE, node_id=leader.broker_id, host=leader.host,
             port=leader.port)
