"""Spate's PySpark extension: ``format("spate")`` for Spark SQL and Structured Streaming.

Spark finds the source without registration through the top-level
``pyspark_spate`` module; ``spark.dataSource.register(SpateDataSource)``
works as well.
"""

from spark_ext.query_metrics import serve_metrics
from spark_ext.source import SpateDataSource

__all__ = ["SpateDataSource", "serve_metrics"]
