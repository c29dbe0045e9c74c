"""The ``spate`` data source: Spark's Kafka source, served from Spate (or any Kafka-protocol broker).

::

    df = (spark.readStream.format("spate")
          .option("kafka.bootstrap.servers", "127.0.0.1:9092")
          .option("subscribe", "orders")
          .load())

Options and schema are those of Spark's built-in Kafka source (see
:mod:`spark_ext.options` and :mod:`spark_ext.arrow_batches`). Options are
checked when the read is planned; a bad one fails it with a message naming
the option.
"""

from __future__ import annotations

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from spark_ext import sink
from spark_ext.arrow_batches import source_schema
from spark_ext.options import SourceOptionError, parse_source_options
from spark_ext.reader import SpateBatchReader
from spark_ext.stream_reader import SpateStreamReader


class SpateDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "spate"

    def schema(self) -> StructType:
        value = str(self.options.get("includeHeaders", "false")).strip().lower()
        if value not in ("true", "false"):
            raise SourceOptionError("includeHeaders", f"must be true or false, not {value!r}")
        return source_schema(value == "true")

    def reader(self, schema: StructType) -> DataSourceReader:
        options = parse_source_options(self.options, streaming=False)
        _check_schema(schema, options.include_headers)
        return SpateBatchReader(options)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        options = parse_source_options(self.options, streaming=True)
        _check_schema(schema, options.include_headers)
        return SpateStreamReader(options)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        return sink.batch_writer(self.options, schema, overwrite)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        return sink.stream_writer(self.options, schema, overwrite)


def _check_schema(schema: StructType, include_headers: bool) -> None:
    expected = source_schema(include_headers)
    if schema != expected:
        raise ValueError(
            f"the spate source has a fixed schema ({expected.simpleString()}) and cannot read with "
            f"a user-specified one ({schema.simpleString()})"
        )
