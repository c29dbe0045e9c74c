"""DescribeUserScramCredentials: users' SCRAM mechanisms and iteration counts (never salts or keys).

Null ``users`` lists every user with credentials; a named user without any
gets RESOURCE_NOT_FOUND, a user named twice DUPLICATE_RESOURCE, as Kafka
answers. The store may block (ZooKeeper), so the answer is built on a
worker thread.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from broker_core.security.credentials import ScramCredentialStore
from broker_core.security.sasl.scram import MECHANISMS
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.describe_user_scram_credentials import DescribeUserScramCredentialsResponse

R = DescribeUserScramCredentialsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    refusal = acl_checks.cluster_refusal(ctx, request, acl_checks.Op.DESCRIBE)
    if refusal is not None:
        return R(throttle_time_ms=0, error_code=int(refusal), results=[])
    return asyncio.to_thread(describe, ctx.credentials, request.body)


def describe(store: ScramCredentialStore | None, body: Any) -> Any:
    known = store.describe() if store is not None else {}
    names = None if body.users is None else [entry.name for entry in body.users]
    counts = Counter(names or [])
    results = []
    for user in (sorted(known) if names is None else list(dict.fromkeys(names))):
        if counts[user] > 1:
            results.append(R.DescribeUserScramCredentialsResult(
                user=user, error_code=int(ErrorCode.DUPLICATE_RESOURCE),
                error_message=f"Cannot describe SCRAM credentials for the same user twice in a single request: "
                              f"{user}", credential_infos=[]))
        elif user not in known:
            results.append(R.DescribeUserScramCredentialsResult(
                user=user, error_code=int(ErrorCode.RESOURCE_NOT_FOUND),
                error_message=f"Attempt to describe a user credential that does not exist: {user}",
                credential_infos=[]))
        else:
            infos = [R.CredentialInfo(mechanism=MECHANISMS[name].type_id, iterations=credential.iterations)
                     for name, credential in sorted(known[user].items()) if name in MECHANISMS]
            results.append(R.DescribeUserScramCredentialsResult(user=user, error_code=0, credential_infos=infos))
    return R(throttle_time_ms=0, error_code=0, results=results)
