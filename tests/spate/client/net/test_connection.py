"""Connecting, negotiating versions, and failing fast and clearly when a broker misbehaves."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from spate.client.config import ClientConfig
from spate.client.errors import BrokerUnavailableError, KafkaTimeoutError, NetworkError
from spate.client.net.api_versions import CLIENT_VERSIONS
from spate.client.net.connection import BrokerConnection
from spate.client.net.network_client import NetworkClient
from spate.protocol import ADVERTISED_VERSIONS, ApiKey, VersionRange
from spate.protocol.messages.metadata import MetadataRequest, MetadataResponse
from tests.spate.client.fake_broker import CLOSE, SILENT, FakeBroker


@pytest.fixture
def brokers() -> Iterator[list[FakeBroker]]:
    started: list[FakeBroker] = []
    yield started
    for broker in started:
        broker.stop()


def fake(brokers: list[FakeBroker], *args, **kwargs) -> FakeBroker:
    broker = FakeBroker(*args, **kwargs)
    brokers.append(broker)
    return broker


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def metadata_reply(port: int) -> MetadataResponse:
    R = MetadataResponse
    return R(brokers=[R.MetadataResponseBroker(node_id=7, host="127.0.0.1", port=port)], controller_id=7, topics=[])


def test_negotiation_falls_back_when_the_broker_refuses_the_newest_api_versions(brokers) -> None:
    # A broker serving ApiVersions v0-2; the client starts at v3.
    broker = fake(brokers, versions={**ADVERTISED_VERSIONS, ApiKey.API_VERSIONS: VersionRange(0, 2)})
    conn = BrokerConnection(-1, "127.0.0.1", broker.port, "test")
    conn.connect(time.monotonic() + 5)
    assert broker.requests == [(ApiKey.API_VERSIONS, 3), (ApiKey.API_VERSIONS, 2)]
    assert conn.version(ApiKey.PRODUCE) == CLIENT_VERSIONS[ApiKey.PRODUCE].max
    conn.close()


def test_a_broker_that_knows_the_newest_api_versions_is_asked_once(brokers) -> None:
    versions = {**ADVERTISED_VERSIONS, ApiKey.API_VERSIONS: VersionRange(0, 3)}
    broker = fake(brokers, versions=versions)
    conn = BrokerConnection(-1, "127.0.0.1", broker.port, "test")
    conn.connect(time.monotonic() + 5)
    assert broker.requests == [(ApiKey.API_VERSIONS, 3)]
    conn.close()


def test_a_refused_connection_fails_at_once_naming_the_address() -> None:
    port = closed_port()
    conn = BrokerConnection(-1, "127.0.0.1", port, "test")
    started = time.monotonic()
    with pytest.raises(BrokerUnavailableError, match=f"127.0.0.1:{port}") as raised:
        conn.connect(time.monotonic() + 5)
    assert time.monotonic() - started < 1
    assert raised.value.retriable


def test_a_broker_that_never_answers_the_handshake_fails_by_the_connect_deadline(brokers) -> None:
    broker = fake(brokers, answer_api_versions=False)
    conn = BrokerConnection(-1, "127.0.0.1", broker.port, "test")
    started = time.monotonic()
    with pytest.raises(BrokerUnavailableError, match="did not answer API_VERSIONS"):
        conn.connect(started + 0.3)
    assert 0.25 < time.monotonic() - started < 2
    assert not conn.connected


def test_an_unanswered_request_times_out_and_fails_the_others_on_its_connection(brokers) -> None:
    broker = fake(brokers, handler=lambda key, version, body: SILENT)
    client = NetworkClient(broker.bootstrap, ClientConfig(request_timeout_ms=300))
    try:
        first = client.send(-1, ApiKey.METADATA, MetadataRequest(topics=[]), timeout=0.3)
        second = client.send(-1, ApiKey.METADATA, MetadataRequest(topics=[]), timeout=5.0)
        started = time.monotonic()
        while not (first.done and second.done):
            client.poll(1.0)
        assert 0.2 < time.monotonic() - started < 2
        assert isinstance(first.error, KafkaTimeoutError)
        assert isinstance(second.error, NetworkError)
        assert not client.is_connected(-1)
    finally:
        client.close()


def test_a_connection_the_broker_drops_fails_its_requests_with_a_network_error(brokers) -> None:
    broker = fake(brokers, handler=lambda key, version, body: CLOSE)
    client = NetworkClient(broker.bootstrap, ClientConfig())
    try:
        with pytest.raises(NetworkError, match="closed the connection"):
            client.request(-1, ApiKey.METADATA, MetadataRequest(topics=[]))
    finally:
        client.close()


def test_reconnecting_to_a_failed_node_waits_out_the_backoff() -> None:
    client = NetworkClient(f"127.0.0.1:{closed_port()}", ClientConfig(retry_backoff_ms=200, retry_backoff_max_ms=1000))
    try:
        with pytest.raises(BrokerUnavailableError) as first:
            client.connect(-1)
        assert client.connect_delay(-1, time.monotonic()) > 0.1
        with pytest.raises(BrokerUnavailableError) as second:
            client.connect(-1)
        assert second.value is first.value
    finally:
        client.close()


def test_metadata_names_the_brokers_used_from_then_on(brokers) -> None:
    broker = fake(brokers)
    broker.handler = lambda key, version, body: metadata_reply(broker.port) if key == ApiKey.METADATA else SILENT
    client = NetworkClient(broker.bootstrap, ClientConfig())
    try:
        snapshot = client.fetch_metadata([], deadline=time.monotonic() + 5)
        assert snapshot.controller_id == 7
        assert client.known_nodes() == [7]
        assert client.node(7).port == broker.port
    finally:
        client.close()


def test_maybe_update_metadata_refreshes_in_the_background_of_poll(brokers) -> None:
    broker = fake(brokers)
    broker.handler = lambda key, version, body: metadata_reply(broker.port) if key == ApiKey.METADATA else SILENT
    client = NetworkClient(broker.bootstrap, ClientConfig())
    try:
        client.maybe_update_metadata(time.monotonic())
        deadline = time.monotonic() + 5
        while client.metadata.version == 0 and time.monotonic() < deadline:
            client.poll(0.1)
        assert client.metadata.snapshot.controller_id == 7
    finally:
        client.close()


def test_wakeup_interrupts_a_waiting_poll() -> None:
    client = NetworkClient("127.0.0.1:1", ClientConfig())
    try:
        client.wakeup()
        started = time.monotonic()
        client.poll(5.0)
        assert time.monotonic() - started < 1
    finally:
        client.close()


def test_a_short_deadline_behind_a_long_one_still_times_out_on_time(brokers) -> None:
    broker = fake(brokers, handler=lambda key, version, body: SILENT)
    client = NetworkClient(broker.bootstrap, ClientConfig())
    try:
        client.send(-1, ApiKey.METADATA, MetadataRequest(topics=[]), timeout=30.0)
        started = time.monotonic()
        with pytest.raises(KafkaTimeoutError):
            client.request(-1, ApiKey.METADATA, MetadataRequest(topics=[]), deadline=started + 0.3)
        assert time.monotonic() - started < 2
    finally:
        client.close()
