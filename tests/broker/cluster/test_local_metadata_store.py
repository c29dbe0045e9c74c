"""The embedded store beyond the shared contract: its file, its lock, failed and crashed writes.

The behaviour every store shares (CRUD, durability, conditional writes,
watches) is in ``test_metadata_store_contract.py``, run against this store too.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Callable, Iterator

import pytest

from broker_core.cluster import local_store
from broker_core.cluster.errors import MetadataStoreFileError
from broker_core.cluster.local_store import METADATA_FILE_NAME, LocalMetadataStore


def counting_ids() -> Callable[[], uuid.UUID]:
    counter = iter(range(100, 10_000))
    return lambda: uuid.UUID(int=next(counter))


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "meta" / METADATA_FILE_NAME


@pytest.fixture
def store(store_path: Path) -> Iterator[LocalMetadataStore]:
    with LocalMetadataStore(store_path, id_source=counting_ids()) as opened:
        yield opened


def test_a_failed_write_leaves_memory_and_file_unchanged(store: LocalMetadataStore, store_path: Path, monkeypatch) -> None:
    before = store_path.read_bytes()

    def disk_full(path: Path, state: object) -> None:
        raise MetadataStoreFileError(path, "cannot write: No space left on device")

    monkeypatch.setattr(local_store, "write_state", disk_full)
    with pytest.raises(MetadataStoreFileError, match="No space left"):
        store.create_topic("orders", {0: [0]})
    with pytest.raises(MetadataStoreFileError):
        store.allocate_producer_id_block(0)
    monkeypatch.undo()
    assert store.list_topics() == []
    assert store_path.read_bytes() == before
    assert store.allocate_producer_id_block(0).first == 0


def test_a_leftover_temp_file_from_a_crashed_write_is_discarded(store_path: Path) -> None:
    with LocalMetadataStore(store_path) as first:
        first.create_topic("orders", {0: [0]})
    tmp = store_path.with_name(store_path.name + ".tmp")
    tmp.write_text('{"half": ')
    with LocalMetadataStore(store_path) as second:
        assert second.list_topics() == ["orders"]
    assert not tmp.exists()


def test_a_second_open_of_the_same_file_is_refused(store: LocalMetadataStore, store_path: Path) -> None:
    with pytest.raises(MetadataStoreFileError, match="in use") as info:
        LocalMetadataStore(store_path)
    assert str(store_path) in str(info.value)


def test_the_file_is_readable_json_in_the_documented_layout(store: LocalMetadataStore, store_path: Path) -> None:
    store.create_topic("orders", {0: [0]}, {"k": "v"})
    document = json.loads(store_path.read_text())
    assert document["format"] == 1
    assert document["topics"]["orders"]["partitions"]["0"]["replicas"] == [0]
    assert document["topics"]["orders"]["configs"] == {"k": "v"}
