"""Bad input over raw TCP: the broker answers with an error code or closes the connection, and keeps serving.

Frames are built by the small encoders below (int32 size + request header v1 +
body), independent of the broker's own codec, so these tests are separate
evidence of what goes over the wire. After each kind of bad input, a fresh
confluent-kafka producer and consumer must work and the log must read back
exactly what was acknowledged. The fuzz loop is seeded; the seed is printed,
and ``SPATE_FUZZ_SEED`` replays a run.
"""

from __future__ import annotations

import os
import random
import socket
import struct
import time
import uuid
from dataclasses import dataclass

import pytest
from crc32c import crc32c

from tests.scenarios.compat.clients import ConfluentDriver, OutgoingRecord
from tests.scenarios.compat.sample_records import recent_base_ms
from tests.support.broker_process import BrokerProcess
from tests.support.broker_under_test import BrokerFactory, require_spate

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

PRODUCE, FETCH, LIST_OFFSETS, METADATA, API_VERSIONS, CREATE_TOPICS = 0, 1, 2, 3, 18, 19
NONE, CORRUPT_MESSAGE, UNSUPPORTED_VERSION, INVALID_RECORD = 0, 2, 35, 87
BATCH_REJECTIONS = (CORRUPT_MESSAGE, INVALID_RECORD)
REPLY_TIMEOUT = 5.0
TANSU_ACCEPTS_CORRUPT_BATCHES = (
    "it appends malformed batches (wrong CRC, magic or record count) and keeps their base offsets"
)
FUZZ_FRAMES = 3000
FUZZ_DEADLINE_S = 60.0


# --- wire encoders ----------------------------------------------------------------------------


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def string(s: str | None) -> bytes:
    if s is None:
        return i16(-1)
    raw = s.encode()
    return i16(len(raw)) + raw


def nbytes(b: bytes | None) -> bytes:
    return i32(-1) if b is None else i32(len(b)) + b


def array(items: list[bytes]) -> bytes:
    return i32(len(items)) + b"".join(items)


def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def varint(n: int) -> bytes:
    """Zig-zag signed varint (also used for varlong: Python ints do not overflow)."""
    return uvarint((n << 1) ^ (n >> 63))


def varbytes(b: bytes | None) -> bytes:
    return varint(-1) if b is None else varint(len(b)) + b


def frame(
    api_key: int, api_version: int, correlation_id: int, body: bytes, client_id: str | None = "raw-test"
) -> bytes:
    """int32 size, then request header v1 (key, version, correlation id, client id), then the body."""
    payload = i16(api_key) + i16(api_version) + i32(correlation_id) + string(client_id) + body
    return i32(len(payload)) + payload


def record(offset_delta: int, key: bytes | None, value: bytes | None) -> bytes:
    body = i8(0) + varint(0) + varint(offset_delta) + varbytes(key) + varbytes(value) + varint(0)
    return varint(len(body)) + body


@dataclass(frozen=True)
class BatchSpec:
    """A RecordBatch v2; the fields that tests corrupt are parameters."""

    values: tuple[bytes, ...]
    magic: int = 2
    crc_delta: int = 0  # added to the correct CRC
    count_delta: int = 0  # added to the true record count
    timestamp_ms: int = 0

    def encode(self) -> bytes:
        records = b"".join(record(i, f"k{i}".encode(), v) for i, v in enumerate(self.values))
        after_crc = (
            i16(0)  # attributes: no compression, CreateTime
            + i32(len(self.values) - 1)
            + i64(self.timestamp_ms)
            + i64(self.timestamp_ms)
            + i64(-1) + i16(-1) + i32(-1)  # no producer id, epoch, sequence
            + i32(len(self.values) + self.count_delta)
            + records
        )  # fmt: skip
        crc = (crc32c(after_crc) + self.crc_delta) & 0xFFFFFFFF
        after_length = i32(-1) + i8(self.magic) + struct.pack(">I", crc) + after_crc
        return i64(0) + i32(len(after_length)) + after_length


def produce_v3(correlation_id: int, topic: str, partition: int, records: bytes, acks: int = -1) -> bytes:
    body = string(None) + i16(acks) + i32(5000) + array([string(topic) + array([i32(partition) + nbytes(records)])])
    return frame(PRODUCE, 3, correlation_id, body)


