"""Options of the ``spate-delta`` sink, checked on the driver when the write starts.

=========================  ==========================================================================
``path``                   the table: a local path or a URI (``s3://…``, ``gs://…``, ``abfs://…``,
                           ``hdfs://…``; also given as ``.start(path)`` / ``.save(path)``); required
``partitionBy``            comma-separated partition columns; default: the table's, or none for a new table
``mergeSchema``            ``true`` adds the DataFrame's new columns to the table (as nullable); default false
``targetFileSize``         bytes per Parquet file before a task starts another (``k``/``m``/``g`` suffixes);
                           default 128m
``txnAppId``               the application id of the Delta app transaction; default: the streaming query's id
``txnVersion``             batch writes only: the app transaction's version (with ``txnAppId``): a write whose
                           version is committed already is skipped, as Delta's idempotent writes are
``checkpointLocation``     Spark's; the query id is read from it when no task reported one
``storage.<key>``          passed to ``deltalake`` as a storage option (credentials, endpoints)
``testFailTaskProbability``  for fault tests: a task's first attempt fails with this probability after
                           writing its files
=========================  ==========================================================================
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Mapping

from spark_ext.delta.parquet_files import DEFAULT_TARGET_FILE_SIZE
from spark_ext.kafka_options import OptionError

_NAMES = {name.lower(): name for name in (
    "path", "partitionBy", "mergeSchema", "targetFileSize", "txnAppId", "txnVersion", "checkpointLocation",
    "testFailTaskProbability", "queryName",  # Spark passes the query's name to its sink
)}
_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)b?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


class DeltaSinkOptionError(OptionError):
    """An option the ``spate-delta`` sink cannot accept; ``option`` is its name as users spell it."""

    side = "spate-delta sink"


@dataclass(frozen=True)
class DeltaSinkOptions:
    """Checked options; picklable."""

    table_uri: str
    partition_by: tuple[str, ...] | None = None  # None: the table's partitioning
    merge_schema: bool = False
    target_file_size: int = DEFAULT_TARGET_FILE_SIZE
    txn_app_id: str | None = None
    txn_version: int | None = None
    checkpoint_location: str | None = None
    storage_options: dict[str, str] = field(default_factory=dict)
    test_fail_task_probability: float = 0.0


def parse_delta_sink_options(options: Mapping[str, str], *, streaming: bool) -> DeltaSinkOptions:
    opts = {str(k).lower(): str(v) for k, v in options.items()}
    storage = {k[len("storage."):]: v for k, v in opts.items() if k.startswith("storage.")}
    for name in sorted(opts):
        if name not in _NAMES and not name.startswith("storage."):
            raise DeltaSinkOptionError(name, f"is not an option of this sink (options: {', '.join(_NAMES.values())}, "
                                       "storage.<key>)")
    txn_version = _txn_version(opts, streaming)
    txn_app_id = _non_empty(opts, "txnappid")
    if txn_version is not None and txn_app_id is None:
        raise DeltaSinkOptionError("txnVersion", "needs txnAppId, the application whose version it is")
    return DeltaSinkOptions(
        table_uri=_table_uri(opts),
        partition_by=_partition_by(opts),
        merge_schema=_bool(opts, "mergeschema"),
        target_file_size=_target_file_size(opts),
        txn_app_id=txn_app_id,
        txn_version=txn_version,
        checkpoint_location=_non_empty(opts, "checkpointlocation"),
        storage_options=storage,
        test_fail_task_probability=_probability(opts, "testfailtaskprobability"),
    )


def _table_uri(opts: Mapping[str, str]) -> str:
    path = opts.get("path", "").strip()
    if not path:
        raise DeltaSinkOptionError("path", "is required: the Delta table's location (a path or a URI), given with "
                                   ".option('path', ...) or .start(path)")
    if path.startswith("file://"):
        path = path[len("file://"):]
    if "://" in path:
        return path.rstrip("/")
    return os.path.abspath(path)


def _partition_by(opts: Mapping[str, str]) -> tuple[str, ...] | None:
    if "partitionby" not in opts:
        return None
    columns = tuple(c.strip() for c in opts["partitionby"].split(",") if c.strip())
    if len(set(columns)) != len(columns):
        raise DeltaSinkOptionError("partitionBy", f"names a column twice: {opts['partitionby']!r}")
    return columns


def _bool(opts: Mapping[str, str], key: str) -> bool:
    value = opts.get(key, "false").strip().lower()
    if value not in ("true", "false"):
        raise DeltaSinkOptionError(_NAMES[key], f"must be true or false, not {opts[key]!r}")
    return value == "true"


def _target_file_size(opts: Mapping[str, str]) -> int:
    if "targetfilesize" not in opts:
        return DEFAULT_TARGET_FILE_SIZE
    match = _SIZE.match(opts["targetfilesize"])
    size = int(match.group(1)) * _UNITS[match.group(2).lower()] if match else 0
    if size <= 0:
        raise DeltaSinkOptionError("targetFileSize", f"must be a positive size in bytes (e.g. 134217728 or 128m), "
                                   f"not {opts['targetfilesize']!r}")
    return size


def _txn_version(opts: Mapping[str, str], streaming: bool) -> int | None:
    if "txnversion" not in opts:
        return None
    if streaming:
        raise DeltaSinkOptionError("txnVersion", "applies to batch writes only; a streaming query's version is "
                                   "its batch id")
    text = opts["txnversion"].strip()
    if not text.isdigit():
        raise DeltaSinkOptionError("txnVersion", f"must be a whole number of at least 0, not {text!r}")
    return int(text)


def _non_empty(opts: Mapping[str, str], key: str) -> str | None:
    if key not in opts:
        return None
    value = opts[key].strip()
    if not value:
        raise DeltaSinkOptionError(_NAMES[key], "is empty")
    return value


def _probability(opts: Mapping[str, str], key: str) -> float:
    if key not in opts:
        return 0.0
    try:
        value = float(opts[key])
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise DeltaSinkOptionError(_NAMES[key], f"must be a number from 0 to 1, not {opts[key]!r}")
    return value
