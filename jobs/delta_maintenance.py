"""Maintain a Delta table: compact its small files, then vacuum what no version needs.

::

    spark-submit jobs/delta_maintenance.py --table /data/tables/orders \\
        [--target-file-size 128m] [--vacuum-retention 168h] [--force] [--dry-run] [--output json]
    spate jobs run delta-maintenance --table /data/tables/orders ...    (the same, through spate)

Compaction (:mod:`spark_ext.delta.optimize`) bin-packs the files smaller
than the target size into files of about that size, in one commit marked
``dataChange: false``, so streaming readers ignore it and the content stays
the same. Vacuum (:mod:`spark_ext.delta.vacuum`) then deletes the files no
longer referenced, and orphans of failed writes, older than the retention
period (default 7 days; a shorter one than the table's
``delta.deletedFileRetentionDuration`` needs ``--force``). Both run safely
while an ingest query or a table view writes the table: a conflicting
commit makes the compaction plan again, never corrupts the table.

Prints a summary of what changed (``--output json`` for machines). The job
needs no Spark session: it runs the same under spark-submit and as a plain
Python script. Exit codes: 0 done, 1 failed, 2 bad arguments or a refused
retention.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from dataclasses import asdict, dataclass
from typing import Sequence

from jobs.job_logging import configure_job_logging
from spark_ext.delta.optimize import DEFAULT_TARGET_FILE_SIZE, CompactionResult, compact
from spark_ext.delta.vacuum import (
    DEFAULT_RETENTION_HOURS,
    VacuumResult,
    VacuumRetentionError,
    parse_retention_hours,
    vacuum,
)

logger = logging.getLogger("spate.jobs.delta_maintenance")

_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)b?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


@dataclass(frozen=True)
class MaintenanceConfig:
    table: str
    target_file_size: int = DEFAULT_TARGET_FILE_SIZE
    retention_hours: int = DEFAULT_RETENTION_HOURS
    force: bool = False
    dry_run: bool = False
    compact: bool = True
    vacuum: bool = True


@dataclass(frozen=True)
class MaintenanceSummary:
    table: str
    compaction: CompactionResult | None
    vacuum: VacuumResult | None

    def lines(self) -> list[str]:
        lines = [f"table {self.table}"]
        c = self.compaction
        if c is not None:
            what = (f"{c.files_removed} file(s) compacted into {c.files_added} (version {c.table_version}, "
                    "dataChange=false)" if c.committed else "nothing to compact")
            lines.append(f"  compaction: {what}; files {c.before.files} -> {c.after.files}, "
                         f"bytes {c.before.bytes:,} -> {c.after.bytes:,}"
                         + (f"; {c.attempts} attempt(s)" if c.attempts > 1 else ""))
        v = self.vacuum
        if v is not None:
            verb = "would delete" if v.dry_run else "deleted"
            lines.append(f"  vacuum (retention {v.retention_hours}h): {verb} {v.files_deleted} file(s), "
                         f"{v.bytes_deleted:,} byte(s)")
        return lines

    def document(self) -> dict:
        return {"table": self.table,
                "compaction": None if self.compaction is None else asdict(self.compaction),
                "vacuum": None if self.vacuum is None else {**asdict(self.vacuum), "paths": list(self.vacuum.paths)}}


def parse_size(text: str) -> int:
    match = _SIZE.match(text)
    size = int(match.group(1)) * _UNITS[match.group(2).lower()] if match else 0
    if size <= 0:
        raise ValueError(f"--target-file-size must be a positive size in bytes (e.g. 134217728 or 128m), not {text!r}")
    return size


def maintain(config: MaintenanceConfig) -> MaintenanceSummary:
    """Compact, then vacuum; a dry run compacts nothing and lists what vacuum would delete."""
    from spark_ext.delta.vacuum import check_retention

    compaction = None
    if config.vacuum:  # refuse a bad retention before changing anything
        from deltalake import DeltaTable

        check_retention(DeltaTable(config.table), config.retention_hours, config.force)
    if config.compact and not config.dry_run:
        compaction = compact(config.table, config.target_file_size)
    swept = None
    if config.vacuum:
        swept = vacuum(config.table, config.retention_hours, force=config.force, dry_run=config.dry_run)
    return MaintenanceSummary(config.table, compaction, swept)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spark-submit jobs/delta_maintenance.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", required=True, help="the Delta table: a path or a URI")
    parser.add_argument("--target-file-size", default="128m", help="size compacted files aim at (default 128m)")
    parser.add_argument("--vacuum-retention", default=f"{DEFAULT_RETENTION_HOURS}h",
                        help="keep unreferenced files younger than this (default 168h; also 7d, 1w)")
    parser.add_argument("--force", action="store_true",
                        help="allow a retention shorter than the table's delta.deletedFileRetentionDuration")
    parser.add_argument("--dry-run", action="store_true", help="change nothing; list what vacuum would delete")
    parser.add_argument("--no-compact", dest="compact", action="store_false", help="vacuum only")
    parser.add_argument("--no-vacuum", dest="vacuum", action="store_false", help="compact only")
    parser.add_argument("--output", choices=("text", "json"), default="text", help="the summary's format")
    return parser


def config_from(args: argparse.Namespace, parser: argparse.ArgumentParser) -> MaintenanceConfig:
    try:
        size, hours = parse_size(args.target_file_size), parse_retention_hours(args.vacuum_retention)
    except ValueError as exc:
        parser.error(str(exc))
    table = args.table.removeprefix("file://")
    return MaintenanceConfig(table if "://" in table else os.path.abspath(table), size, hours, args.force,
                             args.dry_run, args.compact, args.vacuum)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    config = config_from(args, parser)
    configure_job_logging()
    from deltalake.exceptions import TableNotFoundError

    try:
        summary = maintain(config)
    except VacuumRetentionError as exc:
        logger.error("%s", exc)
        return 2
    except TableNotFoundError:
        logger.error("no Delta table at %s", config.table)
        return 1
    except Exception as exc:  # noqa: BLE001 - reported as the job's failure
        logger.error("maintenance of %s failed: %s", config.table, str(exc).splitlines()[0] if str(exc) else exc)
        return 1
    if args.output == "json":
        print(json.dumps(summary.document(), indent=2))
    else:
        print("\n".join(summary.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
