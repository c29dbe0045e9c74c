"""Heartbeat (API key 12): a group member proves it is alive."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Field, message
from spate.protocol.types import INT16, INT32, STRING

HeartbeatRequest = message(
    "HeartbeatRequest",
    api_key=ApiKey.HEARTBEAT,
    versions=(0, 4),
    flexible_from=4,
    fields=[
        Field("group_id", STRING),
        Field("generation_id", INT32),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, versions=(3, None), nullable=True, default=None),
    ],
)

HeartbeatResponse = message(
    "HeartbeatResponse",
    api_key=ApiKey.HEARTBEAT,
    versions=(0, 4),
    flexible_from=4,
    fields=[
        Field("throttle_time_ms", INT32, versions=(1, None), default=0),
        Field("error_code", INT16),
    ],
)
