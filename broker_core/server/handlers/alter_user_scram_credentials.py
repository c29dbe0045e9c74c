"""AlterUserScramCredentials: add, replace or delete SCRAM credentials, per user all or nothing.

Checks, as Kafka makes them, with one result per user (its first error):
an unknown mechanism UNSUPPORTED_SASL_MECHANISM; an empty user name, an empty
salt or salted password, or iterations outside 4096..16384
UNACCEPTABLE_CREDENTIAL; the same user and mechanism twice in one request
DUPLICATE_RESOURCE; deleting a credential that does not exist
RESOURCE_NOT_FOUND. A user with an error has none of its changes applied.
The store may block (ZooKeeper, the disk), so the work runs on a worker thread.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from broker_core.security.credentials import ScramCredentialStore
from broker_core.security.sasl.scram import MAX_ITERATIONS, MECHANISMS_BY_TYPE, MIN_ITERATIONS, ScramCredential
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.alter_user_scram_credentials import AlterUserScramCredentialsResponse

R = AlterUserScramCredentialsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    refusal = acl_checks.cluster_refusal(ctx, request, acl_checks.Op.ALTER)
    if refusal is not None:
        users = dict.fromkeys(e.name for e in [*request.body.deletions, *request.body.upsertions])
        return R(throttle_time_ms=0, results=[R.AlterUserScramCredentialsResult(
            user=name, error_code=int(refusal), error_message=None) for name in users])
    return asyncio.to_thread(alter, ctx.credentials, request.body)


def _check(entry: Any, duplicates: Counter, upsertion: bool) -> tuple[ErrorCode, str] | None:
    if not entry.name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if entry.mechanism not in MECHANISMS_BY_TYPE:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, f"Unknown SCRAM mechanism {entry.mechanism}"
    if duplicates[(entry.name, entry.mechanism)] > 1:
        return ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request"
    if upsertion:
        if not MIN_ITERATIONS <= entry.iterations <= MAX_ITERATIONS:
            return (ErrorCode.UNACCEPTABLE_CREDENTIAL, f"Requested iterations {entry.iterations} is outside "
                    f"{MIN_ITERATIONS}..{MAX_ITERATIONS}")
        if not entry.salt or not entry.salted_password:
            return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Salt and salted password must not be empty"
    return None


def alter(store: ScramCredentialStore | None, body: Any) -> Any:
    duplicates = Counter((e.name, e.mechanism) for e in [*body.deletions, *body.upsertions])
    errors: dict[str, tuple[ErrorCode, str]] = {}
    order: list[str] = []
    for entries, upsertion in ((body.deletions, False), (body.upsertions, True)):
        for entry in entries:
            order.append(entry.name)
            problem = _check(entry, duplicates, upsertion)
            if problem is not None and entry.name not in errors:
                errors[entry.name] = problem
    if store is None:
        errors = {name: (ErrorCode.UNKNOWN_SERVER_ERROR, "no SCRAM credential store") for name in order}
    for entry in body.deletions:
        if entry.name in errors:
            continue
        if not store.delete(entry.name, MECHANISMS_BY_TYPE[entry.mechanism]):
            errors[entry.name] = (ErrorCode.RESOURCE_NOT_FOUND,
                                  "Attempt to delete a user credential that does not exist")
    for entry in body.upsertions:
        if entry.name in errors:
            continue
        mechanism = MECHANISMS_BY_TYPE[entry.mechanism]
        store.upsert(entry.name, mechanism, ScramCredential.from_salted_password(
            mechanism, entry.salted_password, entry.salt, entry.iterations))
    results = []
    for name in dict.fromkeys(order):
        code, message = errors.get(name, (ErrorCode.NONE, None))
        results.append(R.AlterUserScramCredentialsResult(user=name, error_code=int(code), error_message=message))
    return R(throttle_time_ms=0, results=results)
