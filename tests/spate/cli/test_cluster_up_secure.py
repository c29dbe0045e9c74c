"""``spate cluster up --secure``: a ZooKeeper cluster of SASL_SSL brokers (SCRAM-SHA-512) with an admin user
and the client files it prints; the brokers replicate to each other over that listener."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spate.cli.secure_cluster import scram_credential_text
from spate.client import Admin, NewTopic
from spate.client.security_properties import read_properties, security_settings
from tests.spate.cli.test_cluster_up import ClusterUp, launch, launched  # noqa: F401 (fixture)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def test_the_admin_credential_is_kafkas_stored_form() -> None:
    text = scram_credential_text("pw", salt=b"s" * 32)
    fields = dict(part.split("=", 1) for part in text.split(","))
    assert set(fields) == {"salt", "stored_key", "server_key", "iterations"} and fields["iterations"] == "4096"
    from broker_core.security.sasl.scram import SCRAM_SHA_512, ScramCredential
    assert ScramCredential.from_text(text) == ScramCredential.from_password(SCRAM_SHA_512, "pw", salt=b"s" * 32)


def test_a_secure_cluster_starts_and_clients_connect_with_the_files_it_wrote(
        launched: list[ClusterUp], tmp_path: Path) -> None:  # noqa: F811
    from confluent_kafka import Consumer, Producer

    cluster = launch(launched, tmp_path / "secure", "--secure", "--no-status", "--output", "json", brokers=2)
    started = json.loads(cluster.wait_up())
    properties = Path(started["client_properties"])
    assert "client.properties" in cluster.stderr and "SCRAM-SHA-512" in cluster.stderr
    assert oct(properties.stat().st_mode & 0o777) == "0o600"

    settings = security_settings(read_properties(properties.read_text()))
    assert settings["security_protocol"] == "SASL_SSL" and settings["sasl_username"] == "admin"
    with Admin(cluster.bootstrap, **settings) as admin:
        admin.create_topics([NewTopic("secure-topic", 1, 2)])
        assert {b.node_id for b in admin.describe_cluster().brokers} == {0, 1}

    listed = subprocess.run([sys.executable, "-m", "spate.cli.main", "topics", "list", "--bootstrap-server",
                             cluster.bootstrap, "--command-config", str(properties)],
                            capture_output=True, text=True, timeout=60)
    assert "secure-topic" in listed.stdout, listed.stderr

    confluent = dict(read_properties(Path(started["confluent_properties"]).read_text()))
    producer = Producer({**confluent, "acks": "all"})
    for i in range(10):
        producer.produce("secure-topic", f"v{i}".encode())
    assert producer.flush(60) == 0
    consumer = Consumer({**confluent, "group.id": "secure-up", "auto.offset.reset": "earliest"})
    consumer.subscribe(["secure-topic"])
    seen, deadline = [], time.monotonic() + 60
    try:
        while len(seen) < 10 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                seen.append(message.value())
    finally:
        consumer.close()
    assert seen == [f"v{i}".encode() for i in range(10)]
    assert_brokers_own_their_znodes(cluster)
    assert cluster.stop() == 0


def assert_brokers_own_their_znodes(cluster: ClusterUp) -> None:
    """The brokers logged in to ZooKeeper (SASL) and set ACLs: others read topics, never change them or read users."""
    from kazoo.client import KazooClient
    from kazoo.exceptions import NoAuthError

    for name in ("zookeeper_jaas.conf", "broker_jaas.conf"):
        assert oct((cluster.data_dir / name).stat().st_mode & 0o777) == "0o600"
    anonymous = KazooClient(hosts=f"127.0.0.1:{cluster.zookeeper_port}")
    anonymous.start(timeout=15)
    try:
        assert b"partitions" in anonymous.get("/brokers/topics/secure-topic")[0]
        assert {acl.id.scheme for acl in anonymous.get_acls("/brokers/topics/secure-topic")[0]} == {"sasl", "world"}
        with pytest.raises(NoAuthError):
            anonymous.set("/brokers/topics/secure-topic", b"{}")
        with pytest.raises(NoAuthError):
            anonymous.get("/config/users/admin")
    finally:
        anonymous.stop()
        anonymous.close()
