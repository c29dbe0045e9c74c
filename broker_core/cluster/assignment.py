"""Replica placement for new topics and new partitions, rack-unaware or rack-aware (Kafka's ``AdminUtils``).

The rack-unaware placement is Kafka's round-robin with a start offset. Brokers are sorted
by id; partition ``p`` gets its first replica on broker
``(p + start) mod n``, and its other replicas follow at a distance
``1 + (shift + j) mod (n - 1)`` from the first, for ``j = 0 .. rf - 2``. The
shift grows by one each time the partition id wraps past a multiple of ``n``,
so followers (and therefore the leaders that take over from them) spread
evenly, and a follower never lands on the partition's first replica.

``start`` and ``shift`` are random by default so that many small topics do not
all lead on the lowest broker id; pass ``start_index`` to make the result
fixed (Kafka uses the same number for both).

When brokers have racks (``broker.rack``), the same walk runs over a
rack-alternated broker list (the first broker of each rack in rack order,
then the second of each, ...), and a follower is skipped while its rack
already holds a replica of the partition and some rack holds none, or its
broker already holds one and some broker holds none. Every partition
therefore spreads over as many racks as it can. Either all brokers have a
rack or none: a mix is refused, as Kafka refuses it.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Iterable, Mapping, Sequence

from broker_core.cluster.errors import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
)

Assignment = dict[int, tuple[int, ...]]
# broker id -> its rack (None: the broker has none)
Racks = Mapping[int, "str | None"]


def assign_replicas(
    broker_ids: Iterable[int],
    partition_count: int,
    replication_factor: int,
    *,
    start_index: int | None = None,
    first_partition: int = 0,
    rng: random.Random | None = None,
    racks: Racks | None = None,
) -> Assignment:
    """Place ``partition_count`` partitions (ids from ``first_partition``) over the brokers.

    ``start_index`` fixes both the start and the shift; otherwise they are
    drawn from ``rng``, and with no ``rng`` they are 0. With ``racks`` naming
    a rack for the brokers, the placement is rack-aware.
    """
    brokers = sorted(set(broker_ids))
    if partition_count <= 0:
        raise InvalidPartitionsError(f"number of partitions must be larger than 0, got {partition_count}")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError(f"replication factor must be larger than 0, got {replication_factor}")
    if not brokers:
        raise InvalidReplicationFactorError("no brokers are available to host replicas")
    if replication_factor > len(brokers):
        raise InvalidReplicationFactorError(
            f"replication factor {replication_factor} is larger than the {len(brokers)} available broker(s)"
        )
    if first_partition < 0:
        raise InvalidPartitionsError(f"first partition id must not be negative, got {first_partition}")
    count = len(brokers)
    if start_index is not None:
        start, shift = start_index % count, start_index % count
    elif rng is not None:
        start, shift = rng.randrange(count), rng.randrange(count)
    else:
        start, shift = 0, 0
    rack_of = _racks_of(brokers, racks)
    if rack_of is not None:
        return _assign_rack_aware(
            rack_of, partition_count, replication_factor, start, shift, first_partition
        )

    assignment: Assignment = {}
    for partition in range(first_partition, first_partition + partition_count):
        if partition > 0 and partition % count == 0:
            shift += 1
        first = (partition + start) % count
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            distance = 1 + (shift + j) % (count - 1)
            replicas.append(brokers[(first + distance) % count])
        assignment[partition] = tuple(replicas)
    return assignment


def _racks_of(brokers: list[int], racks: Racks | None) -> dict[int, str] | None:
    """Each broker's rack when the placement is rack-aware; None when no broker has a rack."""
    if not racks or all(racks.get(broker) is None for broker in brokers):
        return None
    missing = [broker for broker in brokers if racks.get(broker) is None]
    if missing:
        raise InvalidReplicaAssignmentError(
            f"not all brokers have rack information for rack-aware placement: {missing} have none"
        )
    return {broker: str(racks[broker]) for broker in brokers}


def rack_alternated_brokers(rack_of: Mapping[int, str]) -> list[int]:
    """Brokers taken one per rack in turn, racks in name order and brokers by id within a rack.

    ``{0: "a", 1: "a", 2: "b", 3: "c"}`` gives ``[0, 2, 3, 1]``.
    """
    by_rack: defaultdict[str, list[int]] = defaultdict(list)
    for broker in sorted(rack_of):
        by_rack[rack_of[broker]].append(broker)
    queues = [by_rack[rack] for rack in sorted(by_rack)]
    arranged: list[int] = []
    depth = 0
    while len(arranged) < len(rack_of):
        arranged.extend(queue[depth] for queue in queues if depth < len(queue))
        depth += 1
    return arranged


