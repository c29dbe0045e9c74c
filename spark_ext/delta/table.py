"""What the driver does for a Delta write: read the table's log and commit files in one commit.

:class:`DeltaLog` wraps a table location (a local path or a URI) and, through
``deltalake``, answers what a writer needs before it writes (does the table
exist, its schema and partition columns, the last version an application
committed) and commits a list of :class:`~.parquet_files.DataFile` as ONE
Delta commit. A commit may carry an application transaction
``(app id, version)`` — the ``txn`` action of the Delta protocol, which
Spark's own Delta sink writes with the query id and batch id — in the same
commit as the files, so "these files are in the table" and "this version is
done" become true together. :meth:`DeltaLog.commit` skips a version the log
already records as done, so replaying it adds nothing.

The first commit creates the table (protocol, metadata with the schema and
partition columns). A write bringing new columns with ``merge_schema`` adds
them in a commit of its own just before (adding the same nullable columns
again is refused by the checks, never half-applied).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Mapping, Sequence

import pyarrow as pa

from spark_ext.delta.parquet_files import DataFile
from spark_ext.delta.schema import DeltaSchemaError, plan_schema_change, table_arrow_schema

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AppTransaction:
    """Delta's ``txn`` action: application ``app_id`` has committed up to ``version``."""

    app_id: str
    version: int


@dataclass(frozen=True)
class CommitResult:
    """What :meth:`DeltaLog.commit` did: the table version it made, or None when it skipped."""

    table_version: int | None
    files: int
    records: int
    skipped: bool = False
    schema_evolved: bool = False


class DeltaLog:
    """One Delta table's log. Construct cheaply; every call reads the current state of the log."""

    def __init__(self, table_uri: str, storage_options: Mapping[str, str] | None = None) -> None:
        self.table_uri = table_uri
        self.storage_options = dict(storage_options or {})

    def table(self):
        """The ``deltalake.DeltaTable`` at its latest version, or None when there is no table yet."""
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        try:
            return DeltaTable(self.table_uri, storage_options=self.storage_options or None)
        except TableNotFoundError:
            return None

    def exists(self) -> bool:
        return self.table() is not None

    def schema(self) -> pa.Schema | None:
        table = self.table()
        return None if table is None else _arrow_schema(table)

    def partition_columns(self) -> tuple[str, ...] | None:
        table = self.table()
        return None if table is None else tuple(table.metadata().partition_columns)

    def app_version(self, app_id: str) -> int | None:
        """The last version application ``app_id`` committed, or None."""
        table = self.table()
        return None if table is None else table.transaction_version(app_id)

    def commit(
        self,
        files: Sequence[DataFile],
        schema: pa.Schema,
        partition_by: Sequence[str],
        *,
        app_transaction: AppTransaction | None = None,
        merge_schema: bool = False,
        operation_info: Mapping[str, object] | None = None,
    ) -> CommitResult:
        """Commit ``files`` (of DataFrame ``schema``) as one commit; skip a version already committed."""
        from deltalake.transaction import CommitProperties, Transaction, create_table_with_add_actions

        records = sum(f.num_records for f in files)
        table = self.table()
        if table is not None and app_transaction is not None:
            done = table.transaction_version(app_transaction.app_id)
            if done is not None and done >= app_transaction.version:
                logger.info("delta table %s: %s version %d is committed already (up to %d); skipped",
                            self.table_uri, app_transaction.app_id, app_transaction.version, done)
                return CommitResult(None, len(files), records, skipped=True)
        properties = CommitProperties(
            custom_metadata=dict(operation_info or {}) or None,
            app_transactions=None if app_transaction is None else [
                Transaction(app_transaction.app_id, app_transaction.version)
            ],
        )
        actions = [f.add_action() for f in files]
        schema = table_arrow_schema(schema)
        if table is None:
            from deltalake import Schema

            create_table_with_add_actions(self.table_uri, Schema.from_arrow(schema), actions, mode="error",
                                          partition_by=list(partition_by), storage_options=self.storage_options or None,
                                          commit_properties=properties)
            return CommitResult(self._latest_version(), len(files), records)
        evolved = self._evolve(table, schema, partition_by, merge_schema)
        if evolved:
            table = self.table()
        table.create_write_transaction(actions, "append", _arrow_schema(table), partition_by=list(partition_by),
                                       commit_properties=properties)
        return CommitResult(self._latest_version(), len(files), records, schema_evolved=evolved)

    def _evolve(self, table, schema: pa.Schema, partition_by: Sequence[str], merge_schema: bool) -> bool:
        existing_partitions = tuple(table.metadata().partition_columns)
        if tuple(partition_by) != existing_partitions:
            raise DeltaSchemaError(f"the table is partitioned by {list(existing_partitions)}, not by "
                                   f"{list(partition_by)}; a Delta table keeps its partition columns")
        change = plan_schema_change(_arrow_schema(table), schema, merge_schema)
        if not change.evolves:
            return False
        from deltalake import Field

        table.alter.add_columns([Field.from_arrow(f) for f in change.added])
        logger.info("delta table %s: added column(s) %s", self.table_uri, ", ".join(f.name for f in change.added))
        return True

    def _latest_version(self) -> int:
        table = self.table()
        return -1 if table is None else table.version()


def _arrow_schema(table) -> pa.Schema:
    return pa.schema(table.schema().to_arrow())