def api_versions(correlation_id: int, version: int) -> bytes:
    if version < 3:
        return frame(API_VERSIONS, version, correlation_id, b"")
    # v3+ is flexible: header tagged fields, then compact client software name and version, then tagged fields.
    return frame(API_VERSIONS, version, correlation_id, b"\x00" + b"\x05raw0" + b"\x020" + b"\x00")


# --- wire decoders ----------------------------------------------------------------------------


class Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, fmt: str) -> int:
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        size = self.take(">h")
        raw = self.data[self.pos : self.pos + size]
        self.pos += size
        return raw.decode()

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos


@dataclass(frozen=True)
class ApiVersionsV0:
    error_code: int
    ranges: dict[int, tuple[int, int]]
    trailing_bytes: int


def parse_api_versions_v0(body: bytes) -> ApiVersionsV0:
    r = Reader(body)
    try:
        error = r.take(">h")
        ranges = {}
        for _ in range(r.take(">i")):
            key, low, high = r.take(">h"), r.take(">h"), r.take(">h")
            ranges[key] = (low, high)
    except struct.error:
        raise AssertionError(f"not an ApiVersions v0 body: {body[:32].hex()}...") from None
    return ApiVersionsV0(error, ranges, r.remaining)


def parse_produce_v3_errors(body: bytes) -> dict[tuple[str, int], tuple[int, int]]:
    """(topic, partition) -> (error code, base offset)."""
    r = Reader(body)
    out = {}
    for _ in range(r.take(">i")):
        topic = r.string()
        for _ in range(r.take(">i")):
            partition, error, base_offset, _append_time = r.take(">i"), r.take(">h"), r.take(">q"), r.take(">q")
            out[(topic, partition)] = (error, base_offset)
    return out


# --- raw connections --------------------------------------------------------------------------


class RawConnection:
    def __init__(self, broker: BrokerProcess, timeout: float = REPLY_TIMEOUT) -> None:
        self.sock = socket.create_connection(("127.0.0.1", broker.port), timeout=timeout)
        self.buffer = b""

    def __enter__(self) -> RawConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _fill(self, size: int) -> bool:
        while len(self.buffer) < size:
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                return False
            if not chunk:
                return False
            self.buffer += chunk
        return True

    def read_response(self) -> tuple[int, bytes] | None:
        """(correlation id, body) of the next response, or None if the broker closed the connection."""
        if not self._fill(4):
            return None
        (size,) = struct.unpack(">i", self.buffer[:4])
        if not self._fill(4 + size):
            return None
        payload, self.buffer = self.buffer[4 : 4 + size], self.buffer[4 + size :]
        return struct.unpack(">i", payload[:4])[0], payload[4:]

    def closed_by_broker(self) -> bool:
        """Whether the broker closes the connection (discarding anything it sends first) before the timeout."""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                return True
            except TimeoutError:
                return False
            if not chunk:
                return True


def round_trip(broker: BrokerProcess, request: bytes) -> tuple[int, bytes] | None:
    with RawConnection(broker) as conn:
        conn.send(request)
        return conn.read_response()


def answered_or_closed(broker: BrokerProcess, request: bytes, correlation_id: int) -> str:
    """Send one request; the broker must reply to this correlation id or close, promptly."""
    with RawConnection(broker) as conn:
        conn.send(request)
        try:
            response = conn.read_response()
        except TimeoutError:
            raise AssertionError(f"no reply and no close within {REPLY_TIMEOUT}s") from None
    if response is None:
        return "closed"
    if response[0] != correlation_id:
        raise AssertionError(f"reply carries correlation id {response[0]}, expected {correlation_id}")
    return "answered"


# --- health check -----------------------------------------------------------------------------


@dataclass
class HealthTopic:
    """A topic whose acknowledged values are known; the broker is healthy while fresh clients can extend and read it."""

    name: str
    values: list[bytes]

    @classmethod
    def create(cls, broker: BrokerProcess) -> HealthTopic:
        topic = cls(f"health-{uuid.uuid4().hex[:8]}", [])
        ConfluentDriver(broker.bootstrap).create_topic(topic.name, 1)
        return topic

    def check(self, broker: BrokerProcess) -> None:
        broker.check_alive()
        client = ConfluentDriver(broker.bootstrap, timeout_s=15)
        value = f"alive {uuid.uuid4().hex}".encode()
        (placement,) = client.produce(self.name, [OutgoingRecord(b"h", value, (), recent_base_ms())], partition=0)
        self.values.append(value)
        assert placement.offset == len(self.values) - 1, "offsets of the health topic moved unexpectedly"
        read = client.consume(self.name, {0: 0}, {0: len(self.values)})
        assert [r.value for r in read] == self.values


