"""AddOffsetsToTxn (API key 25): a group's offsets join an ongoing transaction."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Field, message
from spate.protocol.types import INT16, INT32, INT64, STRING

AddOffsetsToTxnRequest = message(
    "AddOffsetsToTxnRequest",
    api_key=ApiKey.ADD_OFFSETS_TO_TXN,
    versions=(0, 4),
    flexible_from=3,
    fields=[
        Field("transactional_id", STRING),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("group_id", STRING),
    ],
)

AddOffsetsToTxnResponse = message(
    "AddOffsetsToTxnResponse",
    api_key=ApiKey.ADD_OFFSETS_TO_TXN,
    versions=(0, 4),
    flexible_from=3,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
    ],
)
