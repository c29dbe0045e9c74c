"""Schemas as a Delta table stores them, and how a table's schema may evolve.

Spark hands the sink its DataFrame's schema; the files hold Arrow data of
the matching Arrow schema, with timestamps in UTC microseconds (Delta's
``timestamp``) and no Arrow-only types. A write may bring columns the table
lacks (added to the table when ``mergeSchema`` is on, as nullable columns)
and may lack columns the table has (readers see nulls there); a column whose
type differs from the table's is refused, as Delta refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pyarrow as pa
from pyspark.sql.types import StructType


class DeltaSchemaError(ValueError):
    """A DataFrame whose columns the Delta table cannot take."""


def arrow_schema_of(schema: StructType) -> pa.Schema:
    """The Arrow schema of the files a DataFrame of ``schema`` is written as."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return table_arrow_schema(to_arrow_schema(schema, timezone="UTC"))


def table_arrow_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with the types Delta stores: every tz-aware timestamp in UTC, large types made regular."""
    return pa.schema([field.with_type(_delta_type(field.type)) for field in schema], metadata=None)


def _delta_type(kind: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(kind):
        return pa.timestamp("us", tz="UTC" if kind.tz is not None else None)
    if pa.types.is_large_string(kind):
        return pa.string()
    if pa.types.is_large_binary(kind):
        return pa.binary()
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return pa.list_(kind.value_field.with_type(_delta_type(kind.value_type)))
    if pa.types.is_map(kind):
        return pa.map_(kind.key_field.with_type(_delta_type(kind.key_type)),
                       kind.item_field.with_type(_delta_type(kind.item_type)))
    if pa.types.is_struct(kind):
        return pa.struct([field.with_type(_delta_type(field.type)) for field in kind])
    return kind


def check_partition_columns(schema: pa.Schema, partition_by: Sequence[str]) -> None:
    """Partition columns must be top-level columns of a primitive type, and leave a column in the files."""
    names = set(schema.names)
    for column in partition_by:
        if column not in names:
            raise DeltaSchemaError(f"partition column {column!r} is not a column of the DataFrame "
                                   f"({', '.join(schema.names)})")
        kind = schema.field(column).type
        if not _partitionable(kind):
            raise DeltaSchemaError(f"partition column {column!r} has type {kind}, and Delta partitions only by "
                                   "strings, numbers, booleans, dates and timestamps")
    if len(set(partition_by)) != len(partition_by):
        raise DeltaSchemaError(f"partition columns repeat a name: {list(partition_by)}")
    if names and names <= set(partition_by):
        raise DeltaSchemaError("every column is a partition column; at least one must stay in the data files")


def _partitionable(kind: pa.DataType) -> bool:
    return (pa.types.is_string(kind) or pa.types.is_integer(kind) or pa.types.is_floating(kind)
            or pa.types.is_boolean(kind) or pa.types.is_date32(kind) or pa.types.is_timestamp(kind)
            or pa.types.is_decimal(kind))


@dataclass(frozen=True)
class SchemaChange:
    """What committing data of ``written`` schema to a table of ``table`` schema needs."""

    added: tuple[pa.Field, ...]  # columns the table gains (nullable)

    @property
    def evolves(self) -> bool:
        return bool(self.added)


def plan_schema_change(table: pa.Schema, written: pa.Schema, merge_schema: bool) -> SchemaChange:
    """Check ``written`` against the table's schema; raise :class:`DeltaSchemaError` naming the column."""
    added = []
    for field in written:
        if field.name not in table.names:
            added.append(field.with_nullable(True))
            continue
        existing = table.field(field.name).type
        if not _same_type(existing, field.type):
            raise DeltaSchemaError(f"column {field.name!r} is {existing} in the table but {field.type} in the "
                                   "DataFrame; a Delta table does not change a column's type")
    if added and not merge_schema:
        names = ", ".join(repr(f.name) for f in added)
        raise DeltaSchemaError(f"the DataFrame has column(s) {names} that the table lacks; set "
                               "option('mergeSchema', 'true') to add them to the table")
    return SchemaChange(tuple(added))


def _same_type(left: pa.DataType, right: pa.DataType) -> bool:
    # Nullability of nested fields is not part of a column's type for this check.
    return _strip_nullability(left) == _strip_nullability(right)


def _strip_nullability(kind: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(kind):
        return pa.struct([pa.field(f.name, _strip_nullability(f.type)) for f in kind])
    if pa.types.is_list(kind):
        return pa.list_(pa.field("element", _strip_nullability(kind.value_type)))
    if pa.types.is_map(kind):
        return pa.map_(_strip_nullability(kind.key_type), _strip_nullability(kind.item_type))
    return kind
