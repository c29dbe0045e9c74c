"""Frames from real Kafka clients: stored golden bytes, and a live librdkafka exchange."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import pytest

from spate.protocol import (
    ADVERTISED_VERSIONS,
    ApiKey,
    InvalidRequestError,
    Request,
    ServerConnection,
    UnsupportedVersionError,
    VersionRange,
    encode_request,
)
from spate.protocol.framing import FrameReader
from spate.protocol.headers import decode_request_header
from spate.protocol.messages.api_versions import (
    ApiVersionsRequest,
    api_versions_response,
)
from spate.protocol.messages.metadata import MetadataResponse
from spate.records.batch import iter_batches, validate_batch
from tests.spate.protocol import kafka_golden_frames as golden


def framed(hex_payload: str) -> bytes:
    payload = bytes.fromhex(hex_payload)
    return len(payload).to_bytes(4, "big") + payload


def serve_one(hex_payload: str) -> Request:
    conn = ServerConnection()
    conn.receive_data(framed(hex_payload))
    request = conn.next_request()
    assert request is not None
    return request


# A broker that serves ApiVersions only up to v2 (as Spate did before v3), to exercise the downgrade.
API_VERSIONS_UP_TO_V2 = {**ADVERTISED_VERSIONS, ApiKey.API_VERSIONS: VersionRange(0, 2)}


def refused_header(hex_payload: str) -> Any:
    conn = ServerConnection(versions=API_VERSIONS_UP_TO_V2)
    conn.receive_data(framed(hex_payload))
    with pytest.raises(UnsupportedVersionError) as raised:
        conn.next_request()
    return raised.value.header


# Every frame captured from a client is served.
SERVED_GOLDEN = [name for name in vars(golden) if name.isupper()]


@pytest.mark.parametrize("name", SERVED_GOLDEN)
def test_golden_request_re_encodes_to_the_clients_exact_bytes(name: str) -> None:
    hex_payload = getattr(golden, name)
    request = serve_one(hex_payload)
    header = request.header
    again = encode_request(header.api_key, header.api_version, header.correlation_id, header.client_id, request.body)
    assert again == framed(hex_payload)


def test_librdkafka_opens_with_flexible_api_versions_v3_which_is_served() -> None:
    request = serve_one(golden.RDKAFKA_API_VERSIONS_V3)
    assert (request.api_key, request.api_version, request.header.client_id) == (ApiKey.API_VERSIONS, 3, "golden-test")


def test_a_broker_serving_api_versions_up_to_v2_refuses_librdkafka_v3_with_its_header() -> None:
    header = refused_header(golden.RDKAFKA_API_VERSIONS_V3)
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (18, 3, 1, "golden-test")


def test_librdkafka_api_versions_v3_body_decodes_with_header_v2() -> None:
    mv = memoryview(bytes.fromhex(golden.RDKAFKA_API_VERSIONS_V3))
    header, pos = decode_request_header(mv)
    assert header.version == 2 and header.client_id == "golden-test"
    body = ApiVersionsRequest.SCHEMA.decode(mv[pos:], 3)
    assert body.client_software_name == "confluent-kafka-python"
    assert body.client_software_version == "2.16.1-rdkafka-2.16.0"


def test_librdkafka_retries_api_versions_at_v0() -> None:
    request = serve_one(golden.RDKAFKA_API_VERSIONS_V0)
    assert (request.api_key, request.api_version, request.header.client_id) == (ApiKey.API_VERSIONS, 0, "golden-test")


def test_librdkafka_metadata_v8_asks_for_its_topic_with_auto_creation() -> None:
    request = serve_one(golden.RDKAFKA_METADATA_V8)
    assert request.api_version == 8
    assert [topic.name for topic in request.body.topics] == ["orders"]
    assert request.body.allow_auto_topic_creation is True
    assert request.body.include_topic_authorized_operations is False


def test_librdkafka_produce_v7_carries_a_valid_record_batch() -> None:
    request = serve_one(golden.RDKAFKA_PRODUCE_V7)
    body = request.body
    assert (request.api_version, body.acks, body.timeout_ms, body.transactional_id) == (7, -1, 30000, None)
    partition = body.topic_data[0].partition_data[0]
    assert (body.topic_data[0].name, partition.index) == ("orders", 0)
    header = validate_batch(partition.records)
    assert header.records_count == 1 and header.base_timestamp == 1700000000000
    assert not header.has_producer_id


def test_kafka_python_opens_with_api_versions_v4_which_is_served() -> None:
    request = serve_one(golden.KAFKA_PYTHON_API_VERSIONS_V4)
    assert (request.api_key, request.api_version, request.header.client_id) == (18, 4, "kp-golden")


def test_a_broker_serving_api_versions_up_to_v2_refuses_kafka_python_v4_with_its_header() -> None:
    header = refused_header(golden.KAFKA_PYTHON_API_VERSIONS_V4)
    assert (header.api_key, header.api_version, header.client_id) == (18, 4, "kp-golden")


def test_kafka_python_init_producer_id_is_idempotent_not_transactional() -> None:
    request = serve_one(golden.KAFKA_PYTHON_INIT_PRODUCER_ID_V1)
    assert request.body.transactional_id is None


def test_aiokafka_produce_v7_carries_a_valid_record_batch() -> None:
    request = serve_one(golden.AIOKAFKA_PRODUCE_V7)
    assert (request.body.acks, request.body.timeout_ms) == (1, 3000)
    batches = list(iter_batches(request.body.topic_data[0].partition_data[0].records))
    assert len(batches) == 1 and batches[0].records_count == 1


class OneConnectionBroker:
    """A listener that answers one client connection with this codec, recording each step."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(10)
        self.port = self.listener.getsockname()[1]
        self.steps: list[tuple[str, Any]] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> OneConnectionBroker:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.listener.close()
        self.thread.join(5)

    def _run(self) -> None:
        try:
            client, _ = self.listener.accept()
        except OSError:
            return
        with client:
            client.settimeout(5)
            self._converse(client)
        self.done.set()

    def _converse(self, client: socket.socket) -> None:
        conn = ServerConnection(versions=API_VERSIONS_UP_TO_V2)
        raw = FrameReader()
        while not self.done.is_set():
            try:
                data = client.recv(65536)
            except OSError:
                return
            if not data:
                return
            conn.receive_data(data)
            raw.receive_data(data)
            while (payload := raw.next_frame()) is not None:
                self.steps.append(("frame", payload))
                try:
                    request = conn.next_request()
                except UnsupportedVersionError as exc:
                    self.steps.append(("refused", exc.header))
                    client.sendall(conn.encode_unsupported_version(exc.header.correlation_id))
                    continue
                assert request is not None
                self.steps.append(("request", request))
                body = self._answer(request)
                header = request.header
                client.sendall(conn.encode_response(header.correlation_id, request.api_key, request.api_version, body))
                if request.api_key == ApiKey.METADATA:
                    return

    def _answer(self, request: Request) -> Any:
        if request.api_key == ApiKey.API_VERSIONS:
            return api_versions_response(API_VERSIONS_UP_TO_V2)
        if request.api_key == ApiKey.METADATA:
            broker = MetadataResponse.MetadataResponseBroker(node_id=0, host="127.0.0.1", port=self.port)
            return MetadataResponse(brokers=[broker], cluster_id="test", controller_id=0, topics=[])
        raise AssertionError(f"unexpected request {request.header}")


