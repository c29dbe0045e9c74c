"""The broker's scheduled flushes (log.flush.interval.ms, rolled segments) fsync off the event loop."""

from __future__ import annotations

import threading
import time

from broker_core.server.embedded import EmbeddedBroker
from broker_core.storage import log_flusher
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.create_topics import CreateTopicsRequest
from spate.protocol.messages.produce import ProduceRequest
from spate.records import Record, build_batch
from tests.support.raw_client import RawClient


def test_scheduled_flush_fsyncs_run_on_a_worker_thread_not_the_event_loop(tmp_path, monkeypatch) -> None:
    synced_on: list[str] = []
    real = log_flusher.fsync_file

    def recording(path):
        synced_on.append(threading.current_thread().name)
        return real(path)

    monkeypatch.setattr(log_flusher, "fsync_file", recording)
    with EmbeddedBroker(tmp_path, {"log.flush.interval.ms": "100", "log.segment.bytes": "1024"}) as broker:
        raw = RawClient(broker.bootstrap_servers, timeout=10)
        try:
            topic = CreateTopicsRequest.CreatableTopic(name="flushed", num_partitions=1, replication_factor=1,
                                                       assignments=[], configs=[])
            assert raw.call(ApiKey.CREATE_TOPICS, 4, CreateTopicsRequest(topics=[topic], timeout_ms=5000)
                            ).topics[0].error_code == ErrorCode.NONE
            for i in range(5):  # ~600 B each: the 1 KB segments roll
                batch = build_batch([Record(offset=0, timestamp=1_700_000_000_000, key=None, value=b"x" * 500)])
                body = ProduceRequest(acks=1, timeout_ms=5000, topic_data=[ProduceRequest.TopicProduceData(
                    name="flushed", partition_data=[ProduceRequest.PartitionProduceData(index=0, records=batch)])])
                assert raw.call(ApiKey.PRODUCE, 7, body).responses[0].partition_responses[0].error_code == 0
            deadline = time.monotonic() + 10
            while not synced_on and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            raw.close()
    assert synced_on, "no scheduled flush ran"
    assert "spate-embedded-broker" not in synced_on  # the event loop's thread
