"""Vacuum: retention parsed and checked as Delta checks it; unreferenced and orphan files deleted, nothing else."""

from __future__ import annotations

import os
import time

import pytest
from deltalake import DeltaTable

from spark_ext.delta.optimize import compact
from spark_ext.delta.vacuum import VacuumRetentionError, minimum_retention_hours, parse_retention_hours, vacuum
from tests.spark.delta.delta_tables import content, small_files_table


@pytest.mark.parametrize("text,hours", [("168h", 168), ("7d", 168), ("1w", 168), ("0h", 0), ("36", 36),
                                        ("2 days", 48)])
def test_retention_is_read_in_whole_hours(text, hours):
    assert parse_retention_hours(text) == hours


@pytest.mark.parametrize("text", ["", "1.5h", "30m", "-1h", "a week"])
def test_other_retentions_are_refused_naming_the_forms_accepted(text):
    with pytest.raises(VacuumRetentionError, match="168h, 7d"):
        parse_retention_hours(text)


def test_the_minimum_retention_is_a_week_unless_the_table_says_otherwise(tmp_path):
    small_files_table(str(tmp_path / "t"), commits=1)
    table = DeltaTable(str(tmp_path / "t"))
    assert minimum_retention_hours(table) == 168
    table.alter.set_table_properties({"delta.deletedFileRetentionDuration": "interval 2 days"})
    assert minimum_retention_hours(DeltaTable(str(tmp_path / "t"))) == 48


def test_a_retention_below_the_tables_is_refused_without_force(tmp_path):
    path = str(tmp_path / "t")
    small_files_table(path, commits=3)
    compact(path, target_size=1 << 20)
    files = sorted(os.listdir(path))
    with pytest.raises(VacuumRetentionError, match=r"0h is shorter than .*deletedFileRetentionDuration.*--force"):
        vacuum(path, 0)
    assert sorted(os.listdir(path)) == files


def test_forced_vacuum_deletes_compacted_away_and_orphan_files_and_keeps_the_rest(tmp_path):
    path = str(tmp_path / "t")
    small_files_table(path, commits=3)
    compact(path, target_size=1 << 20)
    orphan = os.path.join(path, "part-00009-killed-attempt.c000.zstd.parquet")
    with open(orphan, "wb") as out:
        out.write(b"written by a task whose batch never committed")
    checkpoint = os.path.join(path, "_spate_ingest_checkpoint", "commits")
    os.makedirs(checkpoint)
    with open(os.path.join(checkpoint, "0"), "w") as out:
        out.write("v1\n{}")
    before = content(DeltaTable(path))

    dry = vacuum(path, 0, force=True, dry_run=True)
    assert dry.files_deleted == 4 and os.path.exists(orphan)
    result = vacuum(path, 0, force=True)
    assert result.files_deleted == 4 and result.bytes_deleted > 0
    assert os.path.basename(orphan) in result.paths
    assert not os.path.exists(orphan)
    assert os.path.exists(os.path.join(checkpoint, "0"))
    assert content(DeltaTable(path)) == before
    assert [f for f in os.listdir(path) if f.endswith(".parquet")] == [
        os.path.basename(uri) for uri in DeltaTable(path).file_uris()]


def test_files_younger_than_the_retention_stay(tmp_path):
    path = str(tmp_path / "t")
    small_files_table(path, commits=3)
    compact(path, target_size=1 << 20)
    orphan = os.path.join(path, "part-00009-recent.c000.zstd.parquet")
    with open(orphan, "wb") as out:
        out.write(b"a file a writer is about to commit")
    old = time.time() - 3 * 3600
    os.utime(orphan, (old, old))  # a file of three hours ago, older than a 2h retention
    young = os.path.join(path, "part-00010-now.c000.zstd.parquet")
    with open(young, "wb") as out:
        out.write(b"written a moment ago")
    result = vacuum(path, 2, force=True)
    assert os.path.basename(orphan) in result.paths
    assert os.path.exists(young)
