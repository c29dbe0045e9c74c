"""Work units of the suite's xdist workers: a module each, every Spark test in one."""

from __future__ import annotations

import pytest

from tests.support.module_scheduling import SPARK_UNIT, work_unit


@pytest.mark.parametrize("nodeid", [
    "tests/spark/source/test_batch_read.py::test_reads_every_record",
    "tests/spark/sink/test_exactly_once.py::TestSink::test_commit[4]",
    "tests/jobs/test_ingest.py::test_json_values_are_decoded_into_columns",
])
def test_every_spark_and_job_test_is_one_unit(nodeid: str) -> None:
    assert work_unit(nodeid) == SPARK_UNIT


def test_any_other_test_is_in_its_modules_unit() -> None:
    assert work_unit("tests/broker/storage/test_segment.py::test_append[1-2]") == "tests/broker/storage/test_segment.py"
    assert work_unit("tests/spate/client/test_config.py::TestX::test_y") == "tests/spate/client/test_config.py"
    assert work_unit("tests/test_layering.py::test_broker_never_imports_the_client") == "tests/test_layering.py"
