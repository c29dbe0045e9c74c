"""EndTxn (API key 26): commit or abort a transaction."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Field, message
from spate.protocol.types import BOOLEAN, INT16, INT32, INT64, STRING

EndTxnRequest = message(
    "EndTxnRequest",
    api_key=ApiKey.END_TXN,
    versions=(0, 4),
    flexible_from=3,
    fields=[
        Field("transactional_id", STRING),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        # True to commit, False to abort.
        Field("committed", BOOLEAN),
    ],
)

EndTxnResponse = message(
    "EndTxnResponse",
    api_key=ApiKey.END_TXN,
    versions=(0, 4),
    flexible_from=3,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
    ],
)
