"""SCRAM credential stores: Kafka's /config/users znodes in a cluster, a file beside the embedded metadata."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from broker_core.cluster.errors import MetadataStoreFileError
from broker_core.cluster.zk.client import ZkSession
from broker_core.security.credentials import (
    CREDENTIALS_FILE_NAME,
    FileScramCredentialStore,
    ScramCredentialStore,
    ZkScramCredentialStore,
)
from broker_core.security.sasl.scram import SCRAM_SHA_256, SCRAM_SHA_512, ScramCredential
from tests.support.zookeeper import ZooKeeperForTests

ALICE_256 = ScramCredential.from_password(SCRAM_SHA_256, "a", salt=b"salt-a")
ALICE_512 = ScramCredential.from_password(SCRAM_SHA_512, "a", salt=b"salt-b", iterations=8192)


@pytest.fixture
def session(zookeeper: ZooKeeperForTests) -> Iterator[ZkSession]:
    yield zookeeper.session(zookeeper.new_chroot())


def behaves_as_a_store(store: ScramCredentialStore) -> None:
    assert store.get("alice", SCRAM_SHA_256) is None and store.describe() == {}
    store.upsert("alice", SCRAM_SHA_256, ALICE_256)
    store.upsert("alice", SCRAM_SHA_512, ALICE_512)
    store.upsert("a,b=c", SCRAM_SHA_256, ALICE_256)
    assert store.get("alice", SCRAM_SHA_512) == ALICE_512
    assert store.describe() == {"a,b=c": {"SCRAM-SHA-256": ALICE_256},
                                "alice": {"SCRAM-SHA-256": ALICE_256, "SCRAM-SHA-512": ALICE_512}}
    assert store.delete("alice", SCRAM_SHA_256) and not store.delete("alice", SCRAM_SHA_256)
    assert store.get("alice", SCRAM_SHA_256) is None and store.get("alice", SCRAM_SHA_512) == ALICE_512
    assert store.delete("alice", SCRAM_SHA_512)
    assert "alice" not in store.describe()


def test_the_file_store(tmp_path: Path) -> None:
    behaves_as_a_store(FileScramCredentialStore(tmp_path))


def test_the_file_store_survives_a_restart(tmp_path: Path) -> None:
    FileScramCredentialStore(tmp_path).upsert("bob", SCRAM_SHA_512, ALICE_512)
    assert FileScramCredentialStore(tmp_path).get("bob", SCRAM_SHA_512) == ALICE_512
    assert "salt=" in json.loads((tmp_path / CREDENTIALS_FILE_NAME).read_text())["users"]["bob"]["SCRAM-SHA-512"]


def test_the_zookeeper_store(session: ZkSession) -> None:
    behaves_as_a_store(ZkScramCredentialStore(session))


def test_zookeeper_holds_kafkas_layout_and_a_change_notification(session: ZkSession) -> None:
    ZkScramCredentialStore(session).upsert("bob", SCRAM_SHA_512, ALICE_512)
    data, _ = session.get("/config/users/bob")
    assert json.loads(data) == {"version": 1, "config": {"SCRAM-SHA-512": ALICE_512.to_text()}}
    notifications = session.get_children("/config/changes")
    entities = [json.loads(session.get(f"/config/changes/{name}")[0])["entity_path"] for name in notifications]
    assert "users/bob" in entities


@pytest.mark.parametrize("content", ["{not json", '{"version": 1, "users": []}'])
def test_a_damaged_credentials_file_is_reported_naming_it(tmp_path: Path, content: str) -> None:
    (tmp_path / CREDENTIALS_FILE_NAME).write_text(content)
    with pytest.raises(MetadataStoreFileError, match=CREDENTIALS_FILE_NAME):
        FileScramCredentialStore(tmp_path)
