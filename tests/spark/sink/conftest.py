"""Fixtures of the sink tests: the shared SparkSession and broker, and confluent-kafka helpers.

The SparkSession and the broker are the shared ones of ``tests/conftest.py``.
"""

from __future__ import annotations

from tests.spark.conftest import broker, unique  # noqa: F401  (fixtures shared with the source tests)
