"""DescribeUserScramCredentials (API key 50): which SCRAM mechanisms (and iteration counts) users have.

Every version is flexible. ``users`` null describes every user with
credentials; a named user without any gets RESOURCE_NOT_FOUND. Mechanisms
are numbered as in Kafka: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT8, INT16, INT32, STRING

DescribeUserScramCredentialsRequest = message(
    "DescribeUserScramCredentialsRequest",
    api_key=ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field("users", Array(Struct("UserName", Field("name", STRING))), nullable=True, default=None),
    ],
)

DescribeUserScramCredentialsResponse = message(
    "DescribeUserScramCredentialsResponse",
    api_key=ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable=True, default=None),
        Field(
            "results",
            Array(
                Struct(
                    "DescribeUserScramCredentialsResult",
                    Field("user", STRING),
                    Field("error_code", INT16),
                    Field("error_message", STRING, nullable=True, default=None),
                    Field("credential_infos", Array(Struct("CredentialInfo", Field("mechanism", INT8),
                                                           Field("iterations", INT32)))),
                )
            ),
        ),
    ],
)