def _assign_rack_aware(
    rack_of: Mapping[int, str],
    partition_count: int,
    replication_factor: int,
    start: int,
    shift: int,
    first_partition: int,
) -> Assignment:
    arranged = rack_alternated_brokers(rack_of)
    count, rack_count = len(arranged), len(set(rack_of.values()))
    assignment: Assignment = {}
    for partition in range(first_partition, first_partition + partition_count):
        if partition > 0 and partition % count == 0:
            shift += 1
        first = (partition + start) % count
        replicas = [arranged[first]]
        racks_used, brokers_used = {rack_of[arranged[first]]}, {arranged[first]}
        k = 0
        while len(replicas) < replication_factor:
            broker = arranged[(first + 1 + (shift * rack_count + k) % (count - 1)) % count]
            rack = rack_of[broker]
            k += 1
            # Skip a broker whose rack already has a replica while some rack has none, and a broker
            # already holding one while some broker holds none.
            if rack in racks_used and len(racks_used) < rack_count:
                continue
            if broker in brokers_used and len(brokers_used) < count:
                continue
            replicas.append(broker)
            racks_used.add(rack)
            brokers_used.add(broker)
        assignment[partition] = tuple(replicas)
    return assignment


def assign_added_partitions(
    broker_ids: Iterable[int],
    existing: Mapping[int, Sequence[int]],
    new_total: int,
    *,
    racks: Racks | None = None,
) -> Assignment:
    """Place partitions ``len(existing) .. new_total - 1`` of an existing topic.

    They continue the existing pattern: the start is the position of partition
    0's first replica among the brokers, and the replication factor is
    partition 0's.
    """
    current = len(existing)
    if current == 0 or 0 not in existing:
        raise InvalidPartitionsError("the topic has no partition 0 to continue from")
    if new_total <= current:
        raise InvalidPartitionsError(f"topic has {current} partitions; the new count {new_total} must be larger")
    brokers = sorted(set(broker_ids))
    first_replica = existing[0][0]
    start = next((i for i, broker in enumerate(brokers) if broker >= first_replica), 0)
    return assign_replicas(
        brokers,
        new_total - current,
        len(existing[0]),
        start_index=start,
        first_partition=current,
        racks=racks,
    )


def validate_assignment(
    assignment: Mapping[int, Sequence[int]],
    *,
    first_partition: int = 0,
    replication_factor: int | None = None,
    live_brokers: Iterable[int] | None = None,
) -> None:
    """Check a manual assignment (CreateTopics / CreatePartitions with explicit replicas).

    Partition ids must run contiguously from ``first_partition``; every
    partition needs the same, non-zero number of distinct replicas; with
    ``live_brokers``, every replica must be one of them.
    """
    if not assignment:
        raise InvalidPartitionsError("an assignment needs at least one partition")
    expected_ids = list(range(first_partition, first_partition + len(assignment)))
    if sorted(assignment) != expected_ids:
        raise InvalidReplicaAssignmentError(
            f"partition ids must be {expected_ids[0]}..{expected_ids[-1]} without gaps, got {sorted(assignment)}"
        )
    known = set(live_brokers) if live_brokers is not None else None
    sizes = set()
    for partition, replicas in sorted(assignment.items()):
        if not replicas:
            raise InvalidReplicaAssignmentError(f"partition {partition} has no replicas")
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(f"partition {partition} lists a broker twice: {list(replicas)}")
        if known is not None:
            unknown = [broker for broker in replicas if broker not in known]
            if unknown:
                raise InvalidReplicaAssignmentError(f"partition {partition} names unknown broker(s) {unknown}")
        sizes.add(len(replicas))
    if len(sizes) > 1:
        raise InvalidReplicaAssignmentError("all partitions must have the same number of replicas")
    if replication_factor is not None and sizes != {replication_factor}:
        raise InvalidReplicaAssignmentError(
            f"partitions have {sizes.pop()} replicas; the topic's replication factor is {replication_factor}"
        )
