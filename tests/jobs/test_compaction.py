"""The Spark compaction job: plans computed with Spark from the dirty ranges the leaders report, applied by the
leaders; the log reads back as the latest value of each key with offsets unchanged, stale plans are made again,
records written meanwhile are kept, and ``spate topics describe`` shows the size drop."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer

from jobs.compaction import CompactionConfig, build_parser, compact, config_from
from spate.client import Admin
from spate.client.admin.clean_plans import CleanPlanClient, PlanOutcome, _Chunk
from spate.job_progress import PROGRESS_FILE_ENV, ProgressEvent, ProgressReader
from spate.structs import TopicPartition
from tests.scenarios.compaction.changelog import (
    FULL_SIZE,
    create_compacted_topic,
    read_all,
    scaled_timeout,
    write_changelog,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(scaled_timeout(400))]

REPO = Path(__file__).resolve().parents[2]
SPARK_PLANNED = {"spate.compaction.planner": "spark", "segment.bytes": "262144"}


def spate(*args: str, state_dir: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "SPATE_STATE_DIR": str(state_dir), "PYSPARK_PYTHON": sys.executable}
    return subprocess.run([sys.executable, "-m", "spate.cli.main", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


def size_of(bootstrap: str, topic: str) -> int:
    with CleanPlanClient(bootstrap) as plans:
        return plans.describe([TopicPartition(topic, 0)])[TopicPartition(topic, 0)].size_bytes


def latest_values(entries) -> dict[bytes, bytes | None]:
    return {key: value for _, key, value in sorted(entries)}


# --- arguments --------------------------------------------------------------------------------------


def test_topics_repeat_or_come_comma_separated() -> None:
    parser = build_parser()
    config = config_from(parser.parse_args(["--topic", "a,b", "--topic", "c", "--topic", "a",
                                            "--bootstrap-server", "h:1"]), parser)
    assert config.topics == ("a", "b", "c") and config.bootstrap_servers == "h:1"


def test_no_topic_means_every_due_topic_planned_by_spark() -> None:
    parser = build_parser()
    assert config_from(parser.parse_args([]), parser).topics == ()


@pytest.mark.parametrize("flag", ["--max-attempts", "--chunk-entries", "--apply-timeout"])
def test_a_count_or_time_that_is_not_positive_is_a_usage_error(flag: str) -> None:
    parser = build_parser()
    with pytest.raises(SystemExit) as exited:
        config_from(parser.parse_args([flag, "0"]), parser)
    assert exited.value.code == 2


# --- on a broker ------------------------------------------------------------------------------------


def test_a_changelog_compacted_by_the_spark_job_reads_back_as_the_latest_value_of_each_key(
    spark, jobs_broker, unique, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv(PROGRESS_FILE_ENV, str(tmp_path / "run.progress"))
    bootstrap, topic = jobs_broker.bootstrap, unique("changelog")
    create_compacted_topic(bootstrap, topic, **{**SPARK_PLANNED, "segment.bytes": "1048576"})
    records, keys = (1_000_000, 10_000) if FULL_SIZE else (200_000, 2_000)  # the size, or a fifth
    log = write_changelog(bootstrap, topic, records=records, keys=keys, delete_share=0.05)
    before = size_of(bootstrap, topic)

    [report] = compact(spark, CompactionConfig(bootstrap, (topic,), chunk_entries=500))

    assert report.outcome == "compacted", report
    end = report.clean_up_to
    assert end > records * 3 // 4
    assert report.keys == len(log.latest(below=end)) == keys
    assert report.records_before >= end and report.records_after == keys
    assert report.bytes_after < report.bytes_before / 10
    assert size_of(bootstrap, topic) == report.bytes_after < before
    read = read_all(bootstrap, topic)
    assert read == log.compacted(end)  # offsets unchanged, one record per key below the plan's end
    assert latest_values(read) == log.latest()
    assert {key: value for key, value in latest_values(read).items() if value is not None} == log.live()
    events = ProgressReader(tmp_path / "run.progress").new_events()
    assert events[0] == ProgressEvent("partitions compacted", 0, 1)
    assert events[-1] == ProgressEvent("partitions compacted", 1, 1)


def test_a_plan_made_stale_by_retention_is_refused_and_made_again(spark, jobs_broker, unique, monkeypatch) -> None:
    bootstrap, topic = jobs_broker.bootstrap, unique("stale")
    create_compacted_topic(bootstrap, topic, **SPARK_PLANNED)
    log = write_changelog(bootstrap, topic, records=20_000, keys=200)
    tp = TopicPartition(topic, 0)
    applying = CleanPlanClient.apply_to_replicas
    deleted_below: list[int] = []

    def retention_moves_first(self, states, entries, **options):
        if not deleted_below:
            deleted_below.append(options["dirty_end"] // 3)
            with Admin(bootstrap) as admin:
                admin.delete_records({tp: deleted_below[0]})
        return applying(self, states, entries, **options)

    monkeypatch.setattr(CleanPlanClient, "apply_to_replicas", retention_moves_first)
    [report] = compact(spark, CompactionConfig(bootstrap, (topic,)))

    assert report.outcome == "compacted" and report.attempts == 2, report
    expected = [entry for entry in log.compacted(report.clean_up_to) if entry[0] >= deleted_below[0]]
    assert read_all(bootstrap, topic) == expected


def test_the_job_gives_up_with_the_leaders_reason_after_its_attempts(spark, jobs_broker, unique, monkeypatch) -> None:
    bootstrap, topic = jobs_broker.bootstrap, unique("gives-up")
    create_compacted_topic(bootstrap, topic, **SPARK_PLANNED)
    write_changelog(bootstrap, topic, records=5_000, keys=50)
    applying = CleanPlanClient.apply_to_replicas

    def always_behind(self, states, entries, **options):
        return applying(self, states, entries, **{**options, "dirty_start": options["dirty_start"] + 1})

    monkeypatch.setattr(CleanPlanClient, "apply_to_replicas", always_behind)
    [report] = compact(spark, CompactionConfig(bootstrap, (topic,), max_attempts=2))
    assert report.failed and report.attempts == 2
    assert "the log is clean up to 0 now; the plan starts at 1" in report.outcome


def test_records_written_while_the_job_runs_are_kept(spark, jobs_broker, unique) -> None:
    bootstrap, topic = jobs_broker.bootstrap, unique("busy")
    create_compacted_topic(bootstrap, topic, **SPARK_PLANNED)
    log = write_changelog(bootstrap, topic, records=30_000, keys=300)
    written: list[tuple[int, bytes, bytes]] = []
    done = threading.Event()

    def keep_writing() -> None:
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": False})
        deadline = time.monotonic() + 120
        n = 0
        while not done.is_set() and n < 200_000 and time.monotonic() < deadline:
            key = f"key-{n % 300:05d}".encode()
            producer.produce(topic, key=key, value=f"late-{n}".encode(), partition=0,
                             on_delivery=lambda err, msg: written.append((msg.offset(), msg.key(), msg.value()))
                             if err is None else None)
            n += 1
            if n % 500 == 0:
                producer.poll(0)
                time.sleep(0.01)
        producer.flush(30)

    writer = threading.Thread(target=keep_writing, name="concurrent-producer")
    writer.start()
    try:
        time.sleep(0.5)
        [report] = compact(spark, CompactionConfig(bootstrap, (topic,)))
    finally:
        done.set()
        writer.join(60)
    assert report.outcome == "compacted", report
    read = read_all(bootstrap, topic)
    everything = sorted(log.entries + written)
    assert written and max(offset for offset, _, _ in written) >= report.clean_up_to, "the writer ran meanwhile"
    newer = [entry for entry in everything if entry[0] >= report.clean_up_to]
    assert [entry for entry in read if entry[0] >= report.clean_up_to] == newer
    assert latest_values(read) == latest_values(everything)


def test_a_topic_with_nothing_rolled_has_nothing_to_clean(spark, jobs_broker, unique) -> None:
    bootstrap, topic = jobs_broker.bootstrap, unique("quiet")
    create_compacted_topic(bootstrap, topic, **{"spate.compaction.planner": "spark"})
    write_changelog(bootstrap, topic, records=100, keys=10)
    [report] = compact(spark, CompactionConfig(bootstrap, (topic,)))
    assert report.outcome == "nothing to clean" and not report.failed


def test_spate_jobs_run_compaction_then_topics_describe_shows_the_size_drop(jobs_broker, unique, tmp_path) -> None:
    bootstrap, topic = jobs_broker.bootstrap, unique("newcomer")
    create_compacted_topic(bootstrap, topic, **SPARK_PLANNED)
    log = write_changelog(bootstrap, topic, records=20_000, keys=100)
    described = spate("topics", "describe", topic, "--bootstrap-server", bootstrap, state_dir=tmp_path)
    assert described.returncode == 0, described.stderr

    run = spate("jobs", "run", "compaction", "--topic", topic, "--bootstrap-server", bootstrap,
                "--master", "local[2]", state_dir=tmp_path / "state")
    assert run.returncode == 0, run.stderr[-3000:]
    [line] = [line for line in run.stdout.splitlines() if line.startswith(f"{topic}-0: compacted")]
    assert "keys 100" in line

    after = spate("topics", "describe", topic, "--bootstrap-server", bootstrap, state_dir=tmp_path)
    total = {out: int(next(x for x in out.stdout.splitlines() if x.startswith("Size on disk:")).split()[3])
             for out in (described, after)}
    assert total[after] < total[described] / 3  # what stays: the active segment and one record per key
    assert latest_values(read_all(bootstrap, topic)) == log.latest()
    listing = spate("jobs", "list", state_dir=tmp_path / "state")
    assert "succeeded" in next(x for x in listing.stdout.splitlines() if x.startswith("compaction "))


def test_without_topics_the_job_compacts_the_due_topics_planned_by_spark(spark, jobs_broker, unique) -> None:
    bootstrap = jobs_broker.bootstrap
    planned, plain = unique("planned"), unique("plain")
    create_compacted_topic(bootstrap, planned, **SPARK_PLANNED)
    create_compacted_topic(bootstrap, plain, **{"cleanup.policy": "delete", "segment.bytes": "262144"})
    for topic in (planned, plain):
        write_changelog(bootstrap, topic, records=5_000, keys=50)

    reports = {report.tp.topic: report for report in compact(spark, CompactionConfig(bootstrap))}

    assert reports[planned].outcome == "compacted"
    assert plain not in reports
    assert all(report.outcome != "nothing to clean" for report in reports.values())  # only due ones are taken


def test_a_plan_abandoned_half_sent_is_replaced_and_a_rerun_converges(spark, jobs_broker, unique) -> None:
    bootstrap, topic = jobs_broker.bootstrap, unique("abandoned")
    create_compacted_topic(bootstrap, topic, **SPARK_PLANNED)
    log = write_changelog(bootstrap, topic, records=20_000, keys=200)
    tp = TopicPartition(topic, 0)
    with CleanPlanClient(bootstrap) as plans:
        state = plans.describe([tp])[tp]
        # A job that died after its first chunk: the leader holds half a plan and applied nothing.
        chunk = _Chunk("dead-job", 0, False, 0, state.clean_end_offset, b"\x00" * 24 * 3)
        assert isinstance(plans._answer_of(state, plans._send_chunk(state, chunk, 0)), PlanOutcome)
        assert plans.describe([tp])[tp].first_dirty_offset == 0

    [first] = compact(spark, CompactionConfig(bootstrap, (topic,), chunk_entries=50))
    [again] = compact(spark, CompactionConfig(bootstrap, (topic,)))

    assert first.outcome == "compacted" and again.outcome == "nothing to clean"
    assert read_all(bootstrap, topic) == log.compacted(first.clean_up_to)


def test_a_job_killed_at_any_point_leaves_the_log_whole_and_a_rerun_converges(spark, jobs_broker, unique,
                                                                              tmp_path) -> None:
    bootstrap, topic = jobs_broker.bootstrap, unique("killed")
    create_compacted_topic(bootstrap, topic, **SPARK_PLANNED)
    log = write_changelog(bootstrap, topic, records=20_000, keys=100)
    env = {**os.environ, "SPATE_STATE_DIR": str(tmp_path / "state"), "PYSPARK_PYTHON": sys.executable}
    job = subprocess.Popen([sys.executable, "-m", "spate.cli.main", "jobs", "run", "compaction", "--topic", topic,
                            "--bootstrap-server", bootstrap, "--master", "local[1]", "--chunk-entries", "10"],
                           cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    time.sleep(random.uniform(8, 25))  # starting Spark, reading the range, or sending the plan
    os.killpg(job.pid, signal.SIGKILL)
    job.wait(30)
    time.sleep(2)  # a plan whose last chunk arrived is applied by the leader all the same

    tp = TopicPartition(topic, 0)
    with CleanPlanClient(bootstrap) as plans:
        clean_up_to = plans.describe([tp])[tp].first_dirty_offset
    read = read_all(bootstrap, topic)
    assert read == (log.entries if clean_up_to == 0 else log.compacted(clean_up_to))

    [rerun] = compact(spark, CompactionConfig(bootstrap, (topic,)))
    assert rerun.outcome in ("compacted", "nothing to clean")
    end = max(clean_up_to, rerun.clean_up_to)
    assert read_all(bootstrap, topic) == log.compacted(end)


def test_transactions_compact_as_in_the_broker_aborted_records_go_and_read_committed_reads_the_same(
    spark, jobs_broker, unique
) -> None:
    bootstrap, topic = jobs_broker.bootstrap, unique("txn")
    create_compacted_topic(bootstrap, topic, **{**SPARK_PLANNED, "segment.bytes": "16384"})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": unique("txn-id"), "linger.ms": 5})
    producer.init_transactions(30)
    for round_ in range(30):
        aborting = round_ % 3 == 2
        producer.begin_transaction()
        for k in range(20):
            key = f"key-{100 + k if aborting else k % 10}".encode()
            producer.produce(topic, key=key, value=f"{'abort' if aborting else 'ok'}-{round_}-{k}".encode() + b"." * 60,
                             partition=0)
        (producer.abort_transaction if aborting else producer.commit_transaction)(30)
    committed_before = read_all(bootstrap, topic, isolation="read_committed")
    for _ in range(3):  # roll the segment holding the last transactions into the cleanable range
        producer.begin_transaction()
        for k in range(40):
            producer.produce(topic, key=f"tail-{k}".encode(), value=b"t" * 100, partition=0)
        producer.commit_transaction(30)

    [report] = compact(spark, CompactionConfig(bootstrap, (topic,)))

    assert report.outcome == "compacted" and report.keys >= 10
    committed_after = read_all(bootstrap, topic, isolation="read_committed")
    assert latest_values(e for e in committed_after if not e[1].startswith(b"tail-")) == latest_values(committed_before)
    cleaned = [e for e in read_all(bootstrap, topic) if e[0] < report.clean_up_to]
    assert not [e for e in cleaned if e[2].startswith(b"abort-")], "aborted records remain in the cleaned range"
    assert len([e for e in cleaned if e[1].startswith(b"key-")]) <= 10
