"""File and directory names: the one place that knows them."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.storage.files import (
    FileKind,
    FileState,
    TopicPartition,
    deletion_dir_name,
    is_deletion_dir_name,
    parse_partition_dir_name,
    parse_segment_file_name,
    partition_dir_name,
    segment_file_name,
    segment_paths,
    with_state,
)


def test_segment_file_names_are_the_base_offset_zero_padded_to_twenty_digits():
    assert segment_file_name(0, FileKind.LOG) == "00000000000000000000.log"
    assert segment_file_name(42, FileKind.INDEX) == "00000000000000000042.index"
    assert segment_file_name(2**63 - 1, FileKind.TIME_INDEX) == "09223372036854775807.timeindex"
    assert segment_file_name(7, FileKind.LOG, FileState.DELETED) == "00000000000000000007.log.deleted"


@pytest.mark.parametrize("kind", list(FileKind))
@pytest.mark.parametrize("state", list(FileState))
@pytest.mark.parametrize("base_offset", [0, 1, 123_456_789, 2**63 - 1])
def test_segment_file_names_round_trip(kind: FileKind, state: FileState, base_offset: int):
    parsed = parse_segment_file_name(segment_file_name(base_offset, kind, state))
    assert parsed is not None
    assert (parsed.base_offset, parsed.kind, parsed.state) == (base_offset, kind, state)


@pytest.mark.parametrize(
    "name",
    [
        "leader-epoch-checkpoint",
        "123.log",
        "000000000000000000000.log",
        "00000000000000000000.txt",
        "00000000000000000000.log.bak",
        "00000000000000000000.log.tmp",
        "0000000000000000000a.log",
        "00000000000000000000",
    ],
)
def test_other_file_names_are_not_segment_files(name: str):
    assert parse_segment_file_name(name) is None


def test_negative_base_offsets_cannot_be_named():
    with pytest.raises(ValueError):
        segment_file_name(-1, FileKind.LOG)


def test_with_state_swaps_only_the_temporary_suffix(tmp_path: Path):
    live = segment_paths(tmp_path, 5).log
    deleted = with_state(live, FileState.DELETED)
    assert deleted.name == "00000000000000000005.log.deleted"
    assert with_state(deleted, FileState.LIVE) == live


@pytest.mark.parametrize(
    "name, topic, partition",
    [
        ("orders-0", "orders", 0),
        ("my-topic-3", "my-topic", 3),
        ("a.b-c_d-10", "a.b-c_d", 10),
        ("__consumer_offsets-49", "__consumer_offsets", 49),
        ("t-0-1", "t-0", 1),
        ("-x-2", "-x", 2),
        ("..a-7", "..a", 7),
        ("x" * 249 + "-2147483647", "x" * 249, 2147483647),
    ],
)
def test_partition_dir_names_split_at_the_last_dash(name: str, topic: str, partition: int):
    tp = parse_partition_dir_name(name)
    assert tp == TopicPartition(topic, partition)
    assert partition_dir_name(tp) == name


@pytest.mark.parametrize(
    "name",
    ["orders", "orders-", "-1", "orders-01", "orders-x", "or ders-1", "orders-1.abc123-delete", "..-1", "orders-٣"],
)
def test_names_that_are_not_partition_dirs_parse_to_none(name: str):
    assert parse_partition_dir_name(name) is None


def test_partition_dir_name_refuses_names_that_are_not_topics():
    with pytest.raises(ValueError):
        partition_dir_name(TopicPartition("a/b", 0))
    with pytest.raises(ValueError):
        partition_dir_name(TopicPartition("orders", -1))


def test_deletion_dir_names_are_recognised_and_never_parse_as_partitions():
    name = deletion_dir_name(TopicPartition("my-topic", 2), "0af3")
    assert name == "my-topic-2.0af3-delete"
    assert is_deletion_dir_name(name)
    assert parse_partition_dir_name(name) is None
    assert not is_deletion_dir_name("my-topic-2")
