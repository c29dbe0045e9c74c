"""The ``spate`` sink's entry points, called by the data source's ``writer`` / ``streamWriter``.

Options are parsed and the DataFrame's columns checked here, on the driver,
so a bad option or column fails the query when it starts, with a message
naming it (see :mod:`spark_ext.sink_options` and :mod:`spark_ext.sink_schema`).
"""

from __future__ import annotations

from typing import Mapping

from pyspark.sql.types import StructType

from spark_ext.batch_writer import SpateBatchWriter
from spark_ext.sink_options import SinkOptionError, parse_sink_options
from spark_ext.sink_schema import sink_columns
from spark_ext.stream_writer import SpateStreamWriter


def stream_writer(options: Mapping[str, str], schema: StructType, overwrite: bool) -> SpateStreamWriter:
    """The writer of a streaming query; ``overwrite`` (complete output mode) just writes every row."""
    parsed = parse_sink_options(options, streaming=True)
    return SpateStreamWriter(parsed, sink_columns(schema, topic_option=parsed.topic))


def batch_writer(options: Mapping[str, str], schema: StructType, overwrite: bool) -> SpateBatchWriter:
    """The writer of ``df.write``; topics are append-only, so only ``mode("append")`` is accepted."""
    if overwrite:
        raise SinkOptionError("mode", "topics can only be appended to: use .mode('append')")
    parsed = parse_sink_options(options, streaming=False)
    return SpateBatchWriter(parsed, sink_columns(schema, topic_option=parsed.topic))
