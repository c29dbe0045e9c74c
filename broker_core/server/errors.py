"""From the exceptions of storage, records, cluster and config to Kafka error codes."""

from __future__ import annotations

import logging
from typing import Any, Callable

from broker_core.cluster.zk.errors import ZNodeDecodeError, ZooKeeperUnavailableError
from spate.protocol.errors import ErrorCode, KafkaError
from spate.records.errors import CorruptRecordError

logger = logging.getLogger(__name__)


def error_code_for(exc: BaseException, *, where: str = "") -> ErrorCode:
    """The Kafka error code a client should see for ``exc``.

    Errors that carry an ``error_code`` (storage, producer state, cluster,
    config) keep it; anything unexpected is logged with its traceback and
    reported as UNKNOWN_SERVER_ERROR rather than taking the broker down.
    """
    if isinstance(exc, KafkaError):
        return ErrorCode.of(exc.code)
    if isinstance(exc, CorruptRecordError):
        return ErrorCode.CORRUPT_MESSAGE
    code = getattr(exc, "error_code", None)
    if isinstance(code, int) and code != -1:
        return ErrorCode.of(code)
    logger.error("unexpected error%s", f" in {where}" if where else "", exc_info=exc)
    return ErrorCode.UNKNOWN_SERVER_ERROR


def outcome(action: Callable[..., object], *args: Any, where: str, **kwargs: Any) -> tuple[ErrorCode, str | None]:
    """Call ``action(*args, **kwargs)`` for one resource of a request: (NONE, None), or the
    code and message of what it raised.

    Admin requests answer each topic or config resource on its own, so one
    failure never stops the others.
    """
    try:
        action(*args, **kwargs)
    except Exception as exc:
        return error_code_for(exc, where=where), str(exc)
    return ErrorCode.NONE, None


def zookeeper_outcome(exc: BaseException, *, where: str) -> tuple[ErrorCode, str]:
    """The answer for a cluster admin step that raised: ZooKeeper trouble is told apart from caller errors.

    A malformed znode is logged as one line and answered UNKNOWN_SERVER_ERROR;
    ZooKeeper not answering is REQUEST_TIMED_OUT (the client may retry).
    """
    if isinstance(exc, ZNodeDecodeError):
        logger.error("%s: %s", where, exc)
        return ErrorCode.UNKNOWN_SERVER_ERROR, str(exc)
    if isinstance(exc, ZooKeeperUnavailableError):
        logger.warning("%s: %s", where, exc)
        return ErrorCode.REQUEST_TIMED_OUT, str(exc)
    return error_code_for(exc, where=where), str(exc)
