"""The log cleaner's metrics: how dirty the compacted logs are, per partition and at worst, and what passes did."""

from __future__ import annotations

from pathlib import Path

from broker_core.metrics.cleaner_metrics import CleanerCollector
from tests.broker.metrics.samples import registry_of, value
from tests.broker.storage.batch_factory import FakeClock
from tests.broker.storage.cleaner.cleaner_fixture import TP, append, cleaner_for, open_log

MAX_DIRTY = "kafka_log_logcleanermanager_max_dirty_percent"
DIRTY_BYTES = "kafka_log_logcleanermanager_dirty_bytes"


def test_dirtiness_falls_once_the_cleaner_ran(tmp_path: Path) -> None:
    clock = FakeClock()
    log = open_log(tmp_path / "orders-0", clock)
    for round_ in range(3):
        append(log, [(f"k{k}", f"v{round_}") for k in range(5)])
        log.local_log.roll()
    cleaner = cleaner_for(log, clock)
    collector = CleanerCollector(cleaner)
    labels = {"topic": TP.topic, "partition": str(TP.partition)}

    before = registry_of(collector)
    assert value(before, MAX_DIRTY) == 100.0  # nothing cleaned yet
    assert value(before, DIRTY_BYTES, **labels) > 0
    assert value(before, "kafka_log_logcleaner_passes_total") == 0

    assert cleaner.clean_once() is not None
    after = registry_of(collector)
    assert value(after, MAX_DIRTY) == 0.0
    assert value(after, DIRTY_BYTES, **labels) == 0
    assert value(after, "kafka_log_logcleaner_passes_total") == 1
    assert value(after, "kafka_log_logcleaner_records_kept_total") < value(after, "kafka_log_logcleaner_records_read_total")
    assert value(after, "kafka_log_logcleanermanager_uncleanable_partitions_count") == 0
