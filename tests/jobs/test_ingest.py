"""``spate jobs run ingest``: a topic into a Delta table, as a newcomer runs it.

The job runs through the ``spate`` command and spark-submit, as it does in
production; the table is read back with ``deltalake`` alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable

from jobs.ingest import build_parser, config_from, default_checkpoint, parse_interval_ms
from tests.spark.kafka_data import create_topic, produce

REPO = Path(__file__).resolve().parents[2]
PARTITIONS = 2


def spate(*args: str, state_dir: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "SPATE_STATE_DIR": str(state_dir), "PYSPARK_PYTHON": sys.executable}
    return subprocess.run([sys.executable, "-m", "spate.cli.main", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_a_topic_ingested_with_spate_jobs_run_reads_back_exactly(jobs_broker, unique, tmp_path):
    topic = unique("events")
    create_topic(jobs_broker.bootstrap, topic, PARTITIONS)
    events = [{"page": f"/p{n % 4}", "ms": n} for n in range(300)]
    produce(jobs_broker.bootstrap, topic, [
        {"key": f"user-{n % 7}".encode(), "value": json.dumps(e).encode(), "partition": n % PARTITIONS}
        for n, e in enumerate(events)
    ])
    table = tmp_path / "events"
    result = spate("jobs", "run", "ingest", "--topic", topic, "--table", str(table), "--bootstrap-server",
                   jobs_broker.bootstrap, "--available-now", "--master", "local[2]", state_dir=tmp_path / "state")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "spate jobs: ingest-" in result.stderr and "succeeded" in result.stderr

    rows = DeltaTable(str(table)).to_pyarrow_table().to_pylist()
    assert len(rows) == 300
    assert sorted((r["partition"], r["offset"]) for r in rows) == sorted(
        (p, o) for p in range(PARTITIONS) for o in range(150))
    assert sorted(json.loads(r["value"])["ms"] for r in rows) == list(range(300))
    assert {r["topic"] for r in rows} == {topic}
    assert (table / "_spate_ingest_checkpoint" / "commits").is_dir()

    listing = spate("jobs", "list", state_dir=tmp_path / "state")
    ingest_line = next(line for line in listing.stdout.splitlines() if line.startswith("ingest "))
    assert "succeeded" in ingest_line


def test_json_values_are_decoded_into_columns(jobs_broker, unique, tmp_path):
    topic = unique("views")
    create_topic(jobs_broker.bootstrap, topic, 1)
    produce(jobs_broker.bootstrap, topic, [
        {"key": b"k", "value": json.dumps({"page": f"/p{n}", "day": "2024-05-0%d" % (1 + n % 2)}).encode(),
         "partition": 0} for n in range(20)
    ])
    table = tmp_path / "views"
    result = spate("jobs", "run", "ingest", "--master", "local[2]", "--topic", topic, "--table", str(table),
                   "--bootstrap-server", jobs_broker.bootstrap, "--available-now",
                   "--json-schema", "page STRING, day STRING", "--partition-by", "day", state_dir=tmp_path / "state")
    assert result.returncode == 0, result.stderr[-3000:]
    delta = DeltaTable(str(table))
    assert delta.metadata().partition_columns == ["day"]
    back = delta.to_pyarrow_table()
    assert set(back.column_names) == {"topic", "partition", "offset", "timestamp", "key", "page", "day"}
    assert sorted(back.column("page").to_pylist()) == sorted(f"/p{n}" for n in range(20))


def parse(*argv: str):
    parser = build_parser()
    return config_from(parser.parse_args(list(argv)), parser)


def test_the_job_defaults_its_checkpoint_beside_a_local_table_and_needs_one_for_a_uri(monkeypatch):
    monkeypatch.delenv("SPATE_BOOTSTRAP_SERVER", raising=False)
    config = parse("--topic", "t", "--table", "/data/t")
    assert config.checkpoint == "/data/t/_spate_ingest_checkpoint"
    assert (config.available_now, config.trigger_interval_ms, config.bootstrap_servers) == (
        False, 10_000, "127.0.0.1:9092")
    with pytest.raises(ValueError, match="--checkpoint is required"):
        default_checkpoint("s3://bucket/t")
    assert parse("--topic", "t", "--table", "s3://b/t", "--checkpoint", "s3://b/c").checkpoint == "s3://b/c"


@pytest.mark.parametrize(("text", "ms"), [("10s", 10_000), ("500ms", 500), ("2m", 120_000), ("1h", 3_600_000),
                                          ("3", 3_000), ("0.5s", 500)])
def test_trigger_intervals(text, ms):
    assert parse_interval_ms(text) == ms


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--topic", "t", "--table", "/t", "--trigger-interval", "soon"], "--trigger-interval must be"),
        (["--topic", "t", "--table", "/t", "--available-now", "--trigger-interval", "5s"], "not allowed with"),
        (["--table", "/t"], "--topic"),
        (["--topic", "t", "--table", "s3://b/t"], "--checkpoint is required"),
    ],
)
def test_bad_arguments_are_a_usage_error(argv, message, capsys):
    with pytest.raises(SystemExit) as raised:
        parse(*argv)
    assert raised.value.code == 2
    assert message in capsys.readouterr().err
