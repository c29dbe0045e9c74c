"""Fixtures every suite may use: the one SparkSession of a test run, and names unique to a test.

Spark's Python workers are separate processes started with PYSPARK_PYTHON;
they must run this interpreter (it has pyarrow and the project). They find
``pyspark_spate`` and ``spark_ext`` through PYTHONPATH, pointed at the
repository before the session starts (an installed package needs nothing of
the kind).

A failed test that used a broker process gets the tail of that broker's log
in its report.

The suite runs on pytest-xdist workers, a module at a time and every Spark test
on one worker (tests/support/module_scheduling.py).
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.broker_under_test import brokers_in
from tests.support.zookeeper import ZooKeeperForTests, running_zookeeper

REPO = Path(__file__).resolve().parents[1]
SUITE_WORKERS = 2


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    paths = [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    session = (
        SparkSession.builder.master("local[2]")
        .appName("spate-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={REPO / 'conf' / 'log4j2.properties'}")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Two workers for the suite (most tests wait on brokers, ZooKeeper and Spark rather than on the CPU);
    none for benchmarks or with ``-s``, whose printed figures a worker would swallow."""
    benchmarks = "perf" in config.option.markexpr and "not perf" not in config.option.markexpr
    return 0 if benchmarks or config.option.capture == "no" else SUITE_WORKERS


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Modules as work units, unless another ``--dist`` mode is asked for."""
    if config.getvalue("dist") != "load":
        return None
    from tests.support.module_scheduling import ModuleScheduling

    return ModuleScheduling(config, log)


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperForTests]:
    """A real ZooKeeper server for the tests of one module; each cluster or store takes a chroot of its own."""
    with running_zookeeper(tmp_path_factory.mktemp("zookeeper")) as harness:
        yield harness


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """``unique("group")``: a name (topic, group, transactional id, checkpoint) of this test, readable in logs."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name)[:60].strip("-")

    def make(kind: str) -> str:
        return f"{stem}-{kind}-{uuid.uuid4().hex[:6]}"

    return make


@pytest.fixture
def topic_name(unique: Callable[[str], str]) -> Callable[..., str]:
    """``topic_name()`` or ``topic_name("in")``: a legal topic name of this test."""

    def make(suffix: str = "") -> str:
        return unique(suffix or "topic")

    return make


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """Attach the tail of each broker process's log to a failed test's report."""
    report = yield
    if report.failed:
        values = getattr(item, "funcargs", {}).values()
        processes = {id(process): process for value in values for process in brokers_in(value)}
        for process in processes.values():
            report.sections.append((f"broker log {process.log_path}", process.log_tail(60)))
    return report
