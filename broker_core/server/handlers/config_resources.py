"""Config resource types as DescribeConfigs and (Incremental)AlterConfigs number them."""

from __future__ import annotations

from typing import NoReturn

from spate.protocol.errors import ErrorCode, KafkaError

TOPIC = 2
BROKER = 4


def refuse_non_topic() -> NoReturn:
    raise KafkaError(ErrorCode.INVALID_REQUEST, "only topic configs can be altered; broker configs are static")
