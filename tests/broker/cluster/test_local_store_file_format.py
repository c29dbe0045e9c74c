"""The embedded store's file: corrupt or unreadable files give errors naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from broker_core.cluster.errors import MetadataStoreFileError
from broker_core.cluster.local_store import LocalMetadataStore


def valid_document() -> dict:
    return {
        "format": 1,
        "cluster_id": "AAAAAAAAAAAAAAAAAAAAAA",
        "next_producer_id": 0,
        "topics": {
            "orders": {
                "topic_id": "00000000-0000-0000-0000-000000000007",
                "configs": {"retention.ms": "5"},
                "partitions": {
                    "0": {"leader": 0, "leader_epoch": 0, "isr": [0], "replicas": [0], "controller_epoch": 0, "version": 0}
                },
            }
        },
    }


def corrupt(document: dict, path: list[str], value: object) -> dict:
    target = document
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return document


_DELETE = object()
PARTITION = ["topics", "orders", "partitions", "0"]

CORRUPTIONS = [
    (["format"], 2, "unsupported format 2"),
    (["format"], _DELETE, "format: missing"),
    (["cluster_id"], "", "cluster_id: empty"),
    (["cluster_id"], 5, "cluster_id: expected a string"),
    (["next_producer_id"], -1, "next_producer_id: negative"),
    (["next_producer_id"], "10", "next_producer_id: expected an integer"),
    (["next_producer_id"], True, "next_producer_id: expected an integer"),
    (["topics"], [], "topics: expected an object"),
    (["topics"], _DELETE, "topics: missing"),
    (["topics", "bad name"], {}, "topics.bad name: topic name"),
    (["topics", "orders", "topic_id"], "not-a-uuid", "topics.orders.topic_id: not a UUID"),
    (["topics", "orders", "configs", "k"], 1, "topics.orders.configs.k: not a string"),
    (["topics", "orders", "partitions"], {}, "partition ids must run 0..n-1"),
    (["topics", "orders", "partitions", "2"], {"leader": 0}, "topics.orders.partitions.2.leader_epoch: missing"),
    (["topics", "orders", "partitions", "x"], {}, "partition id is not a number"),
    (PARTITION + ["isr"], [0, "1"], "topics.orders.partitions.0.isr: expected a list of integers"),
    (PARTITION + ["version"], 1.5, "topics.orders.partitions.0.version: expected an integer"),
]


@pytest.mark.parametrize("path, value, message", CORRUPTIONS)
def test_structurally_corrupt_files_are_reported_with_the_bad_field(tmp_path: Path, path, value, message) -> None:
    file = tmp_path / "meta.json"
    file.write_text(json.dumps(corrupt(valid_document(), path, value)))
    with pytest.raises(MetadataStoreFileError) as info:
        LocalMetadataStore(file)
    assert str(file) in str(info.value)
    assert "corrupt" in str(info.value)
    assert message in str(info.value)


@pytest.mark.parametrize(
    "raw",
    [b"", b"{", b"\x00\x01\x02", b"[1, 2]", b"null", b'{"format": 1,', b"\xff\xfe{}"],
)
def test_unparsable_bytes_are_reported_as_corrupt(tmp_path: Path, raw: bytes) -> None:
    file = tmp_path / "meta.json"
    file.write_bytes(raw)
    with pytest.raises(MetadataStoreFileError, match="corrupt") as info:
        LocalMetadataStore(file)
    assert info.value.path == file


def test_a_valid_hand_written_file_loads(tmp_path: Path) -> None:
    file = tmp_path / "meta.json"
    file.write_text(json.dumps(valid_document()))
    with LocalMetadataStore(file) as store:
        assert store.cluster_id() == "AAAAAAAAAAAAAAAAAAAAAA"
        assert store.get_topic_configs("orders") == {"retention.ms": "5"}


def test_an_unreadable_path_is_reported_with_its_name(tmp_path: Path) -> None:
    file = tmp_path / "meta.json"
    file.mkdir()
    with pytest.raises(MetadataStoreFileError, match="cannot read") as info:
        LocalMetadataStore(file)
    assert str(file) in str(info.value)


def test_a_corrupt_file_releases_the_lock_so_a_fixed_file_can_open(tmp_path: Path) -> None:
    file = tmp_path / "meta.json"
    file.write_text("{")
    with pytest.raises(MetadataStoreFileError):
        LocalMetadataStore(file)
    file.write_text(json.dumps(valid_document()))
    with LocalMetadataStore(file) as store:
        assert store.list_topics() == ["orders"]
