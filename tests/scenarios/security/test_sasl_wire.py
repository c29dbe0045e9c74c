"""SASL as a raw client sees it: the gate before authentication, failures, handshake v0 and session expiry."""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

import pytest

from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import decode_response, encode_request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.api_versions import ApiVersionsRequest
from spate.protocol.messages.metadata import MetadataRequest
from spate.protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from spate.protocol.messages.sasl_handshake import SaslHandshakeRequest
from tests.scenarios.security.secure_broker import ALICE, REAUTH_MS, SecureBroker
from tests.support.metrics_scrape import scrape

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

FAILED_LOGINS = "kafka_server_socketservermetrics_failed_authentication_total"
PLAIN_ALICE = f"\0{ALICE[0]}\0{ALICE[1]}".encode()


class Wire:
    """One blocking connection that sends requests and reads their responses."""

    def __init__(self, address: str) -> None:
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.correlation = 0

    def send(self, api_key: ApiKey, version: int, body: Any) -> None:
        self.correlation += 1
        self.sock.sendall(encode_request(api_key, version, self.correlation, "wire-test", body))

    def frame(self) -> bytes:
        size = struct.unpack(">i", self._exactly(4))[0]
        return self._exactly(size)

    def call(self, api_key: ApiKey, version: int, body: Any) -> Any:
        self.send(api_key, version, body)
        return decode_response(api_key, version, self.frame()).body

    def closed_by_peer(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def _exactly(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                raise ConnectionError("closed by the broker")
            data += chunk
        return data

    def close(self) -> None:
        self.sock.close()


def metadata_request() -> Any:
    return MetadataRequest(topics=[], allow_auto_topic_creation=False)


def plain_login(wire: Wire, auth_bytes: bytes = PLAIN_ALICE, version: int = 1) -> Any:
    handshake = wire.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
    assert handshake.error_code == ErrorCode.NONE
    assert set(handshake.mechanisms) == {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}
    return wire.call(ApiKey.SASL_AUTHENTICATE, version, SaslAuthenticateRequest(auth_bytes=auth_bytes))


def test_api_versions_is_answered_before_authentication_and_lists_the_sasl_apis(secure: SecureBroker) -> None:
    wire = Wire(secure.address("SASL_PLAINTEXT"))
    versions = wire.call(ApiKey.API_VERSIONS, 2, ApiVersionsRequest())
    served = {entry.api_key: (entry.min_version, entry.max_version) for entry in versions.api_keys}
    assert served[ApiKey.SASL_HANDSHAKE] == (0, 1) and served[ApiKey.SASL_AUTHENTICATE] == (0, 2)
    wire.close()


def test_a_request_before_authentication_closes_the_connection(secure: SecureBroker) -> None:
    wire = Wire(secure.address("SASL_PLAINTEXT"))
    wire.send(ApiKey.METADATA, 4, metadata_request())
    assert wire.closed_by_peer()
    wire.close()


def test_a_wrong_password_is_answered_then_nothing_else_is_served(secure: SecureBroker) -> None:
    failed_before = scrape(secure.metrics_url).value(FAILED_LOGINS, listener="SASL_PLAINTEXT")
    wire = Wire(secure.address("SASL_PLAINTEXT"))
    started = time.monotonic()
    response = plain_login(wire, f"\0{ALICE[0]}\0wrong".encode())
    assert time.monotonic() - started >= 0.09  # connection.failed.authentication.delay.ms (100)
    assert response.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert "invalid credentials" in response.error_message and "wrong" not in response.error_message
    with pytest.raises((ConnectionError, OSError)):
        wire.call(ApiKey.METADATA, 4, metadata_request())
    wire.close()
    assert scrape(secure.metrics_url).value(FAILED_LOGINS, listener="SASL_PLAINTEXT") == failed_before + 1


def test_an_unknown_mechanism_gets_the_enabled_ones(secure: SecureBroker) -> None:
    wire = Wire(secure.address("SASL_PLAINTEXT"))
    response = wire.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="GSSAPI"))
    assert response.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
    assert "SCRAM-SHA-512" in response.mechanisms
    wire.close()


def test_after_plain_login_requests_are_served(secure: SecureBroker) -> None:
    wire = Wire(secure.address("SASL_PLAINTEXT"))
    assert plain_login(wire).error_code == ErrorCode.NONE
    assert wire.call(ApiKey.METADATA, 4, metadata_request()).brokers
    wire.close()


def test_handshake_v0_is_followed_by_raw_tokens(secure: SecureBroker) -> None:
    wire = Wire(secure.address("SASL_PLAINTEXT"))
    handshake = wire.call(ApiKey.SASL_HANDSHAKE, 0, SaslHandshakeRequest(mechanism="PLAIN"))
    assert handshake.error_code == ErrorCode.NONE
    wire.sock.sendall(struct.pack(">i", len(PLAIN_ALICE)) + PLAIN_ALICE)
    assert wire.frame() == b""  # PLAIN's empty final challenge
    assert wire.call(ApiKey.METADATA, 4, metadata_request()).brokers
    wire.close()


