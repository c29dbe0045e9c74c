"""WriteTxnMarkers (API key 27): a transaction coordinator asks partition leaders to write commit/abort markers.

Sent broker to broker. v1 is the first flexible version.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT16, INT32, INT64, STRING

WriteTxnMarkersRequest = message(
    "WriteTxnMarkersRequest",
    api_key=ApiKey.WRITE_TXN_MARKERS,
    versions=(0, 1),
    flexible_from=1,
    fields=[
        Field(
            "markers",
            Array(
                Struct(
                    "WritableTxnMarker",
                    Field("producer_id", INT64),
                    Field("producer_epoch", INT16),
                    # False aborts the transaction, True commits it.
                    Field("transaction_result", BOOLEAN),
                    Field(
                        "topics",
                        Array(
                            Struct(
                                "WritableTxnMarkerTopic",
                                Field("name", STRING),
                                Field("partition_indexes", Array(INT32)),
                            )
                        ),
                    ),
                    Field("coordinator_epoch", INT32),
                )
            ),
        ),
    ],
)

WriteTxnMarkersResponse = message(
    "WriteTxnMarkersResponse",
    api_key=ApiKey.WRITE_TXN_MARKERS,
    versions=(0, 1),
    flexible_from=1,
    fields=[
        Field(
            "markers",
            Array(
                Struct(
                    "WritableTxnMarkerResult",
                    Field("producer_id", INT64),
                    Field(
                        "topics",
                        Array(
                            Struct(
                                "WritableTxnMarkerTopicResult",
                                Field("name", STRING),
                                Field(
                                    "partitions",
                                    Array(
                                        Struct(
                                            "WritableTxnMarkerPartitionResult",
                                            Field("partition_index", INT32),
                                            Field("error_code", INT16),
                                        )
                                    ),
                                ),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
