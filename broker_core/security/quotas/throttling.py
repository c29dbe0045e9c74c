"""What one answered request costs its client under the quotas, in throttle milliseconds.

Produce records the request's size against ``producer_byte_rate``, Fetch the
response's size against ``consumer_byte_rate``; every other request records
the time from reading it to its answer against ``request_percentage`` (a
Fetch's is mostly waiting for data, so it is not counted). A response gets
the larger throttle time in its ``throttle_time_ms``; the caller then
mutes the connection for that long (KIP-219: answer at once, then throttle).

As in Kafka, brokers' own traffic is exempt: a follower's Fetch (replica id
0 or more) and the controller's and coordinators' cluster requests.
"""

from __future__ import annotations

from typing import Any, Sequence

from broker_core.security.quotas.client_quota_manager import ClientQuotaManager
from spate.protocol.api_keys import ApiKey
from spate.protocol.types import FileRangeRef


def response_size(parts: Sequence[Any]) -> int:
    return sum(p.size if isinstance(p, FileRangeRef) else len(p) for p in parts)


CLUSTER_ACTIONS = frozenset({ApiKey.LEADER_AND_ISR, ApiKey.STOP_REPLICA, ApiKey.UPDATE_METADATA,
                             ApiKey.CONTROLLED_SHUTDOWN, ApiKey.WRITE_TXN_MARKERS})


def exempt(api_key: ApiKey, body: Any) -> bool:
    """Requests brokers send each other, which client quotas never slow down."""
    return api_key in CLUSTER_ACTIONS or (api_key == ApiKey.FETCH and getattr(body, "replica_id", -1) >= 0)


def throttle_ms(quotas: ClientQuotaManager, api_key: ApiKey, user: str, client_id: str, *, request_bytes: int,
                response_bytes: int, handling_s: float) -> int:
    if api_key == ApiKey.PRODUCE:
        byte_throttle = quotas.record_produce(user, client_id, request_bytes)
    elif api_key == ApiKey.FETCH:
        return quotas.record_fetch(user, client_id, response_bytes)
    else:
        byte_throttle = 0
    return max(byte_throttle, quotas.record_request_time(user, client_id, handling_s))
