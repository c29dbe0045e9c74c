"""InitProducerId (API key 22): a producer id and epoch for idempotence or transactions."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Field, message
from spate.protocol.types import INT16, INT32, INT64, STRING

InitProducerIdRequest = message(
    "InitProducerIdRequest",
    api_key=ApiKey.INIT_PRODUCER_ID,
    versions=(0, 5),
    flexible_from=2,
    fields=[
        # null for an idempotent (non-transactional) producer.
        Field("transactional_id", STRING, nullable=True, default=None),
        Field("transaction_timeout_ms", INT32),
        # v3+ (KIP-360): a producer that already has an id and epoch asks for the epoch after them.
        Field("producer_id", INT64, versions=(3, None), default=-1),
        Field("producer_epoch", INT16, versions=(3, None), default=-1),
    ],
)

InitProducerIdResponse = message(
    "InitProducerIdResponse",
    api_key=ApiKey.INIT_PRODUCER_ID,
    versions=(0, 5),
    flexible_from=2,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("producer_id", INT64, default=-1),
        Field("producer_epoch", INT16),
    ],
)
