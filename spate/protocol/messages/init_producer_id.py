"""InitProducerId (API key 22): a producer id and epoch for idempotence or transactions."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Field, message
from spate.protocol.types import INT16, INT32, INT64, STRING

InitProducerIdRequest = message(
    "InitProducerIdRequest",
    api_key=ApiKey.INIT_PRODUCER_ID,
    versions=(0, 1),
    flexible_from=2,
    fields=[
        # null for an idempotent (non-transactional) producer.
        Field("transactional_id", STRING, nullable=True, default=None),
        Field("transaction_timeout_ms", INT32),
    ],
)

InitProducerIdResponse = message(
    "InitProducerIdResponse",
    api_key=ApiKey.INIT_PRODUCER_ID,
    versions=(0, 1),
    flexible_from=2,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("producer_id", INT64, default=-1),
        Field("producer_epoch", INT16),
    ],
)