@pytest.fixture
def health(broker: BrokerProcess) -> HealthTopic:
    return HealthTopic.create(broker)


# --- version negotiation ----------------------------------------------------------------------


def test_api_versions_v0_lists_the_core_apis(broker: BrokerProcess) -> None:
    response = round_trip(broker, api_versions(7, 0))

    assert response is not None, "the broker closed instead of answering"
    correlation, body = response
    reply = parse_api_versions_v0(body)
    assert correlation == 7 and reply.error_code == NONE
    for key in (PRODUCE, FETCH, LIST_OFFSETS, METADATA, API_VERSIONS):
        assert key in reply.ranges, f"API {key} not advertised"
    assert reply.ranges[API_VERSIONS][0] == 0


def test_api_versions_above_supported_gets_v0_reply_with_unsupported_version(
    broker: BrokerProcess, broker_kind, health
) -> None:
    require_spate(broker_kind, "it answers ApiVersions v99 in the flexible v3 format instead of v0")
    response = round_trip(broker, api_versions(99, 99))

    assert response is not None, "the broker closed instead of answering"
    correlation, body = response
    reply = parse_api_versions_v0(body)
    assert (correlation, reply.error_code) == (99, UNSUPPORTED_VERSION)
    assert reply.trailing_bytes == 0, "the reply is not in the v0 format"
    assert API_VERSIONS in reply.ranges and reply.ranges[API_VERSIONS][0] == 0
    assert PRODUCE in reply.ranges and METADATA in reply.ranges
    health.check(broker)


@pytest.mark.parametrize("api_key", [METADATA, PRODUCE, FETCH])
def test_unsupported_version_of_known_api_is_answered_or_closed(broker: BrokerProcess, health, api_key: int) -> None:
    answered_or_closed(broker, frame(api_key, 99, 5, b"\x00" * 16), 5)
    health.check(broker)


@pytest.mark.parametrize("api_key", [999, 32767, -1])
def test_unknown_api_key_is_answered_or_closed(broker: BrokerProcess, health, api_key: int) -> None:
    answered_or_closed(broker, frame(api_key, 0, 6, b""), 6)
    health.check(broker)


# --- broken frames ----------------------------------------------------------------------------


def test_random_bytes_do_not_hurt_the_broker(broker: BrokerProcess, health) -> None:
    rng = random.Random(1)
    for _ in range(20):
        with RawConnection(broker) as conn:
            conn.send(rng.randbytes(rng.randint(1, 512)))
    health.check(broker)


@pytest.mark.parametrize("cut", [1, 3, 4, 10, 30])
def test_truncated_frame_then_close_does_not_hurt_the_broker(broker: BrokerProcess, health, cut: int) -> None:
    whole = api_versions(1, 0) + produce_v3(2, health.name, 0, BatchSpec((b"never",)).encode())
    with RawConnection(broker) as conn:
        conn.send(whole[: len(whole) - cut])
    health.check(broker)


@pytest.mark.parametrize(
    "api_key, version", [(PRODUCE, 3), (FETCH, 4), (LIST_OFFSETS, 1), (METADATA, 4), (CREATE_TOPICS, 2)]
)
def test_valid_header_with_garbage_body_is_answered_or_closed(
    broker: BrokerProcess, health, api_key: int, version: int
) -> None:
    rng = random.Random(api_key)
    for size in (0, 1, 7, 64):
        answered_or_closed(broker, frame(api_key, version, 11, rng.randbytes(size)), 11)
    health.check(broker)


@pytest.mark.parametrize("declared", [0x7FFFFFFF, 200 * 1024 * 1024, -1, -0x80000000])
def test_absurd_declared_size_closes_the_connection_without_waiting_for_the_body(
    broker: BrokerProcess, broker_kind, health, declared: int
) -> None:
    if declared > 0:
        require_spate(broker_kind, "it waits for the body of a frame of any declared size instead of closing")
    with RawConnection(broker) as conn:
        conn.send(i32(declared) + b"\x00\x12\x00\x00\x00\x00\x00\x01")
        assert conn.closed_by_broker()
    health.check(broker)


def test_frame_above_socket_request_max_bytes_is_closed(broker_factory: BrokerFactory) -> None:
    limited = broker_factory({"socket.request.max.bytes": str(1024 * 1024)})
    health = HealthTopic.create(limited)
    with RawConnection(limited) as conn:
        conn.send(i32(2 * 1024 * 1024) + b"\x00\x12\x00\x00\x00\x00\x00\x01")
        assert conn.closed_by_broker()
    health.check(limited)


