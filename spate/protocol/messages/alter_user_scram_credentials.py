"""AlterUserScramCredentials (API key 51): add, replace or delete users' SCRAM credentials.

Every version is flexible. An upsertion carries the salt and the salted
password (``Hi(password, salt, iterations)``), never the password itself;
the broker derives and stores the stored key and server key. Mechanisms are
numbered as in Kafka: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BYTES, INT8, INT16, INT32, STRING

AlterUserScramCredentialsRequest = message(
    "AlterUserScramCredentialsRequest",
    api_key=ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field("deletions", Array(Struct("ScramCredentialDeletion", Field("name", STRING),
                                        Field("mechanism", INT8)))),
        Field(
            "upsertions",
            Array(
                Struct(
                    "ScramCredentialUpsertion",
                    Field("name", STRING),
                    Field("mechanism", INT8),
                    Field("iterations", INT32),
                    Field("salt", BYTES),
                    Field("salted_password", BYTES),
                )
            ),
        ),
    ],
)

AlterUserScramCredentialsResponse = message(
    "AlterUserScramCredentialsResponse",
    api_key=ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array(
                Struct(
                    "AlterUserScramCredentialsResult",
                    Field("user", STRING),
                    Field("error_code", INT16),
                    Field("error_message", STRING, nullable=True, default=None),
                )
            ),
        ),
    ],
)
