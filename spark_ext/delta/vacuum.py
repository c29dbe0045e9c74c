"""Vacuum of a Delta table: delete the files no version within the retention period needs.

Deleted are the files the table no longer references — removed by a
compaction, a MERGE or an overwrite more than the retention period ago — and
the files it never referenced (the orphans of a killed or failed write
attempt) that are older than the retention period, as Delta's VACUUM does.
The log, and directories whose names start with ``_`` or ``.`` (a
streaming query's checkpoint beside the table), are never touched.

The retention period protects readers and writers at work: a reader of an
older snapshot still opens files a later commit removed, and a writer's
tasks write files some time before the driver commits them. So, as Delta
does with ``spark.databricks.delta.retentionDurationCheck.enabled``, a
retention shorter than the table's ``delta.deletedFileRetentionDuration``
(a week unless the table says otherwise) is refused unless forced.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Mapping

logger = logging.getLogger(__name__)

DEFAULT_RETENTION_HOURS = 7 * 24
RETENTION_PROPERTY = "delta.deletedFileRetentionDuration"
_DURATION = re.compile(r"^\s*(\d+)\s*(h|hours?|d|days?|w|weeks?)?\s*$", re.IGNORECASE)
_INTERVAL = re.compile(r"^\s*interval\s+(\d+)\s+(\w+?)s?\s*$", re.IGNORECASE)
_HOURS_PER = {"h": 1, "hour": 1, "d": 24, "day": 24, "w": 168, "week": 168}
_INTERVAL_HOURS = {"second": 1 / 3600, "minute": 1 / 60, "hour": 1, "day": 24, "week": 168}


class VacuumRetentionError(ValueError):
    """A retention period vacuum refuses (unparseable, or shorter than the table allows without force)."""


@dataclass(frozen=True)
class VacuumResult:
    retention_hours: int
    files_deleted: int
    bytes_deleted: int
    paths: tuple[str, ...]
    dry_run: bool


def parse_retention_hours(text: str) -> int:
    """``168h``, ``7d``, ``1w`` or a plain number of hours, as whole hours (Delta vacuums by the hour)."""
    match = _DURATION.match(text)
    if not match:
        raise VacuumRetentionError(f"the vacuum retention must be whole hours, days or weeks such as 168h, 7d "
                                   f"or 1w, not {text!r}")
    unit = (match.group(2) or "h").lower().rstrip("s") or "h"
    return int(match.group(1)) * _HOURS_PER[unit]


def minimum_retention_hours(table) -> float:
    """The table's ``delta.deletedFileRetentionDuration`` in hours (``interval 1 week`` unless set)."""
    configured = table.metadata().configuration.get(RETENTION_PROPERTY)
    if not configured:
        return DEFAULT_RETENTION_HOURS
    match = _INTERVAL.match(configured)
    unit = match.group(2).lower() if match else None
    if unit not in _INTERVAL_HOURS:
        logger.warning("%s = %r is not an interval this vacuum reads; assuming a week", RETENTION_PROPERTY,
                       configured)
        return DEFAULT_RETENTION_HOURS
    return int(match.group(1)) * _INTERVAL_HOURS[unit]


def check_retention(table, retention_hours: int, force: bool) -> None:
    """Refuse a retention shorter than the table's minimum, unless ``force``."""
    minimum = minimum_retention_hours(table)
    if retention_hours >= minimum:
        return
    if not force:
        raise VacuumRetentionError(
            f"a vacuum retention of {retention_hours}h is shorter than the table's {RETENTION_PROPERTY} "
            f"({minimum:g}h): it could delete files a reader of an older version, or a writer that has not "
            "committed yet, still needs. Use --force to vacuum anyway (Delta's retentionDurationCheck), "
            "only when no query writes or reads the table"
        )
    logger.warning("vacuum with a retention of %dh, below the table's %gh, because it was forced",
                   retention_hours, minimum)


def vacuum(table_uri: str, retention_hours: int = DEFAULT_RETENTION_HOURS, *, force: bool = False,
           dry_run: bool = False, storage_options: Mapping[str, str] | None = None) -> VacuumResult:
    """Delete unreferenced files older than the retention period (with ``dry_run``: only list them)."""
    from deltalake import DeltaTable

    if retention_hours < 0:
        raise VacuumRetentionError(f"the vacuum retention cannot be negative ({retention_hours}h)")
    options = dict(storage_options or {}) or None
    table = DeltaTable(table_uri, storage_options=options)
    check_retention(table, retention_hours, force)
    candidates = table.vacuum(retention_hours, dry_run=True, enforce_retention_duration=False, full=True)
    sizes = _sizes(table_uri, candidates)
    paths = candidates if dry_run else table.vacuum(retention_hours, dry_run=False, enforce_retention_duration=False,
                                                    full=True)
    result = VacuumResult(retention_hours, len(paths), sum(sizes.get(p, 0) for p in paths), tuple(sorted(paths)),
                          dry_run)
    logger.info("vacuum of %s (retention %dh)%s: %d file(s), %d byte(s)", table_uri, retention_hours,
                " [dry run]" if dry_run else "", result.files_deleted, result.bytes_deleted)
    return result


def _sizes(table_uri: str, paths: list[str]) -> dict[str, int]:
    """Sizes of files under the table (relative paths), for the summary; a file gone meanwhile counts 0."""
    import os

    import pyarrow.fs as pafs

    if not paths:
        return {}
    uri = table_uri if "://" in table_uri else os.path.abspath(table_uri)
    filesystem, root = pafs.FileSystem.from_uri(uri)
    root = root.rstrip("/")
    infos = filesystem.get_file_info([f"{root}/{p}" for p in paths])
    return {p: max(info.size or 0, 0) for p, info in zip(paths, infos)}
