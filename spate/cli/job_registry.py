"""The jobs ``spate jobs run NAME`` knows: one :class:`JobSpec` each.

A job is a PySpark script under ``jobs/`` that parses its own arguments and
exits 0 on success, 1 on failure, 2 on bad arguments; the runner hands it
every argument it does not take itself. Adding a job is one entry in
:data:`JOBS`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

JOBS_DIR_ENV = "SPATE_JOBS_DIR"


@dataclass(frozen=True)
class JobSpec:
    name: str
    script: str  # file name under the jobs directory
    summary: str
    streaming: bool = False  # runs until stopped unless told to drain and exit

    def script_path(self) -> Path:
        return jobs_dir() / self.script


JOBS: dict[str, JobSpec] = {
    spec.name: spec
    for spec in (
        JobSpec("ingest", "ingest.py", "stream a topic into a Delta table, exactly once", streaming=True),
        JobSpec("copy-topic", "copy_topic.py", "copy a topic to another through Spark, exactly once",
                streaming=True),
        JobSpec("compaction", "compaction.py", "compact topics with plans computed by Spark"),
        JobSpec("table-view", "table_view.py", "keep a Delta table of the latest value per key of a compacted topic"),
        JobSpec("delta-maintenance", "delta_maintenance.py", "compact a Delta table's small files and vacuum it"),
        JobSpec("archive", "archive.py", "copy what retention is about to delete into the topic's Delta archive"),
    )
}


def jobs_dir() -> Path:
    """``$SPATE_JOBS_DIR``, or the ``jobs/`` directory beside the ``spate`` package."""
    configured = os.environ.get(JOBS_DIR_ENV)
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[2] / "jobs"


def lookup(name: str) -> JobSpec | None:
    return JOBS.get(name)
