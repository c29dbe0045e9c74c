"""A partition first hosted here as a follower.

``Partition``'s constructor records its leader epoch in the log's epoch
cache at the log end, as a new leader does. A follower must not: its epochs
come only with the leader's batches, or OffsetForLeaderEpoch answers from
this replica would name an epoch that wrote nothing here (and truncation
after a later leader change would go wrong). So the partition is built with
the epoch the cache already ends with (recording it again changes nothing),
or, with an empty cache, the recorded entry is taken back.
"""

from __future__ import annotations

from broker_core.replication.partition import Partition
from broker_core.storage.unified_log import UnifiedLog


def follower_partition(topic: str, index: int, log: UnifiedLog, *, node_id: int) -> Partition:
    """A :class:`Partition` over ``log`` whose epoch cache holds only what the log's batches put there."""
    latest = log.epoch_cache.latest_epoch
    if latest is not None:
        return Partition(topic, index, log, leader_epoch=latest, node_id=node_id)
    partition = Partition(topic, index, log, leader_epoch=0, node_id=node_id)
    log.epoch_cache.clear_and_flush()
    return partition
