"""The embedded broker's metadata view: topics as the store describes them, converted once per change."""

from __future__ import annotations

import pytest

from broker_core.cluster.errors import UnknownTopicError
from broker_core.cluster.local_store import LocalMetadataStore
from broker_core.server.metadata_view import StoreMetadataView


@pytest.fixture
def store(tmp_path):
    with LocalMetadataStore(tmp_path / "metadata.json") as opened:
        yield opened


def test_an_unchanged_topic_is_converted_once(store) -> None:
    store.create_topic("orders", {0: [0], 1: [0]})
    view = StoreMetadataView(store, node_id=0)
    first = view.get_topic("orders")
    assert view.get_topic("orders") is first
    assert sorted(first.partitions) == [0, 1] and first.partitions[1].replicas == (0,)


def test_a_change_to_the_topic_is_seen_at_once(store) -> None:
    store.create_topic("orders", {0: [0]})
    view = StoreMetadataView(store, node_id=0)
    assert sorted(view.get_topic("orders").partitions) == [0]
    store.add_partitions("orders", {1: [0], 2: [0]})
    assert sorted(view.get_topic("orders").partitions) == [0, 1, 2]


def test_a_deleted_topic_is_unknown_and_a_new_one_of_its_name_is_described_afresh(store) -> None:
    store.create_topic("orders", {0: [0]})
    view = StoreMetadataView(store, node_id=0)
    old_id = view.get_topic("orders").topic_id
    store.delete_topic("orders")
    with pytest.raises(UnknownTopicError):
        view.get_topic("orders")
    store.create_topic("orders", {0: [0], 1: [0]})
    recreated = view.get_topic("orders")
    assert recreated.topic_id != old_id and sorted(recreated.partitions) == [0, 1]
