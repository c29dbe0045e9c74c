"""What compaction costs: the cleaner's speed, and produce throughput while it cleans versus idle.

    .venv/bin/python -m tests.perf.compaction_bench [--dirty-mb 64] [--broker-dirty-mb 256] [--records 150000] [--rounds 5]

1. Cleaner throughput, in process: a compacted log of ``--dirty-mb`` MB of
   dirty segments (records of a 10-byte key and a 400-byte random value over
   20,000 keys, batches of 200, uncompressed and lz4) is cleaned in one pass
   with the broker's cleaner, unthrottled; MB/s of dirty log cleaned
   (planning and rewriting both read it), per second of wall time and per
   second of the cleaning thread's CPU time (the wall figure on a core of
   its own: on a loaded machine the wall figure measures the load).
2. Produce while cleaning, one broker: confluent-kafka produces ``--records``
   1 KB records (acks=1) to a topic while the cleaner is idle, then again to a
   new topic while the cleaner compacts ``--broker-dirty-mb`` MB of another
   topic (left to the ``spark`` planner while it is written, then handed to
   the broker's cleaner), then idle again; the ratio of the busy rate to the
   mean idle one; and, as a control, the same ratio for a produce just
   before the hand-over, with nothing to clean. It also prints how fast the
   broker's cleaner got through that topic while producers kept the broker
   busy.

Targets: the cleaner at >= 50 MB/s, produce during cleaning >= 0.8 of idle.
Prints a Markdown table of the medians of ``--rounds`` rounds.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

from broker_core.storage.cleaner.cleaner_checkpoint import CleanerCheckpoints
from broker_core.storage.cleaner.log_cleaner import CleanableLog, CleanerConfig, LogCleaner
from broker_core.storage.config import LogConfig
from broker_core.storage.files import TopicPartition
from broker_core.storage.local_log import LocalLog
from broker_core.storage.unified_log import UnifiedLog
from spate.records import Record, build_batch
from spate.records.compression import Compression
from tests.perf.test_broker_perf import produce
from tests.support.broker_process import BrokerProcess

SET = AlterConfigOpType.SET
TARGET_CLEANER_MB_S = 50.0
TARGET_PRODUCE_RATIO = 0.8
RECORD_SIZE = 1024
SETTLE_S = 3.0


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


def plain_copy_rate(directory: Path) -> float:
    """MB/s of reading the log's segments and writing them to another file, in 4 MiB pieces: what the cleaner's
    two reads and one write would cost with nothing to decide (the same run's measure of the machine)."""
    target = directory.parent / f"{directory.name}.copy"
    segments = sorted(directory.glob("*.log"))
    start, size = time.perf_counter(), 0
    for path in segments:  # as planning reads
        with open(path, "rb") as source:
            while source.read(4 << 20):
                pass
    with open(target, "wb") as out:
        for path in segments:  # as rewriting reads and writes
            with open(path, "rb") as source:
                while piece := source.read(4 << 20):
                    size += out.write(piece)
        out.flush()
        os.fsync(out.fileno())
    elapsed = time.perf_counter() - start
    target.unlink()
    return size / 1e6 / elapsed


def cleaner_throughput(directory: Path, dirty_mb: int, codec: Compression) -> tuple[float, float, float]:
    """MB/s of dirty log the cleaner gets through, in process and unthrottled: per second of wall time, per
    second of the cleaning thread's CPU time (what the wall figure would be on a core of its own), and the
    wall figure over ``plain_copy_rate`` of the same log just before."""
    log = UnifiedLog(
        LocalLog.open(directory, LogConfig(cleanup_policy="compact", segment_bytes=16 << 20), clock=wall_clock_ms),
        clock=wall_clock_ms, producer_id_expiration_ms=86_400_000,
    )
    rng = random.Random(1)
    while log.local_log.size_in_bytes < dirty_mb << 20:
        records = [Record(i, 1_000, b"key-%06d" % rng.randrange(20_000), rng.randbytes(400)) for i in range(200)]
        log.append_as_leader(build_batch(records, compression=codec), leader_epoch=0)
    log.local_log.roll()
    tp = TopicPartition(directory.name.rsplit("-", 1)[0], 0)
    cleaner = LogCleaner(
        CleanerConfig(), lambda: [CleanableLog(tp, log, log.log_end_offset)], CleanerCheckpoints([directory.parent]),
        run_on_owner=lambda fn: fn(), clock=wall_clock_ms,
    )
    plain = plain_copy_rate(directory)
    start, cpu_start = time.perf_counter(), time.thread_time()
    result = cleaner.clean_once()
    elapsed, cpu = time.perf_counter() - start, time.thread_time() - cpu_start
    if result is None:
        raise RuntimeError("the cleaner found nothing to clean")
    log.close()
    megabytes = result.stats.bytes_read / 1e6
    return megabytes / elapsed, megabytes / cpu, megabytes / elapsed / plain


def fill_dirty_topic(bootstrap: str, topic: str, megabytes: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 1_000_000,
                         "queue.buffering.max.kbytes": 1_048_576})
    rng = random.Random(2)
    payload = os.urandom(RECORD_SIZE)
    for i in range(megabytes * 1_000_000 // RECORD_SIZE):
        while True:
            try:
                producer.produce(topic, payload, key=b"key-%06d" % rng.randrange(20_000), partition=0)
                break
            except BufferError:
                producer.poll(0.001)
    if producer.flush(300):
        raise RuntimeError("the dirty topic was not written")


def checkpoint_of(log_dir: Path, topic: str) -> int:
    path = log_dir / "cleaner-offset-checkpoint"
    text = path.read_text() if path.exists() else ""
    found = re.search(rf"^{re.escape(topic)} 0 (\d+)$", text, re.MULTILINE)
    return int(found.group(1)) if found else 0


def produce_while_cleaning(data_dir: Path, dirty_mb: int, records: int, rounds: int) -> dict[str, float]:
    """Median figures of ``rounds`` rounds of idle, busy, idle produce (see the module docstring)."""
    broker = BrokerProcess(data_dir, overrides={"log.cleaner.backoff.ms": "200", "num.partitions": "3"}).start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for topic in ("bench-idle", "bench-busy"):
            admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)
        produce(broker.bootstrap, "bench-idle", records // 5)  # warm-up
        figures = [_round(broker, admin, f"bench-dirty-{r}", dirty_mb, records) for r in range(rounds)]
        return {name: statistics.median(f[name] for f in figures) for name in figures[0]}
    finally:
        broker.stop()


def _round(broker: BrokerProcess, admin: AdminClient, dirty: str, dirty_mb: int, records: int) -> dict[str, float]:
    bootstrap = broker.bootstrap
    configs = {"cleanup.policy": "compact", "spate.compaction.planner": "spark",
               "min.cleanable.dirty.ratio": "0.01", "segment.bytes": str(32 << 20)}
    admin.create_topics([NewTopic(dirty, 1, 1, config=configs)])[dirty].result(30)
    fill_dirty_topic(bootstrap, dirty, dirty_mb)
    time.sleep(SETTLE_S)  # the broker fsyncs what was just written: let it finish before measuring
    idle_s = produce(bootstrap, "bench-idle", records)
    control_s = produce(bootstrap, "bench-busy", records)  # as the busy phase, with nothing to clean
    # Roll the dirty topic's last segment into the cleanable range, then hand it to the broker's cleaner.
    handover = [ConfigEntry("spate.compaction.planner", "broker", incremental_operation=SET),
                ConfigEntry("segment.ms", "1", incremental_operation=SET)]
    resource = ConfigResource("topic", dirty, incremental_configs=handover)
    admin.incremental_alter_configs([resource])[resource].result(30)
    fill_dirty_topic(bootstrap, dirty, 1)
    handed_over = time.perf_counter()
    busy_s = produce(bootstrap, "bench-busy", records)
    busy_end = time.perf_counter()
    deadline = time.monotonic() + 600
    while checkpoint_of(broker.log_dir, dirty) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    cleaned_s = time.perf_counter() - handed_over
    if busy_end > handed_over + cleaned_s:
        print("warning: the cleaner finished before the busy produce did; raise --broker-dirty-mb")
    # Idle again, so that a change of load on the machine shows in both idle figures, not in the ratio.
    time.sleep(SETTLE_S)
    idle_s = (idle_s + produce(bootstrap, "bench-idle", records)) / 2
    megabytes = records * RECORD_SIZE / 1e6
    return {
        "idle MB/s": megabytes / idle_s,
        "busy MB/s": megabytes / busy_s,
        "ratio": idle_s / busy_s,
        "control ratio": idle_s / control_s,
        "busy / control": control_s / busy_s,
        "broker cleaner MB/s": dirty_mb * 1.048576 / cleaned_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dirty-mb", type=int, default=64)
    parser.add_argument("--broker-dirty-mb", type=int, default=256)
    parser.add_argument("--records", type=int, default=150_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="compaction-bench-", dir=Path(__file__).resolve().parent) as tmp:
        root = Path(tmp)
        rates = {}
        for codec in (Compression.NONE, Compression.LZ4):
            runs = [cleaner_throughput(root / f"{codec.name.lower()}{r}-0", args.dirty_mb, codec)
                    for r in range(args.rounds)]
            rates[codec] = tuple(statistics.median(run[i] for run in runs) for i in (0, 1, 2))
        broker = produce_while_cleaning(root / "broker", args.broker_dirty_mb, args.records, args.rounds)
    target = f">= {TARGET_CLEANER_MB_S:.0f} MB/s"
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("| measure | result | target |\n|---|---|---|")
    for codec, name in ((Compression.NONE, "uncompressed"), (Compression.LZ4, "lz4")):
        wall, cpu, versus_copy = rates[codec]
        print(f"| cleaner, {name} batches (in process), per second of wall time | {wall:.0f} MB/s | {target} |")
        print(f"| cleaner, {name} batches (in process), per second of its thread's CPU | {cpu:.0f} MB/s | {target} |")
        print(f"| cleaner, {name} batches / plain copy of the same log (two reads, one write) | {versus_copy:.2f} | |")
    print(f"| cleaner inside the broker, 1 KB records | {broker['broker cleaner MB/s']:.0f} MB/s | |")
    print(f"| produce, cleaner idle | {broker['idle MB/s']:.1f} MB/s | |")
    print(f"| produce, cleaner busy | {broker['busy MB/s']:.1f} MB/s | |")
    print(f"| produce busy / idle | {broker['ratio']:.2f} | >= {TARGET_PRODUCE_RATIO} |")
    print(f"| produce to the busy topic with nothing to clean / idle (the noise floor) | {broker['control ratio']:.2f} | |")
    print(f"| produce busy / the same with nothing to clean (the cleaner's cost) | {broker['busy / control']:.2f} | "
          f">= {TARGET_PRODUCE_RATIO} |")


if __name__ == "__main__":
    main()