# --- corrupt record batches -------------------------------------------------------------------


def produce_errors(broker: BrokerProcess, topic: str, batch: bytes) -> tuple[int, int]:
    response = round_trip(broker, produce_v3(21, topic, 0, batch))
    assert response is not None, "the broker closed instead of answering the produce request"
    correlation, body = response
    assert correlation == 21
    return parse_produce_v3_errors(body)[(topic, 0)]


def test_raw_produce_of_a_valid_batch_is_appended(broker: BrokerProcess, health) -> None:
    values = (b"raw one", b"raw two")
    error, base_offset = produce_errors(broker, health.name, BatchSpec(values, timestamp_ms=recent_base_ms()).encode())

    assert (error, base_offset) == (NONE, len(health.values))
    health.values += values
    health.check(broker)


@pytest.mark.parametrize("crc_delta", [1, 0x80000000])
def test_batch_with_wrong_crc_is_corrupt_message_and_not_appended(
    broker: BrokerProcess, broker_kind, health, crc_delta: int
) -> None:
    require_spate(broker_kind, TANSU_ACCEPTS_CORRUPT_BATCHES)
    batch = BatchSpec((b"bad crc",), crc_delta=crc_delta, timestamp_ms=recent_base_ms()).encode()

    assert produce_errors(broker, health.name, batch)[0] == CORRUPT_MESSAGE
    health.check(broker)


@pytest.mark.parametrize("magic", [0, 1, 3, -1])
def test_batch_with_wrong_magic_is_rejected_and_not_appended(
    broker: BrokerProcess, broker_kind, health, magic: int
) -> None:
    require_spate(broker_kind, TANSU_ACCEPTS_CORRUPT_BATCHES)
    batch = BatchSpec((b"bad magic",), magic=magic, timestamp_ms=recent_base_ms()).encode()

    assert produce_errors(broker, health.name, batch)[0] in BATCH_REJECTIONS
    health.check(broker)


@pytest.mark.parametrize("count_delta", [1, 5, -1])
def test_batch_whose_record_count_disagrees_with_its_records_is_rejected(
    broker: BrokerProcess, broker_kind: str, health, count_delta: int
) -> None:
    require_spate(broker_kind, TANSU_ACCEPTS_CORRUPT_BATCHES)
    # The CRC is right; only decoding the records shows the batch is malformed.
    batch = BatchSpec((b"one", b"two"), count_delta=count_delta, timestamp_ms=recent_base_ms()).encode()

    assert produce_errors(broker, health.name, batch)[0] in BATCH_REJECTIONS
    health.check(broker)


def test_batch_cut_short_is_rejected(broker: BrokerProcess, broker_kind: str, health) -> None:
    require_spate(broker_kind, "it closes the connection instead of answering with an error code")
    batch = BatchSpec((b"cut short", b"x" * 50), timestamp_ms=recent_base_ms()).encode()

    assert produce_errors(broker, health.name, batch[:-20])[0] in BATCH_REJECTIONS
    health.check(broker)


# --- seeded fuzz loop -------------------------------------------------------------------------


def fuzz_seed() -> int:
    return int(os.environ.get("SPATE_FUZZ_SEED", "0")) or random.SystemRandom().randrange(1, 2**31)


def announce_seed(request: pytest.FixtureRequest, seed: int) -> None:
    """Show the seed on the terminal even while output is captured: a later failure (a hung shutdown) needs it."""
    line = f"fuzz seed {seed} (replay with SPATE_FUZZ_SEED={seed})"
    print(line)
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(line)


def corpus(topic: str) -> list[bytes]:
    """Well-formed requests that the fuzz loop mutates."""
    batch = BatchSpec((b"fuzz a", b"fuzz b"), timestamp_ms=recent_base_ms()).encode()
    metadata_v4 = array([string(topic)]) + i8(0)
    fetch_v4 = (
        i32(-1)
        + i32(100)
        + i32(1)
        + i32(1 << 20)
        + i8(0)
        + array([string(topic) + array([i32(0) + i64(0) + i32(1 << 20)])])
    )
    list_offsets_v1 = i32(-1) + array([string(topic) + array([i32(0) + i64(-2)])])
    return [
        api_versions(1, 0),
        api_versions(2, 2),
        api_versions(3, 3),
        frame(METADATA, 4, 4, metadata_v4),
        frame(METADATA, 0, 5, array([string(topic)])),
        produce_v3(6, topic, 0, batch),
        frame(FETCH, 4, 7, fetch_v4),
        frame(LIST_OFFSETS, 1, 8, list_offsets_v1),
    ]


