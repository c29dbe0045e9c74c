"""Changing a ``/config/<type>/<name>`` znode: read-modify-write with its change notification, against a real
ZooKeeper; owners of other keys in the same znode keep them, and a concurrent writer makes the change re-read."""

from __future__ import annotations

import json
from typing import Iterator

import pytest

from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.config_entity_zk import ConcurrentConfigChangeError, update_config_entity
from tests.support.zookeeper import ZooKeeperForTests

ALICE = "/config/users/alice"


@pytest.fixture
def session(zookeeper: ZooKeeperForTests, zk_chroot: str) -> Iterator[ZkSession]:
    session = zookeeper.session(zk_chroot)
    session.ensure_path("/config/users")
    yield session


def configs(session: ZkSession) -> dict[str, str]:
    return json.loads(session.get(ALICE)[0])["config"]


def test_a_missing_entity_is_created_and_the_change_is_announced(session: ZkSession) -> None:
    update_config_entity(session, "users/alice", lambda configs: {**configs, "producer_byte_rate": "1024.0"})
    assert configs(session) == {"producer_byte_rate": "1024.0"}
    [change] = session.get_children("/config/changes")
    assert json.loads(session.get(f"/config/changes/{change}")[0])["entity_path"] == "users/alice"


def test_keys_of_other_owners_are_kept(session: ZkSession) -> None:
    update_config_entity(session, "users/alice", lambda configs: {**configs, "SCRAM-SHA-256": "salt=..."})
    update_config_entity(session, "users/alice", lambda configs: {**configs, "consumer_byte_rate": "2048.0"})
    assert configs(session) == {"SCRAM-SHA-256": "salt=...", "consumer_byte_rate": "2048.0"}
    assert len(session.get_children("/config/changes")) == 2


def test_a_concurrent_writer_makes_the_change_read_again(session: ZkSession) -> None:
    update_config_entity(session, "users/alice", lambda configs: {"a": "1"})
    raced: list[str] = []

    def racing(configs: dict[str, str]) -> dict[str, str]:
        if not raced:  # another broker writes between this read and this write
            raced.append("once")
            update_config_entity(session, "users/alice", lambda theirs: {**theirs, "b": "2"})
        return {**configs, "c": "3"}

    update_config_entity(session, "users/alice", racing)
    assert configs(session) == {"a": "1", "b": "2", "c": "3"}


def test_a_writer_that_always_loses_gives_up_with_a_clear_error(session: ZkSession) -> None:
    update_config_entity(session, "users/alice", lambda configs: {"n": "0"})

    def always_raced(configs: dict[str, str]) -> dict[str, str]:
        update_config_entity(session, "users/alice", lambda theirs: {"n": str(int(theirs["n"]) + 1)})
        return configs

    with pytest.raises(ConcurrentConfigChangeError, match="users/alice"):
        update_config_entity(session, "users/alice", always_raced)
