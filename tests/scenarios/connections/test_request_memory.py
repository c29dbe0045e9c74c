"""queued.max.request.bytes caps the request bytes a real broker holds across connections.

Eight connections each announce a 60 MiB frame and send all of it but the last
byte, so the broker cannot finish (and free) any of them. With a 64 MiB pool
the broker reads two frames at most (the pool is not strict: a frame is taken
while any memory is left) and leaves the others in the clients' and the
kernel's buffers; its resident memory grows by what two frames cost, not eight.
Once idle expiry has closed those connections, the broker serves again; and
frames larger than the whole pool still get through when nothing else holds it.
"""

from __future__ import annotations

import struct
import threading
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer

from tests.scenarios.connections.raw_clients import answers_api_versions, connect
from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

MIB = 1024 * 1024
FRAME = 60 * MIB
CONNECTIONS = 8
POOL = 64 * MIB
# The pool lets one frame past it; a frame read in pieces may cost the allocator up to twice its size in
# resident memory (a growing buffer reallocated among others), so: twice the bytes counted, and a margin.
# Without the pool the eight frames take over 480 MiB.
RSS_BOUND = 2 * (POOL + FRAME) + 40 * MIB


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def send_all_but_the_last_byte(port: int, held: list, stop: threading.Event) -> None:
    sock = connect(port, timeout=1.0)
    held.append(sock)
    body = bytes(FRAME)
    view = memoryview(struct.pack(">i", FRAME) + body[:-1])
    while view and not stop.is_set():
        try:
            view = view[sock.send(view[: 4 * MIB]):]
        except TimeoutError:
            continue  # the broker stopped reading this connection: wait
        except OSError:
            return


def test_concurrent_large_frames_are_held_within_the_pool_and_idle_expiry_frees_it(tmp_path):
    broker = BrokerProcess(tmp_path / "broker", overrides={
        "queued.max.request.bytes": str(POOL), "connections.max.idle.ms": "2500",
    }).start()
    held: list = []
    stop = threading.Event()
    try:
        before = rss_bytes(broker.process.pid)
        senders = [threading.Thread(target=send_all_but_the_last_byte, args=(broker.port, held, stop), daemon=True)
                   for _ in range(CONNECTIONS)]
        for sender in senders:
            sender.start()
        peak, deadline = 0, time.monotonic() + 4.0
        while time.monotonic() < deadline:
            peak = max(peak, rss_bytes(broker.process.pid) - before)
            time.sleep(0.05)
        print(f"\nbroker RSS grew {peak / MIB:.0f} MiB for {CONNECTIONS} x {FRAME // MIB} MiB frames "
              f"(pool {POOL // MIB} MiB, bound {RSS_BOUND // MIB} MiB)")
        assert peak < RSS_BOUND
        # The pool is exhausted by frames that never complete: idle expiry closes their connections, two at a
        # time as each pair in turn takes the memory the last one freed.
        with connect(broker.port, timeout=30.0) as probe:
            assert answers_api_versions(probe), "the broker did not serve again after idle expiry"
    finally:
        stop.set()
        for sock in held:
            sock.close()
        broker.kill()


def test_a_frame_larger_than_the_whole_pool_still_gets_through(tmp_path):
    broker = BrokerProcess(tmp_path / "broker", overrides={"queued.max.request.bytes": "1000"}).start()
    try:
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
        topic = f"big-{uuid.uuid4().hex[:8]}"
        failures: list = []
        for index in range(10):
            producer.produce(topic, bytes(200_000), key=str(index).encode(),
                             on_delivery=lambda err, msg: err and failures.append(err))
        assert producer.flush(30) == 0 and failures == []
    finally:
        assert broker.stop() == 0, broker.log_tail()
