"""Error codes of the transaction APIs as each request version understands them."""

from __future__ import annotations

from spate.protocol.errors import ErrorCode

# PRODUCER_FENCED arrived with version 2 of AddPartitionsToTxn, AddOffsetsToTxn,
# EndTxn and TxnOffsetCommit (KIP-588); older clients know the same condition
# as INVALID_PRODUCER_EPOCH.
PRODUCER_FENCED_SINCE_VERSION = 2


def for_version(code: ErrorCode, version: int) -> ErrorCode:
    if code is ErrorCode.PRODUCER_FENCED and version < PRODUCER_FENCED_SINCE_VERSION:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return code
