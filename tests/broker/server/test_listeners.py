"""Several listeners on one broker: each is served, and each answers with its own endpoints."""

from __future__ import annotations

import time
from typing import Iterator

import pytest

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.errors import ConfigError
from broker_core.server.broker import Broker
from broker_core.server.embedded import EmbeddedBroker
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.metadata import MetadataRequest
from tests.support.admin_requests import create_topic, describe_cluster, find_group_coordinator, produce_one
from tests.support.controller_requests import call
from tests.support.ports import free_port

# Distinct loopback addresses (all of 127/8 is local on Linux), so the answers show which endpoint they name.
CLIENT_HOST, REPLICATION_HOST = "127.0.0.1", "127.0.0.2"


@pytest.fixture(scope="module")
def ports() -> dict[str, int]:
    return {"CLIENT": free_port(), "REPLICATION": free_port()}


@pytest.fixture(scope="module")
def broker(tmp_path_factory, ports) -> Iterator[EmbeddedBroker]:
    overrides = {
        "listeners": ",".join(f"{name}://{address(ports, name)}" for name in ("CLIENT", "REPLICATION")),
        "listener.security.protocol.map": "CLIENT:PLAINTEXT,REPLICATION:PLAINTEXT",
        "inter.broker.listener.name": "REPLICATION",
        "offsets.topic.num.partitions": "1",
    }
    with EmbeddedBroker(tmp_path_factory.mktemp("listeners"), overrides) as running:
        yield running


def address(ports: dict[str, int], listener: str) -> str:
    return f"{CLIENT_HOST if listener == 'CLIENT' else REPLICATION_HOST}:{ports[listener]}"


def metadata(at: str, topics: list[str] | None = None):
    body = MetadataRequest(
        topics=None if topics is None else [MetadataRequest.MetadataRequestTopic(name=t) for t in topics],
        allow_auto_topic_creation=False,
    )
    return call(at, ApiKey.METADATA, 8, body)


@pytest.mark.parametrize("listener", ["CLIENT", "REPLICATION"])
def test_metadata_names_the_broker_by_the_endpoint_of_the_listener_asked(broker, ports, listener) -> None:
    answer = metadata(address(ports, listener))
    assert [(b.node_id, b.host, b.port) for b in answer.brokers] == [
        (0, CLIENT_HOST if listener == "CLIENT" else REPLICATION_HOST, ports[listener]),
    ]


@pytest.mark.parametrize("listener", ["CLIENT", "REPLICATION"])
def test_describe_cluster_and_find_coordinator_answer_with_the_listeners_endpoint(broker, ports, listener) -> None:
    at = address(ports, listener)
    host = at.rsplit(":", 1)[0]
    assert [(b.host, b.port) for b in describe_cluster(at).brokers] == [(host, ports[listener])]
    # The first request creates __consumer_offsets; it answers COORDINATOR_NOT_AVAILABLE until then.
    deadline = time.monotonic() + 30
    found = find_group_coordinator(at, "g")
    while found.error_code != ErrorCode.NONE and time.monotonic() < deadline:
        time.sleep(0.1)
        found = find_group_coordinator(at, "g")
    assert (found.error_code, found.host, found.port) == (ErrorCode.NONE, host, ports[listener])


def test_both_listeners_serve_the_same_topics(broker, ports) -> None:
    assert create_topic(address(ports, "CLIENT"), "shared", partitions=1, replication_factor=1).error_code == 0
    assert produce_one(address(ports, "REPLICATION"), "shared").error_code == ErrorCode.NONE
    for listener in ("CLIENT", "REPLICATION"):
        (topic,) = metadata(address(ports, listener), ["shared"]).topics
        assert topic.error_code == ErrorCode.NONE and topic.partitions[0].leader_id == 0


def test_a_tls_listener_without_a_key_store_is_refused_naming_the_setting(tmp_path) -> None:
    config = BrokerConfig.from_properties({
        "listeners": "PLAINTEXT://127.0.0.1:0,SECURE://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SECURE:SSL",
        "log.dirs": str(tmp_path),
    })
    with pytest.raises(ConfigError, match="listener SECURE serves TLS and needs a key store") as info:
        Broker(config)
    assert info.value.key == "ssl.keystore.location"
