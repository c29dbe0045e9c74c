"""The Delta side of a table view: the latest value per key of a compacted topic.

A :class:`ViewTable` applies a set of changes — at most one row per key,
each an upsert or, for a tombstone, a delete — to the Delta table with one
MERGE (``deltalake``'s ``DeltaTable.merge``), whose commit also carries the
view's next offset of every partition the changes came from
(:mod:`.view_offsets`). A slice whose records hold no change (only records
without a key, or a range of control records) still commits its offsets, in a
commit without files.

Before it merges, :meth:`ViewTable.apply` checks that the table's stored
offsets are where the changes start, and the Delta log refuses a commit when
a concurrent one stored offsets of the same partition first (its ``txn``
conflict check): either way the run gets :class:`StaleOffsetsError` or
``CommitFailedError``, plans again from the stored offsets, and applies
nothing twice. A concurrent compaction of the table makes the MERGE's commit
fail the same way (both carry the rewrite guard, :mod:`.rewrite_guard`) and is
handled alike.

The table is created on first use with the view's schema, named
``spate-table-view:<topic>``; a table named for another topic is refused.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from spark_ext.delta.rewrite_guard import guard_transaction
from spark_ext.delta.schema import DeltaSchemaError, table_arrow_schema
from spark_ext.delta.view_offsets import APP_ID_PREFIX, OffsetRange, app_id, describe

logger = logging.getLogger(__name__)

KEY_COLUMN = "key"
TOMBSTONE_COLUMN = "__spate_tombstone"  # in the changes only: the record deletes its key
TOPIC_METADATA = "spate.tableView.topic"
OFFSETS_METADATA = "spate.tableView.offsets"


class StaleOffsetsError(RuntimeError):
    """The table's stored offsets moved since the changes were read (another run applied them)."""


@dataclass(frozen=True)
class ApplyResult:
    table_version: int
    upserted: int
    deleted: int
    ranges: tuple[OffsetRange, ...]


class ViewTable:
    """One table view's Delta table. Cheap to construct; every call reads the log afresh."""

    def __init__(self, table_uri: str, topic: str, storage_options: Mapping[str, str] | None = None) -> None:
        self.table_uri = table_uri
        self.topic = topic
        self.storage_options = dict(storage_options or {})

    @property
    def name(self) -> str:
        return f"{APP_ID_PREFIX}:{self.topic}"

    def table(self):
        """The ``deltalake.DeltaTable`` at its latest version, or None before the first run."""
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        try:
            table = DeltaTable(self.table_uri, storage_options=self.storage_options or None)
        except TableNotFoundError:
            return None
        name = table.metadata().name
        if name and name.startswith(APP_ID_PREFIX + ":") and name != self.name:
            raise DeltaSchemaError(f"the table at {self.table_uri} is the view {name!r}, not a view of topic "
                                   f"{self.topic!r}")
        return table

    def stored_offsets(self, partitions: Sequence[int]) -> dict[int, int]:
        """The next offset to read of each partition the view has applied records of."""
        table = self.table()
        if table is None:
            return {}
        stored = {p: table.transaction_version(app_id(self.topic, p)) for p in partitions}
        return {p: offset for p, offset in stored.items() if offset is not None}

    def ensure(self, schema: pa.Schema):
        """The table, created with the view's ``schema`` (tombstone flag excluded) when there is none yet."""
        from deltalake import DeltaTable

        schema = table_arrow_schema(pa.schema([f for f in schema if f.name != TOMBSTONE_COLUMN]))
        table = self.table()
        if table is None:
            DeltaTable.create(self.table_uri, schema, mode="ignore", name=self.name,
                              description=f"the latest value per key of topic {self.topic}",
                              storage_options=self.storage_options or None)
            return self.table()
        existing = pa.schema(table.schema().to_arrow())
        if existing.names != schema.names or not all(_same(existing.field(n).type, schema.field(n).type)
                                                     for n in schema.names):
            raise DeltaSchemaError(f"the table at {self.table_uri} has columns {_columns(existing)}, but the view "
                                   f"writes {_columns(schema)}; give the view a table of its own")
        return table

    def apply(self, changes: pa.Table, ranges: Sequence[OffsetRange]) -> ApplyResult:
        """Upsert or delete each key of ``changes`` and store the ``ranges``' ends, in one commit."""
        from deltalake.transaction import CommitProperties, Transaction

        _check_changes(changes)
        table = self.ensure(changes.schema)
        for r in ranges:
            stored = table.transaction_version(app_id(self.topic, r.partition))
            if stored is not None and stored != r.start:
                raise StaleOffsetsError(f"partition {r.partition} of {self.topic}: the table's next offset is "
                                        f"{stored}, not {r.start}; another run applied these records")
        properties = CommitProperties(
            app_transactions=[Transaction(app_id(self.topic, r.partition), r.end) for r in ranges]
            + [guard_transaction(table.version())],
            custom_metadata={TOPIC_METADATA: self.topic, OFFSETS_METADATA: describe(ranges)},
        )
        schema = pa.schema(table.schema().to_arrow())
        tombstones = changes.column(TOMBSTONE_COLUMN)
        deletes = pc.sum(pc.cast(tombstones, pa.int64())).as_py() or 0
        if changes.num_rows == 0:
            table.create_write_transaction([], "append", schema, commit_properties=properties)
            metrics = {}
        else:
            source = changes.select(schema.names).cast(schema).append_column(TOMBSTONE_COLUMN, tombstones)
            metrics = self._merge(table, source, schema.names, properties)
        version = self.table().version()
        result = ApplyResult(version, changes.num_rows - deletes, metrics.get("num_target_rows_deleted", 0),
                             tuple(ranges))
        logger.info("table view %s: version %d applies %s (%d upsert(s), %d row(s) deleted)", self.table_uri,
                    version, describe(ranges), result.upserted, result.deleted)
        return result

    def _merge(self, table, source: pa.Table, columns: Sequence[str], properties) -> dict:
        values = {_quoted(c): f"s.{_quoted(c)}" for c in columns}
        key = _quoted(KEY_COLUMN)
        merger = table.merge(source, f"t.{key} = s.{key}", source_alias="s", target_alias="t",
                             commit_properties=properties)
        return (merger.when_matched_delete(predicate=f"s.{TOMBSTONE_COLUMN}")
                .when_matched_update(updates=values, predicate=f"NOT s.{TOMBSTONE_COLUMN}")
                .when_not_matched_insert(updates=values, predicate=f"NOT s.{TOMBSTONE_COLUMN}")
                .execute())


def _check_changes(changes: pa.Table) -> None:
    for column in (KEY_COLUMN, TOMBSTONE_COLUMN):
        if column not in changes.column_names:
            raise DeltaSchemaError(f"the changes lack the column {column!r}")
    keys = changes.column(KEY_COLUMN)
    if keys.null_count:
        raise DeltaSchemaError("a change without a key cannot be applied to a table view")
    if pc.count_distinct(keys).as_py() != changes.num_rows:
        raise DeltaSchemaError("the changes hold a key more than once; keep the latest record of each key")


def _quoted(column: str) -> str:
    return "`" + column.replace("`", "``") + "`"


def _same(left: pa.DataType, right: pa.DataType) -> bool:
    return left == right or (pa.types.is_timestamp(left) and pa.types.is_timestamp(right))


def _columns(schema: pa.Schema) -> str:
    return ", ".join(f"{f.name} {f.type}" for f in schema)
