"""Answering a coordinator's request only once what it wrote is on every in-sync replica.

Kafka's coordinators append to ``__consumer_offsets`` and ``__transaction_state``
with acks=-1: an offset commit, a transaction's state change or a
transaction marker is acknowledged only when it would survive the loss of
the leader. The coordinators here write synchronously through the partition's
normal append path; the handlers then wait, with the same purgatory as an
acks=all produce, until the partition's high watermark reaches its log end
as it was after the write. With one replica that is at once.

What the client hears when replication does not happen in time follows
Kafka's mapping for coordinator writes: the partition no longer led here is
NOT_COORDINATOR (find the new coordinator), anything else
COORDINATOR_NOT_AVAILABLE (retry); both are retriable, and the coordinators'
state machines make a retried request safe.
"""

from __future__ import annotations

from broker_core.server.delayed_produce import DelayedProduce, ProducePartitionStatus
from broker_core.server.replica_manager import ReplicaManager
from spate.protocol.errors import ErrorCode


async def until_replicated(replicas: ReplicaManager, topic: str, partition: int, timeout_ms: int) -> ErrorCode:
    """Wait until the partition's high watermark reaches its current log end; NONE or why not."""
    led = replicas.get(topic, partition)
    if led is None:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    status = ProducePartitionStatus(topic, partition, ErrorCode.NONE, required_offset=led.log_end_offset,
                                    acks_pending=True)
    await DelayedProduce([status], replicas.get, offline=replicas.is_offline).wait(replicas.purgatory, timeout_ms)
    return status.error


def as_coordinator_error(code: ErrorCode) -> ErrorCode:
    """What a client is told when its coordinator's write did not replicate (Kafka's mapping)."""
    if code == ErrorCode.NONE:
        return code
    if code in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR):
        return ErrorCode.NOT_COORDINATOR
    return ErrorCode.COORDINATOR_NOT_AVAILABLE


async def coordinator_write_settled(replicas: ReplicaManager, topic: str, partition: int, timeout_ms: int) -> ErrorCode:
    """:func:`until_replicated`, answered in the coordinator's error terms."""
    return as_coordinator_error(await until_replicated(replicas, topic, partition, timeout_ms))

