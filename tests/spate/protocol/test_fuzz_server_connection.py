"""Fuzzing: whatever bytes arrive, the codec answers with a request or its one error type.

Inputs are random bytes, and valid frames (from real clients and from the
declarations) with bytes flipped, inserted, deleted or truncated. The
connection must return a request, return None (incomplete), or raise
InvalidRequestError; nothing else, and always promptly.
"""

from __future__ import annotations

import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spate.protocol import (
    ApiKey,
    FrameTooLargeError,
    InvalidRequestError,
    ProtocolDecodeError,
    ServerConnection,
    encode_request,
)
from spate.protocol.messages import REQUESTS, RESPONSES
from spate.protocol.messages.fetch import FetchRequest
from spate.protocol.messages.join_group import JoinGroupRequest
from spate.protocol.messages.produce import ProduceRequest
from tests.spate.protocol import kafka_golden_frames as golden

FUZZ = settings(max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
MAX_REQUEST_SIZE = 1 << 20


def _payload(api_key: ApiKey, version: int, body: object) -> bytes:
    return encode_request(api_key, version, 1, "c", body)[4:]


VALID_PAYLOADS = [bytes.fromhex(value) for name, value in vars(golden).items() if name.isupper()] + [
    _payload(ApiKey.FETCH, 11,
             FetchRequest(topics=[FetchRequest.FetchTopic(topic="t", partitions=[FetchRequest.FetchPartition(0)])])),
    _payload(ApiKey.JOIN_GROUP, 5, JoinGroupRequest(protocols=[JoinGroupRequest.JoinGroupRequestProtocol("r", b"m")])),
    _payload(
        ApiKey.PRODUCE,
        3,
        ProduceRequest(
            topic_data=[ProduceRequest.TopicProduceData("t", [ProduceRequest.PartitionProduceData(0, b"x" * 80)])]
        ),
    ),
]


def drain(conn: ServerConnection) -> int:
    """Pull requests until the buffer is exhausted or the stream breaks; count outcomes."""
    outcomes = 0
    for _ in range(1000):
        try:
            request = conn.next_request()
        except FrameTooLargeError:
            return outcomes + 1  # the stream cannot be resynchronised; the server closes
        except InvalidRequestError:  # includes UnsupportedVersionError; the frame was consumed
            outcomes += 1
            continue
        if request is None:
            return outcomes
        outcomes += 1
    raise AssertionError("the connection kept producing outcomes from a finite input")


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes_yield_requests_or_invalid_request_errors(data: bytes) -> None:
    conn = ServerConnection(max_request_size=MAX_REQUEST_SIZE)
    conn.receive_data(data)
    assert drain(conn) >= 0


@st.composite
def mutated_frames(draw: st.DrawFn) -> bytes:
    payload = bytearray(draw(st.sampled_from(VALID_PAYLOADS)))
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "overwrite_int"]))
        position = draw(st.integers(0, max(len(payload) - 1, 0)))
        if action == "flip" and payload:
            payload[position] ^= 1 << draw(st.integers(0, 7))
        elif action == "insert":
            payload[position:position] = draw(st.binary(min_size=1, max_size=4))
        elif action == "delete" and payload:
            del payload[position]
        elif action == "truncate":
            del payload[position:]
        elif action == "overwrite_int" and len(payload) >= position + 4:
            # Lengths and counts are where decoders are most tempted to over-allocate.
            value = draw(st.sampled_from([-2, -1, 0x7FFF, 0x7FFFFFFF, -(2**31), 1 << 20]))
            payload[position : position + 4] = struct.pack(">i", value)
    return bytes(payload)


@FUZZ
@given(mutated_frames(), st.booleans())
def test_mutated_client_frames_yield_requests_or_invalid_request_errors(payload: bytes, chunked: bool) -> None:
    conn = ServerConnection(max_request_size=MAX_REQUEST_SIZE)
    data = struct.pack(">i", len(payload)) + payload
    outcomes = 0
    if chunked:
        for i in range(0, len(data), 7):
            conn.receive_data(data[i : i + 7])
            outcomes += drain(conn)
    else:
        conn.receive_data(data)
        outcomes += drain(conn)
    assert outcomes == 1, "one complete frame gives exactly one request or one error"


@FUZZ
@given(st.integers(min_value=MAX_REQUEST_SIZE + 1, max_value=2**31 - 1) | st.integers(min_value=-(2**31), max_value=-1))
def test_sizes_outside_the_limit_are_refused_before_any_body_arrives(size: int) -> None:
    conn = ServerConnection(max_request_size=MAX_REQUEST_SIZE)
    conn.receive_data(struct.pack(">i", size))
    try:
        conn.next_request()
    except FrameTooLargeError as exc:
        assert exc.size == size
    else:
        raise AssertionError("an oversized frame was not refused")
    assert conn.buffered == 4


ALL_SCHEMAS = [
    (schema, version)
    for table in (REQUESTS, RESPONSES)
    for schema in table.values()
    for version in range(schema.versions.min, schema.versions.max + 1)
]


@settings(max_examples=200, deadline=2000)
@given(st.sampled_from(ALL_SCHEMAS), st.binary(max_size=120))
def test_every_message_decoder_raises_only_protocol_decode_error(case: tuple, data: bytes) -> None:
    schema, version = case
    try:
        value = schema.decode(data, version)
    except ProtocolDecodeError:
        return
    # Whatever decodes must survive a round trip unchanged.
    assert schema.decode(schema.encode(value, version), version) == value