def test_sasl_requests_on_a_plaintext_listener_are_an_illegal_state(secure: SecureBroker) -> None:
    wire = Wire(secure.address("PLAINTEXT"))
    response = wire.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
    assert response.error_code == ErrorCode.ILLEGAL_SASL_STATE
    wire.close()


def test_a_session_not_renewed_within_connections_max_reauth_ms_is_closed(secure: SecureBroker) -> None:
    wire = Wire(secure.address("REAUTH"))
    response = plain_login(wire)
    assert response.error_code == ErrorCode.NONE and response.session_lifetime_ms == REAUTH_MS
    assert wire.call(ApiKey.METADATA, 4, metadata_request()).brokers
    time.sleep(REAUTH_MS / 1000 + 0.3)
    with pytest.raises((ConnectionError, OSError)):
        wire.call(ApiKey.METADATA, 4, metadata_request())
    wire.close()


def test_re_authenticating_in_time_keeps_the_connection(secure: SecureBroker) -> None:
    wire = Wire(secure.address("REAUTH"))
    assert plain_login(wire).error_code == ErrorCode.NONE
    deadline = time.monotonic() + 2.5 * REAUTH_MS / 1000
    while time.monotonic() < deadline:  # re-authenticate every half session, serving requests in between
        time.sleep(REAUTH_MS / 2000)
        assert plain_login(wire).session_lifetime_ms == REAUTH_MS
        assert wire.call(ApiKey.METADATA, 4, metadata_request()).brokers
    wire.close()


def test_librdkafka_re_authenticates_on_its_own(secure: SecureBroker) -> None:
    from confluent_kafka import Producer

    expired = "after the SASL session expired"
    closed_before = secure.process.log_path.read_text().count(expired)
    producer = Producer({"bootstrap.servers": secure.address("REAUTH"), "security.protocol": "SASL_PLAINTEXT",
                         "sasl.mechanism": "PLAIN", "sasl.username": ALICE[0], "sasl.password": ALICE[1]})
    for _ in range(3):  # across more than two session lifetimes
        producer.produce("reauth", b"v")
        assert producer.flush(15) == 0
        time.sleep(REAUTH_MS / 1000)
    producer.produce("reauth", b"v")
    assert producer.flush(15) == 0
    assert secure.process.log_path.read_text().count(expired) == closed_before


def test_a_large_frame_before_authentication_closes_the_connection(secure: SecureBroker) -> None:
    wire = Wire(secure.address("SASL_PLAINTEXT"))
    wire.sock.sendall(struct.pack(">i", 100 * 1024 * 1024) + b"\x00" * 64)  # announces 100 MB
    assert wire.closed_by_peer()
    wire.close()
    healthy = Wire(secure.address("SASL_PLAINTEXT"))
    assert plain_login(healthy).error_code == ErrorCode.NONE
    healthy.close()


def test_after_authentication_large_requests_are_accepted_again(secure: SecureBroker) -> None:
    wire = Wire(secure.address("SASL_PLAINTEXT"))
    assert plain_login(wire).error_code == ErrorCode.NONE
    many_topics = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=f"t{i:06d}-" + "x" * 200)
                                          for i in range(3000)], allow_auto_topic_creation=False)
    assert len(many_topics.topics) == 3000  # about 640 KB, above sasl.server.max.receive.size
    assert len(wire.call(ApiKey.METADATA, 4, many_topics).topics) == 3000
    wire.close()


def test_sasl_authenticate_before_a_handshake_is_an_illegal_state_and_closes(secure: SecureBroker) -> None:
    wire = Wire(secure.address("SASL_PLAINTEXT"))
    response = wire.call(ApiKey.SASL_AUTHENTICATE, 1, SaslAuthenticateRequest(auth_bytes=PLAIN_ALICE))
    assert response.error_code == ErrorCode.ILLEGAL_SASL_STATE
    assert wire.closed_by_peer()
    wire.close()


def test_sasl_authenticate_v2_is_flexible_and_carries_the_session_lifetime(secure: SecureBroker) -> None:
    wire = Wire(secure.address("REAUTH"))
    response = plain_login(wire, version=2)
    assert response.error_code == ErrorCode.NONE and response.session_lifetime_ms == REAUTH_MS
    wire.close()


def test_describe_configs_hides_secrets(secure: SecureBroker) -> None:
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": secure.address("PLAINTEXT")})
    resource = ConfigResource(ResourceType.BROKER, "0")
    entries = admin.describe_configs([resource])[resource].result(15)
    for name in ("ssl.key.password", "sasl.jaas.config", "ssl.keystore.key"):
        assert entries[name].is_sensitive and entries[name].value is None, name
    assert entries["ssl.keystore.location"].value == str(secure.certs.broker_keystore)
