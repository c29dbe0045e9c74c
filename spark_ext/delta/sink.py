"""The ``spate-delta`` data source: a Spark sink writing Delta tables exactly once.

::

    (spark.readStream.format("spate").option("subscribe", "orders")...load()
        .writeStream.format("spate-delta")
        .option("checkpointLocation", "/data/ckpt/orders")
        .start("/data/tables/orders"))

Options: :mod:`.options`. The DataFrame's schema becomes the table's (the
Spark Kafka schema as it is, or whatever the query projects). Options, the
schema and the table's partitioning are checked here, on the driver, so a
bad one fails the query when it starts, naming it.
"""

from __future__ import annotations

from pyspark.sql.datasource import DataSource, DataSourceStreamWriter, DataSourceWriter
from pyspark.sql.types import StructType

from spark_ext.delta.options import DeltaSinkOptionError, DeltaSinkOptions, parse_delta_sink_options
from spark_ext.delta.parquet_files import FileLayout
from spark_ext.delta.schema import DeltaSchemaError, arrow_schema_of, check_partition_columns, plan_schema_change
from spark_ext.delta.table import DeltaLog
from spark_ext.delta.writer import DeltaBatchWriter, DeltaStreamWriter

SOURCE_NAME = "spate-delta"


class SpateDeltaDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> StructType:
        raise DeltaSinkOptionError("format", "spate-delta is a sink; read its tables with deltalake, "
                                   "or with format('delta') where delta-spark is installed")

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        if overwrite:
            raise DeltaSinkOptionError("mode", "spate-delta appends to tables: use .mode('append')")
        options = parse_delta_sink_options(self.options, streaming=False)
        return DeltaBatchWriter(options, plan_layout(options, schema))

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        if overwrite:
            raise DeltaSinkOptionError("outputMode", "spate-delta appends to tables: use outputMode('append')")
        options = parse_delta_sink_options(self.options, streaming=True)
        return DeltaStreamWriter(options, plan_layout(options, schema))


def plan_layout(options: DeltaSinkOptions, schema: StructType) -> FileLayout:
    """How the tasks lay out files, after checking the DataFrame against the table as it is now."""
    arrow = arrow_schema_of(schema)
    log = DeltaLog(options.table_uri, options.storage_options)
    table = log.table()
    partition_by = options.partition_by
    if table is not None:
        existing = tuple(table.metadata().partition_columns)
        if partition_by is not None and tuple(partition_by) != existing:
            raise DeltaSinkOptionError("partitionBy", f"the table at {options.table_uri} is partitioned by "
                                       f"{list(existing)}, not {list(partition_by)}")
        partition_by = existing
        table_schema = log.schema()
        try:
            plan_schema_change(table_schema, arrow, options.merge_schema)
        except DeltaSchemaError as exc:
            raise DeltaSchemaError(f"{options.table_uri}: {exc}") from None
    partition_by = tuple(partition_by or ())
    try:
        check_partition_columns(arrow, partition_by)
    except DeltaSchemaError as exc:
        raise DeltaSinkOptionError("partitionBy", str(exc)) from None
    return FileLayout(options.table_uri, arrow, partition_by, options.target_file_size)


def register(spark) -> None:
    """Register the data source with a session (also found by name where ``pyspark_spate_delta`` is importable)."""
    spark.dataSource.register(SpateDeltaDataSource)