def mutate(rng: random.Random, seeds: list[bytes]) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:  # noise, whose first four bytes are read as a size
        return rng.randbytes(rng.randint(1, 96))
    if kind == 1:  # a plausible header for any API and version, then noise
        return frame(rng.randint(-2, 80), rng.randint(-2, 20), rng.randint(0, 1000), rng.randbytes(rng.randint(0, 200)))
    data = bytearray(rng.choice(seeds))
    if kind == 2:  # flip bytes, the size field included
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif kind == 3:  # cut short
        del data[rng.randrange(1, len(data)) :]
    elif kind == 4:  # body shorter or longer than it says, size kept consistent
        if rng.random() < 0.5:
            del data[rng.randrange(8, len(data)) :]
        else:
            data += rng.randbytes(rng.randint(1, 64))
        data[:4] = i32(len(data) - 4)
    else:  # a valid frame followed by garbage on the same connection
        data += rng.randbytes(rng.randint(1, 64))
    return bytes(data)


def send_and_drain(broker: BrokerProcess, data: bytes) -> None:
    """Send, half-close, and read whatever comes back until the broker closes or a short wait ends."""
    with socket.create_connection(("127.0.0.1", broker.port), timeout=REPLY_TIMEOUT) as sock:
        sock.settimeout(0.5)
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):
                pass
        except OSError:  # timed out, reset, or already closed by the broker: all acceptable here
            pass


@dataclass(frozen=True)
class FuzzRun:
    seed: int
    target: str  # the topic that the corpus's produce, fetch and metadata requests name
    frames_sent: int
    failure: str | None  # how the broker stopped answering, if it did


@pytest.fixture(scope="module")
def fuzz_run(broker: BrokerProcess, request: pytest.FixtureRequest) -> FuzzRun:
    """Send FUZZ_FRAMES mutated frames (within FUZZ_DEADLINE_S), checking every 250 that the broker still answers."""
    seed = fuzz_seed()
    announce_seed(request, seed)
    rng = random.Random(seed)
    target = f"fuzz-{uuid.uuid4().hex[:8]}"
    ConfluentDriver(broker.bootstrap).create_topic(target, 1)
    seeds = corpus(target)
    deadline = time.monotonic() + FUZZ_DEADLINE_S
    recent: list[bytes] = []
    sent = 0
    while sent < FUZZ_FRAMES and time.monotonic() < deadline:
        data = mutate(rng, seeds)
        recent = (recent + [data])[-5:]
        send_and_drain(broker, data)
        sent += 1
        if sent % 250 == 0:
            try:
                response = round_trip(broker, api_versions(sent, 0))
            except OSError as exc:
                response, detail = None, repr(exc)
            else:
                detail = "connection closed" if response is None else f"correlation id {response[0]}"
            if response is None or response[0] != sent:
                failure = f"after frame {sent}: {detail}; last frames: {[d.hex() for d in recent]}"
                return FuzzRun(seed, target, sent, failure)
    print(f"fuzz seed {seed}: {sent} frames sent")
    return FuzzRun(seed, target, sent, None)


def test_broker_keeps_answering_through_seeded_fuzz_loop(broker: BrokerProcess, fuzz_run: FuzzRun, health) -> None:
    assert fuzz_run.failure is None, f"seed {fuzz_run.seed}: broker stopped answering {fuzz_run.failure}"
    health.check(broker)


def test_log_reads_back_cleanly_after_seeded_fuzz_loop(
    broker: BrokerProcess, broker_kind: str, fuzz_run: FuzzRun
) -> None:
    require_spate(broker_kind, TANSU_ACCEPTS_CORRUPT_BATCHES)
    client = ConfluentDriver(broker.bootstrap, timeout_s=15)

    # Fuzzed produce requests may have appended valid batches to the target; it must still read back cleanly.
    (last,) = client.produce(fuzz_run.target, [OutgoingRecord(b"h", b"after fuzz", (), recent_base_ms())], partition=0)
    read = client.consume(fuzz_run.target, {0: 0}, {0: last.offset + 1})

    assert [r.offset for r in read] == list(range(last.offset + 1)), f"seed {fuzz_run.seed}: offsets are not contiguous"
    assert read[-1].value == b"after fuzz"
