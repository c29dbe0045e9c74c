"""max.partitions and max.broker.partitions: refused by arithmetic before placement, then per broker."""

from __future__ import annotations

import resource
import time

import pytest

from broker_core.config.broker_config import load_broker_config
from broker_core.server.partition_limits import (
    FILES_PER_PARTITION,
    PartitionCounts,
    PartitionLimits,
    partitions_within_open_files,
    raise_open_file_limit,
    segment_file_cap,
)
from broker_core.storage.open_files import MIN_CAPACITY
from spate.protocol.errors import ErrorCode, KafkaError

INT32_MAX = 2**31 - 1
LIMITS = PartitionLimits(max_partitions=100, max_broker_partitions=40)
NOTHING = PartitionCounts()


def refusal(check, *args) -> KafkaError:
    with pytest.raises(KafkaError) as caught:
        check(*args)
    return caught.value


def test_defaults_let_ten_thousand_partitions_live_on_one_broker() -> None:
    limits = PartitionLimits.from_config(load_broker_config(None, []), file_limit=None)
    assert (limits.max_partitions, limits.max_broker_partitions) == (100000, 20000)
    limits.check_count("t", 10_000, 1, NOTHING, [0])


def test_a_count_above_max_partitions_on_its_own_is_invalid_partitions() -> None:
    error = refusal(LIMITS.check_count, "huge", 101, 1, NOTHING, [0, 1, 2])
    assert error.code == ErrorCode.INVALID_PARTITIONS
    assert "max.partitions=100" in str(error) and "101" in str(error)


def test_int32_max_partitions_is_refused_in_milliseconds_without_placing_anything() -> None:
    started = time.monotonic()
    for _ in range(100):
        error = refusal(LIMITS.check_count, "huge", INT32_MAX, 3, NOTHING, [0, 1, 2])
    assert error.code == ErrorCode.INVALID_PARTITIONS
    assert time.monotonic() - started < 0.5


def test_taking_the_cluster_over_max_partitions_is_a_policy_violation() -> None:
    existing = PartitionCounts(90, {0: 30, 1: 30, 2: 30})
    error = refusal(LIMITS.check_count, "t", 11, 1, existing, [0, 1, 2])
    assert error.code == ErrorCode.POLICY_VIOLATION
    assert "90 partitions exist" in str(error) and "101" in str(error) and "max.partitions=100" in str(error)
    LIMITS.check_count("t", 10, 1, existing, [0, 1, 2])


def test_more_replicas_than_the_brokers_can_host_is_a_policy_violation() -> None:
    existing = PartitionCounts(30, {0: 30, 1: 30})
    error = refusal(LIMITS.check_count, "t", 11, 2, existing, [0, 1])
    assert error.code == ErrorCode.POLICY_VIOLATION
    assert "22 partition replicas" in str(error) and "max.broker.partitions=40" in str(error)
    assert "can host 20 more" in str(error)


def test_counts_left_to_the_existing_checks_pass_through() -> None:
    for count, factor in ((0, 1), (-5, 1), (INT32_MAX, 0), (INT32_MAX, 4)):
        LIMITS.check_count("t", count, factor, NOTHING, [0, 1, 2])


def test_an_assignment_over_one_brokers_limit_names_the_broker() -> None:
    existing = PartitionCounts(35, {0: 35})
    assignment = {p: (0,) for p in range(6)}
    error = refusal(LIMITS.check_assignment, "t", assignment, existing)
    assert error.code == ErrorCode.POLICY_VIOLATION
    assert "broker 0 hosts 35" in str(error) and "take it to 41" in str(error)
    LIMITS.check_assignment("t", {p: (1,) for p in range(6)}, existing)


def test_an_assignment_is_checked_against_max_partitions_by_its_size() -> None:
    assert refusal(LIMITS.check_assignment, "t", {p: (0,) for p in range(101)}, NOTHING).code == (
        ErrorCode.INVALID_PARTITIONS
    )
    existing = PartitionCounts(95, {1: 95})
    assert refusal(LIMITS.check_assignment, "t", {p: (0,) for p in range(6)}, existing).code == (
        ErrorCode.POLICY_VIOLATION
    )


def test_a_topic_grown_beyond_max_partitions_is_invalid_partitions() -> None:
    assert refusal(LIMITS.check_topic_size, "t", INT32_MAX).code == ErrorCode.INVALID_PARTITIONS
    LIMITS.check_topic_size("t", 100)


def test_partitions_hold_no_descriptors_so_the_open_file_limit_does_not_bound_them() -> None:
    assert FILES_PER_PARTITION == 0
    assert partitions_within_open_files(4096) is None
    assert partitions_within_open_files(64) is None
    assert partitions_within_open_files(None) is None
    assert PartitionLimits(100000, 20000, partitions_within_open_files(4096)).per_broker == 20000


def test_an_open_file_limit_without_room_for_segment_files_hosts_no_partition_and_says_so() -> None:
    limits = PartitionLimits(100000, 20000, partitions_within_open_files(16))
    assert limits.per_broker == 0
    error = refusal(limits.check_count, "t", 1, 1, NOTHING, [0])
    assert error.code == ErrorCode.POLICY_VIOLATION
    assert "max.broker.partitions=20000 (lowered to 0 by the open-file limit" in str(error)


def test_the_segment_file_cap_fits_under_the_open_file_limit_next_to_the_reserve() -> None:
    assert segment_file_cap(4096, 20000) == 4096
    assert segment_file_cap(4096, 3000) == 3000 - 750
    assert segment_file_cap(100000, 20000) == 20000 - 1024
    assert segment_file_cap(4096, None) == 4096
    assert segment_file_cap(1, 20000) == MIN_CAPACITY


def test_existing_counts_add_up_replicas_per_broker() -> None:
    counts = PartitionCounts.of([[(0, 1), (1, 2)], [(2,)]])
    assert (counts.total, counts.per_broker) == (3, {0: 1, 1: 2, 2: 2})
    assert counts.plus(PartitionCounts(2, {0: 2})) == PartitionCounts(5, {0: 3, 1: 2, 2: 2})


def test_the_broker_takes_the_hard_open_file_limit_as_its_own() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        if hard != resource.RLIM_INFINITY and hard > 64:
            resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
        assert raise_open_file_limit() == (None if hard == resource.RLIM_INFINITY else hard)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