def test_live_librdkafka_handshake_is_understood_and_its_downgrade_fully_decoded() -> None:
    confluent_kafka = pytest.importorskip("confluent_kafka")
    with OneConnectionBroker() as broker:
        # librdkafka connects to a bootstrap broker on its own; polling just gives it time.
        producer = confluent_kafka.Producer(
            {
                "bootstrap.servers": f"127.0.0.1:{broker.port}",
                "client.id": "spate-protocol-test",
                "socket.timeout.ms": 2000,
                "api.version.request": True,
                "log_level": 0,
            }
        )
        deadline = time.monotonic() + 10
        while not broker.done.is_set() and time.monotonic() < deadline:
            producer.poll(0.02)
        del producer
    kinds = [kind for kind, _ in broker.steps]
    assert kinds[:2] == ["frame", "refused"], kinds

    first = broker.steps[1][1]
    assert first.api_key == ApiKey.API_VERSIONS and first.client_id == "spate-protocol-test"
    assert first.api_version > API_VERSIONS_UP_TO_V2[ApiKey.API_VERSIONS].max
    if first.api_version == 3:
        header, pos = decode_request_header(memoryview(broker.steps[0][1]))
        assert header.version == 2
        body = ApiVersionsRequest.SCHEMA.decode(broker.steps[0][1][pos:], 3)
        assert body.client_software_name == "confluent-kafka-python"

    requests = [value for kind, value in broker.steps if kind == "request"]
    assert requests, "the client never retried after the refusal"
    retry = requests[0]
    assert retry.api_key == ApiKey.API_VERSIONS
    assert retry.api_version < first.api_version and retry.api_version in API_VERSIONS_UP_TO_V2[ApiKey.API_VERSIONS]
    assert retry.header.client_id == "spate-protocol-test"
    assert any(request.api_key == ApiKey.METADATA for request in requests[1:])


# librdkafka 2.16 asking for all topics with Metadata v12: its int32 placeholder for the topic
# count stays four zero bytes, a compact null and three bytes more than Kafka's parser reads.
RDKAFKA_METADATA_V12_ALL_TOPICS = "0003000c00000003000772646b61666b61" "00" "00000000" "01" "00" "00"


def test_librdkafka_metadata_v12_for_all_topics_is_served_despite_its_three_extra_bytes() -> None:
    request = serve_one(RDKAFKA_METADATA_V12_ALL_TOPICS)
    assert (request.api_key, request.api_version) == (ApiKey.METADATA, 12)
    assert request.body.topics is None


def test_other_trailing_bytes_after_a_metadata_request_are_still_refused() -> None:
    conn = ServerConnection()
    conn.receive_data(framed(RDKAFKA_METADATA_V12_ALL_TOPICS + "00"))
    with pytest.raises(InvalidRequestError):
        conn.next_request()


# librdkafka 2.15 upserting SCRAM-SHA-256 credentials of "alice": the request ends with two empty
# tagged-field buffers, one more than the body has.
RDKAFKA_ALTER_USER_SCRAM_CREDENTIALS = (
    "0033000000000003000772646b61666b6100" "01" "02" "06616c696365" "01" "00002710" "0573616c74"
    "215ec02b91a4b59c6f59dd5fbe4ca649ece4fa8568cdb8ba36cf41426e8805522b" "00" "00" "00"
)


def test_librdkafka_alter_user_scram_credentials_is_served_despite_its_extra_tag_buffer() -> None:
    request = serve_one(RDKAFKA_ALTER_USER_SCRAM_CREDENTIALS)
    assert request.api_key == ApiKey.ALTER_USER_SCRAM_CREDENTIALS
    (upsertion,) = request.body.upsertions
    assert (upsertion.name, upsertion.iterations, upsertion.salt) == ("alice", 10000, b"salt")


def test_other_trailing_bytes_after_alter_user_scram_credentials_are_still_refused() -> None:
    conn = ServerConnection()
    conn.receive_data(framed(RDKAFKA_ALTER_USER_SCRAM_CREDENTIALS + "00"))
    with pytest.raises(InvalidRequestError):
        conn.next_request()
