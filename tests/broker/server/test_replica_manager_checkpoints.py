"""The periodic high-watermark checkpoint: entries taken on the event loop, files written on another thread."""

from __future__ import annotations

import threading
from pathlib import Path

from broker_core.storage.files import REPLICATION_OFFSET_CHECKPOINT
from tests.broker.server.replication_harness import LeaderHarness, records


def test_the_writer_records_the_high_watermarks_of_the_moment_it_was_taken(tmp_path: Path) -> None:
    h = LeaderHarness(tmp_path)
    partition = h.lead(isr=(1,), replicas=(1,))
    partition.append_records(records(3))
    assert partition.high_watermark == 3
    write = h.replicas.high_watermarks_writer()
    partition.append_records(records(2))  # moves on while the files are written elsewhere
    thread = threading.Thread(target=write)
    thread.start()
    thread.join(timeout=10)
    assert (tmp_path / REPLICATION_OFFSET_CHECKPOINT).read_text() == "0\n1\nt 0 3\n"
    h.replicas.checkpoint_high_watermarks()
    assert (tmp_path / REPLICATION_OFFSET_CHECKPOINT).read_text() == "0\n1\nt 0 5\n"
